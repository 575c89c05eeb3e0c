"""The per-node message queues of a network with a capacity (`Network.capacity`,
the contract in sparkdedalus/network.py), as SQL over the tick loop's packs.

A message waiting in its sender's outbox is a pack row of kind `QUEUED` (sent =
the tick it was derived, no arrival); one that left is a `MESSAGE` row (sent =
the tick it was derived, arrival = the network's, from the tick it left) that
stays in the packs until its destination takes it in. The orders are windows
(`row_number()`) partitioned by node: an outbox by its sender (`__src`), an
inbox by the printed destination.

>>> from sparkdedalus import Program
>>> from sparkdedalus.network import Network
>>> from sparkdedalus.pack.layout import Layout
>>> program = Program.parse('m(B, X)@async :- go(A, B, X); go("a", "b", 1)@1;')
>>> queues = Queues(Layout(program.relations), Network(capacity=2), program)
>>> queues.printed(0)
"CASE __rel WHEN 'm' THEN CAST(s0 AS STRING) END"
"""

from __future__ import annotations

from sparkdedalus.network import SEPARATOR, Network
from sparkdedalus.pack.columns import MESSAGE, QUEUED, SOURCE_COLUMN
from sparkdedalus.pack.layout import Layout
from sparkdedalus.spark.expressions import sql_literal
from udfs.registry import spark_string_sql


class Queues:
    """The SQL of the queues of `program`'s messages under `network.capacity`."""

    def __init__(self, layout: Layout, network: Network, program):
        self.layout = layout
        self.capacity = network.capacity
        self.seed = network.seed
        self.relations = sorted({r.head.name for r in program.rules if r.delivery == "async"})
        self.width = max((program.relations[n].arity for n in self.relations), default=0)
        self.types = {n: program.relations[n].types for n in self.relations}

    def printed(self, position: int) -> str:
        """SQL: a message row's value at `position`, printed (`spark_string`);
        NULL for a relation with fewer arguments."""
        return self.layout.per_relation_sql({
            n: spark_string_sql(self.layout.columns[n][position], self.types[n][position])
            for n in self.relations if position < len(self.types[n])})

    def _order(self) -> str:
        """SQL: h, relation, printed row: a message's own part of both orders
        (`network.queue_key`); concat_ws skips the NULLs of shorter rows."""
        printed = [self.printed(i) for i in range(self.width)]
        key = ", ".join([sql_literal(SEPARATOR), sql_literal(str(self.seed)), "__rel", "CAST(__sent AS STRING)", *printed])
        return ", ".join([f"xxhash64(concat_ws({key}))", "__rel", *printed])

    def inbox_sql(self, previous: str, tick: int) -> str:
        """SQL: the messages of the pack `previous` in an inbox (MESSAGE rows
        that arrive), each with `__dst` (its printed destination) and `__take`:
        taken in at `tick` (ready, and among the first its node has room for
        after its outbox's old messages)."""
        dst = self.printed(0)
        ranked = (f"SELECT *, {dst} AS __dst, row_number() OVER (PARTITION BY {dst} "
                  f"ORDER BY __arrival, __sent, {self._order()}, {SOURCE_COLUMN}) AS __k "
                  f"FROM {previous} WHERE __kind = '{MESSAGE}' AND __arrival IS NOT NULL")
        old = f"SELECT {SOURCE_COLUMN} AS __node, count(1) AS __n FROM {previous} WHERE __kind = '{QUEUED}' " \
              f"GROUP BY {SOURCE_COLUMN}"
        room = f"{self.capacity} - least(coalesce(o.__n, 0), {self.capacity})"
        return (f"SELECT i.*, (i.__arrival <= {tick} AND i.__k <= {room}) AS __take "
                f"FROM ({ranked}) i LEFT JOIN ({old}) o ON i.__dst = o.__node")

    @staticmethod
    def taken_sql(inbox: str | None) -> str:
        """SQL: per node, the messages it takes in (`__node`, `__r`); none
        without an inbox (the first tick)."""
        if inbox is None:
            return "SELECT CAST(NULL AS STRING) AS __node, CAST(0 AS BIGINT) AS __r FROM range(0, 1, 1, 1) WHERE false"
        return f"SELECT __dst AS __node, count(1) AS __r FROM {inbox} WHERE __take GROUP BY __dst"

    def outbox_sql(self, outbox: str, taken: str) -> str:
        """SQL: the QUEUED rows `outbox` (old and new, distinct), each with
        `__leave`: among the first its sender has room for after what it took in."""
        ranked = (f"SELECT *, row_number() OVER (PARTITION BY {SOURCE_COLUMN} "
                  f"ORDER BY __sent, {self._order()}) AS __k FROM {outbox}")
        return (f"SELECT q.*, q.__k <= {self.capacity} - coalesce(t.__r, 0) AS __leave "
                f"FROM ({ranked}) q LEFT JOIN {taken} t ON q.{SOURCE_COLUMN} = t.__node")
