"""A Spark run's traffic (`sparkdedalus.traffic.Traffic`), read from its
packs in one query, and the simulator that measures closed-loop programs on
the Spark engine (`Simulator`: `optimize --engine spark`).

A message is a row of every tick's pack from the tick it was derived until
its destination takes it in (spark/queues.py): a `QUEUED` row while it waits
in its sender's outbox (under a capacity), then a `MESSAGE` row, carried
while it is in flight or waits in the inbox; a lost one (arrival NULL) is in
the pack of the tick it left only. So it left at the first tick whose pack
holds it as a `MESSAGE` row, and, when not lost, was taken in the tick after
the last one, unless that is the last tick of the run.

    simulate = Simulator(spark)
    traffic = simulate(program, 20, Network(capacity=8), client_rows(program, 4), "committed", (10, 20))
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sparkdedalus.network import Network
from sparkdedalus.pack.columns import MESSAGE, QUEUED, SOURCE_COLUMN, STATE
from sparkdedalus.spark.engine import Engine
from sparkdedalus.spark.queues import Queues
from sparkdedalus.traffic import Traffic


class Simulator:
    """A simulator (`sparkdedalus.traffic`) on the Spark engine: each call is
    one `Engine.run` in `spark` with GC on, every tick's pack kept for the
    query that reads the traffic."""

    def __init__(self, spark):
        self.engine = Engine(spark)

    def __call__(self, program, ticks: int, network: Network | None, edb: dict, relation: str, at) -> Traffic:
        run = self.engine.run(program, ticks, network=network, edb=edb, gc=True, keep_history=True)
        return traffic(run, network or Network(), relation, at)


def traffic(run, network: Network, relation: str, at) -> Traffic:
    """The messages of `run` (ran under `network`, every pack kept) and the
    facts of `relation` at the ticks `at`, in one query collected once."""
    loop, ticks = run.driver.loop, run.ticks
    layout = loop.layout
    dst = Queues(layout, network, run.program).printed(0)
    values = layout.value_columns
    packs = {t: loop.on_spark(pack) for t, pack in run.driver.packs.items()}  # wherever the ticks ran
    rows = _union([pack.where(F.col("__kind").isin(MESSAGE, QUEUED)).select(
        F.lit(t).alias("__tick"), "__rel", "__kind", "__sent", "__arrival", SOURCE_COLUMN,
        F.expr(dst).alias("__dst"), *values) for t, pack in sorted(packs.items())])
    is_message = F.col("__kind") == MESSAGE
    per_message = rows.groupBy("__rel", SOURCE_COLUMN, "__dst", "__sent", *values).agg(
        F.min(F.when(is_message, F.col("__tick"))).alias("__left"),
        F.max(F.when(is_message, F.col("__tick"))).alias("__last"),
        F.max("__arrival").alias("__arrival"))
    taken = F.when(F.col("__arrival").isNotNull() & (F.col("__last") < ticks), F.col("__last") + 1)
    hops = per_message.groupBy("__rel", SOURCE_COLUMN, "__dst", "__sent", "__left", taken.alias("__taken")) \
        .agg(F.count(F.lit(1)).alias("__n")).withColumn("__tick", F.lit(None).cast("bigint"))
    sizes = _union([loop.full(packs[t]).where((F.col("__kind") == STATE) & (F.col("__rel") == relation))
                    .select(F.lit(t).cast("bigint").alias("__tick")) for t in sorted(set(at))]) \
        .groupBy("__tick").agg(F.count(F.lit(1)).alias("__n"))
    messages, found = {}, {t: 0 for t in at}
    for row in hops.unionByName(sizes, allowMissingColumns=True).collect():
        if row["__tick"] is not None:  # a size
            found[row["__tick"]] = row["__n"]
        else:
            messages[(row["__rel"], row[SOURCE_COLUMN], row["__dst"], row["__sent"], row["__left"],
                      row["__taken"])] = row["__n"]
    return Traffic(messages, found)


def _union(frames: list) -> DataFrame:
    return reduce(DataFrame.unionAll, frames)
