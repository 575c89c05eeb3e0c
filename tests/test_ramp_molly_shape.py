"""benchmarks/programs/ramp_molly_shape.ded (RAMP-Fast with the shape of Molly's RAMP
program, issue 47): it passes the strict check with that shape; the reference
evaluator derives the facts its header derives by hand (a read racing a commit
fetches the missing version in round 2 and returns the committed transaction on
every key); and the Spark engine, its ticks placed in the driver (no JVM), gives
the reference's facts at every tick."""

from __future__ import annotations

import pytest

from reference_helpers import rows
from sparkdedalus import Program
from sparkdedalus.reference import run
from sparkdedalus.shell.cli import main
from test_benchmarks_smoke import REPO, quick_run

RAMP = str(REPO / "benchmarks" / "programs" / "ramp_molly_shape.ded")

#: (tick, relation, facts that hold then), as the header derives them
EXPECTED = [
    (2, "versions", {("s1", "k1", 11, "w1k1", k) for k in ("k1", "k2", "k3")}),
    (3, "read_done", {("c1", "r1")}),
    (3, "result", {("c1", "r1", k, 0, "") for k in ("k1", "k2", "k3")}),
    (4, "installing", {("s1", "c1", "w1", "k1", 11, 4), ("s1", "c2", "w2", "k4", 12, 4),
                       ("s2", "c1", "w1", "k2", 11, 5), ("s2", "c2", "w2", "k5", 12, 5),
                       ("s3", "c1", "w1", "k3", 11, 4)}),
    (6, "wdone", {("c1", "w1", 11), ("c2", "w2", 12)}),
]


def test_strict_check_and_shape():
    assert main(["check", "--strict", RAMP]) == 0
    program = Program.from_files(RAMP, strict=True)
    assert not program.warnings
    assert 44 <= len(program.rules) <= 48 and 36 <= len(program.relations) <= 40
    assert sum(len(r.negated_atoms) for r in program.rules) == 10
    assert sum(1 for r in program.rules if r.aggregates) >= 5
    assert len(program.facts) > 80  # the workload is in the text, as in Molly's


def test_the_race_the_header_derives():
    trace = run(Program.from_files(RAMP, strict=True), 7)
    for tick, relation, facts in EXPECTED:
        assert facts <= rows(trace, relation, tick), (tick, relation)
    # tick 4: w1 committed on s1 and s3, not yet installed on s2, when r3's gets arrive
    assert {("s1", "k1", 11), ("s3", "k3", 11)} <= rows(trace, "last_commit", 4)
    assert not {f for f in rows(trace, "last_commit", 4) if f[1] == "k2"}
    # tick 5: r3 saw k1, k3 at 11 and k2 empty; w1's metadata names k2: round 2 fetches it
    assert ("c3", "r3", "k2", 11) in rows(trace, "missing", 5)
    assert {f for f in rows(trace, "result", 5) if f[:2] == ("c3", "r3")} == {
        ("c3", "r3", "k1", 11, "w1k1"), ("c3", "r3", "k3", 11, "w1k3")}
    assert ("c3", "r3") not in rows(trace, "read_done", 6)
    # tick 7: w1's version of k2 came back: r3 returns w1 on all three keys, atomically
    assert {f for f in rows(trace, "result", 7) if f[:2] == ("c3", "r3")} == {
        ("c3", "r3", k, 11, f"w1{k}") for k in ("k1", "k2", "k3")}
    assert ("c3", "r3") in rows(trace, "atomic", 7)
    assert not any(rows(trace, "fractured", t) for t in range(1, 8))
    # a few hundred facts a tick by tick 5, as Molly's program (about 250)
    sizes = [sum(len(trace.relation(n, t)) for n in trace.program.relations) for t in range(1, 6)]
    assert sizes[-1] >= 250 and sizes == sorted(sizes)


def test_the_spark_engine_in_the_driver_gives_the_references_facts():
    """No JVM: the session would start only if a tick went to Spark, which fails here."""
    from sparkdedalus.plumbing.lazy import LazySession
    from sparkdedalus.plumbing.session import spark_defaults
    from sparkdedalus.spark.engine import Engine
    from sparkdedalus.spark.placement import SETTING

    def no_jvm():
        raise AssertionError("a tick of ramp_molly_shape.ded went to Spark")

    program = Program.from_files(RAMP, strict=True)
    spark = LazySession(no_jvm, {**spark_defaults(), SETTING: "driver"})
    engine_run = Engine(spark).run(program, ticks=5)
    trace = run(program, 5)
    names = sorted(program.relations)
    assert [s.placement for s in engine_run.stats] == ["driver"] * 5
    for tick in range(1, 6):
        assert engine_run.facts(tick, relations=names) == {n: set(trace.relation(n, tick)) for n in names}, tick


@pytest.mark.slow
def test_quick_engine_benchmark_ramp_molly_step():
    """`benchmarks/engine.py --quick --only ramp_molly`: the CLI's Spark engine and the
    reference evaluator print the same facts, timed (a JVM for the benchmark's floor)."""
    (line,) = [x for x in quick_run("engine.py", "--only", "ramp_molly") if x["measurement"] == "ramp_molly"]
    assert line["outputs_equal"] is True, line
    assert (line["rules"], line["relations"], line["negations"], line["strata"]) == (47, 40, 10, 6)
    assert line["spark_seconds_median"] > 0 and line["reference_seconds_median"] > 0
