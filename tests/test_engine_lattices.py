"""min and max inside their own recursion on the Spark engine
(spark/executor.py: the general loop keeps the best row of each group; the Arrow
fixpoint, spark/fixpoint.py), against the reference evaluator, on the
hand-checked programs of tests/test_lattices.py."""

from __future__ import annotations

import pytest

from sparkdedalus import Program
from sparkdedalus.spark.fixpoint import ARROW, LOOP, SETTING
from tests.engine_helpers import differences
from tests.test_lattices import COMPONENTS, COMPONENTS_CC, SHORTEST, SHORTEST_DIST
from sparkdedalus.spark.engine import Engine

ACROSS_TICKS = """
.decl edge(l: string, x: int, y: int, w: int)
.persist edge
.persist dist
dist(L, 1, 0) :- edge(L, _, _, _);
dist(L, Y, min<D>) :- dist(L, X, D1), edge(L, X, Y, W), W >= 0, D == D1 + W;
edge("g", 1, 2, 5)@1; edge("g", 1, 3, 1)@2; edge("g", 3, 2, 1)@2; edge("h", 1, 2, 2)@3; edge("g", 2, 4, 0)@3;
"""


@pytest.fixture(params=[ARROW, LOOP])
def fixpoint(spark, request):
    spark.conf.set(SETTING, request.param)
    yield request.param
    spark.conf.unset(SETTING)


def test_shortest_paths_and_components(spark, fixpoint):
    run = Engine(spark).run(Program.parse(SHORTEST), ticks=1)
    assert run.facts(1, relations=["dist"])["dist"] == SHORTEST_DIST
    # the Arrow fixpoint takes the recursion whole (no iteration job); the loop a job an iteration
    assert (run.stats[0].iterations == 0) == (fixpoint == ARROW)
    cc = Engine(spark).run(Program.parse(COMPONENTS), ticks=1).facts(1, relations=["cc"])["cc"]
    assert cc == COMPONENTS_CC


def test_a_persisted_lattice_across_ticks(spark, fixpoint):
    # tick 2 improves dist 2 from 5 to 2 (the carried 5 is replaced); tick 3
    # adds a second location and an edge of weight 0
    assert differences(spark, Program.parse(ACROSS_TICKS), ticks=4) == []


def test_max_and_several_starting_values(spark):
    program = Program.parse("""
    .decl seed(l: string, x: int, d: int)
    .decl step(l: string, x: int, y: int, w: int)
    best(L, X, D) :- seed(L, X, D);
    best(L, Y, max<D>) :- best(L, X, D1), step(L, X, Y, W), W >= 0, D == D1 - W;
    seed("g", 1, 4); seed("g", 1, 9); seed("g", 2, 3); step("g", 1, 2, 1); step("g", 2, 1, 1);
    seed("h", 5, 0)@2;
    """)
    assert differences(spark, program, ticks=2) == []
