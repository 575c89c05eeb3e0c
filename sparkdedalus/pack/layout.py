"""Many relations in one DataFrame, so that one Spark job materialises them all.

A pack has bookkeeping columns (`__rel`, `__kind`, `__sent`, `__arrival`,
`__src`) and a few typed value columns that every relation's rows share: as
many `bigint` columns (`l0`, `l1`, ...) as the relation with the most bigint
arguments has, and so on for `double` (`d0`, ...), `string` (`s0`, ...) and
`boolean` (`b0`, ...). A relation's i-th argument of type T is its k-th of
that type and lives in column `T{k}` (`Layout.column`); the value columns a
relation does not use are NULL. The pack is as narrow as the program's widest
relation, whatever the number of relations, so that reading one relation
touches no other relation's columns and a plan over the pack stays small.

Kinds: `S` a fact of the tick's final state, `N` a fact derived by @next for
the next tick, `M` a message (sent at `__sent` by `__src`, arriving at
`__arrival`, or lost when `__arrival` is NULL), `G` a fact of the final state
that garbage collection does not carry to the next tick (one of the `S` rows),
`Q` a message waiting in its sender's outbox under a network capacity (an `M`
row then stays in the packs until its destination takes it in, `__sent` being
the tick it was derived; spark/queues.py). With a partitioner (spark/partitioner.py) a pack also has the partition column
`__p`, each row in its relation's bucket (a replicated relation's row in its
location's bucket: one copy).

>>> from sparkdedalus.program import Program
>>> layout = Layout(Program.parse('.decl r(a: string, n: int, b: string)').relations)
>>> [layout.column("r", i) for i in range(3)], layout.value_columns
(['s0', 'l0', 's1'], ['l0', 's0', 's1'])
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql.types import BooleanType, DoubleType, IntegerType, LongType, StringType, StructField, StructType

from sparkdedalus.pack.columns import MESSAGE, NEXT, PARTITION_COLUMN, SOURCE_COLUMN, SPARK_TYPES, STATE, \
    relation_columns

#: the value columns' prefix per Spark type, in the pack's column order
_PREFIXES = {"bigint": "l", "double": "d", "string": "s", "boolean": "b"}
_TYPES = {"bigint": LongType(), "double": DoubleType(), "string": StringType(), "boolean": BooleanType()}
#: the bookkeeping columns every pack row has, before the partition and value columns
BOOKKEEPING = ("__rel", "__kind", "__sent", "__arrival", SOURCE_COLUMN)


class Layout:
    """Where each relation's arguments live in a pack, and its row schema."""

    def __init__(self, relations: dict, partitioner=None):
        self.partitioner = partitioner
        #: the partition column, when there is one
        self.bucket = [PARTITION_COLUMN] if partitioner is not None else []
        self.names = list(relations)
        self.schemas = {name: StructType([StructField(c, _TYPES[SPARK_TYPES[t]], False)
                                          for c, t in zip(relation_columns(rel.arity), rel.types)])
                        for name, rel in relations.items()}
        widths: dict = {}  # Spark type -> the most arguments of that type a relation has
        self.columns: dict = {}  # relation -> the value column of each argument
        for name, rel in relations.items():
            seen: dict = {}
            placed = []
            for t in rel.types:
                spark_type = SPARK_TYPES[t]
                placed.append(f"{_PREFIXES[spark_type]}{seen.get(spark_type, 0)}")
                seen[spark_type] = seen.get(spark_type, 0) + 1
            self.columns[name] = placed
            for spark_type, n in seen.items():
                widths[spark_type] = max(widths.get(spark_type, 0), n)
        #: the value columns, and their Spark SQL types
        self.value_types = {f"{p}{k}": t for t, p in _PREFIXES.items() for k in range(widths.get(t, 0))}
        self.value_columns = list(self.value_types)
        self.pack_schema = StructType(
            [StructField("__rel", StringType()), StructField("__kind", StringType()),
             StructField("__sent", LongType()), StructField("__arrival", LongType()),
             StructField(SOURCE_COLUMN, StringType())]
            + [StructField(c, IntegerType()) for c in self.bucket]
            + [StructField(c, _TYPES[t]) for c, t in self.value_types.items()])

    def column(self, name: str, position: int) -> str:
        """The pack column holding argument `position` of relation `name`."""
        return self.columns[name][position]

    def part(self, name: str, kind: str, frame: DataFrame, sent=None, arrival=None, source=None) -> DataFrame:
        """A relation's frame (c0..) as pack rows of the given kind, with the
        full pack schema (unused value columns NULL). `sent`, `arrival`,
        `source` are SQL expressions over the frame's columns. The row is built
        as one struct expression and expanded: two py4j calls (a list of
        expressions costs one per element). A frame without the partition
        column gets its facts' buckets."""
        if self.bucket and PARTITION_COLUMN not in frame.columns:
            frame = self.partitioner.place(name, frame)
        return _expanded(frame, self._part_columns(name, kind, sent, arrival, source))

    def part_sql(self, name: str, kind: str, relation: str, sent=None, arrival=None, source=None) -> str:
        """SQL: `part` of the subquery or view `relation`, which has the
        partition column when the layout has one."""
        return f"SELECT {', '.join(self._part_columns(name, kind, sent, arrival, source))} FROM {relation}"

    def _part_columns(self, name: str, kind: str, sent, arrival, source) -> list[str]:
        mine = dict(zip(self.columns[name], self.schemas[name].fieldNames()))
        exprs = [f"'{name}' AS __rel", f"'{kind}' AS __kind",
                 f"CAST({sent or 'NULL'} AS BIGINT) AS __sent",
                 f"CAST({arrival or 'NULL'} AS BIGINT) AS __arrival",
                 f"CAST({source or 'NULL'} AS STRING) AS {SOURCE_COLUMN}", *self.bucket]
        return exprs + [f"`{mine[c]}` AS {c}" if c in mine else f"CAST(NULL AS {t}) AS {c}"
                        for c, t in self.value_types.items()]

    def relabel_sql(self, pack: str, condition: str, kind: str = STATE) -> str:
        """SQL: the rows of the pack `pack` meeting the SQL `condition`, as rows
        of `kind` with no message bookkeeping."""
        columns = ["__rel", f"'{kind}' AS __kind", "CAST(NULL AS BIGINT) AS __sent",
                   "CAST(NULL AS BIGINT) AS __arrival", f"CAST(NULL AS STRING) AS {SOURCE_COLUMN}"]
        return f"SELECT {', '.join(columns + self.bucket + self.value_columns)} FROM {pack} WHERE {condition}"

    def union(self, parts: list[DataFrame]) -> DataFrame:
        return reduce(DataFrame.unionAll, parts)

    def distinct_sql(self, pack: str, partitions: int) -> str:
        """SQL: set semantics with at most one shuffle into `partitions`
        partitions (the hash partitioning satisfies the distinct's grouping;
        one partition needs none). With a partition column: a replicated
        relation's rows in its location's bucket only, and no shuffle of a
        pack already partitioned by it."""
        pack = self.home_copies_sql(pack)
        if partitions == 1:
            return f"SELECT DISTINCT * FROM (SELECT /*+ COALESCE(1) */ * FROM ({pack}))"
        if self.bucket:
            return f"SELECT DISTINCT * FROM ({pack})"
        columns = ", ".join(self.pack_schema.fieldNames())
        return f"SELECT DISTINCT * FROM (SELECT /*+ REPARTITION({partitions}, {columns}) */ * FROM ({pack}))"

    def home_copies_sql(self, pack: str) -> str:
        """SQL: `pack` with a replicated relation's rows in its location's
        bucket only (the pack's one copy), when there is a partition column."""
        return f"SELECT * FROM {pack} WHERE {self.home_copy()}" if self.bucket else f"SELECT * FROM {pack}"

    @staticmethod
    def per_relation_sql(values: dict) -> str:
        """SQL: a pack row's value of `values[its relation]` (SQL over the pack's
        columns), NULL for the relations not given.

        >>> Layout.per_relation_sql({"r": "l0", "q": "s1"}), Layout.per_relation_sql({})
        ("CASE __rel WHEN 'r' THEN l0 WHEN 'q' THEN s1 END", 'NULL')
        """
        cases = " ".join(f"WHEN '{n}' THEN {sql}" for n, sql in values.items())
        return f"CASE __rel {cases} END" if cases else "NULL"

    def _bucket_sql(self, names) -> str:
        """SQL: the bucket of a pack row of one of `names` (NULL for the others)."""
        return self.per_relation_sql({n: self.partitioner.bucket_sql(n, self.columns[n]) for n in names})

    def home_copy(self) -> str:
        """SQL: the row is not a replicated relation's, or is its copy in its
        location's bucket (`true` without a partition column)."""
        if not self.bucket:
            return "true"
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
        return _expanded(pack.where(self._rows_condition(name, kind)), self._values(name))

    def read_sql(self, pack: str, name: str, kind: str = STATE, extra: tuple = ()) -> str:
        """SQL: `extract` from the pack `pack` (a view or subquery), with the
        partition column when there is one (the loop's frames) and the
        bookkeeping columns `extra` of the pack (e.g. a message's `__sent`)."""
        columns = self._values(name) + list(extra) + self.bucket
        return f"SELECT {', '.join(columns)} FROM {pack} WHERE {self._rows_condition(name, kind)}"

    def _values(self, name: str) -> list[str]:
        return [f"{c} AS {f}" for c, f in zip(self.columns[name], self.schemas[name].fieldNames())]

    @staticmethod
    def _rows_condition(name: str, kind: str) -> str:
        return f"__rel = '{name}' AND __kind = '{kind}'"

    def row_of(self, name: str, row) -> tuple:
        """A collected pack row's values of relation `name`, as a tuple."""
        return tuple(row[c] for c in self.columns[name])


def _expanded(frame: DataFrame, exprs: list[str]) -> DataFrame:
    """`frame.selectExpr(*exprs)` in two py4j calls whatever the number of
    expressions: one struct, expanded."""
    return frame.selectExpr(f"struct({', '.join(exprs)}) AS __row").select("__row.*")
