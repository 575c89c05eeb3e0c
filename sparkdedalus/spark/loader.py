"""A run's facts loaded into the tick loop: the program's own facts, the EDB
and the inputs, and the `crash` relation of the failure model.

Facts true at every tick are packed once per run: the inputs kept apart
(relations no rule derives and nothing adds to at some tick, `TickPlan.apart`)
in a pack of their own that no tick copies, the others in the static pack
every tick starts from. A pack whose rows are all counted already (facts of
the program's text or rows given as lists; inputs counted when read, see
spark/inputs.py) is a lazy checkpoint that the first tick's job computes; a
pack holding a frame of unknown size (an `edb=` DataFrame) is materialised
and counted by a job of its own, to size the loop to it. Facts stamped with a tick go into
that tick's start (`facts_pack`). Facts written in the program's text are
inlined in the plan as a literal array up to INLINE_ROWS a relation, more are
loaded once from an Arrow table; nothing here collects rows to the driver.

The loader also knows which facts true at every tick the driver holds without
Spark (`held_tables`): the program's facts, rows given as lists, and Parquet
inputs valid by their footers (read with pyarrow): the Arrow fixpoint may solve
a one-task component from them in the driver (spark/fixpoint.py, `driver_component_rows`).
"""

from __future__ import annotations

from functools import reduce

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import BooleanType, DoubleType, LongType, StructField, StructType

from sparkdedalus.errors import InputError
from sparkdedalus.inputs import TICK
from sparkdedalus.pack.columns import PARTITION_COLUMN, STATE
from sparkdedalus.program import CRASH
from sparkdedalus.spark.expressions import sql_literal
from sparkdedalus.spark.plan import TickPlan
from sparkdedalus.spark.sizer import Sizer
from sparkdedalus.spark.tick_sql import TickSql
from udfs.registry import spark_string_sql

#: A relation's facts written in the program's text (those at every tick, or
#: all those stamped with a tick) up to this many are inlined in the plan as a
#: literal array; more are loaded as a DataFrame from Arrow, once. An inline
#: array costs no job of its own but grows the plan with every fact (built,
#: analysed and optimised wherever the plan uses it); measured on the 2-core
#: machine (docs/performance.md), whole runs cost the same to within the noise
#: up to 128 facts a relation, and loading won 1.3x at 256 and 2.4x at 512.
INLINE_ROWS = 128
_ARROW_TYPES = {LongType: pa.int64(), DoubleType: pa.float64(), BooleanType: pa.bool_()}


class Loader:
    """The facts of a run, loaded once (see the module)."""

    def __init__(self, spark: SparkSession, plan: TickPlan, sql: TickSql, sizer: Sizer, edb: dict,
                 stamped: dict, input_apart: bool, rows: dict, files: dict | None = None):
        """`edb`: {relation: frame or rows} holding at every tick; `stamped`:
        {relation: (frame with a `tick` column, set of its ticks)}, rows holding
        at their tick only (`.input` rows with a tick, see spark/inputs.py);
        `input_apart`: keep the relations no rule derives out of the packs
        (`full` adds them back); `rows`: {relation: rows} of the `edb` frames
        whose rows are known; `files`: {relation: Parquet files} of the `edb`
        frames that are all their rows, each valid by its footer (spark/inputs.py)."""
        self.spark = spark
        self.plan = plan
        self.sql = sql
        self.sizer = sizer
        self.program = plan.program
        self.layout = plan.layout
        self.stamped = dict(stamped)
        self.facts_at = self._text_facts()
        self._held: dict = {}  # relation -> (rows as lists or Parquet paths, their rows): facts the driver holds
        frames, counts = self._static_frames(edb, rows, files or {})
        self.given = frozenset(frames) | frozenset(self.stamped)  # the relations with facts given to the run
        plan.keep_apart(set(frames), input_apart)
        apart = plan.apart
        inputs = {n: f for n, f in frames.items() if n in apart}
        self._input_pack, self._input_plan = None, None
        if inputs and all(counts.get(n) is not None for n in inputs):
            # planned when first read (`input_pack`), in the partitions of now: a run whose
            # recursion the driver solves (spark/fixpoint.py) may never read it
            self._input_plan = (inputs, counts, Sizer(sizer.partitions, sizer.most_partitions, sizer.partitioned))
            self.input_rows_apart = sum(counts[n] for n in inputs)
            sizer.sized(self.input_rows_apart)
        else:
            self._input_pack, self.input_rows_apart = self._static_pack(inputs, counts)
        self.static_pack, static_rows = self._static_pack({n: f for n, f in frames.items() if n not in apart},
                                                          counts)
        sizer.sized(self.input_rows_apart + static_rows)
        #: {relation: its distinct facts} of the static pack when the driver knows them all (the
        #: program's facts and rows given as lists, counted as sets), else None: a first tick's
        #: pack may then be counted without a job (executor.Executor._pack)
        self.static_distinct = self._distinct([n for n in frames if n not in apart])

    def frame(self, name: str, rows: list) -> DataFrame:
        """Rows as a frame: up to INLINE_ROWS an inline array in one partition
        (one SQL expression), more loaded from Arrow (`_loaded`). Neither uses
        an RDD: both work on Spark Connect."""
        if len(rows) > INLINE_ROWS:
            return self._loaded(self.layout.schemas[name], rows)
        return self.spark.sql(self._rows_sql(name, rows))

    def _rows_sql(self, name: str, rows: list) -> str:
        """SQL: up to INLINE_ROWS rows of `name` (columns c0..)."""
        return self._inline_sql(self.layout.schemas[name], rows) if rows else self.sql.empty(name)

    @staticmethod
    def _inline_sql(schema: StructType, rows: list) -> str:
        """SQL: rows as a literal array in one partition."""
        structs = ", ".join(
            "struct(" + ", ".join(f"CAST({sql_literal(v)} AS {f.dataType.simpleString()}) AS {f.name}"
                                  for v, f in zip(row, schema.fields)) + ")" for row in rows)
        return f"SELECT inline(array({structs})) FROM range(0, 1, 1, 1)"

    def _loaded(self, schema: StructType, rows: list) -> DataFrame:
        """Rows as a frame built from an Arrow table: its size does not grow the
        plan's expressions."""
        columns = list(zip(*rows))
        arrays = [pa.array(values, _ARROW_TYPES.get(type(f.dataType), pa.string()))
                  for values, f in zip(columns, schema.fields)]
        return self.spark.createDataFrame(pa.Table.from_arrays(arrays, names=schema.fieldNames()), schema)

    def _text_facts(self) -> dict:
        """The program's facts stamped with a tick, {tick: {relation: rows}};
        a relation with more than INLINE_ROWS of them is loaded once into
        `self.stamped` instead (a frame with a `tick` column, like a stamped
        `.input`) and left out."""
        by_relation: dict = {}
        for fact in self.program.facts:
            if fact.tick is not None:
                by_relation.setdefault(fact.atom.name, set()).add((*fact.row, fact.tick))
        facts_at: dict = {}
        for name, rows in by_relation.items():
            if len(rows) > INLINE_ROWS:
                schema = StructType(self.layout.schemas[name].fields + [StructField(TICK, LongType(), False)])
                frame = self._loaded(schema, sorted(rows)).localCheckpoint(eager=False)
                ticks = {row[-1] for row in rows}
                if name in self.stamped:
                    frame = self.stamped[name][0].unionAll(frame)
                    ticks |= self.stamped[name][1]
                self.stamped[name] = (frame, ticks)
                continue
            for *row, tick in sorted(rows):  # in one order: the same text in every process
                facts_at.setdefault(tick, {}).setdefault(name, []).append(tuple(row))
        return facts_at

    def _static_frames(self, edb: dict, known: dict, files: dict) -> tuple[dict, dict]:
        """The frames of the facts true at every tick, {relation: frame}, and
        their rows where known, {relation: rows}: the program's own facts and
        rows given as lists are counted here, `edb` frames when `known` counts them.
        Records in `self._held` the relations whose facts the driver holds
        (`held_tables`)."""
        rows: dict = {}
        for fact in self.program.facts:
            if fact.tick is None:
                rows.setdefault(fact.atom.name, set()).add(fact.row)
        frames = {name: self.frame(name, sorted(r)) for name, r in rows.items()}
        counts = {name: len(r) for name, r in rows.items()}
        self._held = {name: ([sorted(r)], len(r)) for name, r in rows.items()}
        for name, frame in edb.items():
            if name not in self.program.relations:
                raise InputError(f"EDB given for unknown relation '{name}'")
            held = self._held.get(name, ([], 0))
            if isinstance(frame, list):
                given = [tuple(r) for r in frame]
                size = len(given)
                self._held[name] = ([*held[0], given], held[1] + size)
                typed = self.frame(name, given)
            else:
                size = known.get(name)  # None: not known here
                self._held[name] = ([*held[0], *files[name]], held[1] + size) \
                    if name in files and size is not None else None  # None: a frame only Spark holds
                typed = frame.toDF(*self.layout.schemas[name].fieldNames())
            typed = typed.selectExpr(*[f"CAST(`{f.name}` AS {f.dataType.simpleString()}) AS {f.name}"
                                       for f in self.layout.schemas[name].fields])
            frames[name] = frames[name].unionAll(typed) if name in frames else typed
            counts[name] = None if size is None else counts.get(name, 0) + size
        if CRASH in self.program.relations and self.plan.network.crashes:
            frames[CRASH] = self._crash_frame(frames)
            counts[CRASH] = None
            self._held[CRASH] = None
        return frames, counts

    def _crash_frame(self, frames: dict) -> DataFrame:
        """`crash(L, N, T)` at every location L of the run (`Network.crash_rows`):
        those of the program's facts and of the failure model in Python, those
        of the EDB and stamped input rows by Spark, never collected."""
        network = self.plan.network
        known = self.frame(CRASH, sorted(network.crash_rows(self.program, ())))
        located_frames = [*frames.items(), *((name, stamped) for name, (stamped, _) in self.stamped.items())]
        inputs = [f.selectExpr(f"{spark_string_sql('c0', self.program.relations[name].types[0])} AS c0")
                  for name, f in located_frames if name != CRASH]
        if not inputs:
            return known
        fields = self.layout.schemas[CRASH].fields[1:]
        crashes = self.spark.sql(self._inline_sql(StructType(fields), sorted(network.crashes.items())))
        located = reduce(lambda a, b: a.unionAll(b), inputs).distinct().crossJoin(crashes)
        return known.unionAll(located).distinct()

    @property
    def input_pack(self) -> DataFrame | None:
        """The pack of the inputs kept apart (`TickPlan.apart`), or None: a lazy
        checkpoint, planned when first read when its rows were known at set-up."""
        if self._input_plan is not None:
            frames, counts, sizer = self._input_plan
            self._input_plan = None
            self._input_pack, _ = self._static_pack(frames, counts, type(self.sql)(self.spark, self.plan, sizer))
        return self._input_pack

    def _static_pack(self, frames: dict, counts: dict, sql: TickSql | None = None) -> tuple[DataFrame | None, int]:
        """Facts true at every tick, packed once, and their rows (a replicated
        relation's counted once): a lazy checkpoint when `counts` has every
        frame's rows, else materialised and counted (one job). As a tick's
        start, they may hold a fact twice (an input's repeated row): rules read
        relations as sets, and a pack, or `full`, holds each fact once. `sql`:
        the TickSql to plan it with (default: the loop's)."""
        if not frames:
            return None, 0
        sql = sql or self.sql
        sizer = sql.sizer
        pack = sql.union([self.layout.part_sql(n, STATE, sql.name(sql.bucketed(n, sql.views.of(f))))
                          for n, f in frames.items()])
        if self.plan.partitioner is not None:
            pack = f"SELECT /*+ REPARTITION({sizer.most_partitions}, {PARTITION_COLUMN}) */ * FROM {sql.name(pack)}"
        elif sizer.partitions > 1:
            pack = f"SELECT /*+ REPARTITION({sizer.partitions}) */ * FROM {sql.name(pack)}"
        if all(counts.get(n) is not None for n in frames):
            rows = sum(counts[n] for n in frames)
            pack = sql.checkpoint(pack)
            sizer.sized(rows)
        else:
            pack, (_, rows) = sql.materialised(pack, self.layout.home_copy())
        sql.end()
        return pack, rows

    def stamped_with(self, tick: int) -> set:
        """The relations with facts stamped with `tick` (the program's and the inputs')."""
        return set(self.facts_at.get(tick, {})) | {n for n, (_, ticks) in self.stamped.items() if tick in ticks}

    def facts_pack(self, tick: int) -> str | None:
        """SQL: the facts stamped with `tick` (the program's and the inputs'), packed."""
        sql = self.sql
        parts = [self.layout.part_sql(n, STATE, sql.name(sql.bucketed(n, self._rows_sql(n, r))))
                 for n, r in self.facts_at.get(tick, {}).items()]
        for name, (frame, ticks) in self.stamped.items():
            if tick in ticks:
                columns = ", ".join(self.layout.schemas[name].fieldNames())
                rows = f"SELECT {columns} FROM {sql.views.of(frame)} WHERE {TICK} = {tick}"
                parts.append(self.layout.part_sql(name, STATE, sql.name(sql.bucketed(name, rows))))
        if not parts:
            return None
        if self.plan.partitioner is None or self.sizer.partitions == 1:
            return sql.union(parts)
        # moved to their buckets once, for every plan of the tick that reads them
        return sql.cut(sql.spread(sql.union(parts)))

    def _distinct(self, names) -> dict | None:
        """{relation: its distinct facts true at every tick} of relations
        `names` when the driver holds them all as rows (the program's facts,
        rows given as lists), else None."""
        held = [self._held.get(n) for n in names]
        if any(h is None or any(isinstance(piece, str) for piece in h[0]) for h in held):
            return None
        return {n: len(set().union(*pieces)) for n, (pieces, _) in zip(names, held)}

    def held_rows(self, names) -> int | None:
        """The rows of the facts true at every tick of relations `names` when
        the driver holds them all (`held_tables`), else None."""
        held = [self._held.get(n, ([], 0)) for n in names]
        return None if None in held else sum(rows for _, rows in held)

    def held_tables(self, names) -> dict:
        """{relation: pa.Table c0..} of the facts true at every tick of
        relations `names`, read in the driver without Spark: the program's
        facts, rows given as lists, Parquet files with pyarrow (a relation
        with none: an empty table). Only for relations `held_rows` counts;
        a fact may appear twice (rules read relations as sets)."""
        import pyarrow.parquet as pq

        tables = {}
        for name in names:
            schema = pa.schema([(f.name, _ARROW_TYPES.get(type(f.dataType), pa.string()))
                                for f in self.layout.schemas[name].fields])
            pieces = []
            for piece in self._held.get(name, ([], 0))[0]:
                if isinstance(piece, str):  # a Parquet file valid by its footer: the relation's columns, no NULL
                    read = pq.read_table(piece, columns=list(self.program.relations[name].columns))
                    pieces.append(read.rename_columns(schema.names).cast(schema, safe=False))  # as Spark casts
                else:
                    pieces.append(pa.Table.from_pylist([dict(zip(schema.names, row)) for row in piece], schema))
            tables[name] = pa.concat_tables(pieces) if pieces else schema.empty_table()
        return tables

    def read_apart(self, name: str) -> str:
        """SQL: relation `name`, which no rule derives, read from the inputs kept apart."""
        return self.layout.read_sql(self.sql.views.of(self.input_pack), name)

    def holding(self, pack: DataFrame, name: str) -> DataFrame:
        """What holds relation `name`'s facts of the tick whose pack is `pack`,
        each once: the pack, or for a relation kept apart the inputs' pack
        (`full` without the pack that does not hold it)."""
        return pack if name not in self.plan.apart or self.input_pack is None else \
            self.input_pack.where(self.layout.home_copy()).distinct()

    def full(self, pack: DataFrame) -> DataFrame:
        """A tick's pack with the relations kept apart (`TickPlan.apart`): every
        fact of the tick, once (the distinct is planned, computed by who reads)."""
        return pack if self.input_pack is None else \
            pack.unionAll(self.input_pack.where(self.layout.home_copy()).distinct())
