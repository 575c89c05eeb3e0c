"""Appended state (spark/appended.py): a tick that appends its new facts to the
carried state of the relations no rule reads instead of copying it gives the reference evaluator's facts at
every tick, in one partition and in a partitioner's buckets, with messages,
negation, recursion, GC, lattices, `r(..)@k` and a store it resumes from; and
it appends when it should (`TickStats.appended`), compacting every COMPACT_EVERY
pieces and copying when its partitions are not the pieces'."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import compared, compared_run, placement

from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.spark.appended import APPEND_ROWS, APPEND_ROWS_SETTING, COMPACT_EVERY
from sparkdedalus.spark.engine import Engine

pytestmark = pytest.mark.spark

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: a persisted log gaining 3 facts a tick, a relation read back at tick 2, and one carried because its source grows
LOG = """
.persist log
seed("n", 1); seed("n", 2); seed("m", 3);
log(L, K, T) :- seed(L, K)@T;
early(L, K) :- log(L, K, 2)@2;
seen(L, K) :- log(L, K, _);
count_of(L, count<K>) :- log(L, K, _);
"""

#: messages into a persisted log, a re-sent fact (already held), and negation of a persisted relation
MESSAGES = """
.persist got
.persist banned
.persist kept
ping("a", "b", 1)@1; ping("a", "b", 2)@2; ping("a", "b", 1)@3; ping("a", "b", 3)@3; ping("a", "c", 3)@5;
banned("b", 2)@1; banned("b", 3)@4;
got(D, X)@async :- ping(S, D, X);
kept(L, X) :- got(L, X), notin banned(L, X);
"""

#: a transitive closure over a persisted, growing edge relation (recursion on new facts), kept in a history
GRAPH = """
.persist edge
.persist history
edge("a", 1, 2)@1; edge("a", 2, 3)@2; edge("a", 3, 4)@4; edge("a", 4, 1)@5; edge("a", 5, 6)@6;
path(L, X, Y) :- edge(L, X, Y);
path(L, X, Z) :- path(L, X, Y), edge(L, Y, Z);
history(L, X, Y, T) :- path(L, X, Y)@T;
"""

#: a collected relation and a lattice beside an appended one
GC_AND_LATTICE = """
.persist log
.persist pending
// @gc pending(L, X) when done(L, X)
.persist done
item("a", 1)@1; item("a", 2)@2; item("a", 3)@3; item("a", 4)@4;
finish("a", 1)@2; finish("a", 3)@5;
log(L, X) :- item(L, X);
pending(L, X) :- item(L, X);
done(L, X) :- finish(L, X);
best(L, min<X>) :- pending(L, X), notin done(L, X);
"""


def duplicated(run) -> int:
    """The rows that some tick's pack holds more than once (one job): none,
    when a tick appends only facts the earlier state lacks."""
    from functools import reduce

    from pyspark.sql import functions as F

    packs = [pack.withColumn("__tick", F.lit(tick)) for tick, pack in run.driver.packs.items()]
    rows = reduce(lambda a, b: a.unionByName(b), packs)
    return rows.groupBy(*rows.columns).count().where("count > 1").count()


def appending(spark, **settings):
    """Runs inside append from the first tick that can (no threshold)."""
    return placement(spark, "spark", **{APPEND_ROWS_SETTING: 0, **settings})


#: a relation carried because its only source holds at every tick, and nothing persisted
STATIC = 'p("a", 1); p("b", 2); q(L, X + 1) :- p(L, X);'


@pytest.mark.parametrize("name, text, ticks", [("log", LOG, 12), ("messages", MESSAGES, 7), ("graph", GRAPH, 8),
                                                ("gc and lattice", GC_AND_LATTICE, 7), ("static", STATIC, 3)])
def test_appending_gives_the_reference_facts(spark, name, text, ticks):
    program = Program.parse(text)
    with appending(spark):
        found, run = compared_run(spark, program, ticks, gc=name == "gc and lattice")
        assert duplicated(run) == 0
    assert found == []
    assert any(s.appended for s in run.stats)


def test_appending_with_delays_in_a_partitioners_buckets(spark):
    """Two partitions, the locations' buckets (policy), and messages delayed 1-3 ticks."""
    program = Program.parse(MESSAGES)
    with appending(spark):
        found, run = compared_run(spark, program, 8, network=Network.parse("delay=uniform(1,3),seed=4"), partitions=2)
        assert duplicated(run) == 0
    assert found == []
    assert any(s.appended for s in run.stats)


def test_without_buckets_several_partitions_copy(spark):
    """No partitioner and two partitions: reading the pieces would shuffle them, so every tick copies."""
    with appending(spark):
        found, run = compared_run(spark, Program.parse(LOG), 4, partitions=2, policy=False)
    assert found == []
    assert not any(s.appended for s in run.stats)


def test_when_a_tick_appends(spark):
    """Tick 1 has no state before it; ticks 2.. append, each adding a piece,
    until COMPACT_EVERY pieces, which are compacted into one."""
    program = Program.parse(LOG)
    with appending(spark):
        found, run = compared_run(spark, program, 2 * COMPACT_EVERY + 1)
        assert duplicated(run) == 0
    assert found == []
    assert [s.appended for s in run.stats] == [False] + [True] * 2 * COMPACT_EVERY
    # tick 2: 1 piece (tick 1's pack), ..., tick COMPACT_EVERY: COMPACT_EVERY - 1; the next: 1 again
    expected = [0] + [(tick - 2) % (COMPACT_EVERY - 1) + 1 for tick in range(2, 2 * COMPACT_EVERY + 2)]
    assert [s.pieces for s in run.stats] == expected
    # by hand: log holds 3 facts a tick, and the count per location
    assert len(run.facts(12, ["log"])["log"]) == 36
    assert run.facts(12, ["count_of"])["count_of"] == {("n", 2), ("m", 1)}
    assert run.facts(12, ["early"])["early"] == {("n", 1), ("n", 2), ("m", 3)}


#: a history stamped with its tick (analysis/tick_stamps.py), appended without comparing it to the earlier state
HISTORY = """
.persist history
.persist total
in("a", 1); in("a", 2)@2; in("b", 3)@3;
history(L, X, T) :- in(L, X)@T;
total(L, X) :- in(L, X);
"""


def test_a_stamped_history_appends_without_comparing(spark):
    """history's new facts are not compared with its earlier state (none of
    them can be there): the same facts as the reference, none twice."""
    program = Program.parse(HISTORY)
    with appending(spark):
        found, run = compared_run(spark, program, 2 * COMPACT_EVERY)
        assert duplicated(run) == 0
    assert found == []
    assert all(s.appended for s in run.stats[1:])
    assert run.driver.loop.spark_loop.executor.compared == {"total"}
    # by hand: "a" 1 at every tick, "a" 2 from tick 2, "b" 3 at tick 3
    assert len(run.facts(2 * COMPACT_EVERY, ["history"])["history"]) == 2 * COMPACT_EVERY + 2


def test_facts_given_for_a_stamped_relation_are_compared(spark):
    """A fact given to the run for history (an `edb=` row, true at every tick)
    is not stamped: each tick derives it again, and it must not be appended
    again."""
    program = Program.parse(HISTORY)
    with appending(spark):
        found, run = compared_run(spark, program, 5, edb={"history": [("a", 9, 0)]})
        assert duplicated(run) == 0
    assert found == []
    assert "history" in run.driver.loop.spark_loop.executor.compared


def test_below_the_threshold_a_tick_copies(spark):
    """The default threshold: a state of a few facts is copied, as before."""
    program = Program.parse(LOG)
    with placement(spark, "spark", **{APPEND_ROWS_SETTING: APPEND_ROWS}):
        found, run = compared_run(spark, program, 4)
    assert found == []
    assert not any(s.appended for s in run.stats)


@pytest.mark.parametrize("example", ["broadcast.ded", "reliable_broadcast.ded", "two_phase_commit.ded",
                                     "voting.ded"])
def test_examples_appending(spark, example):
    program = Program.from_files(str(EXAMPLES / example))
    with appending(spark):
        found, run, _ = compared(spark, program, 6)
        assert duplicated(run) == 0
    assert found == []


def test_a_stored_appending_run_resumes(spark, tmp_path):
    """A store written by ticks that append, resumed: the resumed ticks read
    the stored state and give the reference facts."""
    program = Program.parse(LOG)
    store = str(tmp_path / "run")
    with appending(spark):
        first = Engine(spark).run(program, 5, store=store)
        assert any(s.appended for s in first.stats)
        found, resumed = compared_run(spark, program, 9, store=store, resume=True)
    assert found == []
    assert any(s.appended for s in resumed.stats[-3:])
