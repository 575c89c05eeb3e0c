"""The failure space of `sparkdedalus faults` (Molly's model, dialect.md 4):
every subset of the omissions of the messages from A to B sent at tick t
(A != B among the nodes, 1 <= t < EFF), times the crashes of at most C nodes,
each at one tick in 1..EOT.

A scenario has an index in 0..len(space)-1: the low bits are the omission
mask over `channels()`, the rest numbers the crash choices. `sample` draws
indices, so a space far too large to enumerate can still be sampled;
`resolve` picks the search of one (enumeration or LDFI, `faults/ldfi.py`).

>>> space = Space(nodes=("a", "b", "c"), eot=4, eff=2, crashes=0)
>>> len(space), len(space.channels())
(64, 6)
>>> space[5]
Scenario(omissions=(('a', 'b', 1), ('b', 'a', 1)), crashes=())
>>> len(Space(nodes=("a", "b"), eot=3, eff=1, crashes=1))  # no omission; no crash, or 2 nodes x 3 ticks
7
>>> [s.size for s in Space(nodes=("a", "b"), eot=2, eff=1, crashes=1).smallest_first()]
[0, 1, 1, 1, 1]
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, replace
from math import comb

from sparkdedalus.network import Fixed, Network

#: the largest space `sparkdedalus faults` runs whole; larger ones need `--sample`
MAX_SCENARIOS = 1_000_000
#: the searches of `sparkdedalus faults --search`: "auto" enumerates spaces of at
#: most AUTO_ENUMERATE scenarios and runs LDFI (faults/ldfi.py) on larger ones
SEARCHES = ("auto", "ldfi", "all")
AUTO_ENUMERATE = 10_000


@dataclass(frozen=True, order=True)
class Scenario:
    """One failure schedule: omitted (src, dst, tick) channels and (node, tick) crashes."""

    omissions: tuple = ()
    crashes: tuple = ()

    @property
    def size(self) -> int:
        """The number of failures (omitted channel-ticks plus crashes)."""
        return len(self.omissions) + len(self.crashes)

    def network(self, base: Network = Network()) -> Network:
        """The scenario as the reference evaluator's and the engine's failure model:
        `base` (default: every message that is not lost arrives at the next tick)
        with the scenario's failures added, a node crashing at its earliest tick.
        Its delay, seed and capacity are `base`'s.

        >>> Scenario((("a", "b", 1),), (("b", 2),)).network(Network.parse("capacity=2,crash=b@3")).spec()
        'delay=fixed,seed=0,omit=a>b@1,crash=b@2,capacity=2'
        """
        crashes = dict(base.crashes)
        for node, tick in self.crashes:
            crashes[node] = min(tick, crashes.get(node, tick))
        return replace(base, omissions=base.omissions | frozenset(self.omissions), crashes=crashes)

    def to_json(self) -> dict:
        return {"omissions": [list(o) for o in self.omissions], "crashes": [list(c) for c in self.crashes]}


@dataclass(frozen=True)
class Space:
    """The scenarios over `nodes` (their order is kept) up to tick `eot`;
    with `omissible`, only those channel-ticks may be omitted (`part`)."""

    nodes: tuple
    eot: int
    eff: int
    crashes: int = 0
    omissible: tuple | None = None

    def __post_init__(self) -> None:
        if len(set(self.nodes)) != len(self.nodes) or not self.nodes:
            raise ValueError(f"the nodes must be distinct and at least one: {list(self.nodes)}")
        if not 1 <= self.eot or not 0 <= self.eff <= self.eot:
            raise ValueError(f"need EOT >= 1 and 0 <= EFF <= EOT, got EOT {self.eot}, EFF {self.eff}")
        if not 0 <= self.crashes <= len(self.nodes):
            raise ValueError(f"crashes must be between 0 and the number of nodes ({len(self.nodes)})")

    def channels(self) -> tuple:
        """The channel-ticks that may be omitted: (src, dst, tick), tick-major."""
        if self.omissible is not None:
            return self.omissible
        return tuple((a, b, t) for t in range(1, self.eff) for a in self.nodes for b in self.nodes if a != b)

    def crash_choices(self) -> int:
        """The number of crash schedules (no crash included)."""
        return sum(comb(len(self.nodes), k) * self.eot ** k for k in range(self.crashes + 1))

    @property
    def count(self) -> int:
        """The number of scenarios (`len` too, while it fits an index)."""
        return 2 ** len(self.channels()) * self.crash_choices()

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> Scenario:
        if not 0 <= index < self.count:
            raise IndexError(f"scenario {index} is outside 0..{self.count - 1}")
        channels = self.channels()
        mask, crash_index = index % 2 ** len(channels), index >> len(channels)
        omissions = tuple(sorted(c for i, c in enumerate(channels) if mask >> i & 1))
        return Scenario(omissions, self._crashes(crash_index))

    def _crashes(self, index: int) -> tuple:
        for k in range(self.crashes + 1):
            block = comb(len(self.nodes), k) * self.eot ** k
            if index < block:
                who, when = divmod(index, self.eot ** k)
                nodes = next(itertools.islice(itertools.combinations(self.nodes, k), who, None))
                ticks = [when // self.eot ** i % self.eot + 1 for i in range(k)]
                return tuple(sorted(zip(nodes, ticks)))
            index -= block
        raise AssertionError("unreachable: index checked against len(self)")

    def index(self, scenario: Scenario) -> int:
        """The index of `scenario` (the inverse of `space[index]`).

        >>> space = Space(("a", "b", "c"), eot=4, eff=2, crashes=2)
        >>> all(space.index(space[i]) == i for i in range(0, len(space), 7))
        True
        """
        channels = self.channels()
        mask = sum(1 << i for i, c in enumerate(channels) if c in scenario.omissions)
        if len(scenario.crashes) > self.crashes or any(c not in channels for c in scenario.omissions):
            raise ValueError(f"{scenario} is not a scenario of the space")
        k = len(scenario.crashes)
        crashes = sorted(scenario.crashes, key=lambda c: self.nodes.index(c[0]))
        who = list(itertools.combinations(self.nodes, k)).index(tuple(n for n, _ in crashes))
        when = sum((t - 1) * self.eot ** i for i, (_, t) in enumerate(crashes))
        before = sum(comb(len(self.nodes), j) * self.eot ** j for j in range(k))
        return mask + ((before + who * self.eot ** k + when) << len(channels))

    def part(self, scenarios) -> "Space":
        """The space whose omissible channel-ticks are only those the
        `scenarios` omit (their crashes as this space's): a space small enough
        to number, holding them.

        >>> part = Space(("a", "b", "c"), eot=9, eff=8, crashes=1).part([Scenario((("a", "b", 3),), (("c", 2),))])
        >>> part.count, part[part.index(Scenario((("a", "b", 3),), (("c", 2),)))].crashes
        (56, (('c', 2),))
        """
        used = {c for s in scenarios for c in s.omissions}
        return replace(self, omissible=tuple(c for c in self.channels() if c in used))

    def __iter__(self):
        return (self[i] for i in range(self.count))

    def smallest_first(self) -> list:
        """Every scenario, fewest failures first (then by their failures)."""
        return sorted(self, key=lambda s: (s.size, s))

    def sample(self, n: int, seed: int = 0) -> list:
        """`n` distinct scenarios drawn at random (all of them when n >= len)."""
        return [self[i] for i in self.sample_indices(n, seed)]

    def sample_indices(self, n: int, seed: int = 0) -> list:
        """The sorted indices of the scenarios `sample(n, seed)` draws."""
        if n >= self.count:
            return list(range(self.count))
        draw, chosen = random.Random(seed), set()
        while len(chosen) < n:
            chosen.add(draw.randrange(self.count))
        return sorted(chosen)


def resolve(search: str, space: Space, sample: int | None, network: Network = Network()) -> str:
    """The search that runs: "all" or "ldfi". `auto` enumerates a sample or a
    space of at most AUTO_ENUMERATE scenarios, and searches larger ones. LDFI's
    lineage takes a message to arrive at the next tick, and a lost one to leave
    the others' deliveries alone: with a base `network` whose delay is not
    `Fixed()` or with a capacity, `auto` enumerates and `ldfi` is refused.

    >>> resolve("auto", Space(("a", "b", "c"), eot=4, eff=2), None), resolve("auto", Space(("a", "b", "c"), eot=6, eff=4), None)
    ('all', 'ldfi')
    >>> resolve("auto", Space(("a", "b", "c"), eot=6, eff=4), None, Network(capacity=2))
    'all'
    """
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {', '.join(SEARCHES)}, not {search!r}")
    if search == "ldfi" and sample is not None:
        raise ValueError("--sample draws scenarios to enumerate: it does not go with --search ldfi")
    lineage = network.capacity is None and network.delay == Fixed()
    if search == "ldfi" and not lineage:
        raise ValueError("--search ldfi needs the fixed delay and no capacity (its lineage takes a message to "
                         "arrive at the next tick): use --search all")
    if search == "auto":
        return "all" if sample is not None or space.count <= AUTO_ENUMERATE or not lineage else "ldfi"
    return search
