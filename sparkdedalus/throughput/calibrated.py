"""A node's cost per command in microseconds, fitted to the artifact's measured
base throughputs (docs/protocols.md, "The calibrated model").

The capacity model prices every message at one unit. Here a node's work per
command has four terms (`TERMS`), read from a simulated run's traffic
(`sparkdedalus.traffic`) with closed-loop clients: the messages it takes in,
the messages it sends, the messages it sends as part of a broadcast (of a
relation that one node sends to two or more destinations for one command, as
a run with one client shows: the fan-out beyond a plain send), and the
commands it takes from the clients. Its cost is the dot product with the
coefficients; the slowest node sets the throughput, 10^6 / its cost commands/s.
`fit` finds the coefficients, none negative, that match the measured base
costs per command (10^6 / commands/s) best in relative error (every subset of the terms solved by least
squares: exact non-negative least squares for four unknowns), and refuses
any measurement but a base protocol's: nothing is fitted on a rewritten variant.

>>> c = Coefficients(1.0, 0.5, 0.25, 2.0)
>>> work = {"leader": Work(4, 4, 3, 1), "p1": Work(1, 1, 0, 0)}
>>> cost(work, c)["leader"]  # 4*1 + 4*0.5 + 3*0.25 + 1*2
8.75
>>> round(predict(work, c))  # commands/s: 10^6 / 8.75 microseconds
114286
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from dataclasses import astuple, dataclass

import numpy

from sparkdedalus.throughput.closed_loop import COMMITTED, client_rows
from sparkdedalus.throughput.measure import client_nodes, reference

TERMS = ("received", "sent", "fanout", "commands")


@dataclass(frozen=True)
class Work:
    """A node's work per command (`TERMS`)."""
    received: float
    sent: float
    fanout: float
    commands: float


@dataclass(frozen=True)
class Coefficients:
    """Microseconds per unit of each of `TERMS`."""
    received: float
    sent: float
    fanout: float
    commands: float


@dataclass(frozen=True)
class Measured:
    """A throughput the paper's artifact measured: `partitions` None is the base."""
    protocol: str
    partitions: int | None
    throughput: float  # commands/s

    @property
    def base(self) -> bool:
        return self.partitions is None


#: seed 000 (section 5.2): the bases' peaks, commands/s
BASE = {"voting": 100_000, "2pc": 30_000, "paxos": 50_000}
#: the artifact's peak ratios over the base at 1, 3 and 5 partitions (issue 32)
RATIOS = {"voting": (1.2, 2.2, 2.3), "2pc": (1.2, 4.3, 5.6), "paxos": (1.5, 2.8, 2.7)}
PARTITIONS = (1, 3, 5)
MEASURED = tuple(m for p in BASE for m in (
    Measured(p, None, BASE[p]),
    *(Measured(p, k, BASE[p] * r) for k, r in zip(PARTITIONS, RATIOS[p]))))


def broadcasts(program, ticks: int = 60, simulate=reference) -> set:
    """The relations some node sends to two or more destinations for one
    command: from a run with one client, whose messages of one relation
    leaving one node in one tick are then one command's."""
    traffic = simulate(program, ticks, None, client_rows(program, 1), COMMITTED, ())
    groups = defaultdict(set)  # (relation, sender, tick left) -> destinations
    for (relation, src, dst, _, left, _) in traffic.messages:
        groups[relation, src, left].add(dst)
    return {relation for (relation, _, _), destinations in groups.items() if len(destinations) > 1}


def work(program, clients: int = 8, ticks: int = 300, simulate=reference) -> dict:
    """node -> `Work` per command, from `program` run by `simulate` with
    `clients` closed-loop clients for `ticks` ticks, over the window
    (ticks/2, ticks] (messages by the tick they left and the tick they were
    taken in); a message of a relation of `broadcasts` counts as fan-out."""
    fanned = broadcasts(program, simulate=simulate)
    edb = client_rows(program, clients)
    start = ticks // 2
    traffic = simulate(program, ticks, None, edb, COMMITTED, (start, ticks))
    done = traffic.sizes[ticks] - traffic.sizes[start]
    if done <= 0:
        raise ValueError(f"no command answered in ticks {start + 1}..{ticks}")
    outside = client_nodes(program, edb)
    inside = (lambda tick: tick is not None and start < tick <= ticks)
    received, sent, fanout, commands = Counter(), Counter(), Counter(), Counter()
    for (relation, src, dst, _, left, taken), n in traffic.messages.items():
        if inside(left):
            sent[src] += n
            fanout[src] += n if relation in fanned else 0
        if inside(taken):
            received[dst] += n
            commands[dst] += n if src in outside else 0
    nodes = sorted((set(received) | set(sent)) - outside)
    return {n: Work(received[n] / done, sent[n] / done, fanout[n] / done, commands[n] / done) for n in nodes}


def cost(work: dict, c: Coefficients) -> dict:
    """node -> microseconds per command."""
    return {n: float(numpy.dot(astuple(w), astuple(c))) for n, w in work.items()}


def predict(work: dict, c: Coefficients) -> float:
    """Commands/s: the slowest node's rate."""
    return 1e6 / max(cost(work, c).values())


def bottleneck(work: dict, c: Coefficients) -> str:
    costs = cost(work, c)
    return max(costs, key=costs.get)


def fit(rows) -> Coefficients:
    """The non-negative coefficients that best match the base measurements'
    costs per command in relative error (least squares). `rows`: (`Measured`, the work of its slowest node) pairs;
    a `ValueError` if one is not a base protocol's."""
    rows = list(rows)
    rewritten = [m for m, _ in rows if not m.base]
    if rewritten:
        raise ValueError(f"only the base protocols are fitted, not {rewritten[0].protocol} on "
                         f"{rewritten[0].partitions} partition(s)")
    target = numpy.array([1e6 / m.throughput for m, _ in rows])
    a = numpy.array([astuple(w) for _, w in rows], dtype=float) / target[:, None]
    b = numpy.ones(len(rows))
    best, error = numpy.zeros(len(TERMS)), float(len(rows))
    for size in range(1, len(TERMS) + 1):
        for columns in itertools.combinations(range(len(TERMS)), size):
            x, *_ = numpy.linalg.lstsq(a[:, columns], b, rcond=None)
            if (x < 0).any():
                continue
            full = numpy.zeros(len(TERMS))
            full[list(columns)] = x
            e = float(((a @ full - b) ** 2).sum())
            if e < error - 1e-12:
                best, error = full, e
    return Coefficients(*(float(v) for v in best))


def calibrate(works: dict) -> Coefficients:
    """Fit on the bases of `MEASURED`: `works` maps a protocol to its base
    program's `work`; each base is fitted at its node with the most messages."""
    return fit((m, max(works[m.protocol].values(), key=lambda w: w.received + w.sent))
               for m in MEASURED if m.base)
