"""A tick's changes, per relation, and packs and relations rebuilt from them (Spark).

The rows of a relation's table (columns: see `sparkdedalus.store.layout`):
S, N and G rows are differences between consecutive ticks, so a fact that holds
for 1,000 ticks is written twice at most (when it appears and when it
disappears), and a relation that does not change at a tick gets no row and no
commit. A row is in the relation's kind K at the end of tick k iff the sum of
its `_op` over the rows with `_tick <= k` is 1. Messages are written once, at
their send tick; a message is in the pack of tick k iff it was sent at k, or
sent before k and arrives after k. The store keeps what the engine's pack
holds (the engine carries persisted relations through their S rows, without N
copies), so a pack rebuilt from the tables equals the pack that was committed.
A fact garbage collection drops at the end of tick t (a G row of t) gets a
-1 S row at t+1 unless something derives it again: time travel shows it
through tick t and not after.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ByteType, LongType, StringType, StructField, StructType

from sparkdedalus.pack.columns import GARBAGE, MESSAGE, NEXT, SOURCE_COLUMN, STATE
from sparkdedalus.pack.layout import Layout
from sparkdedalus.store.layout import ARRIVAL, KIND, OP, SRC, TICK

_OP = "__op"
_TICK = "__tick"


def table_schema(layout: Layout, name: str, columns) -> StructType:
    """The Delta table of relation `name`: its columns, then the bookkeeping
    (every column nullable, as Delta stores them)."""
    fields = [StructField(c, f.dataType, True) for c, f in zip(columns, layout.schemas[name].fields)]
    return StructType(fields + [StructField(TICK, LongType(), True), StructField(KIND, StringType(), True),
                                StructField(OP, ByteType(), True), StructField(ARRIVAL, LongType(), True),
                                StructField(SRC, StringType(), True)])


def tick_diff(pack: DataFrame, previous: DataFrame | None, tick: int, layout: Layout) -> DataFrame:
    """The changes of `tick` in pack form plus `__op` and `__tick`: S, N and G rows
    of `pack` not in `previous` (+1) and the reverse (-1), and the messages sent
    at `tick` (+1). A lazy plan with one shuffle (none at the first tick)."""
    columns = list(layout.pack_schema.fieldNames())  # the engine's partition column left out
    current = pack.where((F.col("__kind") != MESSAGE) | (F.col("__sent") == tick)).select(*columns)
    if previous is None:
        return current.withColumn(_OP, F.lit(1)).withColumn(_TICK, F.lit(tick).cast("bigint"))
    both = current.select(*columns, F.lit(1).alias(_OP)).unionAll(
        previous.where(F.col("__kind") != MESSAGE).select(*columns, F.lit(-1).alias(_OP)))
    return (both.groupBy(*columns).agg(F.sum(_OP).alias(_OP)).where(F.col(_OP) != 0)
            .withColumn(_TICK, F.lit(tick).cast("bigint")))


def changed_relations(diff: DataFrame) -> list[str]:
    """The relations with at least one change in `diff` (one job, a few values collected)."""
    return sorted(row["__rel"] for row in diff.groupBy("__rel").count().collect())


def relation_changes(diff: DataFrame, name: str, layout: Layout, columns, after: int = 0) -> DataFrame:
    """Relation `name`'s rows of `diff` (the changes of one tick or of several,
    see `tick_diff`) of ticks after `after`, as rows of its table, in one
    partition sorted by location (one data file per commit, row groups
    clustered by location)."""
    values = [F.col(layout.column(name, i)).alias(c) for i, c in enumerate(columns)]
    wanted = (F.col("__rel") == name) & (F.col(_TICK) > after) if after else F.col("__rel") == name
    rows = diff.where(wanted).select(
        *values, F.col(_TICK).alias(TICK), F.col("__kind").alias(KIND),
        F.col(_OP).cast("tinyint").alias(OP), F.col("__arrival").alias(ARRIVAL),
        F.col(SOURCE_COLUMN).alias(SRC))
    return rows.coalesce(1).sortWithinPartitions(columns[0], KIND)


def _present(table: DataFrame, columns, tick: int, kinds) -> DataFrame:
    """(kind, columns...) of the rows of `kinds` (not messages) holding at the end of `tick`."""
    upto = table.where((F.col(TICK) <= tick) & F.col(KIND).isin(*kinds))
    return (upto.groupBy(KIND, *columns).agg(F.sum(OP).alias("__n"))
            .where(F.col("__n") > 0).drop("__n"))


def relation_at(table: DataFrame, columns, tick: int) -> DataFrame:
    """The relation at the end of `tick`, with its declared columns."""
    return _present(table, list(columns), tick, [STATE]).drop(KIND)


def pack_parts(table: DataFrame, name: str, columns, tick: int, layout: Layout) -> list[DataFrame]:
    """Relation `name`'s rows of the engine's pack of `tick`, rebuilt from its
    table: S, N and G rows, and the messages sent at `tick` or in flight after it."""
    columns = list(columns)
    fields = layout.schemas[name].fields
    values = [F.col(f"`{c}`").cast(f.dataType).alias(f.name) for c, f in zip(columns, fields)]
    present = _present(table, columns, tick, [STATE, NEXT, GARBAGE])
    messages = table.where((F.col(KIND) == MESSAGE) & (F.col(TICK) <= tick)
                           & ((F.col(TICK) == tick) | (F.col(ARRIVAL) > tick)))
    return [layout.part(name, STATE, present.where(F.col(KIND) == STATE).select(*values)),
            layout.part(name, NEXT, present.where(F.col(KIND) == NEXT).select(*values)),
            layout.part(name, GARBAGE, present.where(F.col(KIND) == GARBAGE).select(*values)),
            layout.part(name, MESSAGE, messages.select(*values, TICK, ARRIVAL, SRC),
                        sent=f"`{TICK}`", arrival=f"`{ARRIVAL}`", source=f"`{SRC}`")]


def messages(table: DataFrame, name: str, columns, upto: int, tick: int | None = None) -> DataFrame:
    """Messages of relation `name` sent up to `upto` (only at `tick` when given):
    relation, sent, arrival (NULL: lost), src, and the row's columns."""
    frame = table.where((F.col(KIND) == MESSAGE) & (F.col(TICK) <= upto))
    if tick is not None:
        frame = frame.where(F.col(TICK) == tick)
    return frame.select(F.lit(name).alias("relation"), F.col(TICK).alias("sent"), F.col(ARRIVAL).alias("arrival"),
                        F.col(SRC).alias("src"), *[F.col(f"`{c}`") for c in columns])
