"""examples/protocols/paxos.ded (MultiPaxos) on the reference evaluator: the run its
header derives by hand, tick by tick; safety (one command per slot, replicas agreeing
slot by slot and executing in slot order) and validity (every command executed was
sent, or is a noop) under random delays, with both proposers campaigning at once and
with the leader crashing; broken variants (quorum 1 of 3, holes filled with a command
no client sent) that the checks must catch; and the same safety as `pre`/`post`
(examples/protocols/paxos_safety.ded) under `faults`: no counterexample with one crash
anywhere, and the one omission that splits a quorum of one. tests/test_engine_paxos.py
runs the example on the Spark engine."""

from __future__ import annotations

import pytest

from paxos_helpers import (ACCEPTORS, BOTH_AT_ONCE, HOLES_AS_SKIP, PAXOS, QUORUM_OF_ONE, REPLICAS, SAFETY, SPLIT,
                           paxos, paxos_text, violations)
from reference_helpers import history, rows
from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.reference import run
from sparkdedalus.reference.faults import faults
from sparkdedalus.shell.cli import main


def verdict(trace) -> str:
    return "unsafe" if violations(trace.at, trace.ticks) else "safe"


def executed_by(trace, replica: str) -> set:
    """(slot, command) that `replica` executed, at the last tick."""
    return {(s, c) for r, s, c in rows(trace, "executed", trace.ticks) if r == replica}


def test_check_passes_and_sees_the_four_roles(capsys):
    assert main(["check", "--strict", PAXOS]) == 0
    assert capsys.readouterr().out.startswith("ok: ")
    # the facts are in main
    assert set(Program.from_files(PAXOS).components) == {"main", "client", "proposer", "acceptor", "replica"}


@pytest.fixture(scope="module")
def default_run():
    return run(Program.from_files(PAXOS), ticks=12)


def test_p1_leads_first_then_p2_preempts_it(default_run):
    leaders = history(default_run, "leader")
    assert {t for t in leaders if ("p1", 11) in leaders[t]} == {3, 4, 5, 6}
    assert {t for t in leaders if ("p2", 12) in leaders[t]} == set(range(6, 13))
    assert all(leaders[t] <= {("p1", 11), ("p2", 12)} for t in leaders)
    # p1 learns of 12 from the nack of its slot 3 at tick 7, and does not retry: p2 runs
    assert {t for t, r in history(default_run, "ousted").items() if r == {("p1", 11, 12)}} == set(range(7, 13))
    assert all(rows(default_run, "ballot", t) == {("p1", 11), ("p2", 12)} for t in range(4, 13))
    promised = history(default_run, "promised")
    # ballot 0 until the first p1a (the acceptors' ballots start with 0)
    assert [promised[t] for t in (1, 2, 4, 5, 12)] == [{(a, 0) for a in ACCEPTORS}] + \
        [{(a, 11) for a in ACCEPTORS}] * 2 + [{(a, 12) for a in ACCEPTORS}] * 2


def test_the_acceptors_logs(default_run):
    sentinel = {(a, 0, 0, "", "") for a in ACCEPTORS}
    under_11 = {(a, 1, 11, "c1", "x") for a in ACCEPTORS} | {(a, 2, 11, "c2", "y") for a in ACCEPTORS}
    under_12 = {(a, s, 12, cl, c) for a in ACCEPTORS for s, cl, c in ((1, "c1", "x"), (2, "c2", "y"), (3, "c1", "z"))}
    log = history(default_run, "log")
    assert [log[t] for t in (3, 4, 6, 7, 12)] == [sentinel] + [sentinel | under_11] * 2 + \
        [sentinel | under_11 | under_12] * 2


def test_commands_land_in_their_slots(default_run):
    committed = history(default_run, "committed")
    by_p1 = {("p1", 1, "c1", "x"), ("p1", 2, "c2", "y")}
    by_p2 = {("p2", 1, "c1", "x"), ("p2", 2, "c2", "y"), ("p2", 3, "c1", "z")}
    assert [committed[t] for t in (4, 5, 7, 8, 12)] == [set(), by_p1, by_p1, by_p1 | by_p2, by_p1 | by_p2]
    # each proposer tells the replicas once, at the tick it commits
    decides = sorted((m.src, m.row[1], m.send_tick) for m in default_run.messages if m.relation == "decide")
    assert decides == sorted([("p1", s, 5) for s in (1, 2)] * 3 + [("p2", s, 8) for s in (1, 2, 3)] * 3)


def test_replicas_execute_in_slot_order_and_reply_once(default_run):
    first_two = {(r, 1, "x") for r in REPLICAS} | {(r, 2, "y") for r in REPLICAS}
    all_three = first_two | {(r, 3, "z") for r in REPLICAS}
    executed = history(default_run, "executed")
    assert [executed[t] for t in (5, 6, 8, 9, 12)] == [set(), first_two, first_two, all_three, all_three]
    xy = {("c1", r, 1, "x") for r in REPLICAS} | {("c2", r, 2, "y") for r in REPLICAS}
    z = {("c1", r, 3, "z") for r in REPLICAS}
    reply = history(default_run, "reply")
    assert [reply[t] for t in (6, 7, 9, 10, 12)] == [set(), xy, xy, xy | z, xy | z]
    assert sorted(m.send_tick for m in default_run.messages if m.relation == "reply") == [6] * 6 + [9] * 3
    assert violations(default_run.at, default_run.ticks) == []


def test_a_crashed_leader_is_replaced_and_its_last_command_recovered():
    trace = run(Program.from_files(PAXOS), ticks=16, network=Network.parse("crash=p2@7"))
    # p2 committed z at tick 8, but its decide is lost
    assert [(m.send_tick, m.arrival) for m in trace.messages if m.relation == "decide" and m.src == "p2"] == \
        [(8, None)] * 9
    assert {t for t, r in history(trace, "ballot").items() if ("p1", 21) in r} == set(range(8, 17))
    assert min(t for t, r in history(trace, "leader").items() if ("p1", 21) in r) == 10
    assert min(t for t, r in history(trace, "committed").items() if ("p1", 3, "c1", "z") in r) == 12
    assert rows(trace, "executed", 12) == {(r, s, c) for r in REPLICAS for s, c in ((1, "x"), (2, "y"))}
    assert rows(trace, "executed", 13) == {(r, s, c) for r in REPLICAS for s, c in ((1, "x"), (2, "y"), (3, "z"))}
    assert rows(trace, "reply", 14) - rows(trace, "reply", 13) == {("c1", r, 3, "z") for r in REPLICAS}
    assert violations(trace.at, trace.ticks) == []


def test_a_new_leader_fills_the_holes_below_a_recovered_slot_with_noop():
    # p1's p2a of tick 3 (x in slot 1, y in slot 2) are lost; its z (slot 3, tick 5) is not
    program = paxos(('start("p2")@4;', 'start("p2")@6;'))
    trace = run(program, ticks=12, network=Network.parse("omit=p1>a1@3,omit=p1>a2@3,omit=p1>a3@3"))
    assert rows(trace, "committed", 7) == {("p1", 3, "c1", "z")}
    assert {r for r, s, _, _ in rows(trace, "decided", 8) if s == 3} == set(REPLICAS)
    assert rows(trace, "executed", 10) == set()  # slot 3 waits for slots 1 and 2
    # p2 leads from tick 8: z stays in slot 3, noop below it, x and y after it
    assert min(t for t, r in history(trace, "leader").items() if ("p2", 12) in r) == 8
    slots = {(1, "", "noop"), (2, "", "noop"), (3, "c1", "z"), (4, "c1", "x"), (5, "c2", "y")}
    assert rows(trace, "assigned", 9) == {("p2", 12, 0, "", "")} | {("p2", 12) + s for s in slots} | \
        {("p1", 11, s, cl, c) for s, cl, c in ((0, "", ""), (1, "c1", "x"), (2, "c2", "y"), (3, "c1", "z"))}
    assert rows(trace, "executed", 11) == {(r, s, c) for r in REPLICAS for s, _, c in slots}
    assert rows(trace, "reply", 12) == {(cl, r, s, c) for r in REPLICAS for s, cl, c in slots if cl}
    assert violations(trace.at, trace.ticks) == []


SCENARIOS = {
    "as shipped": ((), ""),
    "both proposers at once": ((BOTH_AT_ONCE,), ""),
    "leader crash": ((), ",crash=p2@6"),
    "both at once, p2 crashes": ((BOTH_AT_ONCE,), ",crash=p2@3"),
}


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_safe_and_live_under_random_delays(scenario, seed):
    replacements, failures = SCENARIOS[scenario]
    network = Network.parse(f"delay=uniform(1,3),seed={seed}{failures}")
    trace = run(paxos(*replacements), ticks=40, network=network)
    assert violations(trace.at, trace.ticks) == []
    # in each of these runs p2's ballot preempts p1; after p2's crash, p1 leads again
    assert ("p1", 11, 12) in rows(trace, "ousted", 40)
    assert any(("p1", 21) in rows(trace, "leader", t) for t in range(1, 41)) == ("crash" in failures)
    # every replica ends up executing every client command once, the other slots being
    # holes a new leader filled with noop
    done = executed_by(trace, "r1")
    assert executed_by(trace, "r2") == executed_by(trace, "r3") == done
    assert sorted(c for _, c in done if c != "noop") == ["x", "y", "z"]


def test_the_check_says_unsafe_when_a_quorum_is_one_acceptor():
    broken = paxos(BOTH_AT_ONCE, *QUORUM_OF_ONE)
    trace = run(broken, ticks=10, network=Network.parse(SPLIT))
    # two leaders: p1 on a1's promise, p2 on a2's and a3's; x and y both go to slot 1
    assert rows(trace, "leader", 3) == {("p1", 11), ("p2", 12)}
    assert rows(trace, "committed", 5) == {("p1", 1, "c1", "x"), ("p2", 1, "c2", "y")}
    assert {(r, s, c) for r, s, c in rows(trace, "executed", 6)} == \
        {("r1", 1, "x"), ("r2", 1, "y"), ("r3", 1, "x"), ("r3", 1, "y")}
    assert verdict(trace) == "unsafe"
    assert violations(trace.at, trace.ticks)[-2:] == ["slot 1: committed ['x', 'y']", "slot 1: executed ['x', 'y']"]
    assert "tick 6: r3 executed two commands in slot 1" in violations(trace.at, trace.ticks)


def test_the_check_catches_a_replica_that_skips_a_slot():
    facts = 'send("c1", "x")@1; send("c2", "y")@1; committed("p1", 1, "c1", "x")@1; executed("r1", 2, "y")@2; ' \
        'executed("r1", 1, "x")@3;'
    trace = run(Program.parse(facts), ticks=3)
    assert violations(trace.at, trace.ticks) == ["tick 2: r1 executed slots [2], not in order"]


def test_the_same_split_with_quorums_of_two_is_safe():
    trace = run(paxos(BOTH_AT_ONCE), ticks=10, network=Network.parse(SPLIT))
    # p1 has one promise: never leader; p2 leads, y in slot 1, z in slot 2
    assert all(rows(trace, "leader", t) <= {("p2", 12)} for t in range(1, 11))
    assert rows(trace, "committed", 10) == {("p2", 1, "c2", "y"), ("p2", 2, "c1", "z")}
    # r1 never hears of slot 1, so it holds slot 2 without executing it
    assert ("r1", 2, "c1", "z") in rows(trace, "decided", 10)
    assert rows(trace, "executed", 10) == {(r, s, c) for r in ("r2", "r3") for s, c in ((1, "y"), (2, "z"))}
    assert verdict(trace) == "safe"


def test_the_check_says_invalid_when_holes_get_a_command_no_client_sent():
    # the run of the noop test above, with the holes filled with "skip"
    program = paxos(HOLES_AS_SKIP, ('start("p2")@4;', 'start("p2")@6;'))
    trace = run(program, ticks=12, network=Network.parse("omit=p1>a1@3,omit=p1>a2@3,omit=p1>a3@3"))
    assert violations(trace.at, trace.ticks) == ["slot 1: executed 'skip', which no client sent",
                                                  "slot 2: executed 'skip', which no client sent"]


# --- the same safety as `pre`/`post` (examples/protocols/paxos_safety.ded), for `faults`

def with_safety(*replacements: tuple[str, str]) -> Program:
    return Program.parse(paxos_text(*replacements) + open(SAFETY).read())


def test_the_safety_file_reads_the_runs_of_the_header():
    program = with_safety()
    trace = run(program, ticks=12)
    assert rows(trace, "pre", 12) == rows(trace, "post", 12) == \
        {(r, s, c) for r in REPLICAS for s, c in ((1, "x"), (2, "y"), (3, "z"))}
    # and says no where the trace check does: two commands in slot 1, a "skip"
    split = run(Program.parse(paxos_text(BOTH_AT_ONCE, *QUORUM_OF_ONE) + open(SAFETY).read()), ticks=10,
                network=Network.parse(SPLIT))
    assert rows(split, "pre", 10) - rows(split, "post", 10) == \
        {("r1", 1, "x"), ("r2", 1, "y"), ("r3", 1, "x"), ("r3", 1, "y")}
    holes = run(with_safety(HOLES_AS_SKIP, ('start("p2")@4;', 'start("p2")@6;')), ticks=12,
                network=Network.parse("omit=p1>a1@3,omit=p1>a2@3,omit=p1>a3@3"))
    assert rows(holes, "pre", 12) - rows(holes, "post", 12) == {(r, s, "skip") for r in REPLICAS for s in (1, 2)}


def test_faults_one_crash_anywhere_breaks_no_agreement(capsys):
    # every node but the clients and replicas may crash, once, at any tick 1..12: 61 scenarios
    assert main(["faults", PAXOS, SAFETY, "--nodes", "p1,p2,a1,a2,a3", "--eot", "12", "--eff", "0",
                 "--crashes", "1", "--engine", "reference", "--search", "all", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("61 scenarios, no counterexample")


#: x reaches p1 only; p1's p2a of tick 3 (x in slot 1, y in slot 2) reach a1 only
ADVERSE = "omit=c1>p2@1,omit=p1>a2@3,omit=p1>a3@3"


def test_faults_find_the_lost_promise_that_splits_a_quorum_of_one_and_none_with_quorums_of_two():
    # on top of ADVERSE, every omission between p2 and a1 before tick 5 (2^8 scenarios).
    # Quorums of 1: p1 commits x in 1 and y in 2 on a1's p2b; if p2's p1a to a1 (tick 4) is
    # lost, p2 leads on a2's and a3's empty logs and puts y in 1, z in 2: the only p2 > a1
    # message before tick 5, so 128 counterexamples, each with it. Quorums of 2: none.
    space = dict(nodes=("p2", "a1"), eot=12, eff=5, crashes=0, search="all", network=Network.parse(ADVERSE))
    broken = faults(with_safety(*QUORUM_OF_ONE), **space)
    assert (broken.scenarios, len(broken.counterexamples)) == (256, 128)
    assert all(("p2", "a1", 4) in c.scenario.omissions for c in broken.counterexamples)
    assert broken.counterexamples[0].scenario.omissions == (("p2", "a1", 4),)
    assert set(broken.counterexamples[0].missing) == {(r, s, c) for r in REPLICAS
                                                      for s, c in ((1, "x"), (1, "y"), (2, "y"), (2, "z"))}
    safe = faults(with_safety(), **space)
    assert (safe.scenarios, safe.counterexamples) == (256, [])
