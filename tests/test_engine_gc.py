"""Garbage collection in the Spark engine (`Engine.run(..., gc=True)`): with
the reference evaluator as the oracle, both with GC, every relation is equal
at every tick, and so are the persisted and collected rows per tick, on the
GC analysis' patterns, the examples GC collects on and small voting and
two-phase commit workloads. A collected relation no longer counts as growing:
treating it as growing (semi-naive across ticks) makes the engine differ."""

from __future__ import annotations

import importlib.util
import json
import os
import textwrap

import pytest

from engine_helpers import EXAMPLES, compared_run, example_ticks
from reference_helpers import REPO
from sparkdedalus import Program
from sparkdedalus.analysis import growth
from sparkdedalus.analysis.gc import gc_rules
from sparkdedalus.reference import run as reference_run
from sparkdedalus.spark import plan as tick_plan
from sparkdedalus.spark.engine import Engine
from test_analysis_gc import ANNOTATED, DR_PLUS, HELD, PUNCTUATION

_spec = importlib.util.spec_from_file_location("gc_workloads", os.path.join(REPO, "benchmarks", "gc_workloads.py"))
gc_workloads = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gc_workloads)

#: q is derived from x by a `now` rule without negation: were x still counted
#: as growing, q would be carried from tick to tick and keep q("a", 1) after
#: x("a", 1) is collected. fin("a", 1) at 2 gives done("a", 1) at 3, so GC drops
#: x("a", 1) at the end of tick 3: at tick 4 x and q hold ("a", 2) only.
DERIVED = """
.persist x
.persist done
// @gc x(L, X) when done(L, X)
q(L, X) :- x(L, X);
done(L, X)@next :- x(L, X), fin(L, X);
x("a", 1)@1; x("a", 2)@1; fin("a", 1)@2;
"""


def parse(text: str) -> Program:
    return Program.parse(textwrap.dedent(text).lstrip("\n"), "t.ded")


def check_gc(spark, program: Program, ticks: int) -> object:
    """Spark with GC equals the reference with GC: every relation at every
    tick, and the persisted and collected rows per tick. Returns the Run."""
    found, run = compared_run(spark, program, ticks, gc=True)
    assert found == []
    trace = reference_run(program, ticks, gc=True)
    assert [(s.persisted, s.collected) for s in run.stats] == \
        [(s["persisted_rows"], s["collected_rows"]) for s in trace.stats]
    return run


@pytest.mark.parametrize("text", [DR_PLUS, PUNCTUATION, HELD, ANNOTATED], ids=["DR+", "punctuation", "held",
                                                                                 "annotation"])
def test_patterns(spark, text):
    run = check_gc(spark, parse(text), 5)
    assert sum(s.collected for s in run.stats) > 0


def test_a_collected_relation_is_not_growing(spark):
    program = parse(DERIVED)
    run = check_gc(spark, program, 5)
    assert run.facts(4, ["x", "q"]) == {"x": {("a", 2)}, "q": {("a", 2)}}
    assert [s.collected for s in run.stats] == [0, 0, 1, 0, 0]
    assert [s.persisted for s in run.stats] == [2, 2, 2, 2, 2]  # x, then x and done


def test_the_oracle_catches_a_collected_relation_taken_as_growing(spark, monkeypatch):
    """The check can fail: with GC ignored by the growth analysis, q keeps
    q("a", 1) after x("a", 1) is gone."""
    monkeypatch.setattr(tick_plan, "growing_relations", lambda program, stamped, collected:
                        growth.growing_relations(program, stamped))
    found, _ = compared_run(spark, parse(DERIVED), 5, gc=True)
    assert found and all(" q: " in line and "extra [('a', 1)]" in line for line in found)


def test_gc_off_keeps_every_fact(spark):
    program = parse(DR_PLUS)
    run = Engine(spark).run(program, ticks=4)
    assert [s.collected for s in run.stats] == [0, 0, 0, 0]
    assert run.facts(4, ["x"]) == {"x": {("a", 1), ("a", 2)}}
    assert [s.persisted for s in run.stats] == [2, 3, 3, 3]  # x("a", 1), x("a", 2), then y("a", 1) too


@pytest.mark.parametrize("name", [pytest.param("voting.ded", marks=pytest.mark.slow), "sealed.ded"])
def test_examples(spark, name):
    path = EXAMPLES / name
    program = Program.from_files(str(path))
    assert gc_rules(program)
    run = check_gc(spark, program, example_ticks(path) + 2)
    assert sum(s.collected for s in run.stats) > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["voting", "two_phase_commit"])
def test_workloads_small(spark, name):
    program = Program.parse(getattr(gc_workloads, name)(6, 16), f"{name}.ded")
    run = check_gc(spark, program, 16)
    assert sum(s.collected for s in run.stats) > 0



def test_run_gc_and_stats_on_spark(spark, capsys, tmp_path):
    """`sparkdedalus run --gc on|off --stats` with the Spark engine: the facts
    of DR_PLUS at tick 4 (x("a", 1) dropped after tick 2 with GC), and the
    same GC statistics as the reference engine's. The command leaves the
    caller's session as it found it: no job group or description left behind."""
    from sparkdedalus.shell import cli, run as command
    context = spark.sparkContext
    context.setJobDescription("the caller's own")
    source = tmp_path / "t.ded"
    source.write_text(textwrap.dedent(DR_PLUS).lstrip("\n"))
    stats = {}
    for engine, mode in (("spark", "on"), ("reference", "on"), ("spark", "off")):
        path = tmp_path / f"{engine}-{mode}.json"
        args = cli._parser().parse_args(["run", str(source), "--ticks", "4", "--engine", engine, "--gc", mode,
                                         "--quiet", "--relations", "x", "--stats", str(path)])
        assert command.handle(args, new_session=lambda args: spark) == 0
        expected = [["a", 2]] if mode == "on" else [["a", 1], ["a", 2]]
        printed = capsys.readouterr()
        assert json.loads(printed.out)["relations"]["x"] == expected
        # the printed relation x is collected with --gc on, and the output says so
        assert json.loads(printed.out).get("gc_collected") == (["x"] if mode == "on" else None)
        assert ("garbage-collected: x " in printed.err) == (mode == "on")
        stats[engine, mode] = json.loads(path.read_text())
        assert context.getLocalProperty("spark.job.description") == "the caller's own"
        assert context.getLocalProperty("spark.jobGroup.id") is None
    context.setJobDescription(None)
    for key in ("gc", "gc_rules", "persisted_rows_per_tick", "collected_rows_per_tick"):
        assert stats["spark", "on"][key] == stats["reference", "on"][key]
    assert stats["spark", "on"]["gc_rules"] == ["x(L, K) when y(L, K)"]
    assert stats["spark", "on"]["persisted_rows_per_tick"] == [2, 2, 2, 2]
    assert stats["spark", "off"]["persisted_rows_per_tick"] == [2, 3, 3, 3]
    assert not stats["spark", "off"]["gc"]
