"""Checkpoints in the same partitions read as one scan, on classic sessions.

`zipped_scan(frames)` reads partition i of every frame, one after the other
(Spark's `SQLPartitioningAwareUnionRDD`), as one leaf with the first frame's
output and partitioning. A plan reading it has the same shape however many
frames there are, so Spark's cache of generated code serves it again, where
a union growing by a leaf changes the plan and its generated classes every
time (spark/appended.py: the carried state's pieces; 16 classes a tick of
voting instead of 150-240). This reaches into the classic session's JVM, like
estimates.py; on Spark Connect, and when the frames' partitionings differ, it
is their `unionAll`.
"""

from __future__ import annotations

import re
from functools import reduce

from pyspark.sql import DataFrame

from sparkdedalus.plumbing.estimates import scan_over


def zipped_scan(frames: tuple) -> DataFrame:
    """The rows of `frames`, checkpoints, as one scan of their partitions
    zipped when they are in the same partitions (see the module)."""
    if len(frames) == 1:
        return frames[0]
    scans = [f._jdf.queryExecution().analyzed() if hasattr(f, "_jdf") else None for f in frames]
    if any(s is None or s.getClass().getSimpleName() != "LogicalRDD" for s in scans) \
            or len({_partitioning(s) for s in scans}) != 1:
        return reduce(DataFrame.unionAll, frames)
    from py4j.java_collections import ListConverter

    spark = frames[0].sparkSession
    jvm = spark._jvm
    rdds = ListConverter().convert([s.rdd() for s in scans], spark.sparkContext._gateway._gateway_client)
    first = scans[0].rdd()
    zipped = jvm.org.apache.spark.rdd.SQLPartitioningAwareUnionRDD(
        spark._jsc.sc(), jvm.scala.jdk.javaapi.CollectionConverters.asScala(rdds).toList(), first.getNumPartitions(),
        first.elementClassTag())
    return scan_over(frames[0], scans[0], zipped)


def _partitioning(scan) -> tuple:
    """A LogicalRDD's partitioning, its attributes' ids left out, and its partitions."""
    return re.sub(r"#\d+L?", "", scan.outputPartitioning().toString()), scan.rdd().getNumPartitions()
