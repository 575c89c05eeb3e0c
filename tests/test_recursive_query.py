"""A recursive stratum solved by DuckDB (spark/recursive_query.py): a linear
one by one recursive query, a non-linear one by a semi-naive loop of queries;
no Spark: which strata it takes, and its facts against the reference
evaluator and the pyarrow loop it replaces."""

from __future__ import annotations

import pytest

from sparkdedalus import Program
from sparkdedalus.reference.evaluator import run
from sparkdedalus.spark.fixpoint import ArrowFixpoint
from tests.test_fixpoint_arrow_lattices import HOPS, inputs, plan_of, rows, table
from tests.test_lattices import COMPONENTS, SHORTEST, SHORTEST_DIST

CLOSURE = """
.decl edge(l: string, x: int, y: int)
path(L, X, Y) :- edge(L, X, Y);
path(L, X, Z) :- edge(L, X, Y), path(L, Y, Z);
edge("a", 1, 2); edge("a", 2, 3); edge("a", 3, 1); edge("a", 3, 4); edge("b", 1, 2); edge("b", 2, 2);
"""

# two relations of one stratum (the recursive table tagged by relation), a
# constant in a body atom, a repeated variable, a head constant, a quote in a string
EVEN_ODD = """
.decl edge(l: string, x: int, y: int)
.decl label(l: string, x: int, s: string)
even(L, X, X) :- edge(L, X, _);
odd(L, X, Z) :- even(L, X, Y), edge(L, Y, Z);
even(L, X, Z) :- odd(L, X, Y), edge(L, Y, Z);
loops(L, X, "it's") :- odd(L, X, X);
named(L, S, Z) :- even(L, 5, Z), label(L, Z, S);
edge("g", 1, 2); edge("g", 2, 3); edge("g", 3, 1); edge("g", 3, 4); edge("h", 5, 6); edge("h", 6, 7);
label("h", 6, "six"); label("h", 7, "se'ven");
"""

# arithmetic: an int widened into a double column, a double constant, comparisons
WEIGHTED = """
.decl edge(l: string, x: int, y: int, w: double)
cost(L, X, Y, 0) :- edge(L, X, Y, _);
cost(L, X, Z, C) :- cost(L, X, Y, C1), edge(L, Y, Z, W), C == C1 + W * 2.5, C < 40.0;
edge("g", 1, 2, 1.5); edge("g", 2, 3, 2.0); edge("g", 3, 1, 0.5);
"""


# non-linear: a rule reading two atoms of the stratum
NONLINEAR_CLOSURE = CLOSURE.replace("edge(L, X, Y), path(L, Y, Z)", "path(L, X, Y), path(L, Y, Z)")

# Andersen's points-to, pts and hpts mutually recursive and non-linear (benchmarks/programs/andersen_bench.ded)
POINTS_TO = """
.decl alloc(l: string, v: int, o: int)
.decl assign(l: string, v: int, w: int)
.decl store(l: string, v: int, f: int, w: int)
.decl load(l: string, v: int, w: int, f: int)
pts(L, V, O) :- alloc(L, V, O);
pts(L, V, O) :- assign(L, V, W), pts(L, W, O);
hpts(L, O1, F, O2) :- store(L, V, F, W), pts(L, V, O1), pts(L, W, O2);
pts(L, V, O2) :- load(L, V, W, F), pts(L, W, O1), hpts(L, O1, F, O2);
alloc("p", 1, 100); alloc("p", 2, 200); alloc("p", 3, 300); alloc("q", 1, 100);
assign("p", 4, 1); assign("p", 5, 4);
store("p", 4, 7, 2);
load("p", 6, 5, 7); load("p", 6, 1, 8);
assign("p", 1, 6);
store("q", 1, 7, 1); load("q", 2, 1, 7);
"""


def both(text: str, name: str, start: dict | None = None) -> tuple:
    """(the query's facts, the pyarrow loop's, the reference's) for the stratum deriving `name`."""
    program = Program.parse(text)
    plan = plan_of(program, name)
    assert plan.query is not None, "the query does not take this stratum"
    tables = inputs(program, plan, start)
    stratum = next(s for s in program.strata if name in s.relations)
    loop = ArrowFixpoint.compile([program.rules[i] for i in stratum.rules], plan.names, program, duckdb=False)
    assert loop.query is None
    query = plan.solve(tables, bucket=0, buckets=1)
    pyarrow = loop.solve(tables, bucket=0, buckets=1)
    reference = run(program, ticks=1)
    return ({n: rows(query[n]) for n in plan.names}, {n: rows(pyarrow[n]) for n in plan.names},
            {n: reference.relation(n, tick=1) for n in plan.names})


@pytest.mark.parametrize("text, name", [(CLOSURE, "path"), (EVEN_ODD, "even"), (WEIGHTED, "cost"), (HOPS, "reach"),
                                        (NONLINEAR_CLOSURE, "path"), (POINTS_TO, "pts")])
def test_the_query_finds_what_the_pyarrow_loop_and_the_reference_find(text, name):
    query, pyarrow, reference = both(text, name)
    assert query == pyarrow == reference


def test_the_closure_by_hand():
    query, _, _ = both(CLOSURE, "path")
    cycle = {("a", x, y) for x in (1, 2, 3) for y in (1, 2, 3, 4)}
    assert query["path"] == cycle | {("b", 1, 2), ("b", 2, 2)}


def test_two_relations_by_hand():
    query, _, _ = both(EVEN_ODD, "even")
    assert ("g", 1, 1) in query["even"] and ("g", 1, 4) in query["odd"]  # 1-2-3-4: three steps
    assert {(x, z) for (l, x, z) in query["even"] if l == "h"} == {(5, 5), (6, 6), (5, 7)}  # 7 has no edge out
    assert {(x, z) for (l, x, z) in query["odd"] if l == "h"} == {(5, 6), (6, 7)}
    assert query["loops"] == {("g", 1, "it's"), ("g", 2, "it's"), ("g", 3, "it's")}  # the 3-cycle
    assert query["named"] == {("h", "se'ven", 7)}  # even from 5 only: not 6


def test_a_widened_int_and_doubles_by_hand():
    query, _, _ = both(WEIGHTED, "cost")
    assert ("g", 1, 2, 0.0) in query["cost"] and ("g", 1, 3, 5.0) in query["cost"]  # 0 + 2.0 * 2.5
    assert all(c < 40 for (_, _, _, c) in query["cost"])


def test_only_new_facts_are_returned():
    program = Program.parse(CLOSURE)
    plan = plan_of(program, "path")
    found = rows(plan.solve(inputs(program, plan, {"path": [("a", 1, 4), ("z", 9, 9)]}), bucket=0, buckets=1)["path"])
    assert ("a", 1, 4) not in found and ("z", 9, 9) not in found
    assert found | {("a", 1, 4)} == run(program, ticks=1).relation("path", tick=1)


# a min lattice whose stratum holds a second relation
NEAR_VIA = """
.decl edge(l: string, x: int, y: int, w: int)
near(L, Y, min<D>) :- edge(L, 1, Y, D);
near(L, Y, min<D>) :- near(L, X, D1), edge(L, X, Y, W), W >= 0, D == D1 + W;
seen(L, X) :- near(L, X, _);
near(L, Y, min<D>) :- seen(L, Y), edge(L, Y, _, D);
edge("g", 1, 2, 5); edge("g", 2, 3, 4); edge("g", 1, 3, 7); edge("g", 3, 2, 6);
"""

# a max lattice (the least loss over paths of losses, a cycle included), a group of two columns
LONGEST = """
.decl edge(l: string, x: int, y: int, w: int)
.decl start(l: string, x: int)
far(L, X, X, 0) :- start(L, X);
far(L, S, Y, max<D>) :- far(L, S, X, D1), edge(L, X, Y, W), W <= 0, D == D1 + W;
start("g", 1); start("g", 2);
edge("g", 1, 2, -3); edge("g", 2, 3, -4); edge("g", 1, 3, -9); edge("g", 3, 4, -8); edge("g", 2, 4, -2);
edge("g", 4, 1, -1);
"""


@pytest.mark.parametrize("text, name", [(SHORTEST, "dist"), (COMPONENTS, "cc"), (LONGEST, "far")])
def test_a_lattice_query_finds_what_the_pyarrow_loop_and_the_reference_find(text, name):
    query, pyarrow, reference = both(text, name)
    assert query == pyarrow == reference


def test_shortest_paths_and_the_longest_by_hand():
    assert both(SHORTEST, "dist")[0]["dist"] == SHORTEST_DIST  # tests/test_lattices.py's, by hand
    # from 1: 2 at -3, 3 at -9 or -3 - 4 = -7, 4 at -3 - 2 = -5 or -7 - 8, back to 1 at -6 < 0;
    # from 2: 3 at -4, 4 at -2, 1 at -2 - 1 = -3
    assert both(LONGEST, "far")[0]["far"] == {("g", 1, 1, 0), ("g", 1, 2, -3), ("g", 1, 3, -7), ("g", 1, 4, -5),
                                              ("g", 2, 2, 0), ("g", 2, 3, -4), ("g", 2, 4, -2), ("g", 2, 1, -3)}


def test_what_the_query_does_not_take():
    plan = plan_of(Program.parse(NEAR_VIA), "near")  # a lattice in a stratum of two relations
    assert plan is not None and plan.query is None


def test_a_non_linear_stratum_is_a_loop():
    assert plan_of(Program.parse(CLOSURE), "path").query.linear
    assert not plan_of(Program.parse(NONLINEAR_CLOSURE), "path").query.linear
    assert not plan_of(Program.parse(POINTS_TO), "pts").query.linear


def test_points_to_by_hand():
    query, _, _ = both(POINTS_TO, "pts")
    # p: 4 = 1 and 5 = 4 take 100; 4.7 = 2 puts 200 in 100.7; 6 = 5.7 reads it, and 1 = 6 passes it on
    # to 1, 4, 5, 6; 6 = 1.8 finds nothing (no field 8)
    p = {(v, o) for (l, v, o) in query["pts"] if l == "p"}
    assert p == {(1, 100), (2, 200), (3, 300), (4, 100), (5, 100), (6, 200), (1, 200), (4, 200), (5, 200)}
    # 100.7 holds 200 (4 points to 100 and 200, 2 to 200); q: 1.7 = 1 and 2 = 1.7: 100.7 holds 100
    assert {(o1, f, o2) for (l, o1, f, o2) in query["hpts"] if l == "p"} == {(100, 7, 200), (200, 7, 200)}
    assert {(v, o) for (l, v, o) in query["pts"] if l == "q"} == {(1, 100), (2, 100)}


def test_an_overflow_in_the_query_falls_back_to_the_loop_which_reports_it():
    program = Program.parse("""
    .decl edge(l: string, x: int, y: int)
    big(L, X, 3037000499) :- edge(L, X, _);
    big(L, Y, V) :- big(L, X, V1), edge(L, X, Y), V == V1 * V1;
    """)
    plan = plan_of(program, "big")
    tables = {"edge": table(plan, "edge", [("g", 1, 2), ("g", 2, 3)]), "big": table(plan, "big", [])}
    assert plan.query is not None and plan.query.solve(tables) is None
    with pytest.raises(OverflowError, match="integer overflow in `V == V1"):
        plan.solve(tables, bucket=0, buckets=1)


@pytest.mark.parametrize("text, name", [(CLOSURE, "path"), (EVEN_ODD, "even"), (WEIGHTED, "cost"),
                                        (NONLINEAR_CLOSURE, "path")])
def test_the_buckets_are_disjoint_and_together_the_whole_answer(text, name):
    program = Program.parse(text)
    plan = plan_of(program, name)
    assert plan.partitioned
    tables = inputs(program, plan, {"path": [("a", 1, 4)]} if name == "path" else None)
    whole = plan.query.solve(tables)
    parts = [plan.query.solve(tables, plan.pivot, bucket, 4) for bucket in range(4)]
    for n in plan.names:
        found = [rows(part[n]) for part in parts]
        assert sum(len(f) for f in found) == len(rows(whole[n])) and set().union(*found) == rows(whole[n])
    assert sum(1 for part in parts if part[plan.names[0]].num_rows) > 1  # split, not all in one bucket


def test_the_query_runs_one_bucket_a_partition_and_the_loop_four():
    closure = plan_of(Program.parse(CLOSURE), "path")
    assert closure.buckets(2, news=False) == 2  # DuckDB's threads work within a bucket
    assert closure.buckets(2, news=True) == 8  # after the first tick: the pyarrow loop
    program = Program.parse(CLOSURE)
    loop = ArrowFixpoint.compile(list(program.rules), ["path"], program, duckdb=False)
    assert loop.buckets(2, news=False) == 8
