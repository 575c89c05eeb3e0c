"""Shared by the Paxos tests (examples/protocols/paxos.ded): the program with edits, and
the safety check over a run's facts, for the reference evaluator and the Spark engine
alike."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Callable

from sparkdedalus import Program

PROTOCOLS = Path(__file__).resolve().parents[1] / "examples" / "protocols"
PAXOS = str(PROTOCOLS / "paxos.ded")
#: its safety as `pre`/`post` for `sparkdedalus faults`
SAFETY = str(PROTOCOLS / "paxos_safety.ded")
#: what `rewrite` derives from it (scripts/regen-protocols.sh)
SCALABLE = str(PROTOCOLS / "paxos_scalable.ded")
ACCEPTORS, REPLICAS = ("a1", "a2", "a3"), ("r1", "r2", "r3")

#: both proposers campaign at tick 1: p2's ballot 12 preempts p1's 11 at once
BOTH_AT_ONCE = ('start("p2")@4;', 'start("p2")@1;')
#: quorums of 1 acceptor: two leaders can commit different commands in a slot
QUORUM_OF_ONE = (('quorum("p1", 2);', 'quorum("p1", 1);'), ('quorum("p2", 2);', 'quorum("p2", 1);'))
#: a new leader fills the holes with a command no client sent
HOLES_AS_SKIP = ('assigned(P, B, S, "", "noop")', 'assigned(P, B, S, "", "skip")')

#: with BOTH_AT_ONCE: p1's p1a reaches a1 only and p2's a2 and a3 only; c1's first command
#: reaches p1 only and c2's p2 only; p2's p2a to a1 is lost; p1 tells r1 and r3, p2 r2 and r3.
SPLIT = "omit=p2>a1@1,omit=p1>a2@1,omit=p1>a3@1,omit=c1>p2@1,omit=c2>p1@1,omit=p2>a1@3,omit=p1>r2@5,omit=p2>r1@5"


def paxos_text(*replacements: tuple[str, str]) -> str:
    """The example's text, with each (old, new) replaced once (old must be there)."""
    text = open(PAXOS).read()
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def paxos(*replacements: tuple[str, str]) -> Program:
    """The example, with each (old, new) replaced once in its text."""
    return Program.parse(paxos_text(*replacements))


def violations(at: Callable[[int], dict], ticks: int) -> list[str]:
    """What breaks, over ticks 1..`ticks`, of the safety the example's header states
    (one command committed per slot; replicas agreeing slot by slot and executing in
    slot order) and of validity (every command executed is "noop" or one a client
    sent). `at(tick)` gives {relation: rows} (a reference `Trace.at`, or the Spark
    engine's facts from tests/engine_helpers.py's `compared`)."""
    committed, executed, sent = defaultdict(set), defaultdict(set), {"noop"}
    found = []
    for tick in range(1, ticks + 1):
        facts = at(tick)
        sent |= {command for _, command in facts.get("send", ())}
        for _, slot, _, command in facts.get("committed", ()):
            committed[slot].add(command)
        mine = defaultdict(dict)  # replica -> slot -> command
        for replica, slot, command in facts.get("executed", ()):
            executed[slot].add(command)
            if mine[replica].setdefault(slot, command) != command:
                found.append(f"tick {tick}: {replica} executed two commands in slot {slot}")
        for replica, slots in mine.items():
            if sorted(slots) != list(range(1, len(slots) + 1)):
                found.append(f"tick {tick}: {replica} executed slots {sorted(slots)}, not in order")
    found += [f"slot {s}: committed {sorted(c)}" for s, c in sorted(committed.items()) if len(c) > 1]
    found += [f"slot {s}: executed {sorted(c)}" for s, c in sorted(executed.items()) if len(c) > 1]
    found += [f"slot {s}: executed {c!r}, which no client sent" for s, cs in sorted(executed.items())
              for c in sorted(cs - sent)]
    return found

