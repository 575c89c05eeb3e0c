"""The per-node message queues of a network with a capacity (`Network.capacity`),
for the reference evaluator: every node's outbox and inbox, as the network
module's doc defines them.

>>> from sparkdedalus.network import Network
>>> queues = Queues(Network(capacity=1))
>>> for tick in (1, 2, 3):  # a derives two messages to b at tick 1
...     delivered = queues.take_in(tick)
...     queues.send({("log", ("b", 1), "a"), ("log", ("b", 2), "a")} if tick == 1 else set(), tick)
>>> sorted((m.left, m.arrival) for m in queues.messages())  # a sends one a tick, b takes each in
[(1, 2), (2, 3)]
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sparkdedalus.network import Message, Network, queue_key
from sparkdedalus.output import sort_key
from udfs.registry import spark_string


@dataclass
class _Queued:
    """A message in a queue: derived by `src` at `derived`; it `left` its
    outbox, arrived (`reached`) at its destination's inbox, was taken in there
    (`delivered`) at those ticks (None: not yet, or lost)."""

    relation: str
    row: tuple
    src: object
    derived: int
    key: tuple  # queue_key
    left: int | None = None
    reached: int | None = None
    delivered: int | None = None

    def outbox_order(self) -> tuple:
        return (self.derived, *self.key)

    def inbox_order(self) -> tuple:
        return (self.reached, self.derived, *self.key, spark_string(self.src))

    def message(self) -> Message:
        return Message(self.relation, self.row, self.src, self.derived, self.delivered, self.left)


class Queues:
    """Every node's outbox and inbox under `network.capacity`. A tick calls
    `take_in` before its rules run and `send` after."""

    def __init__(self, network: Network):
        self.network = network
        self.outbox: dict = defaultdict(list)  # node (printed) -> [_Queued] not yet left
        self.inbox: dict = defaultdict(list)  # node (printed) -> [_Queued] arrived, not yet taken in
        self.taken: dict = {}  # node -> messages it took in at the current tick
        self.queued: list[_Queued] = []  # every message, in the order derived

    def take_in(self, tick: int) -> list[tuple]:
        """The messages (relation, row) the nodes take in at `tick`: each node
        the first of its ready inbox, up to the room its capacity leaves after
        its outbox's old messages."""
        capacity = self.network.capacity
        delivered, self.taken = [], {}
        for node, box in self.inbox.items():
            ready = sorted((m for m in box if m.reached <= tick), key=_Queued.inbox_order)
            taken = ready[:capacity - min(len(self.outbox[node]), capacity)]
            for m in taken:
                m.delivered = tick
                delivered.append((m.relation, m.row))
            self.inbox[node] = [m for m in box if m.delivered is None]
            self.taken[node] = len(taken)
        return delivered

    def send(self, derived: set, tick: int) -> None:
        """Queue the messages (relation, row, src) derived at `tick`; then every
        node sends the first of its outbox, up to the room its capacity leaves
        after what it took in. A message leaving at `tick` is sent then: the
        network decides its arrival, or loses it."""
        for relation, row, src in sorted(derived, key=lambda m: (m[0], sort_key(m[1]), spark_string(m[2]))):
            m = _Queued(relation, row, src, tick, queue_key(self.network.seed, relation, row, tick))
            self.queued.append(m)
            self.outbox[spark_string(src)].append(m)
        for node, box in self.outbox.items():
            box.sort(key=_Queued.outbox_order)
            room = self.network.capacity - self.taken.get(node, 0)
            for m in box[:room]:
                m.left = tick
                m.reached = self.network.arrival(m.relation, m.row, m.src, tick)
                if m.reached is not None:
                    self.inbox[spark_string(m.row[0])].append(m)
            del box[:room]

    def messages(self) -> list[Message]:
        """Every message derived so far, as the trace lists them."""
        return [m.message() for m in self.queued]
