"""Compiled code for large ticks only (spark/codegen.py): with
`spark.sparkdedalus.codegen=auto` a tick whose input (the last pack) has at
least COMPILED_ROWS rows runs with whole-stage code generation on, the others
interpreted, and the session is left compiled after a tick that handed on a
pack of that many rows, else interpreted; unset, the
session is never changed. The threshold is lowered for the test so that a small
program crosses it; the facts are the reference evaluator's either way."""

from __future__ import annotations

import os

import pytest

from engine_helpers import EXAMPLES, compared_run
from sparkdedalus import Program
from sparkdedalus.spark import codegen
from sparkdedalus.spark.engine import Engine
from sparkdedalus.spark.executor import Executor

pytestmark = pytest.mark.spark

WHOLE_STAGE = "spark.sql.codegen.wholeStage"
PROGRAM = Program.from_files(os.path.join(EXAMPLES, "broadcast.ded"))


@pytest.fixture
def seen(monkeypatch):
    """(tick, whole-stage setting while the tick ran) of every tick run."""
    found = []
    inner = Executor._tick

    def spy(self, tick, *args):
        found.append((tick, self.spark.conf.get(WHOLE_STAGE)))
        return inner(self, tick, *args)
    monkeypatch.setattr(Executor, "_tick", spy)
    return found


def test_ticks_over_the_threshold_run_compiled_and_the_session_comes_back(spark, monkeypatch, seen):
    assert spark.conf.get(codegen.SETTING) == "auto" and spark.conf.get(WHOLE_STAGE) == "false"
    small = Engine(spark).run(PROGRAM, ticks=5)
    sizes = [s.facts for s in small.stats]  # the pack each tick hands on: the next tick's input
    threshold = sorted(set(sizes))[len(set(sizes)) // 2]
    assert min(sizes) < threshold <= max(sizes)
    monkeypatch.setattr(codegen, "COMPILED_ROWS", threshold)
    seen.clear()
    found, run = compared_run(spark, PROGRAM, 5)
    assert found == []
    want = [sizes[t - 2] >= threshold if t > 1 else False for t in range(1, 6)]  # broadcast has no static facts
    assert [s.compiled for s in run.stats] == want and True in want and False in want
    assert [setting == "true" for _, setting in seen] == want
    assert [s.compiled for s in small.stats] == [False] * 5
    # the pack the last tick handed on is over the threshold: queries over the results compile
    assert sizes[-1] >= threshold and spark.conf.get(WHOLE_STAGE) == "true"
    # and the next run's small ticks run interpreted again, whatever the last run left
    monkeypatch.setattr(codegen, "COMPILED_ROWS", 10**9)
    seen.clear()
    again = Engine(spark).run(PROGRAM, ticks=2)
    assert seen == [(1, "false"), (2, "false")] and not any(s.compiled for s in again.stats)
    assert spark.conf.get(WHOLE_STAGE) == "false"


def test_unset_or_off_never_changes_the_session(spark, monkeypatch, seen):
    monkeypatch.setattr(codegen, "COMPILED_ROWS", 0)
    for mode in (None, "off"):
        if mode is None:
            spark.conf.unset(codegen.SETTING)
        else:
            spark.conf.set(codegen.SETTING, mode)
        try:
            seen.clear()
            run = Engine(spark).run(PROGRAM, ticks=2)
        finally:
            spark.conf.set(codegen.SETTING, "auto")
        assert not any(s.compiled for s in run.stats) and {s for _, s in seen} == {"false"}


def test_a_mode_it_does_not_know_is_refused(spark):
    spark.conf.set(codegen.SETTING, "sometimes")
    try:
        with pytest.raises(ValueError, match="spark.sparkdedalus.codegen: expected one of auto, on, off"):
            Engine(spark).run(PROGRAM, ticks=1)
    finally:
        spark.conf.set(codegen.SETTING, "auto")


def test_a_recursion_that_grows_large_compiles_the_rest_of_its_tick(spark, monkeypatch, seen):
    # transitive_closure.ded's tick 1 starts from its 5 edges (10 rows: a static relation
    # has a copy in each of the session's 2 buckets) and its recursion finds the 16 paths
    # (counted by hand in the example's header): with the threshold between the two the
    # tick starts interpreted and compiles from the recursion's count on
    program = Program.from_files(os.path.join(EXAMPLES, "transitive_closure.ded"))
    for threshold, compiled in ((12, True), (17, False)):
        monkeypatch.setattr(codegen, "COMPILED_ROWS", threshold)
        seen.clear()
        found, run = compared_run(spark, program, 1)
        assert found == []
        assert [s.compiled for s in run.stats] == [compiled]
        assert seen == [(1, "false")]  # it started interpreted either way (after a compiled run too)


def test_compiled_ticks_find_their_classes_in_spark_s_code_cache(spark, monkeypatch):
    # voting.ded in 2 partitions, every tick compiled: a tick generates about 150 classes,
    # the same from tick to tick but for the few that hold the tick's number as a literal
    # (message arrivals). With Spark's default cache of 100 generated classes every tick
    # compiled all of them again (151 at tick 8, measured); the sessions sparkdedalus
    # creates keep 1,000 (conf/spark-defaults.conf), so later ticks compile only those few.
    compilations = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()
    monkeypatch.setattr(codegen, "COMPILED_ROWS", 0)
    program = Program.from_files(os.path.join(EXAMPLES, "voting.ded"))
    counts = [compilations.getCount()]
    run = Engine(spark).run(program, ticks=8, partitions=2, progress=lambda tick, stats: counts.append(compilations.getCount()))
    per_tick = [after - before for before, after in zip(counts, counts[1:])]
    assert all(s.compiled for s in run.stats)
    assert per_tick[0] >= 100 and per_tick[-1] * 3 < per_tick[0], per_tick
