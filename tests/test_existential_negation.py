"""Variables that occur in negated atoms only are existential (issue 24): hand-checked
programs on both engines, and what `check`, `fmt` and `explain` make of them. Every
expected fact is derived by hand in the comments, never copied from an engine."""

from __future__ import annotations

import pytest

from engine_helpers import differences
from frontend_helpers import FILE, write
from sparkdedalus import Program
from sparkdedalus.shell import cli
from sparkdedalus.analysis.explain import explain
from sparkdedalus.reference import run as reference_run

# One occurrence means `_`: r(X) iff q(X) and no s(X, v) for any v.
# s has rows for a only, so r = {b, c}.
SINGLE = '''
q("a"); q("b"); q("c");
s("a", "x");
r(X) :- q(X), notin s(X, Z);
'''
SINGLE_FACTS = {"r": {("b",), ("c",)}}

# Repeated in one atom: r(X) iff q(X) and no s(X, v, v).
#   a: s(a, 1, 1) has v = 1 twice -> no r(a)
#   b: s(b, 1, 2) differs -> r(b)        c: no s row -> r(c)
# (with `!s(X, _, _)` r would be {c} only.)
# At an existential location: u(X) iff q(X) and no w(v, X, v) for any v.
#   a: no w(_, a, _) -> u(a)
#   b: w(a, b, a), v = a twice -> no u(b)
#   c: w(c, c, b) has c != b -> u(c)
REPEATED = '''
q("a"); q("b"); q("c");
s("a", 1, 1); s("b", 1, 2);
w("a", "b", "a"); w("c", "c", "b");
r(X) :- q(X), !s(X, P, P);
u(X) :- q(X), notin w(V, X, V);
'''
REPEATED_FACTS = {"r": {("b",), ("c",)}, "u": {("a",), ("c",)}}

# Shared by two negated atoms: each atom has its own existential, so
# r(X) iff q(X), no s(X, _) and no t(X, _).
#   a: s(a, 1) -> no     b: t(b, 2) -> no     c: s(c, 1), t(c, 2) -> no     d: r(d)
# (reading Z as one value for both atoms, "no v with s(X, v) and t(X, v)", would also
# give a, b and c.)
# Repeated in one atom and shared with another: k(X) iff q(X), no m(X, v, v) and no t(X, _).
#   a: m(a, 5, 5) -> no   b: t(b, 2) -> no   c: t(c, 2) -> no   d: m(d, 5, 6) differs -> k(d)
SHARED = '''
q("a"); q("b"); q("c"); q("d");
s("a", 1); t("b", 2); s("c", 1); t("c", 2);
m("a", 5, 5); m("d", 5, 6);
r(X) :- q(X), !s(X, Z), !t(X, Z);
k(X) :- q(X), !m(X, Z, Z), !t(X, Z);
'''
SHARED_FACTS = {"r": {("d",)}, "k": {("d",)}}

# In a recursive stratum: reach follows edges into nodes not blocked, where Y is
# blocked when some blocked(L, Y, v, v) holds (blocked is derived by a rule of an
# earlier stratum from mark).
#   edges a->b, b->c, c->d, b->e, e->f; mark(n, c, 7, 7) blocks c; mark(n, e, 1, 2) does not.
#   reach: a (start), b (a->b), not c (blocked), so not d (only via c), e (b->e), f (e->f).
RECURSIVE = '''
start("n", "a");
edge("n", "a", "b"); edge("n", "b", "c"); edge("n", "c", "d"); edge("n", "b", "e"); edge("n", "e", "f");
mark("n", "c", 7, 7); mark("n", "e", 1, 2);
blocked(L, Y, P, Q) :- mark(L, Y, P, Q);
reach(L, X) :- start(L, X);
reach(L, Y) :- reach(L, X), edge(L, X, Y), notin blocked(L, Y, P, P);
'''
RECURSIVE_FACTS = {"reach": {("n", "a"), ("n", "b"), ("n", "e"), ("n", "f")}}

CASES = {"single": (SINGLE, SINGLE_FACTS), "repeated": (REPEATED, REPEATED_FACTS),
         "shared": (SHARED, SHARED_FACTS), "recursive": (RECURSIVE, RECURSIVE_FACTS)}


@pytest.mark.parametrize("case", CASES)
def test_reference_evaluator(case):
    text, expected = CASES[case]
    trace = reference_run(Program.parse(text, FILE), ticks=2)
    for tick in (1, 2):  # facts without a tick hold at every tick
        assert {name: set(trace.relation(name, tick=tick)) for name in expected} == expected


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES)
def test_spark_engine(spark, case):
    from sparkdedalus.spark.engine import Engine
    text, expected = CASES[case]
    program = Program.parse(text, FILE)
    run = Engine(spark).run(program, ticks=1)
    assert {name: set(rows) for name, rows in run.facts(1, relations=list(expected)).items()} == expected
    assert differences(spark, program, 1) == []  # the auxiliary relations agree too


def test_the_recursive_case_negates_inside_a_recursive_stratum():
    program = Program.parse(RECURSIVE, FILE)
    (stratum,) = [s for s in program.strata if "reach" in s.relations]
    assert stratum.recursive


def test_auxiliary_relations_are_marked_and_not_default_outputs():
    program = Program.parse(REPEATED, FILE)
    auxiliary = sorted(name for name, rel in program.relations.items() if rel.auxiliary)
    assert len(auxiliary) == 2  # one per negated atom repeating a variable
    assert set(program.outputs) == {"q", "s", "w", "r", "u"}
    assert set(Program.parse(SINGLE, FILE).relations) == {"q", "s", "r"}  # one occurrence: no projection


def test_explain_says_what_an_auxiliary_relation_is_for():
    text = 'q("a");\ns("a", 1, 1);\nr(X) :- q(X), !s(X, P, P);\n'
    report = explain(Program.parse(text, FILE))
    (line,) = [line for line in report.splitlines() if "auxiliary" in line]
    # the negated atom `s(X, P, P)` starts at line 3, column 16
    assert line.endswith("(loc: string)  IDB, auxiliary: what the negated atom at t.ded:3:16 reads")


def test_fmt_keeps_the_variable_as_written(tmp_path, capsys):
    path = write(tmp_path, "neg.ded", 'r(X) :- q(X), !s(X, P, P), notin t(X, Z);\n')
    assert cli.main(["fmt", path]) == 0
    assert capsys.readouterr().out == "r(X) :- q(X), notin s(X, P, P), notin t(X, Z);\n"
