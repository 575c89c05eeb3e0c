"""Engine runs with a store: every relation at every tick, read back from the
Delta tables (delta-rs and Spark), equals the reference trace; resuming a
stored run gives what an uninterrupted run gives; storage grows with changes."""

from __future__ import annotations

import os

import pytest

from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.spark.engine import Engine
from sparkdedalus.store import read
from store_helpers import CHANGING, example, expected_facts, reference, store_differences

pytestmark = pytest.mark.spark


def check_spark_readers(run, trace, ticks) -> None:
    """run.relation (Spark, through the store) equals the reference at `ticks`."""
    for tick in ticks:
        want = expected_facts(trace, tick)
        for name in run.program.relations:
            assert {tuple(r) for r in run.relation(name, tick).collect()} == want[name], (tick, name)


def test_broadcast_time_travel_with_spark_delta(spark, tmp_path):
    program, ticks = example("broadcast.ded"), 5
    trace = reference(program, ticks)
    path = str(tmp_path / "run")
    run = Engine(spark).run(program, ticks, store=path, store_writer="spark")
    assert run.store.writer == "spark-delta" and read.last_tick(path) == ticks
    assert store_differences(path, trace, range(1, ticks + 1)) == []
    check_spark_readers(run, trace, (2, 5))
    assert read.relation_history(path, "log", 2, 5) == {t: expected_facts(trace, t)["log"] for t in range(2, 6)}
    assert run.facts(3, relations=["log"]) == {"log": expected_facts(trace, 3)["log"]}  # not in memory: the store
    log = spark.read.format("delta").load(os.path.join(path, "log"))
    assert log.columns[:2] == ["loc", "c1"]


@pytest.mark.parametrize("name,network", [
    pytest.param("two_phase_commit.ded", "delay=uniform(1,3),seed=11", marks=pytest.mark.slow),
    pytest.param("reliable_broadcast.ded", "delay=uniform(1,3),seed=3", marks=pytest.mark.slow),
    ("nonconfluent.ded", "delay=uniform(1,3),seed=7")])
def test_examples_time_travel_with_delta_rs(spark, tmp_path, name, network):
    program = example(name)
    network = Network.parse(network)
    ticks = 6
    trace = reference(program, ticks, network)
    path = str(tmp_path / "run")
    run = Engine(spark).run(program, ticks, network=network, store=path, store_writer="delta-rs")
    assert store_differences(path, trace, range(1, ticks + 1)) == []
    check_spark_readers(run, trace, (ticks,))


def test_resume_continues_a_stored_run(spark, tmp_path):
    """Random delays keep messages in flight across ticks; a run stopped after
    tick 4 and resumed (with the other writer) ends as an uninterrupted run."""
    program, ticks = Program.parse(CHANGING), 9
    network = Network.parse("delay=uniform(1,3),seed=5")
    trace = reference(program, ticks, network)
    assert any(m.arrival is not None and m.arrival - m.send_tick > 1 for m in trace.messages)
    path = str(tmp_path / "run")
    Engine(spark).run(program, 4, network=network, store=path, store_writer="delta-rs")
    assert read.last_tick(path) == 4
    run = Engine(spark).run(program, ticks, network=network, store=path, resume=True)
    assert run.store.resumed_from == 4 and run.store.writer == "spark-delta"
    assert [s.tick for s in run.stats] == list(range(5, ticks + 1))
    assert store_differences(path, trace, range(1, ticks + 1)) == []
    assert read.messages(path, sent=2) == [m for m in read.messages(path) if m.send_tick == 2]


def test_storage_grows_with_changes_not_ticks(spark, tmp_path):
    """broadcast.ded is quiet after tick 4: ticks 5..12 write nothing."""
    program = example("broadcast.ded")
    path = str(tmp_path / "run")
    run = Engine(spark).run(program, 12, store=path, store_writer="delta-rs")
    assert all(not run.store.written[t] for t in range(5, 13))
    import pyarrow as pa
    for name in program.relations:
        rows = pa.table(read.delta_table(path, name).to_pyarrow_table())
        assert max(rows.column("_tick").to_pylist(), default=0) <= 4
    facts = read.facts(path, 12)
    assert len(facts["log"]) == 11 and len(facts["node"]) == 5
