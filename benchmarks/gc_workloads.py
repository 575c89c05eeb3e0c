"""Voting and two-phase commit with many requests, for garbage collection
(docs/gc.md): the rules of examples/protocols/voting.ded and
two_phase_commit.ded unchanged, their outputs declared, the `// @gc`
annotations below, and generated requests instead of the examples' two.

    voting(n, last_tick)            n ballots asked at ticks 1..last_tick-10
    two_phase_commit(n, last_tick)  n transactions begun at ticks 1..last_tick-10

Ballots are numbered (b1, b2, ...); p2 votes "no" on every 7th ballot, the others
"yes"; each participant's opinion arrives with the request. In 2PC every
transaction commits: presumed abort keeps no record of an aborted one at the
coordinator, so no condition could ever collect its "yes" votes. The requests are spread evenly, so the work per tick is
constant and the state a program needs at any tick is bounded.

>>> "// @gc votes(" in voting(3, 20) and "begin(\\"coord\\", \\"t3\\")@7;" in two_phase_commit(3, 20)
True
"""

from __future__ import annotations

from pathlib import Path

PROTOCOLS = Path(__file__).resolve().parents[1] / "examples" / "protocols"

#: the state voting keeps only while a ballot is open (the paper's Paxos example:
#: once the quorum is reached the votes can go)
VOTING_GC = """\
.output result
.output vote
// @gc votes(L, C, B, P, V) when replied(L, B)
// @gc replied(L, B) when notin votes(L, _, B, _, _)
// @gc ballot(P, L, C, B) when voted(P, B)
// @gc opinion(P, B, V) when voted(P, B)
// @gc voted(P, B) when notin ballot(P, _, _, B)
"""

#: the coordinator forgets the votes of a committed transaction and the acks of an ended one
TWO_PHASE_COMMIT_GC = """\
.output part_log
.output commit_log
.output end_log
.output answer
.output commit
.output abort
// @gc yes(C, X, P) when commit_log(C, X)
// @gc acks(C, X, P) when end_log(C, X)
// @gc sent_commit(C, X) when end_log(C, X)
"""


def _rules(name: str, first_fact: str) -> str:
    """The example's text up to its first fact."""
    text = (PROTOCOLS / name).read_text()
    return text[:text.index(first_fact)]


def _tick(i: int, n: int, last_tick: int) -> int:
    """Request i of n (0-based), spread over ticks 1..last_tick-10."""
    return 1 + i * max(1, last_tick - 10) // n


def voting(n: int, last_tick: int) -> str:
    """Voting with `n` ballots asked by "client" over ticks 1..last_tick-10."""
    lines = [_rules("voting.ded", 'participant("leader"'), VOTING_GC]
    lines += [f'participant("leader", "p{k}");' for k in (1, 2, 3)]
    for i in range(n):
        tick, ballot = _tick(i, n, last_tick), f"b{i + 1}"
        lines.append(f'ask("client", "leader", "{ballot}")@{tick};')
        for k in (1, 2, 3):
            vote = "no" if k == 2 and (i + 1) % 7 == 0 else "yes"
            lines.append(f'opinion("p{k}", "{ballot}", "{vote}")@{tick};')
    return "\n".join(lines) + "\n"


def two_phase_commit(n: int, last_tick: int) -> str:
    """Two-phase commit with `n` transactions begun by "coord" over ticks 1..last_tick-10."""
    lines = [_rules("two_phase_commit.ded", 'participant("coord"'), TWO_PHASE_COMMIT_GC]
    lines += [f'participant("coord", "p{k}");' for k in (1, 2, 3)]
    for i in range(n):
        tick, txn = _tick(i, n, last_tick), f"t{i + 1}"
        lines.append(f'begin("coord", "{txn}")@{tick};')
    return "\n".join(lines) + "\n"
