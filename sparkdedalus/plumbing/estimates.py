"""A checkpoint's size estimate reset to Spark's default, on classic sessions.

Spark estimates a join's size as the product of its inputs', and a checkpoint
(`localCheckpoint`) keeps the estimate of the plan it was made from. A tick loop
whose every pack is a checkpoint of joins over the previous pack raises the
estimate to a power every tick unless something bounds it (spark/sizer.py).
This reaches into the classic session's JVM, like jobnames.py; on Spark Connect
the frame is returned as it is.
"""

from __future__ import annotations

from pyspark.sql import DataFrame


def without_estimate(frame: DataFrame) -> DataFrame:
    """`frame`, a checkpoint, with Spark's default size estimate instead of the
    one it inherits from the plan it was made from. The estimate of a join is the
    product of its inputs', and a checkpoint keeps its plan's: a pack made from
    joins over the previous pack multiplied the previous estimate every tick (in
    several partitions, where no limit bounds it), a number of 182,512 digits
    after 16 ticks of voting.ded, whose products then took the driver seconds,
    doubling every tick. Classic sessions only (the plan is rebuilt in the JVM);
    on Spark Connect `frame` itself."""
    jdf = getattr(frame, "_jdf", None)
    if jdf is None:
        return frame
    scan = jdf.queryExecution().analyzed()  # the checkpoint's LogicalRDD
    return scan_over(frame, scan, scan.rdd())


def scan_over(frame: DataFrame, scan, rdd) -> DataFrame:
    """A frame scanning the JVM's `rdd` (of `InternalRow`s) with the output,
    partitioning and ordering of `scan` (a LogicalRDD of `frame`'s session),
    and Spark's default size estimate. Classic sessions only."""
    spark = frame.sparkSession
    jvm, session = spark._jvm, spark._jsparkSession
    none = jvm.scala.Option.empty()
    fresh = jvm.org.apache.spark.sql.execution.LogicalRDD(
        scan.output(), rdd, scan.outputPartitioning(), scan.outputOrdering(), scan.isStreaming(),
        scan.stream(), session, none, none)
    return DataFrame(jvm.org.apache.spark.sql.classic.Dataset.ofRows(session, fresh), spark)
