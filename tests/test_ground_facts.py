"""The fast path for ground facts (syntax/ground_facts.py) gives what lark alone
gives: the same statements, values, types and positions (of every statement,
atom, constant and comment), and, for a text with errors, the same diagnostics
in the same order, on random texts of facts, rules, declarations, components,
comments and junk, and on the cases written out below; its reading of a string
is Python's; benchmarks/inline_facts.py runs."""

from __future__ import annotations

import ast as pyast
import dataclasses
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_roundtrip import SETTINGS, units

from sparkdedalus.syntax.diagnostics import DiagnosticError
from sparkdedalus.syntax.ground_facts import split_facts, unquote
from sparkdedalus.syntax.parser import _keywords, parse_text
from sparkdedalus.syntax.printer import format_unit


def dump(node):
    """A node as nested tuples with every field, positions and the types of
    constants included (AST equality ignores positions, 1 == True and 1 == 1.0)."""
    if dataclasses.is_dataclass(node):
        return (type(node).__name__,) + tuple((f.name, dump(getattr(node, f.name))) for f in dataclasses.fields(node))
    if isinstance(node, (tuple, list)):
        return tuple(dump(item) for item in node)
    return (type(node).__name__, repr(node))


def outcome(text: str, fast: bool):
    """What parsing `text` gives: the dumped unit with its comments, or every
    diagnostic, or the exception lark raised."""
    try:
        unit = parse_text(text, "t.ded", fast_facts=fast)
    except DiagnosticError as exc:
        return "errors", [(str(d.pos), d.severity, d.message) for d in exc.diagnostics]
    except Exception as exc:  # a string Python cannot read makes lark's transformer fail, both ways
        return "raised", type(exc).__name__, str(exc)
    return "unit", dump(unit.statements), dump(unit.comments)


def assert_same(text: str):
    fast, slow = outcome(text, True), outcome(text, False)
    assert fast == slow, text
    return fast


# ---------------------------------------------------------------- random texts

_WS = st.sampled_from(["", "", " ", " ", " ", "\n", "\t", " \n  ", "\r\n"])
# (what lark reads without error, what it may refuse)
ARGS = (["0", "007", "42", "-3", "- 4", "-\n5", "2.5", "-0.25", "1.5e3", "2.0E-2", "-0.0", '"a"', '""', '"a;b"',
         '"q\\"uote"', '"back\\\\slash"', '"tab\\tnew\\nline"', '"{"', '"}"', '"// not"', '"/* no */"',
         '"日本 ✓"', '"\\u00e9"', "true", "false"],
        ["1.0e999", "1.", "1e3", '"\\x"', "truex", "true.x", "X", "_", '#"a"', "1 + 2", "/* c */ 3", "-true",
         '-"a"', "(1)", "count<X>"])
NAMES = (["p", "edge", "a.b", "_r", "true", "count", "min", "notin", "choose", "from", "format", "notinx",
          "components", "P"],
         ["component", "include"])
TICKS = (["", "", "@1", "@ 2", "@\n3", "@007"], ["@0", "@next", "@T", "@async"])
ENDS = ([";"], ["", "@"])
OTHERS = (["p(X) :- q(X);", "r(X, Y)@next :- r(X, Y), X < -1;", 's(X) :- t(X, "a;b"), notin u(X);',
           ".decl p(a: int, b: string) ", ".decl p(a: int);", '.input e from "e.csv";', ".output p ", ".output p;",
           ".persist p;", 'include "x.ded";', "// c\n", "/* c */", "/* multi\nline */"],
          ["p(X) :- q(X)", "p(X :- q(X);", "include", "component c {", "}", "{", "/* unterminated", ";", ")",
           "(", '"', '"open', "@", "$", "::", "p(", "-", "component", "component(1);", "include(1);"])


def pick(pools: tuple, valid: bool):
    return st.sampled_from(pools[0] if valid else pools[0] + pools[1])


@st.composite
def fact_texts(draw, valid: bool = True):
    args = draw(st.lists(pick(ARGS, valid), max_size=4))
    ws = draw(st.lists(_WS, min_size=len(args) * 2 + 3, max_size=len(args) * 2 + 3))
    inner = ",".join(f"{ws[2 * i]}{arg}{ws[2 * i + 1]}" for i, arg in enumerate(args))
    return f"{draw(pick(NAMES, valid))}{ws[-1]}({inner}){ws[-2]}{draw(pick(TICKS, valid))}{ws[-3]}" \
           f"{draw(pick(ENDS, valid))}"


def texts(valid: bool):
    """Programs of facts, rules, declarations, comments and components; with
    `valid=False` also, now and then, a bad fact, a bad statement or junk."""
    good = [fact_texts(), fact_texts(), fact_texts(), pick(OTHERS, True), pick(OTHERS, True)]
    piece = st.one_of(*good) if valid else st.one_of(*good, fact_texts(valid=False), pick(OTHERS, False))
    component = st.lists(piece, max_size=5).map(lambda inner: ["component c {", *inner, "}"])
    pieces = st.lists(st.one_of(piece.map(lambda p: [p]), component), max_size=10).map(lambda ps: sum(ps, []))
    return pieces.flatmap(lambda ps: st.lists(_WS, min_size=len(ps), max_size=len(ps)).map(
        lambda seps: "".join(p + ("\n" if p.startswith("//") else s) for p, s in zip(ps, seps))))


@SETTINGS
@given(texts(valid=True))
def test_random_programs_parse_the_same_with_and_without_the_fast_path(text):
    assert assert_same(text)[0] == "unit"


@SETTINGS
@given(texts(valid=False))
def test_random_texts_with_errors_parse_the_same_with_and_without_the_fast_path(text):
    assert_same(text)


@SETTINGS
@given(units)
def test_formatted_programs_parse_the_same_with_and_without_the_fast_path(unit):
    text = format_unit(unit)
    assert assert_same(text)[0] == "unit"
    assert parse_text(text) == unit


def reading(read, token: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Python's word on an unknown escape
        try:
            return read(token)
        except Exception as exc:
            return type(exc)


STRING = re.compile(r'"(\\.|[^"\\\n])*"')  # dedalus.lark's STRING
characters = st.one_of(st.sampled_from(["\r", "\0", "\ud800", "\udfff", "\x85", "\u2028", "\x0c", "é", "'", "x"]),
                       st.characters(exclude_categories=()))  # lone surrogates too
string_tokens = st.lists(st.one_of(characters, st.builds(lambda c: "\\" + c, characters))).map(
    lambda parts: '"' + "".join(parts) + '"').filter(STRING.fullmatch)


@SETTINGS
@given(string_tokens)
def test_unquote_reads_a_string_as_python_does(token):
    assert reading(unquote, token) == reading(pyast.literal_eval, token)


# ---------------------------------------------------------------- fixed cases

MIXED = r'''// facts and rules
edge("a", "b"); edge("b", "c")@1;
path(X, Y) :- edge(X, Y);
name("semi;colon", "q\"uote", "back\\slash", "tab\t", "/* not a comment */", "日本")@12;
num(-3, - 4, 2.5, -0.25, 1.5e3, 2.0E-2, 007, true, false) ;
multi(
    "over",
    -7,
    3.0
    ) ;
spread  (  1 ,2 )
  @
  3
;
/* a block
   comment */ after(1);
.decl typed(a: int, b: string)
typed(1, "x");
component c {
    in_c(1); in_c(2);
    r(X) :- in_c(X);
    in_c(3);
}
top(1); top(2);
'''


def test_mixed_program_parses_the_same_and_its_facts_take_the_fast_path():
    assert assert_same(MIXED)[0] == "unit"
    taken = split_facts(MIXED, "t.ded", _keywords()).facts
    # the last fact before '}' and the last of the text stay with lark, and so
    # does `typed` after a `.decl` without ';'
    assert [fact.atom.name for _, fact in taken] == \
        ["edge", "edge", "name", "num", "multi", "spread", "after", "in_c", "in_c", "top"]
    assert [where for where, _ in taken] == [-1] * 7 + [0, 0, -1]


def test_positions_of_a_fact_and_its_constants():
    unit = parse_text('p(1);\nq( "a;b" ,\n  - 2.5)@3;\nr(1);', "t.ded")
    fact = unit.statements[1]
    assert [str(fact.pos), str(fact.atom.pos)] == ["t.ded:2:1", "t.ded:2:1"]
    assert [str(arg.pos) for arg in fact.atom.args] == ["t.ded:2:4", "t.ded:3:3"]
    assert [arg.value for arg in fact.atom.args] == ["a;b", -2.5] and fact.tick == 3


@pytest.mark.parametrize("text", [
    "p(1);\np(2, X);\np(3);",                   # a variable in a fact
    "p(1);\np(2)@0;\np(3);",                    # ticks start at 1
    "p(1);\np(2)@next;\np(3);",
    "p(1);\np(1.0e999);\np(3);",                # too large for a double
    "p(1);\np(2)\np(3);\np(4);",                # a missing ';'
    "p(1);\np(2,);\np(3);",
    "component c { r(1); component(2); }",      # `component` is a keyword after a fact (lark:
                                                # not right after '{', where it is a name)
    "component c { r(1); r(2);",                # no '}' at the end
    "r(1); r(2); }",
    "r(1); r(2); q",
    "component { r(1); }",
    "/* x; */ r(1);\n bad bad;",
    'p("\\x"); q(1);',                          # Python cannot read the string: lark's transformer fails
])
def test_errors_are_the_same(text):
    assert assert_same(text)[0] in ("errors", "raised")


def test_a_bad_fact_and_a_bad_rule_after_many_facts_are_reported_where_they_are():
    facts = "".join(f'triple("s{i}", "p", {i});\n' for i in range(3000))
    text = facts + 'triple("s", "p", X);\n' + facts + "q(X) :- triple(X, _, Y) Y > 1;\n" + facts
    kind, errors = assert_same(text)
    assert kind == "errors"
    assert errors == [
        ("t.ded:3001:18", "error", "fact 'triple' has variable 'X'; facts take constants only"),
        ("t.ded:6002:25", "error", "syntax error: unexpected 'Y', expected ',', ';' or '@'"),
    ]


def test_inline_facts_benchmark_checks_its_program_and_compares_the_parsers():
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "inline_facts.py"
    done = subprocess.run([sys.executable, str(script), "--sizes", "300", "--repeat", "1", "--lark", "300"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = {line["measurement"]: line for line in map(json.loads, done.stdout.splitlines())}
    assert lines["check"]["facts"] == 300 and lines["check"]["exit_codes"] == [0]
    assert lines["parse"]["same_ast"] is True
