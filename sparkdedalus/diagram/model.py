"""What a spacetime diagram shows: nodes, ticks, messages, crashes and the facts of
one relation, read from a run directory with delta-rs (no Spark, no JVM)."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from sparkdedalus.network import Network
from sparkdedalus.output import sort_key
from sparkdedalus.store import StoreError, read
from udfs.registry import spark_string


@dataclass(frozen=True)
class Diagram:
    """A run between ticks `first` and `last`: nodes are location names (strings,
    as the network model compares them), `messages` those sent in first..last,
    `crashes` node -> crash tick, `facts` (node, tick) -> rows of `relation`
    without their location, for the committed ticks shown."""

    nodes: tuple
    first: int
    last: int
    horizon: int  # the run's last committed tick
    messages: tuple = ()
    crashes: Mapping = field(default_factory=dict)
    relation: str | None = None
    facts: Mapping = field(default_factory=dict)

    @property
    def end(self) -> int:
        """The last tick drawn: `last`, or a later arrival of a message shown."""
        return _end(self.last, self.messages)

    @property
    def delivered(self) -> list:
        return [m for m in self.messages if m.arrival is not None]

    @property
    def lost(self) -> list:
        return [m for m in self.messages if m.arrival is None]

    @property
    def crashed(self) -> list:
        """The nodes that crash at a tick drawn."""
        return [node for node, tick in self.crashes.items() if tick <= self.end]


def node_order(values) -> tuple:
    """Location values as names, in the order of their values (2 before 10)."""
    names = {}
    for value in values:
        names.setdefault(spark_string(value), value)
    return tuple(sorted(names, key=lambda name: sort_key((names[name],))))


def from_store(path: str, relation: str | None = None, first: int | None = None,
               last: int | None = None) -> Diagram:
    """The diagram of the run stored in `path` between ticks `first` and `last`
    (default: all committed ticks), listing the facts of `relation` (default: none).
    Raises StoreError for a missing run, relation or tick."""
    found = read.manifest(path)
    horizon = found.last_tick
    if horizon == 0:
        raise StoreError("no tick is committed yet")
    first = 1 if first is None else first
    last = horizon if last is None else last
    if not 1 <= first <= last <= horizon:
        raise StoreError(f"ticks {first}..{last} are not a range of committed ticks (ticks 1..{horizon})")
    if relation is not None and relation not in found.relations:
        raise StoreError(f"unknown relation '{relation}' (relations: {', '.join(sorted(found.relations))})")
    network = Network.parse(found.network)
    messages = tuple(m for m in read.messages(path) if first <= m.send_tick <= last)
    seen = list(read.locations(path)) + list(network.nodes)
    for message in messages:
        seen += [message.src, message.row[0]]
    facts = {}
    if relation is not None:
        for tick, rows in read.relation_history(path, relation, first, min(_end(last, messages), horizon)).items():
            for row in rows:
                facts.setdefault((spark_string(row[0]), tick), []).append(row[1:])
    return Diagram(node_order(seen), first, last, horizon, messages, MappingProxyType(dict(network.crashes)),
                   relation, MappingProxyType({k: tuple(sorted(v, key=sort_key)) for k, v in facts.items()}))


def _end(last: int, messages) -> int:
    return max([last] + [m.arrival for m in messages if m.arrival is not None])
