"""Shared by the store tests: programs, and stored runs compared with the
reference evaluator."""

from __future__ import annotations

import os
import textwrap

from sparkdedalus import Program
from sparkdedalus.reference import run as reference_run

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples")

#: a small program whose state changes every tick: counters, messages with
#: random delays (so some are in flight across ticks), a persisted log
CHANGING = textwrap.dedent("""
    .persist seen
    count(N, C + 1)@next :- count(N, C), C < 40;
    ping(M, N, C)@async :- count(N, C), peer(N, M);
    seen(N, M, C) :- ping(N, M, C);
    peer("a", "b");
    peer("b", "a");
    peer("b", "c");
    count("a", 0)@1;
    count("b", 7)@1;
""")


def example(name: str) -> Program:
    return Program.from_files(os.path.join(EXAMPLES, name))


def expected_facts(trace, tick: int) -> dict:
    return {name: set(rows) for name, rows in trace.at(tick).items()}


def store_differences(path: str, trace, ticks) -> list[str]:
    """Where the store (read with delta-rs) and the reference trace disagree."""
    from sparkdedalus.store import read
    found = []
    for tick in ticks:
        got, want = read.facts(path, tick), expected_facts(trace, tick)
        for name in want:
            if got.get(name, set()) != want[name]:
                found.append(f"tick {tick} {name}: missing {sorted(want[name] - got.get(name, set()))[:4]}, "
                             f"extra {sorted(got.get(name, set()) - want[name])[:4]}")
    sent = {m for m in trace.messages if m.send_tick <= max(ticks, default=0)}
    if set(read.messages(path)) != sent:
        found.append(f"messages differ: {len(read.messages(path))} stored, {len(sent)} expected")
    return found


def reference(program: Program, ticks: int, network=None):
    return reference_run(program, ticks=ticks, network=network)
