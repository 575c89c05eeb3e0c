"""examples/protocols/paxos.ded on the Spark engine: exactly the reference evaluator's
facts, every relation at every tick, under random delays, omissions and a proposer
crash, and the safety and validity checks of tests/paxos_helpers.py hold on the
engine's facts (and, on a broken variant, fail there as on the reference); likewise
paxos_scalable.ded; and `faults --engine spark` agrees with the reference on a small
space. A Spark tick of these programs costs a few seconds on a shared
2-core machine: the default suite runs one 7-tick scenario (one to two minutes,
depending on the load); the others are `slow` (2 to 4 minutes each)."""

import pytest

from engine_helpers import compared
from paxos_helpers import BOTH_AT_ONCE, PAXOS, QUORUM_OF_ONE, REPLICAS, SAFETY, SCALABLE, SPLIT, paxos, violations
from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.shell.cli import main

pytestmark = pytest.mark.spark


def checked(spark, program, ticks: int, spec: str):
    """Compare both engines on `spec`; the Spark run's safety violations and last facts."""
    found, _, facts = compared(spark, program, ticks, network=Network.parse(spec))
    assert found == []
    return violations(facts.__getitem__, ticks), facts[ticks]


def test_both_campaign_p1_crashes_delays_and_an_omission(spark):
    # both campaign at tick 1; p1 crashes at 2; p2's p1a to a1 is lost, so p2 leads on
    # a2's and a3's promises alone; delays of 1 or 2 ticks: x and y executed by tick 7
    found, last = checked(spark, paxos(BOTH_AT_ONCE), 7, "delay=uniform(1,2),seed=412,crash=p1@2,omit=p2>a1@1")
    assert found == []
    assert last["leader"] == {("p2", 12)}
    assert last["executed"] == {(r, s, c) for r in REPLICAS for s, c in ((1, "x"), (2, "y"))}


@pytest.mark.slow
def test_the_same_with_another_omission_to_the_end(spark):
    # p2's p1a to a3 lost instead, other delays: all three commands executed by tick 10
    found, last = checked(spark, paxos(BOTH_AT_ONCE), 10, "delay=uniform(1,2),seed=3,crash=p1@2,omit=p2>a3@1")
    assert found == []
    assert last["leader"] == {("p2", 12)}
    assert last["executed"] == {(r, s, c) for r in REPLICAS for s, c in ((1, "x"), (2, "y"), (3, "z"))}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_leader_crash_under_random_delays(spark, seed):
    # the header's crash=p2@7 with delays of 1 to 3 ticks: p1 takes over
    found, last = checked(spark, paxos(), 22, f"delay=uniform(1,3),seed={seed},crash=p2@7,omit=p1>a2@3")
    assert found == []
    assert ("p1", 21) in last["leader"]
    assert last["executed"] == {(r, s, c) for r in REPLICAS for s, c in ((1, "x"), (2, "y"), (3, "z"))}


@pytest.mark.slow
def test_the_checks_say_unsafe_on_the_engine_too(spark):
    # tests/test_paxos.py's quorum-of-one split: two leaders, x and y both in slot 1
    found, _ = checked(spark, paxos(BOTH_AT_ONCE, *QUORUM_OF_ONE), 8, SPLIT)
    assert "slot 1: committed ['x', 'y']" in found and "slot 1: executed ['x', 'y']" in found


@pytest.mark.slow
def test_the_scalable_program_matches_the_reference(spark):
    # examples/protocols/paxos_scalable.ded (p2a and p2b proxies, partitioned acceptors with
    # their coordinators and sealed p1b): both campaign, p1 crashes at 2, p2's p1a to a3 lost,
    # delays of 1 or 2 ticks; by tick 15, r2 and r3 have executed x, y and z
    text = open(SCALABLE).read().replace(*BOTH_AT_ONCE)
    found, last = checked(spark, Program.parse(text), 15, "delay=uniform(1,2),seed=5,crash=p1@2,omit=p2>a3@1")
    assert found == []
    assert {(r, s, c) for r, s, c in last["executed"] if r != "r1"} == \
        {(r, s, c) for r in ("r2", "r3") for s, c in ((1, "x"), (2, "y"), (3, "z"))}


@pytest.mark.slow
def test_faults_on_the_spark_engine_agree_with_the_reference(capsys):
    # p2 or a1 crashed once at a tick 1..9, all 19 scenarios at once on the Spark engine
    # (docs/faults.md): no counterexample to agreement and validity, as on the reference
    space = ["--nodes", "p2,a1", "--eot", "9", "--eff", "0", "--crashes", "1", "--search", "all", "--quiet"]
    for engine in ("reference", "spark"):
        assert main(["faults", PAXOS, SAFETY, "--engine", engine, *space]) == 0
        assert capsys.readouterr().out.startswith("19 scenarios, no counterexample")
