"""Bad programs: every diagnostic's exact message and 1-based line:col, derived
by hand from the program text (the column is where the offending token starts;
for a missing ';' it is just after the statement's last character)."""

from __future__ import annotations

import os

import pytest

from frontend_helpers import FILE, diagnostics, errors, warnings, write
from sparkdedalus import Program
from sparkdedalus.shell import cli
from sparkdedalus.syntax.diagnostics import DiagnosticError, Sources
from sparkdedalus.syntax.parser import parse_text

UNBOUND = "is not bound by a positive body atom"

# (id, program, [(line, col, message), ...] of its errors, exactly)
BAD_PROGRAMS = [
    # ---- syntax
    ("missing-semicolon",
     'p(X) :- q(X)\nr(X) :- q(X);\nq("a");\n',
     [(1, 13, "syntax error: missing ';' at the end of the statement")]),
    ("missing-semicolon-at-end-of-file",
     'p("a")@1',
     [(1, 9, "syntax error: missing ';' at the end of the statement")]),
    ("missing-semicolon-before-comment",
     'p("a")@1 // first\np("b")@2;\n',
     [(1, 9, "syntax error: missing ';' at the end of the statement")]),
    ("missing-semicolon-before-closing-brace",
     'component c {\n  p(X) :- q(X)\n}\nq("a");\n',
     [(2, 15, "syntax error: missing ';' at the end of the statement")]),
    ("unexpected-token",
     'p(X) q(X);\n',
     [(1, 6, "syntax error: unexpected 'q', expected ':-', ';' or '@'")]),
    ("unexpected-character",
     'p(X) :- q(X) $ r(X);\n',
     [(1, 14, "syntax error: unexpected character '$'")]),
    ("stray-semicolon-names-keywords-not-lark-internals",
     'p("a");;\n',
     [(1, 8, "syntax error: unexpected ';', expected '.decl', '.input', '.output', '.persist', '}' or a name")]),
    # ---- time suffixes
    ("tick-on-rule-head",
     'p(X)@5 :- q(X);\nq("a");\n',
     [(1, 6, "a rule head takes @next, @async or @later, not '@5'")]),
    ("variable-on-rule-head",
     'p(X)@T :- q(X);\nq("a");\n',
     [(1, 6, "a rule head takes @next, @async or @later, not '@T'")]),
    ("next-on-body-atom",
     'p(X) :- q(X)@next;\nq("a");\n',
     [(1, 14, "'@next' belongs on a rule head, not on a body atom")]),
    ("later-on-body-atom",
     'p(X) :- q(X), r(X)@later;\n',
     [(1, 20, "'@later' belongs on a rule head, not on a body atom")]),
    ("delivery-on-fact",
     'p("a", 1)@next;\n',
     [(1, 11, "a fact takes a tick (@1, @2, ...), not '@next'")]),
    ("tick-zero",
     'p("a")@0;\np(X) :- p(X)@0;\n',
     [(1, 8, "ticks start at 1"), (2, 14, "ticks start at 1")]),
    # ---- facts
    ("variable-in-fact",
     'node("a", N)@1;\n',
     [(1, 11, "fact 'node' has variable 'N'; facts take constants only")]),
    ("expression-in-fact",
     'p("a", 1 + 2);\n',
     [(1, 8, "fact 'p' has a non-constant argument; facts take constants only")]),
    ("aggregate-in-fact",
     'p("a", count<X>);\n',
     [(1, 8, "a fact cannot contain an aggregate")]),
    # ---- declarations
    ("unknown-type",
     '.decl p(loc: string, n: integer)\n',
     [(1, 25, "unknown type 'integer' (types: int, long, double, string, bool)")]),
    ("unknown-input-format",
     '.decl r(l: string)\n.input r from "r.xml" format xml\n',
     [(2, 30, "unknown input format 'xml' (formats: delta, parquet, csv, json)")]),
    ("input-without-decl",
     '.input r from "r.csv"\n',
     [(1, 8, "'.input r': declare its columns with .decl r(...)")]),
    ("persist-unknown-relation",
     '.persist ghost\n',
     [(1, 10, "'.persist ghost': relation 'ghost' is never used or declared")]),
    ("conflicting-decls",
     '.decl r(l: string)\n.decl r(l: int)\n',
     [(2, 7, "relation 'r' is declared differently at t.ded:1:7")]),
    # ---- safety (range restriction)
    ("unbound-in-head",
     'p(X, Y) :- q(X);\nq("a");\n',
     [(1, 6, f"variable 'Y' in the head {UNBOUND}")]),
    ("unbound-in-head-expression",
     'p(X, Y + 1) :- q(X);\nq("a");\n',
     [(1, 6, f"variable 'Y' in the head {UNBOUND}")]),
    ("unbound-in-negated-atom-and-comparison",
     'r(X) :- q(X), notin s(X, Z), Z > 1;\nq("a");\ns("a", 2);\n',
     [(1, 26, f"variable 'Z' in a negated atom {UNBOUND}")]),
    ("unbound-in-negated-atom-and-head",
     'r(X, Z) :- q(X), notin s(X, Z);\nq("a");\ns("a", "b");\n',
     [(1, 6, f"variable 'Z' in the head {UNBOUND}")]),
    ("unbound-in-comparison",
     'p(X) :- q(X), Y > 1;\nq("a");\n',
     [(1, 15, f"variable 'Y' in a comparison {UNBOUND}")]),
    ("unbound-function-input",
     'p(X) :- q(X), hash(Y, H);\nq("a");\n',
     [(1, 20, f"variable 'Y' in the input of function relation 'hash' {UNBOUND}")]),
    ("unbound-in-aggregate",
     'c(X, count<Y>) :- q(X);\nq("a");\n',
     [(1, 12, f"variable 'Y' in an aggregate {UNBOUND}")]),
    ("unbound-in-choose",
     'p(X) :- q(X), choose((X), (Y));\nq("a");\n',
     [(1, 28, f"variable 'Y' in choose {UNBOUND}")]),
    ("no-positive-atom",
     'p(X) :- hash("a", X);\n',
     [(1, 1, "a rule needs at least one positive body atom over a relation")]),
    # ---- arities and types
    ("arity-mismatch",
     'q("a", 1);\np(X) :- q(X);\n',
     [(2, 9, "relation 'q' has 1 argument(s) here but 2 at t.ded:1:1")]),
    ("arity-mismatch-with-decl",
     '.decl q(l: string, n: int)\nq("a", 1, 2);\n',
     [(2, 1, "relation 'q' has 3 argument(s) here but 2 at t.ded:1:7")]),
    ("zero-arity-relation",
     'ok() :- q("a");\nq("a");\n',
     [(1, 1, "relation 'ok' needs at least one argument: its location")]),
    ("zero-column-decl",
     '.decl p()\n',
     [(1, 7, "relation 'p' needs at least a location column")]),
    ("type-conflict-int-string",
     'p("a", 1);\np("b", "x");\n',
     [(2, 8, "type conflict: column 2 of 'p' is used as int and as string")]),
    ("type-conflict-through-a-rule",
     'p("a", true);\n.decl q(l: string, n: int)\np(L, N) :- q(L, N);\n',
     [(3, 6, "type conflict: column 2 of 'p' is used as bool and as int")]),
    # ---- stratification
    ("negation-cycle",
     'p(X) :- q(X), notin r(X);\nr(X) :- q(X), notin p(X);\nq("a");\n',
     [(1, 15, "unstratifiable: a cycle through negation within one tick: "
              "'p' negates 'r' (rule at t.ded:1:1), 'r' negates 'p' (rule at t.ded:2:1); "
              "break it with @next or @async"),
      (2, 15, "unstratifiable: a cycle through negation within one tick: "
              "'r' negates 'p' (rule at t.ded:2:1), 'p' negates 'r' (rule at t.ded:1:1); "
              "break it with @next or @async")]),
    ("negation-self-cycle-with-bang",
     'p(X) :- q(X), !p(X);\nq("a");\n',
     [(1, 16, "unstratifiable: a cycle through negation within one tick: "
              "'p' negates 'p' (rule at t.ded:1:1); break it with @next or @async")]),
    ("aggregation-cycle",
     'c(N, count<X>) :- d(N, X);\nd(N, X) :- c(N, X);\n',
     [(1, 19, "unstratifiable: a cycle through aggregation within one tick: "
              "'c' aggregates 'd' (rule at t.ded:1:1), 'd' reads 'c' (rule at t.ded:2:1); "
              "break it with @next or @async (only min<X> and max<X> may aggregate over their own recursion: "
              "docs/language.md, section 9)")]),
    # ---- aggregates and choose
    ("aggregated-variable-also-grouped",
     'c(X, count<X>) :- q(X);\nq("a");\n',
     [(1, 6, "variable 'X' is both a group-by key and aggregated in count<X>")]),
    ("star-on-sum",
     'p(N, sum<*>) :- q(N);\nq("a");\n',
     [(1, 6, "'sum<*>' is not an aggregate; only count<*> takes '*'")]),
    ("aggregate-as-location",
     'p(count<X>) :- q(X);\nq("a");\n',
     [(1, 3, "the location (first argument) cannot be an aggregate")]),
    ("choose-with-aggregates",
     'p(X, count<Y>) :- q(X, Y, Z), choose((X), (Z));\nq("a", 1, 2);\n',
     [(1, 31, "choose and aggregates cannot be combined in one rule")]),
    ("choose-key-also-value",
     'p(X) :- q(X, Y, Z), choose((X, Y), (Y, Z));\nq("a", 1, 2);\n',
     [(1, 21, "variable 'Y' is both a key and a chosen value of choose")]),
    ("choose-without-values",
     'p(X) :- q(X, Y), choose((X), ());\n',
     [(1, 18, "choose needs at least one chosen variable: choose((Keys), (Values))")]),
    # ---- normalisation
    ("wildcard-in-head",
     'p(X, _) :- q(X, Y);\nq("a", 1);\n',
     [(1, 6, "'_' cannot appear in a rule head")]),
    ("wildcard-in-comparison",
     'p(X) :- q(X, Y), Y > _;\nq("a", 1);\n',
     [(1, 20, "'_' cannot appear in a comparison")]),
    ("expression-in-body-atom",
     'p(X) :- q(X, N), r(X, N * 2);\nq("a", 1);\nr("a", 2);\n',
     [(1, 23, "an argument of body atom 'r' must be a variable or a constant; "
              "bind the expression with a comparison, e.g. Z == X + 1")]),
    ("redefine-hash-by-rule",
     'hash(X, H) :- q(X, H);\nq("a", 1);\n',
     [(1, 1, "'hash' is a built-in function relation and cannot be defined")]),
    ("redefine-hash-by-fact",
     'hash("a", 1);\n',
     [(1, 1, "'hash' is a built-in function relation and cannot be defined")]),
    ("define-crash",
     'crash("a", "b", 1);\n',
     [(1, 1, "'crash' is filled by the failure model and cannot be defined")]),
    ("location-mark-not-first-in-head",
     'p(X, #Y) :- q(X, Y);\nq("a", 1);\n',
     [(1, 6, "'#' marks the location and may only precede the first argument")]),
    ("dotted-variable",
     'p(X) :- q(X, a.b);\n',
     [(1, 14, "'a.b' is not a valid variable name (variables cannot contain '.')")]),
    ("double-out-of-range",  # it would print as inf, which reads back as a variable
     'p("a", 1.0e999);\n',
     [(1, 8, "'1.0e999' is too large for a double")]),
]


@pytest.mark.parametrize("text, expected", [(t, e) for _, t, e in BAD_PROGRAMS],
                         ids=[i for i, _, _ in BAD_PROGRAMS])
def test_bad_program(text, expected):
    assert errors(text) == expected


def test_there_are_at_least_twenty_distinct_bad_programs():
    assert len({text for _, text, _ in BAD_PROGRAMS}) >= 20
    assert len({i for i, _, _ in BAD_PROGRAMS}) == len(BAD_PROGRAMS)


def test_location_mark_not_first_in_a_body_atom_is_a_syntax_error():
    # in a body atom the grammar only allows '#' first: a syntax error at the '#'
    ((line, col, message),) = errors('p(X) :- q(X, #Y);\n')
    assert (line, col) == (1, 14)
    assert message.startswith("syntax error: unexpected '#'")


def test_unexpected_end_of_file():
    ((line, _col, message),) = errors('p(X) :- q(X),')
    assert line == 1
    assert message.startswith("syntax error: unexpected end of file, expected one of")


# ---------------------------------------------------------------- accepted programs

def test_cycle_through_next_is_accepted():
    text = ('p(X)@next :- q(X), notin r(X);\nr(X) :- q(X), notin p(X);\n'
            'c(N, count<X>)@next :- d(N, X);\nd(N, X) :- c(N, X);\nq("a");\nd("a", 1);\n')
    assert diagnostics(text) == []


def test_cycle_through_async_is_accepted():
    assert diagnostics('p(X)@async :- q(X), notin p(X);\nq("a");\n') == []


def test_positive_recursion_is_accepted():
    text = 'path(G, X, Y) :- edge(G, X, Y);\npath(G, X, Z) :- edge(G, X, Y), path(G, Y, Z);\nedge("g", "a", "b");\n'
    assert diagnostics(text) == []


def test_assignment_style_equality_binds():
    assert diagnostics('p(X, Z) :- q(X, Y), Z == Y * 2;\np(X, Z) :- q(X, Y), Y + 1 == Z;\nq("a", 1);\n') == []


def test_function_relation_output_binds():
    assert diagnostics('p(X, H) :- q(X, V), hash(V, H);\nq("a", "v");\n') == []


def test_entanglement_binds_the_tick_variable():
    assert diagnostics('seen(N, R, T)@next :- req(N, R)@T;\nreq("a", "r")@1;\n') == []


def test_crash_is_a_builtin_relation():
    assert diagnostics('p(N) :- q(N), notin crash(N, N, _);\nq("a");\n') == []


# ---------------------------------------------------------------- warnings

GLOBAL_RULE = 'q("a", "b");\np(X, Y) :- q(X, Y), q(Y, X);\n'
GLOBAL_MESSAGE = ("rule reads or writes several locations in one tick (X, Y): "
                  "a global observer rule, never decoupled or partitioned")


def test_global_observer_rule_is_a_warning_by_default():
    assert warnings(GLOBAL_RULE) == [(2, 1, GLOBAL_MESSAGE)]
    assert errors(GLOBAL_RULE) == []
    program = Program.parse(GLOBAL_RULE, FILE)
    assert [w.severity for w in program.warnings] == ["warning"]


def test_global_observer_rule_is_an_error_under_strict():
    assert errors(GLOBAL_RULE, strict=True) == [(2, 1, GLOBAL_MESSAGE)]
    with pytest.raises(DiagnosticError):
        Program.parse(GLOBAL_RULE, FILE, strict=True)


def test_async_head_elsewhere_is_local():
    # the head of an @async rule is the destination, not a location read this tick
    assert diagnostics('log(M, P)@async :- bcast(N, P), node(N, M);\nbcast("a", "hi");\nnode("a", "b");\n') == []


def test_negated_atom_at_another_location_is_global():
    text = 'p(X) :- q(X, Y), notin r(Y);\nq("a", "b");\nr("b");\n'
    assert warnings(text) == [(1, 1, "rule reads or writes several locations in one tick (X, Y): "
                                     "a global observer rule, never decoupled or partitioned")]


EXISTENTIAL = "occurs only in negated atoms, so it is existential (it matches any value); a typo?"


@pytest.mark.parametrize("text, expected", [
    ('r(X) :- q(X), notin s(X, Z);\nq("a");\ns("a", "b");\n', [(1, 26, "Z")]),
    # repeated in one atom, and shared by two atoms: one warning, at the first occurrence
    ('r(X) :- q(X), !s(X, P, P), !t(X, P);\nq("a");\ns("a", 1, 1);\nt("a", 2);\n', [(1, 21, "P")]),
    ('r(X) :- q(X), !s(X, P, Q, P);\nq("a");\ns("a", 1, 2, 1);\n', [(1, 21, "P"), (1, 24, "Q")]),
])
def test_variable_only_in_negated_atoms_is_existential_with_a_warning(text, expected):
    assert warnings(text) == [(line, col, f"variable '{name}' {EXISTENTIAL}") for line, col, name in expected]
    assert errors(text) == []
    assert errors(text, strict=True) == [(line, col, f"variable '{name}' {EXISTENTIAL}")
                                         for line, col, name in expected]


def test_undefined_relation_is_a_warning():
    text = 'p(X) :- q(X), notin gone(X);\nq2(X) :- q(X);\n'
    assert warnings(text) == [(1, 9, "relation 'q' is used but never defined; it is empty"),
                              (1, 21, "relation 'gone' is used but never defined; it is empty")]
    assert errors(text) == []


# ---------------------------------------------------------------- all errors in one pass

def test_several_syntax_errors_are_all_reported():
    text = ('p(X) :- q(X)\n'
            'r(X) :- q(X);\n'
            's(X :- q(X);\n'
            't(X) :- q(X) q(X);\n'
            'u(X) :- q(X);\n')
    found = errors(text)
    assert [(line, col) for line, col, _ in found] == [(1, 13), (3, 5), (4, 14)]
    assert found[0][2] == "syntax error: missing ';' at the end of the statement"
    assert found[1][2].startswith("syntax error: unexpected ':-', expected one of")
    assert found[2][2] == "syntax error: unexpected 'q', expected ',', ';' or '@'"


def test_several_check_errors_are_all_reported():
    text = ('p(X, Y) :- q(X);\n'
            'r(X) :- q(X), notin s(X, Z), Z != "b";\n'
            't(X, 1) :- q(X);\n'
            't(X, "a") :- q(X);\n'
            'q("a");\ns("a", "b");\n')
    assert errors(text) == [
        (1, 6, f"variable 'Y' in the head {UNBOUND}"),
        (2, 26, f"variable 'Z' in a negated atom {UNBOUND}"),
        (4, 6, "type conflict: column 2 of 't' is used as int and as string"),
    ]


NEGATION_CYCLE_ERROR = ("unstratifiable: a cycle through negation within one tick: "
                        "'p' negates 'p' (rule at t.ded:1:1); break it with @next or @async")


@pytest.mark.parametrize("other, error", [
    # arity: q has 1 argument in the rule, 2 in the fact
    ('q("a", 1);\n', (2, 1, "relation 'q' has 2 argument(s) here but 1 at t.ded:1:9")),
    # type: column 2 of r is an int and a string
    ('r("a", 1);\nr("b", "x");\n', (3, 8, "type conflict: column 2 of 'r' is used as int and as string")),
    # safety: Y is bound by nothing
    ('s(X, Y) :- q(X);\nq("a");\n', (2, 6, f"variable 'Y' in the head {UNBOUND}")),
])
def test_stratification_errors_are_reported_with_the_other_errors(other, error):
    # p negates itself within one tick (line 1, column 16: the negated atom)
    text = 'p(X) :- q(X), !p(X);\n' + other
    assert errors(text) == sorted([(1, 16, NEGATION_CYCLE_ERROR), error])


def test_cli_check_reports_a_stratification_error_with_an_arity_error(tmp_path, capsys):
    path = write(tmp_path, "both.ded", 'p(X) :- q(X), !p(X);\nq("a", 1);\n')
    assert cli.main(["check", path]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1:16: error: unstratifiable: a cycle through negation within one tick" in err
    assert f"{path}:2:1: error: relation 'q' has 2 argument(s) here but 1 at {path}:1:9" in err
    assert err.endswith("2 error(s)\n")


def test_errors_of_several_files_are_reported_together(tmp_path):
    a = write(tmp_path, "a.ded", 'p(X) :- q(X)\n')
    b = write(tmp_path, "b.ded", 'r(X)@5 :- q(X);\n')
    with pytest.raises(DiagnosticError) as info:
        Program.from_files(a, b)
    assert [(d.pos.file, d.pos.line, d.pos.col) for d in info.value.diagnostics if d.is_error] == \
        [(a, 1, 13), (b, 1, 6)]


# ---------------------------------------------------------------- includes

def test_include_cycle(tmp_path):
    a = write(tmp_path, "a.ded", 'include "b.ded";\np("a")@1;\n')
    write(tmp_path, "b.ded", '// b includes a\ninclude "a.ded";\n')
    with pytest.raises(DiagnosticError) as info:
        Program.from_files(a)
    (diag,) = info.value.diagnostics
    assert diag.pos.file == os.path.join(str(tmp_path), "b.ded")
    assert (diag.pos.line, diag.pos.col) == (2, 9)
    assert diag.message == "include cycle: a.ded -> b.ded -> a.ded"


def test_missing_include_names_the_chain(tmp_path):
    top = write(tmp_path, "top.ded", 'include "mid.ded";\n')
    mid = os.path.join(str(tmp_path), "mid.ded")
    write(tmp_path, "mid.ded", 'p("a")@1;\ninclude "gone.ded";\n')
    with pytest.raises(DiagnosticError) as info:
        Program.from_files(top)
    (diag,) = info.value.diagnostics
    assert (diag.pos.file, diag.pos.line, diag.pos.col) == (mid, 2, 9)
    gone = os.path.join(str(tmp_path), "gone.ded")
    assert diag.message == (f"cannot read included file '{gone}': No such file or directory "
                            f"(include chain: {top}:1:9 -> {mid}:2:9)")


def test_include_is_relative_to_the_including_file_and_read_once(tmp_path):
    top = write(tmp_path, "top.ded", 'include "lib/a.ded";\ninclude "lib/b.ded";\n')
    write(tmp_path, "lib/a.ded", 'include "b.ded";\np(X) :- q(X);\n')
    write(tmp_path, "lib/b.ded", 'q("a");\n')
    program = Program.from_files(top)
    assert len(program.facts) == 1 and len(program.rules) == 1


def test_diagnostics_in_an_included_file_name_that_file(tmp_path):
    top = write(tmp_path, "top.ded", 'include "sub/inc.ded";\nq("a");\n')
    write(tmp_path, "sub/inc.ded", '\np(X, Y) :- q(X);\n')
    assert [(d.pos.file, d.pos.line, d.pos.col) for d in _diagnostics_of_files(top)] == \
        [(os.path.join(str(tmp_path), "sub", "inc.ded"), 2, 6)]


def _diagnostics_of_files(*paths):
    try:
        Program.from_files(*paths)
    except DiagnosticError as exc:
        return exc.diagnostics
    return []


# ---------------------------------------------------------------- rendering

def test_rendered_form_has_header_source_line_and_caret():
    text = 'q("a");\nlog(M, Q)@async :- bcast(N, P), node(N, M);\n'
    with pytest.raises(DiagnosticError) as info:
        Program.parse(text, "broadcast.ded")
    rendered = info.value.render()
    expected = ("broadcast.ded:2:8: error: variable 'Q' in the head is not bound by a positive body atom\n"
                "  log(M, Q)@async :- bcast(N, P), node(N, M);\n"
                "         ^")
    assert expected in rendered
    assert str(info.value) == "broadcast.ded:2:8: error: variable 'Q' in the head is not bound by a positive body atom"


def test_rendered_syntax_error_puts_the_caret_after_the_statement():
    with pytest.raises(DiagnosticError) as info:
        parse_text('  p(X) :- q(X)\n', "s.ded", Sources())
    assert info.value.render() == ("s.ded:1:15: error: syntax error: missing ';' at the end of the statement\n"
                                   "    p(X) :- q(X)\n"
                                   "                ^")


def test_cli_check_renders_diagnostics(tmp_path, capsys):
    path = write(tmp_path, "bad.ded", 'q("a");\np(X) :- q(X), notin r(X, Z), Z > 0;\nr("a", 1);\n')
    assert cli.main(["check", path]) == 1
    err = capsys.readouterr().err
    assert err == (f"{path}:2:26: error: variable 'Z' in a negated atom is not bound by a positive body atom\n"
                   "  p(X) :- q(X), notin r(X, Z), Z > 0;\n"
                   "                           ^\n"
                   "1 error(s)\n")


def test_cli_check_warns_about_an_existential_variable_and_strict_fails(tmp_path, capsys):
    path = write(tmp_path, "neg.ded", 'q("a");\np(X) :- q(X), notin r(X, Z);\nr("a", 1);\n')
    header = f"{path}:2:26: warning: variable 'Z' {EXISTENTIAL}"
    rendered = "\n  p(X) :- q(X), notin r(X, Z);\n                           ^\n"
    assert cli.main(["check", path]) == 0
    out, err = capsys.readouterr()
    assert err == header + rendered
    assert out.endswith("1 warning(s)\n")
    assert cli.main(["check", "--strict", path]) == 1
    assert capsys.readouterr().err == header.replace("warning:", "error:") + rendered + "1 error(s)\n"
