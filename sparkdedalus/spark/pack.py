"""Many relations in one DataFrame, so that one Spark job materialises them all.

A pack has bookkeeping columns (`__rel`, `__kind`, `__sent`, `__arrival`,
`__src`) and one struct column per relation (`r0`, `r1`, ...) holding the row
(fields c0..cn-1); the other relations' struct columns are NULL. Kinds:
`S` a fact of the tick's final state, `N` a fact derived by @next for the next
tick, `M` a message (sent at `__sent` by `__src`, arriving at `__arrival`, or
lost when `__arrival` is NULL), `G` a fact of the final state that garbage
collection does not carry to the next tick (one of the `S` rows). With a
partitioner (spark/partitioner.py) a pack also has the partition column `__p`,
each row in its relation's bucket (a replicated relation's row in its
location's bucket: one copy).
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, DoubleType, IntegerType, LongType, StringType, StructField, StructType

from sparkdedalus.spark.columns import MESSAGE, NEXT, PARTITION_COLUMN, SOURCE_COLUMN, STATE, relation_columns
from sparkdedalus.spark.expressions import SPARK_TYPES


class Layout:
    """Where each relation lives in a pack, and its row schema."""

    def __init__(self, relations: dict, partitioner=None):
        self.partitioner = partitioner
        #: the partition column, when there is one
        self.bucket = [PARTITION_COLUMN] if partitioner is not None else []
        self.names = list(relations)
        self.slot = {name: f"r{i}" for i, name in enumerate(self.names)}
        self.schemas = {name: StructType([StructField(c, _spark_type(t), False)
                                          for c, t in zip(relation_columns(rel.arity), rel.types)])
                        for name, rel in relations.items()}
        self.pack_schema = StructType(
            [StructField("__rel", StringType()), StructField("__kind", StringType()),
             StructField("__sent", LongType()), StructField("__arrival", LongType()),
             StructField(SOURCE_COLUMN, StringType())]
            + [StructField(c, IntegerType()) for c in self.bucket]
            + [StructField(self.slot[n], self.schemas[n]) for n in self.names])

    def part(self, name: str, kind: str, frame: DataFrame, sent=None, arrival=None, source=None) -> DataFrame:
        """A relation's frame (c0..) as pack rows of the given kind, with the
        full pack schema (other relations' slots NULL). `sent`, `arrival`,
        `source` are SQL expressions over the frame's columns. The row is built
        as one struct expression and expanded: two py4j calls whatever the
        number of relations (a list of expressions costs one per element).
        A frame without the partition column gets its facts' buckets."""
        if self.bucket and PARTITION_COLUMN not in frame.columns:
            frame = self.partitioner.place(name, frame)
        slot = self.slot[name]
        fields = self.schemas[name].fieldNames()
        exprs = [f"'{name}' AS __rel", f"'{kind}' AS __kind",
                 f"CAST({sent or 'NULL'} AS BIGINT) AS __sent",
                 f"CAST({arrival or 'NULL'} AS BIGINT) AS __arrival",
                 f"CAST({source or 'NULL'} AS STRING) AS {SOURCE_COLUMN}", *self.bucket]
        for other in self.names:
            if other == name:
                exprs.append(f"struct({', '.join(f'`{c}`' for c in fields)}) AS {slot}")
            else:
                exprs.append(f"CAST(NULL AS {self.schemas[other].simpleString()}) AS {self.slot[other]}")
        return frame.selectExpr(f"struct({', '.join(exprs)}) AS __row").select("__row.*")

    def relabel(self, pack: DataFrame, condition: str, kind: str = STATE) -> DataFrame:
        """The rows of `pack` meeting the SQL `condition`, as rows of `kind`
        with no message bookkeeping."""
        columns = [f"'{kind}' AS __kind", "CAST(NULL AS BIGINT) AS __sent", "CAST(NULL AS BIGINT) AS __arrival",
                   f"CAST(NULL AS STRING) AS {SOURCE_COLUMN}"]
        return pack.where(condition).selectExpr("__rel", *columns, *self.bucket, *[self.slot[n] for n in self.names])

    def union(self, parts: list[DataFrame]) -> DataFrame:
        return reduce(DataFrame.unionAll, parts)

    def distinct(self, pack: DataFrame, partitions: int) -> DataFrame:
        """Set semantics with at most one shuffle into `partitions` partitions
        (the hash partitioning satisfies the distinct's grouping; one partition
        needs none). With a partition column: a replicated relation's rows in
        its location's bucket only, and no shuffle of a pack already
        partitioned by it."""
        pack = self.home_copies(pack)
        if partitions == 1:
            return pack.coalesce(1).distinct()
        return pack.distinct() if self.bucket else pack.repartition(partitions, *pack.columns).distinct()

    def home_copies(self, pack: DataFrame) -> DataFrame:
        """`pack` with a replicated relation's rows in its location's bucket only
        (the pack's one copy), when there is a partition column."""
        return pack.where(self._home_copy()) if self.bucket else pack

    def _bucket_sql(self, names) -> str:
        """SQL: the bucket of a pack row of one of `names` (NULL for the others)."""
        cases = " ".join(f"WHEN '{n}' THEN {self.partitioner.bucket_sql(n, f'{self.slot[n]}.')}" for n in names)
        return f"CASE __rel {cases} END" if cases else "NULL"

    def _home_copy(self) -> str:
        """SQL: the row is not a replicated relation's, or is its copy in its location's bucket."""
        replicated = [n for n in self.names if n in self.partitioner.replicated]
        return f"coalesce({self._bucket_sql(replicated)}, {PARTITION_COLUMN}) = {PARTITION_COLUMN}"

    def adopt(self, pack: DataFrame | None) -> DataFrame | None:
        """A pack without the partition column (rebuilt by the store) with it."""
        if pack is None or not self.bucket or PARTITION_COLUMN in pack.columns:
            return pack
        return pack.selectExpr("*", f"{self._bucket_sql(self.names)} AS {PARTITION_COLUMN}").select(
            *self.pack_schema.fieldNames())

    def extract(self, pack: DataFrame, name: str, kind: str = STATE) -> DataFrame:
        """The rows of one relation and kind, as columns c0..cn-1."""
        return pack.where(f"__rel = '{name}' AND __kind = '{kind}'").select(f"{self.slot[name]}.*")

    def read(self, pack: DataFrame, name: str, kind: str = STATE) -> DataFrame:
        """`extract`, with the partition column when there is one (the loop's frames)."""
        return pack.where(f"__rel = '{name}' AND __kind = '{kind}'").select(f"{self.slot[name]}.*", *self.bucket)


def _spark_type(dialect_type: str):
    return {"bigint": LongType(), "double": DoubleType(), "string": StringType(),
            "boolean": BooleanType()}[SPARK_TYPES[dialect_type]]
