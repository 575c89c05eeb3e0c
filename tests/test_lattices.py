"""min and max inside their own recursion (checks/lattices.py): what the front
end accepts and rejects, and what the reference evaluator computes, checked by
hand on small graphs."""

from __future__ import annotations

import pytest

from sparkdedalus import Program
from sparkdedalus.analysis.growth import growing_relations
from sparkdedalus.reference.evaluator import run
from sparkdedalus.syntax.diagnostics import DiagnosticError

# The weighted graph of the usual Dijkstra illustration, and an edge 6 -> 1
# closing a cycle back to the source. By hand from 1: 2 at 7, 3 at 9, 6 at
# 9 + 2 = 11 (not 14 directly), 4 at 9 + 11 = 20 (not 7 + 15 = 22), 5 at
# 11 + 9 = 20 (not 20 + 6 = 26); 1 stays at 0 (the cycle back costs 12).
SHORTEST = """
.decl edge(l: string, x: int, y: int, w: int)
.decl source(l: string, x: int)
dist(L, X, 0) :- source(L, X);
dist(L, Y, min<D>) :- dist(L, X, D1), edge(L, X, Y, W), W >= 0, D == D1 + W;
source("g", 1);
edge("g", 1, 2, 7); edge("g", 1, 3, 9); edge("g", 1, 6, 14); edge("g", 2, 3, 10); edge("g", 2, 4, 15);
edge("g", 3, 4, 11); edge("g", 3, 6, 2); edge("g", 4, 5, 6); edge("g", 5, 6, 9); edge("g", 6, 5, 9);
edge("g", 6, 1, 1);
"""
SHORTEST_DIST = {("g", 1, 0), ("g", 2, 7), ("g", 3, 9), ("g", 4, 20), ("g", 5, 20), ("g", 6, 11)}

# A forest of three trees: {5, 3, 9, 4}, {7, 8}, {2, 6, 10, 1}; a component's
# label is its least node.
COMPONENTS = """
.decl link(l: string, x: int, y: int)
node(L, X) :- link(L, X, _);
node(L, Y) :- link(L, _, Y);
both(L, X, Y) :- link(L, X, Y);
both(L, Y, X) :- link(L, X, Y);
cc(L, X, X) :- node(L, X);
cc(L, Y, min<C>) :- cc(L, X, C), both(L, X, Y);
link("g", 5, 3); link("g", 3, 9); link("g", 9, 4); link("g", 7, 8); link("g", 2, 6); link("g", 6, 10);
link("g", 6, 1);
"""
COMPONENTS_CC = {("g", n, 3) for n in (3, 4, 5, 9)} | {("g", n, 7) for n in (7, 8)} \
    | {("g", n, 1) for n in (1, 2, 6, 10)}


def test_shortest_paths_on_a_graph_with_a_cycle():
    program = Program.parse(SHORTEST)
    assert program.lattices["dist"].func == "min" and program.lattices["dist"].position == 2
    assert run(program, ticks=1).relation("dist", tick=1) == SHORTEST_DIST


def test_connected_components_of_a_forest():
    assert run(Program.parse(COMPONENTS), ticks=1).relation("cc", tick=1) == COMPONENTS_CC


def test_max_with_non_positive_steps():
    # the greatest of the bounds that paths to 1 put on a node, each step
    # taking off its weight: 2 -> 1 (4), 3 -> 2 (2), 3 -> 1 (1). By hand: 1 at
    # 100, 2 at 100 - 4 = 96, 3 at the greater of 96 - 2 = 94 and 100 - 1 = 99.
    program = Program.parse("""
    .decl next_of(l: string, x: int, y: int, w: int)
    latest(L, 1, 100) :- next_of(L, _, 1, _);
    latest(L, X, max<T>) :- latest(L, Y, T1), next_of(L, X, Y, W), W >= 0, T == T1 - W;
    next_of("g", 2, 1, 4); next_of("g", 3, 2, 2); next_of("g", 3, 1, 1);
    """)
    assert run(program, ticks=1).relation("latest", tick=1) == {("g", 1, 100), ("g", 2, 96), ("g", 3, 99)}


def test_strings_ordered_by_min():
    program = Program.parse("""
    .decl link(l: string, x: string, y: string)
    cc(L, X, X) :- link(L, X, _);
    cc(L, Y, Y) :- link(L, _, Y);
    cc(L, Y, min<C>) :- cc(L, X, C), link(L, X, Y);
    cc(L, X, min<C>) :- cc(L, Y, C), link(L, X, Y);
    link("g", "b", "c"); link("g", "c", "a"); link("g", "x", "y");
    """)
    assert run(program, ticks=1).relation("cc", tick=1) == {
        ("g", "a", "a"), ("g", "b", "a"), ("g", "c", "a"), ("g", "x", "x"), ("g", "y", "x")}


def test_a_persisted_lattice_improves_as_edges_arrive():
    # tick 1: only 1 -> 2 (5): dist 2 = 5. Tick 2: 1 -> 3 (1) and 3 -> 2 (1)
    # arrive: dist 2 = 2, and the carried (2, 5) is replaced, not kept beside it.
    program = Program.parse("""
    .decl edge(l: string, x: int, y: int, w: int)
    .persist edge
    .persist dist
    dist(L, 1, 0) :- edge(L, _, _, _);
    dist(L, Y, min<D>) :- dist(L, X, D1), edge(L, X, Y, W), W >= 0, D == D1 + W;
    edge("g", 1, 2, 5)@1; edge("g", 1, 3, 1)@2; edge("g", 3, 2, 1)@2;
    """)
    trace = run(program, ticks=3)
    assert trace.relation("dist", tick=1) == {("g", 1, 0), ("g", 2, 5)}
    assert trace.relation("dist", tick=2) == {("g", 1, 0), ("g", 2, 2), ("g", 3, 1)}
    assert trace.relation("dist", tick=3) == trace.relation("dist", tick=2)
    assert "dist" not in growing_relations(program)  # a better value replaces a fact


def test_the_group_keeps_its_best_among_the_facts_it_starts_with():
    program = Program.parse("""
    .decl seed(l: string, x: int, d: int)
    .decl step(l: string, x: int, y: int)
    best(L, X, D) :- seed(L, X, D);
    best(L, Y, min<D>) :- best(L, X, D1), step(L, X, Y), D == D1 + 1;
    seed("g", 1, 4); seed("g", 1, 2); seed("g", 2, 9); step("g", 1, 2);
    """)
    assert run(program, ticks=1).relation("best", tick=1) == {("g", 1, 2), ("g", 2, 3)}


def test_an_aggregate_outside_the_cycle_keeps_set_semantics():
    # m's min reads a lower relation; m's recursion is through a plain rule:
    # no lattice, and both values of node 2 hold
    program = Program.parse("""
    m(L, X, min<V>) :- a(L, X, V);
    m(L, Y, V) :- m(L, X, V), link(L, X, Y);
    a("g", 1, 5); a("g", 2, 3); link("g", 1, 2);
    """)
    assert program.lattices == {}
    assert run(program, ticks=1).relation("m", tick=1) == {("g", 1, 5), ("g", 2, 3), ("g", 2, 5)}


REJECTED = [
    ("unknown increment", "d(L, Y, min<D>) :- d(L, X, D1), e(L, X, Y, W), D == D1 + W; e(\"a\", 1, 2, 3);",
     "D is D1 plus W, not known to be >= 0"),
    ("decreasing step", "d(L, Y, min<D>) :- d(L, X, D1), e(L, X, Y, W), W >= 0, D == D1 - W; "
     "e(\"a\", 1, 2, 3);", "could improve on the value it reads"),
    ("max with a positive step", "d(L, Y, max<D>) :- d(L, X, D1), e(L, X, Y), D == D1 + 1; e(\"a\", 1, 2);",
     "not known to be <= 0"),
    ("value scaled", "d(L, Y, min<D>) :- d(L, X, D1), e(L, X, Y), D == D1 * 2; e(\"a\", 1, 2);",
     "only `D1 + ...` keeps the order"),
    ("lower bound on a min", "d(L, Y, min<D>) :- d(L, X, D), e(L, X, Y), D > 3; e(\"a\", 1, 2);",
     "bounded the wrong way"),
    ("value as a key", "d(L, D, min<D2>) :- d(L, X, D), e(L, X, D2); e(\"a\", 1, 2);",
     "in the head of 'd' other than as its min"),
    ("value joined", "d(L, Y, min<D>) :- d(L, X, D), e(L, D, Y); e(\"a\", 1, 2);", "used in 'e'"),
    ("value negated", "d(L, Y, min<D>) :- d(L, X, D), e(L, X, Y), notin f(L, D); e(\"a\", 1, 2); f(\"a\", 0);",
     "used in 'f'"),
    ("two values combined", "d(L, Z, min<D>) :- d(L, X, D1), d(L, Y, D2), e(L, X, Y, Z), D == D1 + D2; "
     "e(\"a\", 1, 2, 3);", "combined with another value"),
    ("a constant read", "d(L, Y, min<D>) :- d(L, X, 0), e(L, X, Y, D); e(\"a\", 1, 2, 3);",
     "a constant where 'd' keeps its min"),
    ("min and max mixed", "d(L, Y, min<D>) :- d(L, X, D), e(L, X, Y); d(L, Y, max<D>) :- d(L, X, D), e(L, Y, X); "
     "e(\"a\", 1, 2);", "every rule that aggregates it must take the same"),
    ("value leaks to a plain relation", "d(L, Y, min<D>) :- r(L, Y, D); r(L, Y, D) :- d(L, X, D), e(L, X, Y); "
     "e(\"a\", 1, 2);", "in the head of 'r' other than as its min"),
    ("two aggregates", "d(L, Y, min<D>, max<D2>) :- d(L, X, D, D2), e(L, X, Y); e(\"a\", 1, 2);",
     "only one min<X> or max<X> per head"),
]


@pytest.mark.parametrize("text, message", [pytest.param(t, m, id=i) for i, t, m in REJECTED])
def test_rejected_with_the_condition_that_fails(text, message):
    with pytest.raises(DiagnosticError) as error:
        Program.parse(text)
    rendered = str(error.value)
    assert message in rendered
    assert "<string>:1:" in rendered  # located
    assert "unstratifiable" not in rendered  # one error, the precise one


def test_accepted_forms():
    for text in [
        "d(L, Y, min<D>) :- d(L, X, D), e(L, X, Y); e(\"a\", 1, 2);",  # the value copied
        "d(L, Y, min<D>) :- d(L, X, D1), e(L, X, Y), D == 1 + D1; e(\"a\", 1, 2);",  # plus a constant
        "d(L, Y, min<D>) :- d(L, X, D1), e(L, X, Y, W), W > 0, D == D1 + W * 2 + 1; e(\"a\", 1, 2, 3);",
        "d(L, Y, min<D>) :- d(L, X, D1), e(L, X, Y), D1 < 10, D == D1 + 1; e(\"a\", 1, 2);",  # an upper bound
        "d(L, Y, min<D>) :- d(L, X, D1), e(L, X, Y), D2 == D1 + 1, D == D2 + 1; e(\"a\", 1, 2);",  # a chain
        "d(L, Y, max<D>) :- d(L, X, D1), e(L, X, Y, W), 0 <= W, D == D1 - W; e(\"a\", 1, 2, 3);",
        "d(L, Y, min<D>) :- d(L, X, _), e(L, X, Y, D); e(\"a\", 1, 2, 3);",  # the group only
    ]:
        assert "d" in Program.parse(text).lattices, text


def test_count_over_its_own_recursion_is_a_cycle_that_says_why():
    with pytest.raises(DiagnosticError, match="only min<X> and max<X> may aggregate over their own recursion"):
        Program.parse("c(L, count<X>) :- d(L, X); d(L, X) :- c(L, X); d(\"a\", 1);")


def test_choose_in_a_recursion_still_reports_the_cycle():
    with pytest.raises(DiagnosticError, match="unstratifiable: a cycle through aggregation"):
        Program.parse("c(L, X) :- r(L, X), choose((L), (X)); r(L, X) :- c(L, X); r(\"a\", 1);")


def test_a_persisted_lattice_is_evaluated_on_new_facts_across_ticks():
    from sparkdedalus.analysis.growth import differential_rules

    text = """
    .decl edge(l: string, x: int, y: int, w: int)
    .persist edge
    dist(L, 1, 0) :- edge(L, _, _, _);
    dist(L, Y, min<D>) :- dist(L, X, D1), edge(L, X, Y, W), W >= 0, D == D1 + W;
    edge("g", 1, 2, 5)@1;
    """
    plain = Program.parse(text)
    kept = Program.parse(text + ".persist dist\n")

    def heads(program, **options):
        rules = differential_rules(program, growing_relations(program), **options)
        return sorted(str(program.rules[i].pos.line) for i in rules if program.rules[i].head.name == "dist")

    assert heads(plain) == []  # recomputed from the edges at every tick
    assert heads(kept) == ["4", "5"]  # its previous best is a fixpoint over the old edges
    assert heads(kept, collected={"dist"}) == []  # GC may thin it: no longer


def test_explain_names_the_lattice_of_a_stratum():
    from sparkdedalus.analysis.explain import explain, report

    program = Program.parse(SHORTEST)
    assert [s["lattices"] for s in report(program)["strata"]] == [
        [{"relation": "dist", "aggregate": "min", "argument": 3}]]
    assert "(recursive, 2 rule(s); dist keeps the min of argument 3)" in explain(program)
