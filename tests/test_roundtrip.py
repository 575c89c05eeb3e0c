"""Property tests: printing then parsing gives the same AST, and formatting is
idempotent, for random programs covering every construct of the dialect."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparkdedalus.shell import cli
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.parser import parse_text
from sparkdedalus.syntax.printer import format_unit

SETTINGS = settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

# Words that are keywords where a variable or a relation name could also stand
# (a literal may start with `notin` or `choose`; a statement with `include` or
# `component`; `true`/`false` are constants, `_` the wildcard).
RESERVED = {"notin", "choose", "true", "false", "include", "component", "_"}
DELIVERY_WORDS = {"next", "async", "later"}

# A fixed pool keeps generation cheap; it holds the tricky cases: keywords as
# prefixes or in other case, words that are keywords elsewhere, underscores, digits.
NAME_POOL = [
    "X", "Y", "Z", "N", "M", "P", "T", "node", "Pl", "l2", "_x", "_1", "a_b", "x9", "B", "C",
    "count", "sum", "min", "max", "avg", "format", "from", "notinfo", "chooser", "includes",
    "components", "next", "async", "later", "True", "FALSE", "Notin", "CHOOSE", "truex", "falsey",
    "delta", "csv", "int", "string", "decl", "input", "output", "persist",
]
assert not RESERVED & set(NAME_POOL)
names = st.sampled_from(NAME_POOL)
var_names = names
tick_var_names = names.filter(lambda s: s not in DELIVERY_WORDS)
relation_names = st.one_of(
    names,
    st.builds(lambda a, b: f"{a}.{b}", names, names),
)

# strings: any text (escapes, quotes, backslashes, newlines, unicode, comment markers)
strings = st.one_of(
    st.text(max_size=8),
    st.sampled_from(['"', "\\", "\\n", "a\"b\\c", "// no", "/* no */", "héllo ✓ 日本", "\t\n\r", "\x00\x1f\x7f"]),
)
floats = st.floats(allow_nan=False, allow_infinity=False)
ints = st.integers(min_value=-10**20, max_value=10**20)
constants = st.one_of(
    ints.map(ast.Const), floats.map(ast.Const), strings.map(ast.Const), st.booleans().map(ast.Const))

variables = var_names.map(ast.Var)
wildcards = st.just(ast.Wildcard())
ticks = st.integers(min_value=1, max_value=10**6)


def _neg(expr):
    # `-3` parses as the constant -3, so Neg never wraps a numeric constant
    if isinstance(expr, ast.Const) and type(expr.value) in (int, float):
        return ast.Const(-expr.value) if expr.value != 0 else expr
    return ast.Neg(expr)


exprs = st.recursive(
    st.one_of(variables, constants, wildcards),
    lambda inner: st.one_of(
        st.builds(ast.BinOp, st.sampled_from(["+", "-", "*", "/", "%"]), inner, inner),
        inner.map(_neg),
    ),
    max_leaves=6,
)

time_qualifiers = st.one_of(
    st.none(), ticks.map(ast.TickTime), tick_var_names.map(lambda n: ast.VarTime(ast.Var(n))))


def atoms(args, time=st.none()):
    return st.builds(ast.Atom, relation_names, st.lists(args, max_size=4).map(tuple), time)


aggregates = st.builds(ast.Aggregate, st.sampled_from(ast.AGGREGATE_FUNCTIONS), variables) | \
    st.just(ast.Aggregate("count", None))

body_atoms = atoms(exprs, time_qualifiers)
literals = st.one_of(
    body_atoms,
    body_atoms.map(ast.Negated),
    st.builds(ast.Comparison, st.sampled_from(ast.COMPARISON_OPS), exprs, exprs),
    st.builds(ast.Choose, st.lists(variables, max_size=3).map(tuple),
              st.lists(variables, min_size=1, max_size=3).map(tuple)),
)

rules = st.builds(
    ast.Rule,
    atoms(st.one_of(exprs, aggregates)),
    st.sampled_from(ast.DELIVERIES),
    st.lists(literals, min_size=1, max_size=5).map(tuple),
)
facts = st.builds(ast.Fact, atoms(constants), st.none() | ticks)
decls = st.builds(ast.Decl, relation_names,
                  st.lists(st.builds(ast.Column, names, st.sampled_from(ast.TYPES)), max_size=4).map(tuple))
inputs = st.builds(ast.InputDecl, relation_names, strings, st.none() | st.sampled_from(ast.INPUT_FORMATS))
simple_statements = st.one_of(
    rules, rules, rules, facts, facts, decls, inputs,
    st.builds(ast.OutputDecl, relation_names),
    st.builds(ast.PersistDecl, relation_names),
    st.builds(ast.Include, strings),
)
components = st.builds(ast.Component, names, st.lists(simple_statements, max_size=4).map(tuple))
units = st.lists(st.one_of(simple_statements, simple_statements, simple_statements, components),
                 max_size=6).map(lambda s: ast.Unit(tuple(s)))


@SETTINGS
@given(units)
def test_print_then_parse_gives_the_same_ast_and_formatting_is_idempotent(unit):
    text = format_unit(unit)
    reparsed = parse_text(text)
    assert reparsed == unit, text
    assert format_unit(reparsed) == text


@settings(SETTINGS, max_examples=60)
@given(units, st.data())
def test_comments_survive_formatting(unit, data):
    """Comments placed between statements are all kept, in order, and do not
    change the program."""
    lines = format_unit(unit).split("\n")[:-1]  # not splitlines(): strings may hold \x85, \u2028
    marked = []
    count = 0
    for line in lines:
        if not line.startswith(" ") and data.draw(st.booleans()):
            kind = data.draw(st.sampled_from(["//", "/*"]))
            marked.append(f"// note {count}" if kind == "//" else f"/* note\n {count} */")
            count += 1
        marked.append(line)
    text = "\n".join(marked) + "\n"
    reparsed = parse_text(text)
    assert reparsed == unit
    out = format_unit(reparsed)
    assert [int(n) for n in re.findall(r"note\s+(\d+)", out)] == list(range(count))
    assert parse_text(out) == unit
    assert format_unit(parse_text(out)) == out


# ---------------------------------------------------------------- fixed cases

def test_printer_parenthesises_only_where_needed():
    text = "p(X) :- q(X, Y), X == (Y + 1) * -(Y - 2) - -3 - (Y - (1 - Y)) % 2;\n"
    assert format_unit(parse_text(text)) == \
        "p(X) :- q(X, Y), X == (Y + 1) * -(Y - 2) - -3 - (Y - (1 - Y)) % 2;\n"
    assert format_unit(parse_text("p(X) :- q(X,Y),X==((Y*2)+(3));")) == "p(X) :- q(X, Y), X == Y * 2 + 3;\n"


def test_floats_in_exponent_form_print_as_valid_dedalus():
    unit = parse_text("p(100000000000000000000.0, 0.0000001, -1.5e-300);")
    assert format_unit(unit) == "p(1.0e+20, 1.0e-07, -1.5e-300);\n"
    assert parse_text(format_unit(unit)) == unit


def test_input_without_format_before_a_relation_named_format():
    unit = ast.Unit((ast.InputDecl("r", "r.csv", None),
                     ast.Rule(ast.Atom("format", (ast.Var("X"),)), "now", (ast.Atom("q", (ast.Var("X"),)),))))
    assert parse_text(format_unit(unit)) == unit


FMT_INPUT = """\
/* header
   block */
// leading comment
node(N,M)@next:-node(N,M); // trailing comment


log(M,P)@async :- bcast(N,P),node(N,M);
component c {
  // inside a component
  s(X):-t(X);
}
// final comment
"""

FMT_OUTPUT = """\
/* header
   block */
// leading comment
node(N, M)@next :- node(N, M); // trailing comment

log(M, P)@async :- bcast(N, P), node(N, M);
component c {
    // inside a component
    s(X) :- t(X);
}
// final comment
"""


def test_fmt_keeps_comments(tmp_path, capsys):
    path = tmp_path / "c.ded"
    path.write_text(FMT_INPUT)
    assert cli.main(["fmt", str(path)]) == 0
    out = capsys.readouterr().out
    assert out == FMT_OUTPUT
    assert parse_text(out) == parse_text(FMT_INPUT)
    # and formatting the output again changes nothing
    path.write_text(out)
    assert cli.main(["fmt", "--check", str(path)]) == 0
