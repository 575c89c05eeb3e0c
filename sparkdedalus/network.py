"""The network and failure model of a run: when an `@async` message arrives, if at all.

One small object shared by the reference evaluator and the Spark engine. The Spark
engine computes the same arrival tick as a Column expression, so the recipe below
is a contract, not an implementation detail:

- `Fixed()` (the default, Molly's convention): a message sent at tick t arrives at t + 1.
- `Uniform(a, b)` with 1 <= a <= b: it arrives at t + d where
  ``d = a + (h % (b - a + 1))`` (non-negative modulo, Python's `%`) and
  ``h = xxhash64_string(message_key(seed, relation, row, t))``: Spark's `xxhash64`
  (seed 42, signed 64 bits) of the UTF-8 string
  ``"\\x1f".join([str(seed), relation, str(t)] + [spark_string(v) for v in row])``,
  `row` being the whole message tuple, destination location first. Values are
  printed with `udfs.registry.spark_string` (`true`/`false`, decimal integers,
  strings as they are, doubles in the canonical form both engines print, see
  docs/semantics.md).
- An omission `(src, dst, t)` loses the message node `src` sends to node `dst` at tick t.
- A crash `{node: t}` silences the node from tick t on: nothing it sends at a tick
  >= t is delivered. Messages to it are still delivered and its rules still run.
- Nodes are compared by their string form (`spark_string`), so `omit=1>2@3` also
  applies to integer locations 1 and 2.

The sender of a message is the location of the rule's body: the first argument of
its first positive atom.

**Capacity** (`capacity=C`, integer C >= 1; default None, unbounded) bounds each node's
work per tick. A message costs its sender one unit when it *leaves* and its
destination one unit when it is *taken in*. A message derived at tick t enters its
sender's outbox; it leaves at some tick s >= t, and s is its send tick for the delay
model, omissions and crashes (`arrival(relation, row, src, s)`); on arrival it enters
its destination's inbox, ready from its arrival tick on. Node n at tick t, with `old`
the messages in its outbox at the start of t and `ready` those of its inbox ready at t:
1. it takes in r = min(|ready|, C - min(|old|, C)) messages, the first in inbox
   order: they are the messages delivered at t (facts at t); the others wait;
2. after the rules of t ran, the first C - r messages of its outbox (those derived
   at t included) in outbox order leave at t; the others wait.
Outbox order: (derive tick, h, relation, printed row); inbox order: (arrival tick,
derive tick, h, relation, printed row, printed sender); h =
`xxhash64_string(message_key(seed, relation, row, derive tick))`, the printed row
the tuple of the `spark_string`s of its values (`queue_key`). A message is
(relation, row, sender, derive tick), as without capacity: the same row derived by
one sender at one tick is one message, by two senders two, at two ticks two. When
the capacity never binds, every message leaves when it is derived and is taken in
at its arrival: the run is the run without capacity. A crashed node still takes in
messages within its capacity; what leaves its outbox from its crash tick on is lost
(and costs its unit, as an omitted message does).

The built-in relation `crash(L, N, T)` holds at every location L, at every tick, for
every crash (N, T). "Every location" is the set of location values (as strings) that
appear as the first argument of a fact of the program (at any tick) or of an input row
(stamped with a tick or not), or as a node
of the failure model (a source, destination or crashed node): see `crash_rows`.

>>> net = Network.parse("delay=fixed,omit=a>b@2,crash=c@3")
>>> net.arrival("log", ("b", "hi"), "a", 1), net.arrival("log", ("b", "hi"), "a", 2)
(2, None)
>>> net.arrival("log", ("a", "hi"), "c", 2), net.arrival("log", ("a", "hi"), "c", 3)
(3, None)
>>> from sparkdedalus import Program
>>> sorted(net.crash_rows(Program.parse('p("d");'), {"a"}))
[('a', 'c', 3), ('b', 'c', 3), ('c', 'c', 3), ('d', 'c', 3)]
>>> Network.parse(net.spec()) == net
True
>>> Network.parse("capacity=2,crash=c@3").spec()
'delay=fixed,seed=0,crash=c@3,capacity=2'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping, NamedTuple, Union

from udfs.registry import spark_string, xxhash64_string

#: The separator of the fields of a hashed key (ASCII "unit separator").
SEPARATOR = "\x1f"
CAPACITY_ERROR = "capacity must be an integer >= 1"


def message_key(seed: int, relation: str, row: tuple, send_tick: int) -> str:
    """The string whose hash decides a message's delay under `Uniform`.

    >>> message_key(7, "log", ("b", 1, True), 2).split(SEPARATOR)
    ['7', 'log', '2', 'b', '1', 'true']
    """
    return SEPARATOR.join([str(seed), relation, str(send_tick)] + [spark_string(v) for v in row])


def queue_key(seed: int, relation: str, row: tuple, derive_tick: int) -> tuple:
    """The part of a message's outbox and inbox orders under a capacity that
    comes from the message itself: (h, relation, printed row), h the hash of
    `message_key` at the tick the message was derived.

    >>> h, relation, printed = queue_key(0, "log", ("b", 1), 2)
    >>> h == xxhash64_string(message_key(0, "log", ("b", 1), 2)), relation, printed
    (True, 'log', ('b', '1'))
    """
    printed = tuple(spark_string(v) for v in row)
    return xxhash64_string(message_key(seed, relation, row, derive_tick)), relation, printed


def choice_key(seed: int, values: tuple) -> tuple:
    """The order in which `choose((K..), (V..))` ranks candidate V-bindings: for
    every K-binding the V-binding with the smallest key is kept. Deterministic
    given the seed; the Spark engine ranks with the same key in a window.

    >>> choice_key(0, ("b", 2))[1]
    ('b', '2')
    """
    printed = tuple(spark_string(v) for v in values)
    return xxhash64_string(SEPARATOR.join((str(seed),) + printed)), printed


@dataclass(frozen=True)
class Fixed:
    """Every message arrives one tick after it is sent."""

    def ticks(self, seed: int, relation: str, row: tuple, send_tick: int) -> int:
        return 1

    def spec(self) -> str:
        return "fixed"


@dataclass(frozen=True)
class Uniform:
    """A delay in [low, high] ticks picked by hashing the message (see the module doc)."""

    low: int
    high: int

    def __post_init__(self) -> None:
        if not (isinstance(self.low, int) and isinstance(self.high, int) and 1 <= self.low <= self.high):
            raise ValueError(f"uniform({self.low}, {self.high}): the delays need 1 <= low <= high")

    def ticks(self, seed: int, relation: str, row: tuple, send_tick: int) -> int:
        h = xxhash64_string(message_key(seed, relation, row, send_tick))
        return self.low + h % (self.high - self.low + 1)

    def spec(self) -> str:
        return f"uniform({self.low},{self.high})"


Delay = Union[Fixed, Uniform]


@dataclass(frozen=True)
class Network:
    """The delay model, its seed, and the failures to inject.

    `seed` also seeds `choose` (see docs/semantics.md). `omissions` holds
    (src, dst, tick) triples, `crashes` maps a node to its crash tick,
    `capacity` bounds the messages a node handles a tick (None: unbounded).
    """

    delay: Delay = Fixed()
    seed: int = 0
    omissions: frozenset = frozenset()
    crashes: Mapping = field(default_factory=dict)
    capacity: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.delay, (Fixed, Uniform)):
            raise ValueError(f"delay must be Fixed() or Uniform(low, high), not {self.delay!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ValueError(f"the network seed must be an integer, not {self.seed!r}")
        if self.capacity is not None and (not isinstance(self.capacity, int) or isinstance(self.capacity, bool)
                                          or self.capacity < 1):
            raise ValueError(CAPACITY_ERROR)
        omissions = frozenset((spark_string(src), spark_string(dst), _tick(tick, "omission"))
                              for src, dst, tick in self.omissions)
        crashes = {spark_string(node): _tick(tick, "crash") for node, tick in dict(self.crashes).items()}
        object.__setattr__(self, "omissions", omissions)
        object.__setattr__(self, "crashes", MappingProxyType(crashes))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Network) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        return self.delay, self.seed, self.omissions, tuple(sorted(self.crashes.items())), self.capacity

    # -- the model
    def arrival(self, relation: str, row: tuple, src, send_tick: int) -> int | None:
        """The tick at which the message `relation(row)` sent by `src` at
        `send_tick` arrives at its destination `row[0]`, or None when it is lost."""
        sender = spark_string(src)
        crashed_at = self.crashes.get(sender)
        if crashed_at is not None and send_tick >= crashed_at:
            return None
        if (sender, spark_string(row[0]), send_tick) in self.omissions:
            return None
        return send_tick + self.delay.ticks(self.seed, relation, row, send_tick)

    @property
    def nodes(self) -> frozenset:
        """Every node the failure model names (as strings)."""
        return frozenset(n for src, dst, _ in self.omissions for n in (src, dst)) | frozenset(self.crashes)

    def crash_rows(self, program, input_locations) -> frozenset:
        """The facts of `crash(L, N, T)` (the same at every tick): one per crash
        (N, T) and per location L of the run. The run's locations, known before
        it starts: the first argument of every fact of `program` (at any tick),
        `input_locations` (those of every input row: `.input` rows, stamped with
        a tick or not, and `edb=` rows), and the failure model's nodes."""
        named = {fact.row[0] for fact in program.facts} | set(input_locations)
        everywhere = {spark_string(loc) for loc in named} | self.nodes
        return frozenset((loc, node, tick) for loc in everywhere for node, tick in self.crashes.items())

    # -- the --network option
    def spec(self) -> str:
        """The `--network` text of this network (`Network.parse(n.spec()) == n`)."""
        items = [f"delay={self.delay.spec()}", f"seed={self.seed}"]
        items += [f"omit={src}>{dst}@{tick}" for src, dst, tick in sorted(self.omissions)]
        items += [f"crash={node}@{tick}" for node, tick in sorted(self.crashes.items())]
        items += [f"capacity={self.capacity}"] if self.capacity is not None else []
        return ",".join(items)

    @staticmethod
    def parse(spec: str) -> "Network":
        """Read a `--network` spec: comma-separated items `delay=fixed`,
        `delay=uniform(LOW,HIGH)`, `seed=N`, `omit=SRC>DST@TICK`, `crash=NODE@TICK`,
        `capacity=C` (omit and crash repeatable; an empty spec is the default network).

        >>> Network.parse("delay=uniform(1,3), crash=b@3")
        Network(delay=Uniform(low=1, high=3), seed=0, omissions=frozenset(), crashes=mappingproxy({'b': 3}), capacity=None)
        >>> Network.parse("capacity=0")
        Traceback (most recent call last):
        ValueError: capacity must be an integer >= 1
        """
        delay: Delay = Fixed()
        seed = 0
        capacity = None
        omissions = set()
        crashes: dict = {}
        seen = set()
        for item in _items(spec):
            key, eq, value = (part.strip() for part in item.partition("="))
            if not eq or not value:
                raise ValueError(f"bad network item '{item}': expected KEY=VALUE "
                                 f"(delay=..., seed=..., omit=..., crash=..., capacity=...)")
            if key in ("delay", "seed", "capacity") and key in seen:
                raise ValueError(f"bad network spec: '{key}' given twice")
            seen.add(key)
            if key == "delay":
                delay = _parse_delay(value)
            elif key == "seed":
                seed = _parse_int(value, "seed", minimum=None)
            elif key == "omit":
                match = re.fullmatch(r"([^>@]+)>([^>@]+)@(.+)", value)
                if not match:
                    raise ValueError(f"bad network item 'omit={value}': expected omit=SRC>DST@TICK, e.g. omit=a>b@2")
                omissions.add((_node(match[1]), _node(match[2]), _parse_int(match[3], "omission tick")))
            elif key == "crash":
                match = re.fullmatch(r"([^>@]+)@(.+)", value)
                if not match:
                    raise ValueError(f"bad network item 'crash={value}': expected crash=NODE@TICK, e.g. crash=b@3")
                node = _node(match[1])
                if node in crashes:
                    raise ValueError(f"bad network spec: node '{node}' crashes twice")
                crashes[node] = _parse_int(match[2], "crash tick")
            elif key == "capacity":
                capacity = _parse_capacity(value)
            else:
                raise ValueError(f"bad network item '{item}': unknown key '{key}' "
                                 f"(expected delay, seed, omit, crash or capacity)")
        return Network(delay, seed, frozenset(omissions), crashes, capacity)


def _items(spec: str) -> list[str]:
    """Split at the commas that are not inside parentheses."""
    items, depth, current = [], 0, []
    for char in spec:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


def _parse_delay(value: str) -> Delay:
    if value.lower() == "fixed":
        return Fixed()
    match = re.fullmatch(r"uniform\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)", value, re.IGNORECASE)
    if not match:
        raise ValueError(f"bad network item 'delay={value}': expected delay=fixed or delay=uniform(LOW,HIGH)")
    low, high = _parse_int(match[1], "delay"), _parse_int(match[2], "delay")
    if low > high:
        raise ValueError(f"bad network item 'delay={value}': uniform(LOW,HIGH) needs LOW <= HIGH")
    return Uniform(low, high)


def _parse_int(text: str, what: str, minimum: int | None = 1) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(f"bad network spec: {what} '{text.strip()}' is not an integer") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"bad network spec: {what} {value} must be >= {minimum}")
    return value


def _parse_capacity(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(CAPACITY_ERROR) from None


def _node(text: str) -> str:
    name = text.strip()
    if len(name) >= 2 and name[0] == name[-1] == '"':
        name = name[1:-1]
    if not name:
        raise ValueError("bad network spec: empty node name")
    return name


def _tick(tick, what: str) -> int:
    if not isinstance(tick, int) or isinstance(tick, bool) or tick < 1:
        raise ValueError(f"a {what} tick must be an integer >= 1, not {tick!r}")
    return tick


class Message(NamedTuple):
    """One `@async` message: sent by `src` at `send_tick`; `arrival` is None when
    lost. Both engines' traces and the store's readers list messages this way.

    Under a capacity, `send_tick` is the tick the message was derived, `left`
    the tick it left its sender's outbox (None: still there at the end of the
    run) and `arrival` the tick its destination took it in (None: lost, or still
    queued at the end of the run). Without a capacity `left` is None."""

    relation: str
    row: tuple
    src: object
    send_tick: int
    arrival: int | None
    left: int | None = None

    @property
    def sent(self) -> int | None:
        """The tick the message left its sender, the one its failures apply
        to: `send_tick` without a capacity, `left` with one.

        >>> Message("log", ("b",), "a", 1, 3).sent, Message("log", ("b",), "a", 1, 4, left=2).sent
        (1, 2)
        """
        return self.send_tick if self.left is None else self.left
