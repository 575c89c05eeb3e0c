"""The Arrow fixpoint (spark/fixpoint.py) with comparisons, `+ - *`
assignments and min/max lattices, in pure pyarrow (no Spark): each stratum's
`solve` is compared with the reference evaluator."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sparkdedalus import Program
from sparkdedalus.reference.evaluator import run
from sparkdedalus.spark.fixpoint import ArrowFixpoint
from tests.test_lattices import COMPONENTS, SHORTEST, SHORTEST_DIST

MAX = """
.decl next_of(l: string, x: int, y: int, w: int)
latest(L, 1, 100) :- next_of(L, _, 1, _);
latest(L, X, max<T>) :- latest(L, Y, T1), next_of(L, X, Y, W), W >= 0, T == T1 - W;
next_of("g", 2, 1, 4); next_of("g", 3, 2, 2); next_of("g", 3, 1, 1);
"""

# hop counts bounded by 5 on a 4-cycle with a tail: reach keeps every count
HOPS = """
.decl edge(l: string, x: int, y: int)
reach(L, X, 0) :- edge(L, X, _);
reach(L, Y, H) :- reach(L, X, H1), edge(L, X, Y), H1 < 5, H == H1 + 1;
edge("g", 1, 2); edge("g", 2, 3); edge("g", 3, 4); edge("g", 4, 1); edge("g", 4, 5);
edge("h", 7, 8);
"""


def plan_of(program, name: str) -> ArrowFixpoint | None:
    stratum = next(s for s in program.strata if name in s.relations)
    rules = [program.rules[i] for i in stratum.rules]
    return ArrowFixpoint.compile(rules, sorted({r.head.name for r in rules}), program)


def table(plan, name: str, rows) -> pa.Table:
    schema = plan.schemas[name]
    return pa.table([pa.array([row[i] for row in rows], f.type) for i, f in enumerate(schema)], schema=schema)


def inputs(program, plan, start: dict | None = None) -> dict:
    """The relations the stratum reads: the lower ones as the reference
    computes them, the stratum's own from `start` (else empty)."""
    final = run(program, ticks=1)
    return {n: table(plan, n, (start or {}).get(n, ()) if n in plan.names else final.relation(n, tick=1))
            for n in plan.reads}


def rows(found: pa.Table) -> set:
    return {tuple(row.values()) for row in found.to_pylist()}


def solved(text: str, name: str, start: dict | None = None) -> tuple:
    """(what `solve` gives for `name` in one bucket, what the reference holds at tick 1)."""
    program = Program.parse(text)
    plan = plan_of(program, name)
    return rows(plan.solve(inputs(program, plan, start), bucket=0, buckets=1)[name]), \
        run(program, ticks=1).relation(name, tick=1)


def test_shortest_paths_on_a_graph_with_a_cycle():
    plan = plan_of(Program.parse(SHORTEST), "dist")
    assert plan.lattices == {"dist": Program.parse(SHORTEST).lattices["dist"]}
    assert plan.pivot == {"dist": (0,)}  # the location; never the distance
    got, want = solved(SHORTEST, "dist")
    assert got == want == SHORTEST_DIST


def test_connected_components():
    plan = plan_of(Program.parse(COMPONENTS), "cc")
    assert plan.pivot == {"cc": (0,)}  # cc(L, X, C) -> cc(L, Y, C) keeps C, the aggregated position: dropped
    got, want = solved(COMPONENTS, "cc")
    assert got == want and len(got) == 10


def test_max_with_non_positive_steps():
    got, want = solved(MAX, "latest")
    assert got == want == {("g", 1, 100), ("g", 2, 96), ("g", 3, 99)}


def test_a_lattice_input_with_several_values_per_group_keeps_the_best():
    # dist already holds 2 at 3 and 5 and 3 at 1: 3 keeps 1 (better than 9),
    # 2 keeps 3 (better than 7), and 4..6 follow from them; the whole best
    # relation comes back, not only what changed
    start = {"dist": [("g", 2, 3), ("g", 2, 5), ("g", 3, 1)]}
    got, _ = solved(SHORTEST, "dist", start)
    text = SHORTEST + 'dist("g", 2, 3); dist("g", 2, 5); dist("g", 3, 1);'
    assert got == run(Program.parse(text), ticks=1).relation("dist", tick=1)
    assert got == {("g", 1, 0), ("g", 2, 3), ("g", 3, 1), ("g", 4, 12), ("g", 5, 12), ("g", 6, 3)}
    # nothing improves: the worse value given is still dropped
    got, _ = solved(SHORTEST, "dist", {"dist": sorted(SHORTEST_DIST | {("g", 7, 1), ("g", 7, 2)})})
    assert got == SHORTEST_DIST | {("g", 7, 1)}


def test_arithmetic_in_a_plain_recursion():
    got, want = solved(HOPS, "reach")
    assert got == want
    assert {h for (l, x, h) in got if (l, x) == ("g", 5)} == {1, 2, 3, 4, 5}  # H1 < 5 stops at 5
    assert {x for (l, x, h) in got if l == "h"} == {7, 8}


def test_only_new_facts_of_a_plain_relation():
    program = Program.parse(HOPS)
    plan = plan_of(program, "reach")
    found = plan.solve(inputs(program, plan, {"reach": [("g", 1, 0)]}), bucket=0, buckets=1)["reach"]
    assert ("g", 1, 0) not in rows(found) and rows(found) | {("g", 1, 0)} == run(program, ticks=1).relation(
        "reach", tick=1)


def test_a_double_column():
    text = """
    .decl edge(l: string, x: int, y: int, w: double)
    .decl source(l: string, x: int)
    cost(L, X, 0.5) :- source(L, X);
    cost(L, Y, min<D>) :- cost(L, X, D1), edge(L, X, Y, W), W >= 0, D == D1 - -W * 2 + 1;
    source("g", 1); edge("g", 1, 2, 0.25); edge("g", 2, 3, 1.5); edge("g", 1, 3, 5.0); edge("g", 3, 1, 0.0);
    """
    got, want = solved(text, "cost")
    assert got == want == {("g", 1, 0.5), ("g", 2, 2.0), ("g", 3, 6.0)}


def test_an_int_constant_with_a_double_is_a_double():
    text = """
    .decl edge(l: string, x: int, y: int, w: double)
    far(L, X, Y, D) :- edge(L, X, Y, D);
    far(L, X, Z, D) :- far(L, X, Y, D1), edge(L, Y, Z, W), D == D1 * W + 1, Z != X, D < 100;
    edge("g", 1, 2, 0.5); edge("g", 2, 3, 3.0); edge("g", 3, 1, 2.0);
    """
    program = Program.parse(text)
    assert program.relations["far"].types == ("string", "int", "int", "double")
    got, want = solved(text, "far")
    assert got == want and ("g", 1, 3, 2.5) in got and ("g", 1, 1, 7.0) not in got  # Z != X
    assert ("g", 2, 1, 7.0) in got  # 3 * 2 + 1


@pytest.mark.parametrize("start, step", [(3037000499, "V1 * V1"), (2 ** 62, "V1 + V1"), (-2 ** 62, f"V1 - {2 ** 62} - 1")])
def test_an_integer_overflow_stops_the_run(start, step):
    text = f"""
    .decl edge(l: string, x: int, y: int)
    big(L, X, {start}) :- edge(L, X, _);
    big(L, Y, V) :- big(L, X, V1), edge(L, X, Y), V == {step};
    edge("g", 1, 2); edge("g", 2, 3);
    """
    program = Program.parse(text)
    with pytest.raises(ValueError, match="integer overflow"):
        run(program, ticks=1)
    plan = plan_of(program, "big")
    tables = {"edge": table(plan, "edge", [("g", 1, 2), ("g", 2, 3)]), "big": table(plan, "big", [])}
    with pytest.raises(OverflowError, match="integer overflow in `V == V1"):
        plan.solve(tables, bucket=0, buckets=1)


@pytest.mark.parametrize("body", ["V == V1 / 2", "V == V1 % 2", "V == V1 + 1, V1 / 2 > 0"])
def test_division_and_modulo_are_refused(body):
    program = Program.parse(f"""
    .decl edge(l: string, x: int, y: int)
    r(L, X, 8) :- edge(L, X, _);
    r(L, Y, V) :- r(L, X, V1), edge(L, X, Y), {body};
    """)
    assert plan_of(program, "r") is None


@pytest.mark.parametrize("body", [
    'S == S2 + "x"',  # a string concatenation
    "!edge(L, Y, X)",
])
def test_what_pyarrow_would_not_compute_as_the_reference_is_refused(body):
    program = Program.parse(f"""
    .decl edge(l: string, x: int, y: int)
    .decl tag(l: string, x: int, t: int, s: string)
    r(L, X, S) :- tag(L, X, _, S);
    r(L, Y, S) :- r(L, X, S), edge(L, X, Y), tag(L, Y, T, S2), {body};
    """)
    assert plan_of(program, "r") is None


@pytest.mark.parametrize("text, name", [(SHORTEST, "dist"), (COMPONENTS, "cc"), (MAX, "latest"), (HOPS, "reach")])
def test_buckets_together_give_the_whole_answer(text, name):
    program = Program.parse(text)
    plan = plan_of(program, name)
    assert plan.partitioned
    tables = inputs(program, plan)
    parts = [rows(plan.solve(tables, bucket=b, buckets=4)[name]) for b in range(4)]
    assert sum(map(len, parts)) == len(set().union(*parts))  # disjoint
    assert set().union(*parts) == rows(plan.solve(tables, bucket=0, buckets=1)[name])
