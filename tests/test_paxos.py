"""examples/protocols/paxos.ded (MultiPaxos) on the reference evaluator: the run its
header derives by hand, tick by tick; safety (one command per slot, replicas agreeing
slot by slot and executing in slot order) under random delays, with both proposers
campaigning at once and with the leader crashing; and a broken variant (quorum 1 of 3)
whose two leaders the safety check must catch."""

from __future__ import annotations

from collections import defaultdict

import pytest

from reference_helpers import EXAMPLES, history, rows
from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.reference import run
from sparkdedalus.shell.cli import main

PAXOS = f"{EXAMPLES}/protocols/paxos.ded"
ACCEPTORS, REPLICAS = ("a1", "a2", "a3"), ("r1", "r2", "r3")


def paxos(*replacements: tuple[str, str]) -> Program:
    """The example, with each (old, new) replaced once in its text (old must be there)."""
    text = open(PAXOS).read()
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return Program.parse(text)


#: both proposers campaign at tick 1: p2's ballot 12 preempts p1's 11 at once
BOTH_AT_ONCE = ('start("p2")@4;', 'start("p2")@1;')


def violations(trace) -> list[str]:
    """The safety properties the header states, over every tick of `trace`: what breaks."""
    committed, executed = defaultdict(set), defaultdict(set)
    found = []
    for tick in range(1, trace.ticks + 1):
        for _, slot, _, command in rows(trace, "committed", tick):
            committed[slot].add(command)
        mine = defaultdict(dict)  # replica -> slot -> command
        for replica, slot, command in rows(trace, "executed", tick):
            executed[slot].add(command)
            if mine[replica].setdefault(slot, command) != command:
                found.append(f"tick {tick}: {replica} executed two commands in slot {slot}")
        for replica, slots in mine.items():
            if sorted(slots) != list(range(1, len(slots) + 1)):
                found.append(f"tick {tick}: {replica} executed slots {sorted(slots)}, not in order")
    found += [f"slot {s}: committed {sorted(c)}" for s, c in sorted(committed.items()) if len(c) > 1]
    found += [f"slot {s}: executed {sorted(c)}" for s, c in sorted(executed.items()) if len(c) > 1]
    return found


def verdict(trace) -> str:
    return "unsafe" if violations(trace) else "safe"


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
    # p1 learns of 12 from the p2b of its slot 3 at tick 7, and does not retry: p2 runs
    assert {t for t, r in history(default_run, "ousted").items() if r == {("p1", 11, 12)}} == set(range(7, 13))
    assert all(rows(default_run, "ballot", t) == {("p1", 11), ("p2", 12)} for t in range(4, 13))
    promised = history(default_run, "promised")
    assert [promised[t] for t in (1, 2, 4, 5, 12)] == [set()] + [{(a, 11) for a in ACCEPTORS}] * 2 + \
        [{(a, 12) for a in ACCEPTORS}] * 2


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
    assert violations(default_run) == []


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
    assert violations(trace) == []


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
    assert violations(trace) == []


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
    assert violations(trace) == []
    # in each of these runs p2's ballot preempts p1; after p2's crash, p1 leads again
    assert ("p1", 11, 12) in rows(trace, "ousted", 40)
    assert any(("p1", 21) in rows(trace, "leader", t) for t in range(1, 41)) == ("crash" in failures)
    # every replica ends up executing every client command once, the other slots being
    # holes a new leader filled with noop
    done = executed_by(trace, "r1")
    assert executed_by(trace, "r2") == executed_by(trace, "r3") == done
    assert sorted(c for _, c in done if c != "noop") == ["x", "y", "z"]


#: p1's p1a reaches a1 only and p2's a2 and a3 only; c1's first command reaches p1 only and
#: c2's p2 only; p2's p2a to a1 is lost; p1 tells r1 and r3, p2 tells r2 and r3.
SPLIT = "omit=p2>a1@1,omit=p1>a2@1,omit=p1>a3@1,omit=c1>p2@1,omit=c2>p1@1,omit=p2>a1@3,omit=p1>r2@5,omit=p2>r1@5"


def test_the_check_says_unsafe_when_a_quorum_is_one_acceptor():
    broken = paxos(BOTH_AT_ONCE, ('quorum("p1", 2);', 'quorum("p1", 1);'), ('quorum("p2", 2);', 'quorum("p2", 1);'))
    trace = run(broken, ticks=10, network=Network.parse(SPLIT))
    # two leaders: p1 on a1's promise, p2 on a2's and a3's; x and y both go to slot 1
    assert rows(trace, "leader", 3) == {("p1", 11), ("p2", 12)}
    assert rows(trace, "committed", 5) == {("p1", 1, "c1", "x"), ("p2", 1, "c2", "y")}
    assert {(r, s, c) for r, s, c in rows(trace, "executed", 6)} == \
        {("r1", 1, "x"), ("r2", 1, "y"), ("r3", 1, "x"), ("r3", 1, "y")}
    assert verdict(trace) == "unsafe"
    assert violations(trace)[-2:] == ["slot 1: committed ['x', 'y']", "slot 1: executed ['x', 'y']"]
    assert "tick 6: r3 executed two commands in slot 1" in violations(trace)


def test_the_check_catches_a_replica_that_skips_a_slot():
    facts = 'committed("p1", 1, "c1", "x")@1; executed("r1", 2, "y")@2; executed("r1", 1, "x")@3;'
    assert violations(run(Program.parse(facts), ticks=3)) == ["tick 2: r1 executed slots [2], not in order"]


def test_the_same_split_with_quorums_of_two_is_safe():
    trace = run(paxos(BOTH_AT_ONCE), ticks=10, network=Network.parse(SPLIT))
    # p1 has one promise: never leader; p2 leads, y in slot 1, z in slot 2
    assert all(rows(trace, "leader", t) <= {("p2", 12)} for t in range(1, 11))
    assert rows(trace, "committed", 10) == {("p2", 1, "c2", "y"), ("p2", 2, "c1", "z")}
    # r1 never hears of slot 1, so it holds slot 2 without executing it
    assert ("r1", 2, "c1", "z") in rows(trace, "decided", 10)
    assert rows(trace, "executed", 10) == {(r, s, c) for r in ("r2", "r3") for s, c in ((1, "y"), (2, "z"))}
    assert verdict(trace) == "safe"
