"""Where each tick runs: in the driver (DuckDB, no Spark job) or on Spark.

`PlacedLoop` is the tick loop of `Engine.run`: the same plan in two placements,
a `DriverTickLoop` (spark/duck/loop.py) and Spark's `TickLoop`, and per tick
the one its data fits. A tick runs in the driver when the driver holds the run's
inputs (the program's facts, rows given as lists, and `.input` files of at most
`spark.sparkdedalus.fixpoint.driverRows` rows in all: read by the driver itself up
to `spark.sql.autoBroadcastJoinThreshold` bytes, `inputs_in_driver`, else read by
Spark and collected once, `driver_inputs`; not an `edb=` DataFrame, nor with a
fixed `partitions`) and the facts it starts from (the previous tick's pack, at the
first tick the facts true at every tick) are at most that many rows; else on Spark.
A pack moves with the tick: to Spark as a local relation given its partition
column (`Layout.adopt`), back as the Arrow table of one `toArrow` job.

The session setting `spark.sparkdedalus.placement` chooses: `auto` (the
default, as above), `driver` (every tick the run allows in the driver),
`spark` (every tick on Spark, as before the driver placement existed) or
`alternate` (the driver at odd ticks, Spark at even ones: a test of the moves).
"""

from __future__ import annotations

import os
import sys

import pyarrow as pa
from pyspark.sql import SparkSession

from sparkdedalus.errors import UsageError
from sparkdedalus.spark.duck.dialect import NotInDriver
from sparkdedalus.spark.duck.loop import DriverTickLoop
from sparkdedalus.spark.duck.session import DuckFrame
from sparkdedalus.spark.executor import LoopState
from sparkdedalus.spark.fixpoint import (DRIVER_COMPONENT_ROWS_SETTING, DRIVER_ROWS_SETTING, SETTING as FIXPOINT_SETTING,
                                         driver_rows)
from sparkdedalus.spark.loop import TickLoop

SETTING = "spark.sparkdedalus.placement"
MODES = ("auto", "driver", "spark", "alternate")
DRIVER, SPARK = "driver", "spark"
#: a dialect type's Arrow type (the others: int64)
_ARROW = {"string": pa.string(), "double": pa.float64(), "bool": pa.bool_()}
#: the session settings a tick in the driver reads
DRIVER_SETTINGS = (FIXPOINT_SETTING, DRIVER_ROWS_SETTING, DRIVER_COMPONENT_ROWS_SETTING)


def placement_mode(spark: SparkSession) -> str:
    """The session's `spark.sparkdedalus.placement` (default `auto`)."""
    mode = spark.conf.get(SETTING, "auto")
    if mode not in MODES:
        raise UsageError(f"{SETTING}={mode}: expected one of {', '.join(MODES)}")
    return mode


def driver_limit(spark: SparkSession) -> int:
    """The most rows the driver takes for a run under the session's settings:
    0 (never) under `spark`; unbounded when `driver` or `alternate` force it;
    else `spark.sparkdedalus.fixpoint.driverRows` (0 or less: never)."""
    mode = placement_mode(spark)
    if mode == SPARK:
        return 0
    return max(driver_rows(spark), 0) if mode == "auto" else sys.maxsize


class PlacedLoop:
    """A run's tick loop in two placements (see the module). `make_spark()`
    builds Spark's TickLoop, when a tick first needs it; `driver_loop` is None
    when the run cannot run in the driver."""

    def __init__(self, spark: SparkSession, make_spark, driver_loop: DriverTickLoop | None, read_back: set,
                 spark_inputs=None, held: tuple | None = None):
        """`spark_inputs()`: the run's inputs as Spark frames (placed_loop);
        `held`: those the driver holds (`driver_inputs`), when it runs ticks."""
        self.spark = spark
        self.spark_inputs = spark_inputs
        self.held = held
        self._make_spark = make_spark
        self.driver_loop = driver_loop
        #: a tick the driver could not run (NotInDriver): the rest of the run is Spark's
        self.driver_failed = False
        #: built now for a run only Spark runs (its set-up's jobs named as such), else when a tick first needs it
        self._spark_loop: TickLoop | None = make_spark() if driver_loop is None else None
        self.mode = placement_mode(spark)
        self.limit = driver_limit(spark)
        self.read_back = read_back

    @property
    def spark_loop(self) -> TickLoop:
        if self._spark_loop is None:
            self._spark_loop = self._make_spark()
        return self._spark_loop

    @property
    def plan(self):
        """The run's tick plan (spark/plan.py), Spark's: the driver's differs in its partitioner only."""
        return self.spark_loop.plan

    @property
    def layout(self):
        """The packs' layout (pack/layout.py): Spark's once its loop is built, else the
        driver's, which lacks only the partition column (a relation's columns are the same)."""
        return self.driver_loop.layout if self._spark_loop is None else self._spark_loop.layout

    def placement(self, tick: int, state: LoopState) -> str:
        """Where tick `tick` runs (see the module)."""
        if self.driver_loop is None or self.driver_failed or self.mode == SPARK:
            return SPARK
        if self.mode == "alternate":
            return DRIVER if tick % 2 else SPARK
        rows = state.stats[-1].facts if state.stats else self.driver_loop.sizer.input_rows
        return DRIVER if 0 < self.limit and rows <= self.limit else SPARK

    def run_tick(self, tick: int, previous, state: LoopState):
        """Tick `tick`'s pack, where `placement` says; the packs it reads moved there
        first. A tick the driver cannot run (`NotInDriver`: SQL with no DuckDB
        twin) runs on Spark, and so does the rest of the run."""
        where = self.placement(tick, state)
        try:
            pack = self._run_at(where, tick, previous, state)
        except NotInDriver:
            if where != DRIVER:
                raise
            self.driver_failed, where = True, SPARK
            pack = self._run_at(where, tick, previous, state)
        state.stats[-1].placement = where
        return pack

    def _run_at(self, where: str, tick: int, previous, state: LoopState):
        move = self.on_driver if where == DRIVER else self.on_spark
        loop = self.driver_loop if where == DRIVER else self.spark_loop
        for k in self.read_back & set(state.packs):
            state.packs[k] = move(state.packs[k])
        return loop.run_tick(tick, None if previous is None else move(previous), state)

    def on_driver(self, pack):
        """`pack` as a driver frame (one `toArrow` job when it is on Spark)."""
        if isinstance(pack, DuckFrame):
            return pack
        names = self.driver_loop.layout.pack_schema.fieldNames()
        table = pack.select(*names).toArrow()
        self.driver_loop.sizer.sized(table.num_rows)
        return DuckFrame(self.driver_loop.executor.spark, table)

    def on_spark(self, pack):
        """`pack` as a Spark frame: a local relation given its partition column."""
        if not isinstance(pack, DuckFrame):
            return pack
        loop = self.spark_loop
        frame = self.spark.createDataFrame(pack.toArrow(), self.driver_loop.layout.pack_schema)
        loop.sizer.sized(pack.count())
        loop.sizer.pack_partitions = None  # not in the partitions of any tick: the next start spreads it
        return loop.layout.adopt(frame)

    def loop_of(self, pack):
        """The loop of the placement that holds `pack`: the driver's or Spark's."""
        return self.driver_loop if isinstance(pack, DuckFrame) else self.spark_loop

    def holding(self, pack, name: str):
        """What holds relation `name`'s facts of the tick of `pack` (TickLoop.holding), on Spark."""
        return self.spark_loop.holding(self.on_spark(pack), name)

    def full(self, pack):
        """A tick's pack with the relations kept apart (TickLoop.full), where the pack is."""
        return self.loop_of(pack).full(pack)


def driver_inputs(static: dict, stamped: dict, rows: dict, edb: set, limit: int) -> tuple[dict, dict] | None:
    """The run's inputs as the driver holds them: rows given as lists as they
    are, `.input` frames collected (one job each, never more than `limit` + 1
    rows); ({relation: rows}, {relation: (pa.Table, ticks)}). None when they
    are more than `limit` rows in all, or when `edb` names a relation given as a
    DataFrame (the user's: Spark's)."""
    if edb & set(static):
        return None
    held = sum(len(given) for given in static.values() if isinstance(given, list))
    known = sum(rows.get(name) or 0 for name, given in static.items() if not isinstance(given, list))
    if held + known > limit:
        return None
    lists, collected = {}, {}

    def collect(frame):
        nonlocal held
        table = frame.limit(min(limit - held + 1, 2 ** 31 - 1)).toArrow()
        held += table.num_rows
        return table if held <= limit else None
    for name, given in static.items():
        if isinstance(given, list):
            lists[name] = given
            continue
        table = collect(given)
        if table is None:
            return None
        lists[name] = [tuple(row.values()) for row in table.to_pylist()]
    for name, (frame, ticks) in stamped.items():
        table = collect(frame)
        if table is None:
            return None
        collected[name] = (table, ticks)
    return lists, collected


def placed_loop(spark: SparkSession, program, network, spark_inputs, held: tuple | None, partitions, gc: list,
                policy: bool, names, count_exchanges: bool, read_back: set, spark_only: bool,
                edb: set) -> PlacedLoop:
    """The PlacedLoop of a run of `Engine.run`. `spark_inputs()`: the run's
    inputs as Spark frames (static, stamped, rows, files: TickLoop's arguments),
    called once, when Spark's loop is built; `held`: the inputs the driver read
    itself (`inputs_in_driver`), or None; `spark_only`: a feature the driver
    placement lacks was asked for; `edb`: the relations the caller gave as
    DataFrames; the others are TickLoop's."""
    read = []

    def inputs() -> tuple:
        if not read:
            read.append(spark_inputs())
        return read[0]

    def make_spark() -> TickLoop:
        static, stamped, rows, files = inputs()
        return TickLoop(spark, program, network, static, partitions, stamped, gc, policy, names=names,
                        count_exchanges=count_exchanges, rows=rows, files=files)
    driver = None
    limit = driver_limit(spark)
    if not spark_only and limit > 0:
        if held is None:
            static, stamped, rows, _ = inputs()
            held = driver_inputs(static, stamped, rows, edb, limit)
        if held is not None:
            settings = {key: spark.conf.get(key, None) for key in DRIVER_SETTINGS}
            driver = DriverTickLoop(settings, program, network, held[0], gc, stamped=held[1])
    return PlacedLoop(spark, make_spark, driver, read_back, inputs, held if driver is not None else None)


#: Spark's default `spark.sql.autoBroadcastJoinThreshold`: the most bytes Spark collects to the driver to join
BROADCAST_BYTES = 10 * 1024 * 1024
_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1024 ** 2, "mb": 1024 ** 2, "g": 1024 ** 3, "gb": 1024 ** 3}


def size_bytes(text: str | None, default: int) -> int:
    """A Spark byte size setting (`10485760b`, `10MB`, `64k`) in bytes.

    >>> size_bytes("10MB", 0), size_bytes("4096", 0), size_bytes(None, 7), size_bytes("-1", 0)
    (10485760, 4096, 7, -1)
    """
    if text is None:
        return default
    number = text.strip().lower().rstrip("bgkm") or "0"
    unit = text.strip().lower()[len(number):]
    return int(float(number) * _UNITS.get(unit, 1))


def inputs_in_driver(spark: SparkSession, program, inputs_dir: str | None, edb: dict | None) -> tuple | None:
    """The run's inputs read by the driver itself, with no JVM, when its ticks
    may run there: every `.input` a file or table of at most
    `spark.sql.autoBroadcastJoinThreshold` bytes in all (default 10 MB: what
    Spark itself would collect to the driver) read by `sparkdedalus.inputs`
    (the rows both engines accept, and their messages), at most driverRows
    rows; `edb` rows given as lists. ({relation: rows}, {relation: (pa.Table
    c0.. and `tick`, its ticks)}), as `driver_inputs`; None: Spark reads them.
    Parquet files whose footers give more rows than that are not read."""
    from sparkdedalus.inputs import footer_rows, locate, read_inputs as read_files

    limit = driver_limit(spark)
    if limit <= 0 or not program.inputs or any(not isinstance(v, list) for v in (edb or {}).values()):
        return None
    if set(edb or {}) & {decl.name for decl in program.inputs}:
        return None  # Spark's reader says why not
    located = [locate(decl, inputs_dir) for decl in program.inputs]  # (path, format)
    paths = [path for path, _ in located]
    if not all(os.path.exists(p) for p in paths):
        return None  # Spark's reader says which is missing
    cap = size_bytes(spark.conf.get("spark.sql.autoBroadcastJoinThreshold", None), BROADCAST_BYTES)
    if limit != sys.maxsize and sum(_bytes(p) for p in paths) > cap:  # unless a mode forces the driver
        return None
    footers = [footer_rows(path, fmt) for path, fmt in located]
    if sum(n for n in footers if n is not None) > limit:  # Parquet's footers: too many rows, nothing read
        return None
    static: dict = {name: [tuple(row) for row in rows] for name, rows in (edb or {}).items()}
    stamped: dict = {}
    found = read_files(program, inputs_dir)
    if len(found) + sum(len(rows) for rows in static.values()) > limit:
        return None
    for name, tick, row in found:
        if tick is None:
            static.setdefault(name, []).append(tuple(row))
        else:
            stamped.setdefault(name, []).append((*row, tick))
    tables = {}
    for name, rows in stamped.items():
        relation = program.relations[name]
        fields = [(f"c{i}", _ARROW.get(t, pa.int64())) for i, t in enumerate(relation.types)] + [("tick", pa.int64())]
        columns = list(zip(*rows))
        table = pa.Table.from_arrays([pa.array(c, type) for c, (_, type) in zip(columns, fields)],
                                     names=[n for n, _ in fields])
        tables[name] = (table, {row[-1] for row in rows})
    return static, tables


def _bytes(path: str) -> int:
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)
    return os.path.getsize(path)
