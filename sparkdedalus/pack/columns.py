"""Names the engine's frames share with the store (no pyspark: the store's
JVM-free readers import it).

A relation's rows are columns `c0..cn-1` (`relation_columns`); a message also
carries its sender in `SOURCE_COLUMN`. A pack row has a kind: `STATE` (a fact of
the tick's final state), `NEXT` (derived by @next for the next tick),
`MESSAGE` (sent this tick), `GARBAGE` (a fact of the final state that
garbage collection does not carry to the next tick, docs/gc.md) or, under a
network capacity, `QUEUED` (a message waiting in its sender's outbox,
spark/queues.py). With a
partitioner (spark/partitioner.py) a frame also carries its facts' bucket in
`PARTITION_COLUMN`.

>>> relation_columns(3)
['c0', 'c1', 'c2']
"""

from __future__ import annotations

#: the Spark SQL type of each dialect type
SPARK_TYPES = {"int": "bigint", "long": "bigint", "double": "double", "string": "string", "bool": "boolean"}
SOURCE_COLUMN = "__src"
PARTITION_COLUMN = "__p"
STATE, NEXT, MESSAGE, GARBAGE, QUEUED = "S", "N", "M", "G", "Q"


def relation_columns(arity: int) -> list[str]:
    """Column names of a relation's frame inside the engine."""
    return [f"c{i}" for i in range(arity)]
