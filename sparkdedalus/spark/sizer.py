"""The partitions of a run's ticks, sized to the data.

A run starts in one partition; every materialisation (`materialised`: a lazy
local checkpoint computed and counted by one job) counts its rows, and the
next plans use `partitions_for(rows)`: one below ROWS_PER_PARTITION (a tick is
then one task, no shuffle), more as the data grows, at most `max_partitions`.
With a partitioner a tick is in one partition or in all of them. A run given
a number of partitions keeps it whatever the data. The sizer also counts, when
asked, the Exchange operators of a tick's physical plans (`TickStats.exchanges`).
"""

from __future__ import annotations

import re

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkdedalus.plumbing.estimates import without_estimate

#: a limit no frame of a one-partition tick reaches (see TickSql.narrow)
SIZE_BOUND = 2**31 - 1
#: rows per partition when the loop sizes its partitions to the data
ROWS_PER_PARTITION = 200_000


def max_partitions(spark: SparkSession) -> int:
    """The most partitions the loop uses: the session's shuffle partitions, at
    most 64 (a session left at Spark's 200 would pay 200 tasks per shuffle)."""
    return max(1, min(int(spark.conf.get("spark.sql.shuffle.partitions", "4")), 64))


def partitions_for(rows: int, most: int) -> int:
    """Partitions for a working set of `rows` rows: one below ROWS_PER_PARTITION
    (a tick is then one task: no shuffle, no broadcast), more as it grows.

    >>> partitions_for(500, 8), partitions_for(450_000, 8), partitions_for(10**9, 8)
    (1, 3, 8)
    """
    return max(1, min(most, -(-rows // ROWS_PER_PARTITION)))


def exchanges(frame: DataFrame) -> int | None:
    """Exchange operators (shuffles, broadcasts) in `frame`'s physical plan, an
    exchange the plan reuses once; None where the plan cannot be seen (Spark
    Connect)."""
    jdf = getattr(frame, "_jdf", None)
    if jdf is None:
        return None
    plan = jdf.queryExecution().executedPlan().toString()
    return len(re.findall(r"^[\s:+|-]*(?:Broadcast)?Exchange\b", plan, re.MULTILINE))


class Sizer:
    """The partitions of the next plans, resized after every materialisation."""

    def __init__(self, partitions: int | None, most: int, partitioned: bool, count_exchanges: bool = False):
        """`partitions`: a fixed number, or None to size them to the data, at
        most `most`; `partitioned`: a partitioner buckets the facts (a tick
        is then in one partition or in all `most`); `count_exchanges`: count
        the Exchange operators of each tick's plans (it plans every
        materialised frame a second time)."""
        self.fixed_partitions = partitions
        self.most_partitions = most
        self.partitioned = partitioned
        self.partitions = partitions or 1  # resized to the data after every materialisation
        self.input_rows = 0  # rows of the last materialisation: a tick's size before it runs
        self.count_exchanges = count_exchanges
        self.exchanges: int | None = 0  # of the tick being run
        self.pack_partitions = None  # the partitions the previous pack was built in
        self.tick_partitions = None  # the partitions the tick being run started in

    def start_tick(self) -> None:
        """A tick starts: its exchanges counted from zero when counted."""
        self.exchanges = 0 if self.count_exchanges else None

    def sized(self, rows: int, least: int = 1) -> None:
        """The loop sized to a materialisation of `rows` rows: the partitions of
        the next plans (with a partitioner: one, or all it has buckets for),
        at least `least` (where the next plans read pieces in place)."""
        self.input_rows = rows
        if self.fixed_partitions is None:
            self.partitions = max(least, partitions_for(rows, self.most_partitions))
            if self.partitioned and self.partitions > 1:
                self.partitions = self.most_partitions

    def widened(self) -> None:
        """The next plans in all the partitions the loop may use, for data of a
        size not known yet that may be far larger than what it is computed
        from (a closure's pairs): sized as for that many partitions' rows."""
        self.sized(self.most_partitions * ROWS_PER_PARTITION)

    def counted(self, frame: DataFrame) -> DataFrame:
        """`frame`, its plan's exchanges added to the tick's when counted."""
        if not self.count_exchanges:
            return frame
        found = exchanges(frame)
        self.exchanges = None if found is None or self.exchanges is None else self.exchanges + found
        return frame

    def materialised(self, frame: DataFrame, *conditions: str) -> tuple[DataFrame, tuple]:
        """`frame` materialised and counted with one job (a lazy local
        checkpoint is computed by the first job that reads it: here the count),
        counting in the same job the rows meeting each SQL condition; the loop's
        partitions are then resized to the data."""
        checkpoint = self.counted(frame).localCheckpoint(eager=False)
        if conditions:
            counts = tuple(checkpoint.agg(F.count(F.lit(1)), *[F.count(F.when(F.expr(c), 1))
                                                               for c in conditions]).first())
        else:
            counts = (checkpoint.count(),)
        self.sized(counts[0])
        if self.partitions > 1:  # one partition: the limits of TickSql.narrow bound the estimates
            checkpoint = without_estimate(checkpoint)
        return checkpoint, counts
