"""The SQL text of the tick being planned, shaped to the loop's partitions.

The loader and the executor build every query of a tick as named subqueries
(a `Statement`, spark/statement.py) over temporary views (`Views`), and run
each one with one `spark.sql`. In a tick of one partition unions and joins are
kept in it (`narrow`), so that nothing shuffles; in a tick of several, facts
changing bucket are hash-partitioned by their partition column (`spread`,
`placed`, with the partitioner of the tick plan). `end()` forgets the tick's
subqueries and drops its views once its packs are materialised.
"""

from __future__ import annotations

import itertools

from pyspark.sql import DataFrame, SparkSession

from sparkdedalus.pack.columns import PARTITION_COLUMN
from sparkdedalus.spark.compiler import JOIN_HINT
from sparkdedalus.spark.plan import TickPlan
from sparkdedalus.spark.sizer import SIZE_BOUND, Sizer
from sparkdedalus.spark.statement import Statement, Views


class TickSql:
    """A tick's queries as text (see the module)."""

    def __init__(self, spark: SparkSession, plan: TickPlan, sizer: Sizer):
        self.spark = spark
        self.plan = plan
        self.sizer = sizer
        self._subqueries = itertools.count(1)  # subquery names, unique to the run
        self.statement = Statement(self._subqueries)  # the subqueries of the tick being planned
        self.views = Views(spark)  # the tick's checkpoints as temporary views

    def name(self, sql: str) -> str:
        """The name (a subquery's or a view's) of the relation `sql`."""
        return self.statement.name(sql)

    @staticmethod
    def render(statement: Statement, sql: str) -> str:
        """The query `sql` of `statement`'s subqueries as one text: for Spark,
        each written out where it is read (`Statement.render`)."""
        return statement.render(sql)

    def frame_of(self, sql: str) -> DataFrame:
        """The relation `sql` as a DataFrame: one `spark.sql`."""
        return self.spark.sql(self.render(self.statement, f"SELECT * FROM {self.name(sql)}"))

    def checkpoint(self, sql: str) -> DataFrame:
        """The relation `sql` as a lazy local checkpoint: readers see a leaf
        instead of its plan, computed by the first job that needs it."""
        return self.sizer.counted(self.frame_of(sql)).localCheckpoint(eager=False)

    def cut(self, sql: str) -> str:
        """The relation `sql` behind a lazy local checkpoint, as a view."""
        return self.views.of(self.checkpoint(sql))

    def materialised(self, sql: str, *conditions: str) -> tuple[DataFrame, tuple]:
        """The relation `sql` materialised with one job, and its rows and the
        rows meeting each SQL condition (`Sizer.materialised`)."""
        return self.sizer.materialised(self.frame_of(sql), *conditions)

    def end(self) -> None:
        """Forget the tick's subqueries and drop its views (its packs are materialised)."""
        self.views.drop()
        self.statement = Statement(self._subqueries)

    def columns(self, name: str) -> list[str]:
        """A relation frame's columns: c0..cn-1, and the partition column if any."""
        return self.plan.layout.schemas[name].fieldNames() + self.plan.layout.bucket

    @staticmethod
    def joined(left: str, right: str, how: str, keys: list[str]) -> str:
        """SQL: `left` joined (`how`: LEFT ANTI, ...) with `right` on `keys`, a merge join."""
        return (f"SELECT /*+ {JOIN_HINT}(r) */ * FROM {left} l {how} JOIN {right} r"
                f" USING ({', '.join(f'`{k}`' for k in keys)})")

    def empty(self, name: str, bucket: bool = False) -> str:
        """SQL: no rows of `name`, as the optimiser recognises and prunes; with
        `bucket`, with the partition column if the loop has one."""
        layout = self.plan.layout
        columns = [f"CAST(NULL AS {f.dataType.simpleString()}) AS {f.name}" for f in layout.schemas[name].fields]
        columns += [f"CAST(NULL AS INT) AS {c}" for c in (layout.bucket if bucket else [])]
        return f"SELECT {', '.join(columns)} FROM range(0, 1, 1, 1) WHERE false"

    # ---------------------------------------------------------------- partitions
    def narrow(self, sql: str) -> str:
        """SQL: `sql` kept in one partition when the loop runs in one, so that
        no join or aggregate shuffles: a union adds up its inputs' partitions,
        and a join's output no longer tells the planner it is in one partition.
        The limit (never reached) bounds the planner's size estimate, which
        multiplies at every join: above `spark.sql.maxSinglePartitionBytes` the
        planner shuffles single partitions anyway."""
        if self.sizer.partitions != 1:
            return sql
        return f"SELECT /*+ COALESCE(1) */ * FROM {self.name(sql)} LIMIT {SIZE_BOUND}"

    def union(self, relations: list[str]) -> str:
        return self.narrow(" UNION ALL ".join(f"SELECT * FROM {self.name(r)}" for r in relations))

    def spread(self, sql: str) -> str:
        """SQL: `sql` (with the partition column) hash-partitioned by it into the
        loop's partitions: a shuffle, unless the loop runs in one."""
        if self.sizer.partitions > 1:
            return f"SELECT /*+ REPARTITION({self.sizer.partitions}, {PARTITION_COLUMN}) */ * FROM {self.name(sql)}"
        return self.narrow(sql)

    def bucketed(self, name: str, sql: str) -> str:
        """SQL: new facts of relation `name` with their buckets, when the loop has a partitioner."""
        partitioner = self.plan.partitioner
        return sql if partitioner is None else partitioner.place_sql(name, self.name(sql))

    def placed(self, rule, sql: str, spread: bool = True) -> str:
        """SQL: what `rule` derives, with the partition column when the loop has
        one: a `local` plan's facts stay in their bucket, the others' are put in
        theirs (and, with `spread`, moved there)."""
        partitioner = self.plan.partitioner
        if partitioner is None:
            return sql
        if self.plan.plans[rule.index].partitioned and rule.delivery != "async":
            return partitioner.settle_sql(rule, self.name(sql))
        placed = self.bucketed(rule.head.name, sql)
        return self.spread(placed) if spread else placed
