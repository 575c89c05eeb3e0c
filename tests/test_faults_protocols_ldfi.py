"""LDFI on issue 33's larger protocols, examples/faults/three_phase_commit.ded and
examples/faults/kafka_replication.ded, on the reference engine: each file's header
derives the verdicts, the counterexamples and LDFI's executions by hand; a
counterexample LDFI reports is run again from its network spec and must leave a
`pre` fact without its `post`."""

import itertools
import os

import pytest

from sparkdedalus import Program
from sparkdedalus.faults.space import Scenario
from sparkdedalus.reference.faults import faults as check
from reference_helpers import FAULT_EXAMPLES, broken, faults_json, spec

TPC = ("coord", "p1", "p2", "p3")
KAFKA = ("client", "zk", "n1", "n2", "n3")


def example(name):
    return Program.from_files(os.path.join(FAULT_EXAMPLES, name))


# --- three-phase commit

def test_three_phase_commit_target_space_counterexample_in_three_executions(capsys):
    # 4 nodes, EOT 9, EFF 7, 1 crash: 2^72 x 37 scenarios. The good run (its lineage holds
    # each participant's commit by timeout, blocked only by its commit at 7, so a lost
    # do-commit is no candidate), {coord>p1@3} (shows the ack-timeout do-commit of tick
    # 6), then pre-commit to p1 lost and the coordinator crashed at 4
    code, out = faults_json(capsys, "three_phase_commit.ded", "--nodes", ",".join(TPC), "--eot", "9", "--eff", "7",
                            "--crashes", "1", "--search", "ldfi")
    assert (code, out["search"], out["scenarios"], out["executions"]) == (1, "ldfi", 2 ** 72 * 37, 3)
    assert out["counterexamples"] == [{"omissions": [["coord", "p1", 3]], "crashes": [["coord", 4]],
                                       "missing": [["p1", "t1"]]}]
    assert spec(out["counterexamples"][0]) == "omit=coord>p1@3,crash=coord@4"
    assert broken(example("three_phase_commit.ded"), 9, spec(out["counterexamples"][0])) == {("p1", "t1")}


@pytest.mark.parametrize("network_spec, lost", [
    ("", set()),                                          # every participant commits at 6
    ("omit=coord>p2@3", set()),                           # the ack-timeout do-commit reaches p2 at 7
    ("omit=coord>p2@5", set()),                           # p2 is pre-committed: commits by timeout
    ("crash=coord@4", set()),                             # everyone pre-committed: commits by timeout
    ("omit=coord>p2@3,crash=coord@6", {("p2", "t1")}),    # p2 aborts at 8, p1 and p3 commit
    ("omit=coord>p3@3,omit=coord>p3@6", {("p3", "t1")}),  # the same with two omissions
    ("omit=coord>p2@3,crash=coord@3", set()),             # no pre-commit gets out: everyone aborts
])
def test_three_phase_commit_scenarios_of_the_header(network_spec, lost):
    assert broken(example("three_phase_commit.ded"), 9, network_spec) == lost


def test_three_phase_commit_survives_any_one_crash():
    # EFF 0: no omission, 37 scenarios, none a counterexample; LDFI leaves no candidate
    program = example("three_phase_commit.ded")
    every = check(program, TPC, 9, 0, 1, search="all")
    searched = check(program, TPC, 9, 0, 1, search="ldfi")
    assert (every.scenarios, every.counterexamples) == (37, [])
    assert (searched.executions, searched.counterexamples) == (1, [])


def test_three_phase_commit_ldfi_agrees_with_the_enumeration_on_two_nodes():
    # coord, p1, EFF 7, no crash: 4096 scenarios; coord>p1@3 and @6 omitted, @1 and
    # p1>coord@2 not, the 8 other channel-ticks free: 256 counterexamples; LDFI in 3 runs:
    # the good run, {coord>p1@3}, {coord>p1@3, coord>p1@6}
    program = example("three_phase_commit.ded")
    every = check(program, ("coord", "p1"), 9, 7, 0, search="all")
    searched = check(program, ("coord", "p1"), 9, 7, 0, search="ldfi")
    assert (every.scenarios, len(every.counterexamples)) == (4096, 256)
    assert all({("coord", "p1", 3), ("coord", "p1", 6)} <= set(c.scenario.omissions)
               and not {("coord", "p1", 1), ("p1", "coord", 2)} & set(c.scenario.omissions)
               for c in every.counterexamples)
    assert searched.executions == 3
    assert [c.scenario for c in searched.counterexamples] == [Scenario(omissions=(("coord", "p1", 3), ("coord", "p1", 6)))]
    assert set(searched.counterexamples) <= set(every.counterexamples)


def test_three_phase_commit_ldfi_finds_the_counterexamples_when_the_do_commit_cannot_be_omitted():
    # coord, p1, EFF 4, 1 crash: 1216 scenarios, 24 counterexamples (header). The good
    # run's lineage holds the commits by timeout that only a commit at 7 blocks (p2's
    # and p3's keep pre(p1) alive when p1's do-commit is stopped), so {coord>p1@3} is a
    # candidate; its run shows the ack-timeout do-commit of tick 6, which the crash of
    # the coordinator at 4 stops: 3 runs
    program = example("three_phase_commit.ded")
    every = check(program, ("coord", "p1"), 9, 4, 1, search="all")
    assert (every.scenarios, len(every.counterexamples)) == (1216, 24)
    searched = check(program, ("coord", "p1"), 9, 4, 1, search="ldfi")
    assert searched.counterexamples
    assert searched.executions == 3
    assert [c.scenario for c in searched.counterexamples] == [Scenario((("coord", "p1", 3),), (("coord", 4),))]
    assert set(searched.counterexamples) <= set(every.counterexamples)


# --- Kafka-style replication

def test_kafka_target_space_counterexample_in_two_executions(capsys):
    # 5 nodes, EOT 7, EFF 4, 1 crash: 2^60 x 36 scenarios; 12 minimal candidates of 3
    # failures after the good run, every one a counterexample: the first is run
    code, out = faults_json(capsys, "kafka_replication.ded", "--nodes", ",".join(KAFKA), "--eot", "7", "--eff", "4",
                            "--crashes", "1", "--search", "ldfi")
    assert (code, out["search"], out["scenarios"], out["executions"]) == (1, "ldfi", 2 ** 60 * 36, 2)
    assert out["counterexamples"] == [{"omissions": [["n1", "n2", 2], ["n1", "n3", 2]], "crashes": [["n1", 5]],
                                       "missing": [["client", "w"]]}]
    assert broken(example("kafka_replication.ded"), 7, spec(out["counterexamples"][0])) == {("client", "w")}


def test_kafka_without_crashes_has_no_counterexample_in_one_execution():
    checked = check(example("kafka_replication.ded"), KAFKA, 7, 4, 0, search="ldfi")
    assert (checked.scenarios, checked.executions, checked.counterexamples) == (2 ** 60, 1, [])


# the only channel-ticks before EFF 4 that carry a message in any scenario
KAFKA_SENDS = (("client", "n1", 1), ("n1", "n2", 2), ("n1", "n3", 2), ("n2", "n1", 3), ("n3", "n1", 3))


def test_kafka_header_predicate_on_every_combination_of_the_channels_that_carry_messages():
    # 2^5 omission sets x (no crash + 5 nodes x 7 ticks) = 1152 scenarios; the header:
    # a counterexample iff client>n1@1 delivered, n1 crashes at 5..7, n1>n2@2 omitted,
    # and n1>n3@2 or n3>n1@3 omitted
    program = example("kafka_replication.ded")
    crashes = [()] + [((n, t),) for n in KAFKA for t in range(1, 8)]
    counted = 0
    for bits in itertools.product((False, True), repeat=len(KAFKA_SENDS)):
        omitted = {c for c, b in zip(KAFKA_SENDS, bits) if b}
        for crash in crashes:
            expected = (("client", "n1", 1) not in omitted and crash in ((("n1", 5),), (("n1", 6),), (("n1", 7),))
                        and ("n1", "n2", 2) in omitted
                        and bool({("n1", "n3", 2), ("n3", "n1", 3)} & omitted))
            network_spec = ",".join([f"omit={a}>{b}@{t}" for a, b, t in sorted(omitted)]
                                    + [f"crash={n}@{t}" for n, t in crash])
            assert broken(program, 7, network_spec) == ({("client", "w")} if expected else set()), network_spec
            counted += expected
    # 3 crash ticks x 3 ways for n3 x 2 (n2>n1@3 free); times 2^55 for the 55 other channel-ticks: 9 x 2^56
    assert counted == 3 * 3 * 2
