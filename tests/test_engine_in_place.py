"""Carried state read in place (spark/executor.py, IN_PLACE_ROWS): after a
large tick (at least IN_PLACE_ROWS rows in its pack) the next tick reads the
carried relations' final state from that pack instead of copying it into its
start, and packs it from there. The threshold is lowered for the tests so that
small programs take that path; the facts are the reference evaluator's either
way: persisted relations, growing ones with differential rules, a persisted
lattice, GC, a capacity and two partitions."""

from __future__ import annotations

import os
import textwrap

import pytest

from engine_helpers import EXAMPLES, compared_run
from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.spark import executor
from sparkdedalus.spark.executor import Executor
from test_analysis_gc import DR_PLUS
from test_engine_lattices import ACROSS_TICKS

pytestmark = pytest.mark.spark

GROWING = """
.decl edge(g: string, x: int, y: int)
.persist edge
path(G, X, Y) :- edge(G, X, Y);
path(G, X, Z) :- edge(G, X, Y), path(G, Y, Z);
edge("g", 1, 2)@1; edge("g", 2, 3)@2; edge("g", 3, 1)@3; edge("h", 5, 6)@4;
"""


@pytest.fixture
def in_place(monkeypatch):
    """Per tick run, the relations it read in place; every tick after the first
    reads them so (the threshold at 0)."""
    monkeypatch.setattr(executor, "IN_PLACE_ROWS", 0)
    found = []
    inner = Executor._start

    def spy(self, tick, previous):
        started = inner(self, tick, previous)
        found.append((tick, set(self._in_place)))
        return started
    monkeypatch.setattr(Executor, "_start", spy)
    return found


def example(name: str) -> Program:
    return Program.from_files(os.path.join(EXAMPLES, name))


@pytest.mark.parametrize("program, ticks, options", [
    (example("voting.ded"), 6, {}),
    (example("voting.ded"), 6, {"partitions": 2}),
    (Program.parse(GROWING), 5, {}),
    (Program.parse(ACROSS_TICKS), 4, {}),
    (Program.parse(textwrap.dedent(DR_PLUS).lstrip("\n")), 5, {"gc": True}),
    (example("two_phase_commit.ded"), 8, {"network": Network.parse("capacity=2,delay=uniform(1,2),seed=3")}),
], ids=["voting", "voting-2-partitions", "growing-paths", "persisted-lattice", "gc", "capacity"])
def test_carried_state_read_in_place_gives_the_reference_facts(spark, in_place, program, ticks, options):
    found, run = compared_run(spark, program, ticks, **options)
    assert found == []
    assert in_place[0] == (1, set()) and all(names for tick, names in in_place[1:])


def test_small_ticks_copy_the_carried_state(spark, monkeypatch):
    """At the default threshold an example's ticks copy: their plans stay small."""
    seen = []
    inner = Executor._start

    def spy(self, tick, previous):
        started = inner(self, tick, previous)
        seen.append(set(self._in_place))
        return started
    monkeypatch.setattr(Executor, "_start", spy)
    found, _ = compared_run(spark, example("voting.ded"), 4)
    assert found == [] and seen == [set()] * 4
