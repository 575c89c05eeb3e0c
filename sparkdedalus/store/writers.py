"""The two ways a relation's changes of a tick become one Delta commit.

`SparkDeltaWriter` (the default when the session has Delta Lake): Spark's own
Delta Lake writes and commits, `df.write.format("delta").mode("append")` with
the idempotent-write options `txnAppId` (the run id) and `txnVersion` (the
tick): Delta skips a write whose (app id, version) is already in the table's
log, so a tick redone after a crash does not write a table twice.

`DeltaRsWriter` (the fallback for a session without Delta's classes): Spark
writes the Parquet files under the table directory (executors write, nothing
passes through the driver), then delta-rs commits them in one Delta commit
carrying the application transaction (run id, tick), after checking that the
tick is not committed to that table yet. The driver reads the files' footers
for their row counts and statistics, so it must see the table's file system (a
local or mounted path).

Either way a commit carries the tick in its commit info (`sparkdedalus.tick`:
Spark's `userMetadata`, delta-rs' custom commit info), and the tables have
protocol (1, 2), which Spark's Delta Lake and delta-rs both read and write: a
run can be resumed by either writer.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import uuid

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

TICK_KEY = "sparkdedalus.tick"
#: Delta table properties set at creation. A checkpoint every 100 commits (Spark's
#: Delta Lake default is 10, delta-rs' is 100): a checkpoint lists every data file
#: and a table may get one file per tick, so frequent checkpoints would make the
#: log grow quadratically with the ticks; readers replay at most 99 JSON commits.
TABLE_PROPERTIES = {"delta.checkpointInterval": "100"}
#: Delta truncates string statistics to this many characters; longer ones are left out
_STRING_STATS_LIMIT = 32


class SparkDeltaWriter:
    kind = "spark-delta"

    def __init__(self, spark: SparkSession, run_id: str):
        self.spark = spark
        self.run_id = run_id

    def _writer(self, frame: DataFrame, version: int):
        return (frame.write.format("delta").mode("append")
                .option("txnAppId", self.run_id).option("txnVersion", version)
                .option("userMetadata", json.dumps({TICK_KEY: version})))

    def create(self, table: str, schema: StructType) -> None:
        """Version 0: the empty table with its schema and properties (application version 0)."""
        writer = self._writer(self.spark.createDataFrame([], schema), 0)
        for key, value in TABLE_PROPERTIES.items():
            writer = writer.option(key, value)  # "delta."-prefixed options become table properties
        writer.save(table)

    def commit(self, table: str, tick: int, frame: DataFrame) -> None:
        self._writer(frame, tick).save(table)


class DeltaRsWriter:
    kind = "delta-rs"

    def __init__(self, spark: SparkSession, run_id: str):
        self.spark = spark
        self.run_id = run_id

    def _properties(self, version: int):
        from deltalake import CommitProperties, Transaction
        return CommitProperties(app_transactions=[Transaction(self.run_id, version)],
                                custom_metadata={TICK_KEY: str(version)})

    def create(self, table: str, schema: StructType) -> None:
        from deltalake import DeltaTable
        from pyspark.sql.pandas.types import to_arrow_schema
        DeltaTable.create(table, to_arrow_schema(schema), mode="error", name=os.path.basename(table),
                          configuration=TABLE_PROPERTIES, commit_properties=self._properties(0))

    def commit(self, table: str, tick: int, frame: DataFrame) -> None:
        from deltalake import DeltaTable
        from deltalake.transaction import AddAction
        delta = DeltaTable(table)
        done = delta.transaction_version(self.run_id)
        if done is not None and done >= tick:  # committed before a crash: skip, as Delta does
            return
        directory = f"tick-{tick:09d}-{uuid.uuid4().hex[:12]}"
        full = os.path.join(table, directory)
        frame.write.mode("errorifexists").parquet(full)  # the one Spark job
        actions = []
        for name in sorted(os.listdir(full)):
            if not name.endswith(".parquet"):
                continue
            path = os.path.join(full, name)
            stats = parquet_stats(path)
            if stats["numRecords"] == 0:
                continue  # Spark writes one empty file when there is nothing to write
            info = os.stat(path)
            actions.append(AddAction(f"{directory}/{name}", info.st_size, {}, int(info.st_mtime * 1000),
                                     True, json.dumps(stats)))
        delta.create_write_transaction(actions, mode="append", schema=delta.schema(),
                                       commit_properties=self._properties(tick))
        if not actions:
            shutil.rmtree(full, ignore_errors=True)


def parquet_stats(path: str) -> dict:
    """Delta file statistics from a Parquet footer: numRecords, and min, max and
    null counts of the columns whose footer statistics are exact."""
    import pyarrow.parquet as pq
    metadata = pq.ParquetFile(path).metadata
    mins: dict = {}
    maxs: dict = {}
    nulls: dict = {}
    usable: dict = {}
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for c in range(group.num_columns):
            column = group.column(c)
            key = tuple(column.path_in_schema.split("."))
            stats = column.statistics
            if stats is None:
                usable[key] = False
                continue
            nulls[key] = nulls.get(key, 0) + (stats.null_count or 0)
            if not stats.has_min_max:
                continue
            low, high = stats.min, stats.max
            if not _json_value(low) or not _json_value(high):
                usable[key] = False
                continue
            usable.setdefault(key, True)
            mins[key] = low if key not in mins else min(mins[key], low)
            maxs[key] = high if key not in maxs else max(maxs[key], high)
    out = {"numRecords": metadata.num_rows, "minValues": {}, "maxValues": {}, "nullCount": {}}
    for key, count in nulls.items():
        _nest(out["nullCount"], key, count)
    for key, ok in usable.items():
        if ok and key in mins:
            _nest(out["minValues"], key, mins[key])
            _nest(out["maxValues"], key, maxs[key])
    return out


def _json_value(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        return len(value) <= _STRING_STATS_LIMIT
    return isinstance(value, (bool, int))


def _nest(target: dict, key: tuple, value) -> None:
    for part in key[:-1]:
        target = target.setdefault(part, {})
    target[key[-1]] = value
