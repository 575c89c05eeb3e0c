"""`.input` relations read with Spark, by the rules of `sparkdedalus.inputs`.

    frame = read_input(spark, program, decl, base_dir=None)
    # columns c0..cn-1 typed as the relation's columns, and `tick` (bigint):
    # NULL for a row that holds at every tick, else the tick it is stamped with
    static, stamped, rows, files = read_inputs(spark, program, inputs_dir=None, last_tick=None)   # for the tick loop

The rules are those of `sparkdedalus.inputs` (read its module doc): paths
relative to `base_dir` when given, else to the declaring program file; the
format from `format` or the extension (a directory is a Delta table); columns
named by the relation's declared column names in any order, plus an optional
`tick`; CSV cells by its grammar (`INT_TEXT`, `FLOAT_TEXT`), `true`/`false` and
raw strings; JSON (an array or JSON Lines) values of the column's JSON type;
Parquet and Delta values of a matching type.

The file is read and checked by Spark (executors parse; JSON types are checked
with Spark's VARIANT type); the frame is materialised with a lazy
`localCheckpoint` by the job that looks for a bad row, so a run reads it once,
in one job. A malformed row raises a one-line `InputError` naming the
file, the row and the column before anything is written: the first bad row is
found with Spark, and its message is produced by `sparkdedalus.inputs`' checks
on that one row, so both engines report the same text. Row numbers count data rows
as the reference does (CSV: non-blank rows after the header; JSON Lines:
non-blank lines); for Parquet and Delta inputs made of several files Spark's
file order may differ from pyarrow's, so the row number can differ there.

Jobs: one per input, which reads, checks and counts it; none for a Parquet
file whose footer shows every row valid (`_ArrowInput.valid_footer`: no NULL
in the relation's columns, ticks at least 1, by each row group's statistics;
its schema is the footer's too, so Spark runs no job to infer it), which
each run then reads where it is used; one more in `read_inputs` when its rows
may carry a tick (a `tick` column or field: the ticks they hold); one or two
more to number the offending row on error.

A Parquet file whose footer shows every row valid and that has no `tick`
column is also named in `Inputs.files`: the driver may read it with pyarrow,
with no Spark job (the Arrow fixpoint solved in the driver, spark/fixpoint.py).
"""

from __future__ import annotations

import csv
import json
import os
from typing import NamedTuple

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (BooleanType, ByteType, DoubleType, FloatType, IntegerType, LongType, ShortType,
                               StringType, StructField, StructType)

from sparkdedalus.errors import InputError
from sparkdedalus.inputs import (FLOAT_TEXT, INT_TEXT, TICK, csv_header, csv_width_error, json_error, json_object_error,
                                 locate, reader_error, typed_record)

SPARK_TYPE = {"int": LongType(), "long": LongType(), "double": DoubleType(), "string": StringType(),
              "bool": BooleanType()}
_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
_ROW = "__row"


def read_input(spark: SparkSession, program, decl, base_dir: str | None = None) -> DataFrame:
    """The rows of `.input` declaration `decl` of `program` (see the module doc)."""
    return _reader(spark, program, decl, base_dir).frame().frame


def _reader(spark: SparkSession, program, decl, base_dir: str | None) -> "_Input":
    relation = program.relations[decl.name]
    path, fmt = locate(decl, base_dir)
    if not os.path.exists(path):
        if fmt in ("csv", "json"):
            raise InputError(f"cannot read input '{path}': No such file or directory")
        raise InputError(f"cannot read {fmt} input '{path}': no such file or directory")
    reader = {"csv": _CsvInput, "json": _JsonInput, "parquet": _ArrowInput, "delta": _ArrowInput}[fmt]
    return reader(spark, relation, path, fmt)


class Inputs(NamedTuple):
    """What `read_inputs` read: the rows holding at every tick, the rows
    stamped with a tick, and how many rows each static frame holds where the
    checks counted them (a relation with stamped rows is not counted)."""

    static: dict  # relation -> frame of rows holding at every tick
    stamped: dict  # relation -> (frame of stamped rows with a `tick` column, set of ticks)
    rows: dict  # relation -> the rows of its static frame, where known
    files: dict  # relation -> the Parquet files holding all its rows, each valid by its footer (`Read.file`)


def read_inputs(spark, program, inputs_dir: str | None = None, last_tick: int | None = None) -> Inputs:
    """The `.input`s of `program` (`Inputs`). The set of a stamped relation's
    ticks holds those up to `last_tick` (all without one): the driver
    collects at most one value per tick of the run, whatever the number of
    rows."""
    static: dict = {}
    stamped: dict = {}
    rows: dict = {}
    files: dict = {}  # relation -> its valid Parquet files, or None when some input is not one
    for decl in program.inputs:
        frame, has_ticks, counted, file = _reader(spark, program, decl, inputs_dir).frame()
        known = files.get(decl.name, [])
        files[decl.name] = None if file is None or known is None else [*known, file]
        values = [c for c in frame.columns if c != TICK]
        every_tick = frame.where(F.col(TICK).isNull()) if has_ticks else frame
        static[decl.name] = _union(static.get(decl.name), every_tick.select(*values))
        before = rows.get(decl.name, 0)
        rows[decl.name] = None if has_ticks or before is None else before + counted
        if not has_ticks:  # no tick column: every row at every tick, no job to find ticks
            continue
        stamped_rows = frame.where(F.col(TICK).isNotNull())
        # ticks after the run count as one value: the relation still has stamped rows (crash locations)
        tick = F.col(TICK) if last_tick is None else F.least(F.col(TICK), F.lit(last_tick + 1))
        found = {row[0] for row in stamped_rows.select(tick).distinct().collect()}
        if found:
            previous, known = stamped.get(decl.name, (None, set()))
            ticks = found if last_tick is None else {t for t in found if t <= last_tick}
            stamped[decl.name] = (_union(previous, stamped_rows), known | ticks)
    return Inputs(static, stamped, {name: n for name, n in rows.items() if n is not None},
                  {name: paths for name, paths in files.items() if paths is not None})


def _union(a: DataFrame | None, b: DataFrame) -> DataFrame:
    return b if a is None else a.unionAll(b)


def _strip(column: Column) -> Column:
    return F.regexp_replace(column, r"^\s+|\s+$", "")


class Read(NamedTuple):
    """What a reader's `frame()` read from one `.input` file."""

    frame: DataFrame  # the checked rows as c0..cn-1 and `tick` (NULL without a tick column or field)
    stamped: bool  # whether a row may carry a tick: a tick column or field
    rows: int  # the rows, counted by the job that checks them or read from a Parquet footer
    file: str | None = None  # a Parquet file valid by its footer, without a `tick` column: the driver may read it


class _Input:
    """A reader of one `.input` file (`frame()`: a `Read`)."""

    def __init__(self, spark: SparkSession, relation, path: str, fmt: str):
        self.spark = spark
        self.relation = relation
        self.path = path
        self.fmt = fmt

    def where(self, number: int) -> str:
        return f"{self.path}: row {number}"

    def number_of(self, frame: DataFrame, row_id: int) -> int:
        """The 1-based position of the row with id `row_id` (ids grow in file order)."""
        return frame.where(F.col(_ROW) < row_id).count() + 1

    def fail_with_reference(self, record: dict, number: int, text: bool) -> None:
        """Raise the reference's message for one bad record."""
        typed_record(record, self.relation, self.where(number), text=text)
        raise InputError(f"{self.where(number)}: malformed row")  # the checks disagree: still refuse it


# ---------------------------------------------------------------------------- CSV
class _CsvInput(_Input):
    def frame(self) -> Read:
        header = csv_header(self.path, self.relation.columns)
        fields = [f"h{i}" for i in range(len(header))]
        position = {name: i for i, name in enumerate(header)}  # the last of repeated names wins, as in dict()
        schema = StructType([StructField(f, StringType()) for f in fields] + [StructField("__bad", StringType())])
        raw = (self.spark.read.schema(schema).option("header", True).option("multiLine", True)
               .option("escape", '"').option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", "__bad")
               .csv(self.path).withColumn(_ROW, F.monotonically_increasing_id()))

        def cell(name: str) -> Column:  # an unquoted empty cell reads as NULL: Python's csv says ""
            return F.coalesce(F.col(fields[position[name]]), F.lit(""))

        values, bad = [], []
        for name, typ in zip(self.relation.columns, self.relation.types):
            if name not in position:
                values.append(F.lit(None).cast(SPARK_TYPE[typ]))
                continue
            value, ok = _parse(cell(name), typ)
            values.append(value)
            bad.append(~ok)
        tick, tick_bad = F.lit(None).cast("bigint"), None
        if TICK in position:
            text = cell(TICK)
            value, ok = _parse(text, "int")
            empty = text == ""  # an empty tick cell: every tick (a blank one is an error, as in the reference)
            tick = F.when(empty, F.lit(None)).otherwise(value)
            tick_bad = ~empty & (~ok | (value < 1))
            bad.append(tick_bad)
        header_bad = any(n not in self.relation.columns and n != TICK for n in header) or \
            any(c not in position for c in self.relation.columns)
        row_bad = F.lit(header_bad)
        for b in bad:
            row_bad = row_bad | b
        checked = raw.select(_ROW, "__bad", *fields, row_bad.alias("__row_bad"),
                             *[v.alias(f"c{i}") for i, v in enumerate(values)],
                             tick.cast("bigint").alias(TICK)).localCheckpoint(eager=False)
        found = checked.agg(F.min(F.when(F.col("__bad").isNotNull(), F.col(_ROW))).alias("count_bad"),
                            F.min(F.when(F.col("__row_bad"), F.col(_ROW))).alias("value_bad"),
                            F.count(F.lit(1)).alias("rows")).first()
        if found["count_bad"] is not None:
            row = checked.where(F.col(_ROW) == found["count_bad"]).first()
            cells = next(csv.reader([row["__bad"]]), [])
            number = self.number_of(checked, found["count_bad"])
            raise csv_width_error(self.path, number, len(cells), header)
        if found["value_bad"] is not None:
            row = checked.where(F.col(_ROW) == found["value_bad"]).first()
            record = {name: ("" if row[fields[i]] is None else row[fields[i]]) for name, i in position.items()}
            self.fail_with_reference(record, self.number_of(checked, found["value_bad"]), text=True)
        return Read(checked.select(*[f"c{i}" for i in range(len(values))], TICK), TICK in position, found["rows"])


def _parse(text: Column, typ: str) -> tuple[Column, Column]:
    """(value, ok) of a CSV cell read as `typ`, as `sparkdedalus.inputs` reads it."""
    stripped = _strip(text)
    if typ in ("int", "long"):
        value = F.regexp_replace(stripped, "_", "").try_cast("bigint")
        return value, stripped.rlike(INT_TEXT.pattern) & value.isNotNull()
    if typ == "double":
        value = F.regexp_replace(stripped, "_", "").try_cast("double")
        return value, stripped.rlike(FLOAT_TEXT.pattern) & value.isNotNull()
    if typ == "bool":
        lowered = F.lower(stripped)
        return lowered == "true", lowered.isin("true", "false")
    return text, F.lit(True)


# ---------------------------------------------------------------------------- JSON
_VARIANT_OK = {
    "int": ("TINYINT", "SMALLINT", "INT", "BIGINT"),
    "long": ("TINYINT", "SMALLINT", "INT", "BIGINT"),
    "bool": ("BOOLEAN",),
    "string": ("STRING",),
}


def _variant_type_ok(kind: Column, typ: str) -> Column:
    if typ == "double":
        return kind.isin(*_VARIANT_OK["int"], "FLOAT", "DOUBLE") | kind.startswith("DECIMAL")
    return kind.isin(*_VARIANT_OK[typ])


class _JsonInput(_Input):
    def is_array(self) -> bool:
        with open(self.path, encoding="utf-8", errors="replace") as handle:
            while True:
                chunk = handle.read(4096)
                if not chunk:
                    return False
                stripped = chunk.lstrip()
                if stripped:
                    return stripped.startswith("[")

    def records(self) -> DataFrame:
        """(__row, __text, v): one row per record; v is NULL when __text is not JSON."""
        if self.is_array():
            whole = self.spark.read.text(self.path, wholetext=True).select(F.expr("try_parse_json(value)").alias("doc"))
            checked = whole.select(F.col("doc").isNull().alias("invalid"),
                                   F.expr("try_variant_get(doc, '$', 'array<variant>')").alias("items"))
            first = checked.select("invalid", F.col("items").isNull().alias("not_array")).first()  # not the items
            if first is None or first["invalid"] or first["not_array"]:
                with open(self.path, encoding="utf-8") as handle:
                    raise json_error(self.path, handle.read())
            return checked.select(F.posexplode("items")).select(
                F.col("pos").cast("bigint").alias(_ROW), F.lit(None).cast("string").alias("__text"),
                F.col("col").alias("v"))
        lines = self.spark.read.text(self.path).withColumn("__id", F.monotonically_increasing_id())
        lines = lines.where(_strip(F.col("value")) != "")
        return lines.select(F.col("__id").alias(_ROW), F.col("value").alias("__text"),
                            F.expr("try_parse_json(value)").alias("v"))

    def frame(self) -> Read:
        """Any record may carry a `tick` field: always stamped."""
        records = self.records()
        v = F.col("v")
        is_object = F.expr("schema_of_variant(v)").startswith("OBJECT")
        keys = F.map_keys(F.expr("try_variant_get(v, '$', 'map<string,variant>')"))
        allowed = F.array(*[F.lit(c) for c in self.relation.columns + (TICK,)])
        bad = F.size(F.array_except(keys, allowed)) > 0
        values = []
        for name, typ in zip(self.relation.columns, self.relation.types):
            item = F.expr(f"try_variant_get(v, '$.{name}')")
            kind = F.expr(f"schema_of_variant(try_variant_get(v, '$.{name}'))")
            bad = bad | item.isNull() | ~_variant_type_ok(kind, typ)
            values.append(F.expr(f"try_variant_get(v, '$.{name}', '{SPARK_TYPE[typ].simpleString()}')"))
        tick_item = F.expr(f"try_variant_get(v, '$.{TICK}')")
        tick_kind = F.expr(f"schema_of_variant(try_variant_get(v, '$.{TICK}'))")
        tick = F.expr(f"try_variant_get(v, '$.{TICK}', 'bigint')")
        tick_given = tick_item.isNotNull() & (tick_kind != "VOID")
        bad = bad | (tick_given & (~_variant_type_ok(tick_kind, "int") | (tick < 1)))
        tick = F.when(tick_given, tick)
        checked = records.select(_ROW, "__text", F.expr("to_json(v)").alias("__json"),
                                 v.isNull().alias("__invalid"), (v.isNotNull() & ~is_object).alias("__scalar"),
                                 (v.isNotNull() & is_object & bad).alias("__row_bad"),
                                 *[x.alias(f"c{i}") for i, x in enumerate(values)],
                                 tick.alias(TICK)).localCheckpoint(eager=False)
        found = checked.agg(*[F.min(F.when(F.col(c), F.col(_ROW))).alias(c)
                              for c in ("__invalid", "__scalar", "__row_bad")], F.count(F.lit(1)).alias("rows")).first()
        if found["__invalid"] is not None:
            raise json_error(self.path, checked.where(F.col(_ROW) == found["__invalid"]).first()["__text"])
        for column in ("__scalar", "__row_bad"):
            if found[column] is None:
                continue
            row = checked.where(F.col(_ROW) == found[column]).first()
            number = self.number_of(checked, found[column])
            record = json.loads(row["__json"])
            if column == "__scalar":
                raise json_object_error(self.path, number, record)
            self.fail_with_reference(record, number, text=False)
        return Read(checked.select(*[f"c{i}" for i in range(len(values))], TICK), True, found["rows"])


# ---------------------------------------------------------------------------- Parquet, Delta
def _type_ok(data_type, typ: str) -> bool:
    if typ in ("int", "long"):
        return isinstance(data_type, _INTEGRAL)
    if typ == "double":
        return isinstance(data_type, _INTEGRAL + (FloatType, DoubleType))
    if typ == "bool":
        return isinstance(data_type, BooleanType)
    return isinstance(data_type, StringType)


class _ArrowInput(_Input):
    def read(self, schema: StructType | None = None) -> DataFrame:
        """The file or table as Spark reads it; with `schema` (a Parquet file's
        own), Spark does not run a job to infer it."""
        try:
            if self.fmt == "parquet":
                return (self.spark.read.schema(schema) if schema is not None else self.spark.read).parquet(self.path)
            from sparkdedalus.plumbing.session import session_has_delta
            if session_has_delta(self.spark):
                return self.spark.read.format("delta").load(self.path)
            from deltalake import DeltaTable
            from pyspark.sql.pandas.types import from_arrow_schema
            table = DeltaTable(self.path)
            files = table.file_uris()
            schema = from_arrow_schema(table.to_pyarrow_dataset().schema)
            return self.spark.read.schema(schema).parquet(*files) if files else self.spark.createDataFrame([], schema)
        except Exception as exc:  # any reader failure is bad input data
            raise reader_error(self.path, self.fmt, exc) from None

    def valid_footer(self) -> tuple[StructType, int] | None:
        """A Parquet file's schema and rows when its footer shows every row valid
        (the relation's columns all present, of a matching type and never NULL,
        every tick at least 1, by the statistics of every row group), else None:
        then no job needs to look for a bad row (`frame`)."""
        if self.fmt != "parquet" or not os.path.isfile(self.path):
            return None
        import pyarrow.parquet as pq
        from pyspark.sql.pandas.types import from_arrow_schema
        try:
            footer = pq.ParquetFile(self.path)
            metadata, schema = footer.metadata, from_arrow_schema(footer.schema_arrow)
        except Exception:  # unreadable, or a type Spark has no match for: the reader reports it
            return None
        types = {f.name: f.dataType for f in schema.fields}
        if set(types) - {TICK} != set(self.relation.columns) or \
                not all(_type_ok(types[c], t) for c, t in zip(self.relation.columns, self.relation.types)) or \
                (TICK in types and not isinstance(types[TICK], _INTEGRAL)):
            return None
        for group in (metadata.row_group(i) for i in range(metadata.num_row_groups)):
            for column in (group.column(j) for j in range(group.num_columns)):
                stats = column.statistics
                name = column.path_in_schema
                if stats is None or not stats.has_null_count:
                    return None
                if name == TICK:
                    if stats.null_count < column.num_values and not (stats.has_min_max and stats.min >= 1):
                        return None
                elif stats.null_count:
                    return None
        return schema, metadata.num_rows

    def frame(self) -> Read:
        footer = self.valid_footer()
        raw = self.read(footer[0] if footer is not None else None)
        types = {f.name: f.dataType for f in raw.schema.fields}
        header_bad = any(n not in self.relation.columns and n != TICK for n in types) or \
            any(c not in types for c in self.relation.columns)
        bad = F.lit(header_bad)
        values = []
        for name, typ in zip(self.relation.columns, self.relation.types):
            if name not in types:
                values.append(F.lit(None).cast(SPARK_TYPE[typ]))
                continue
            if _type_ok(types[name], typ):
                bad = bad | F.col(name).isNull()
                values.append(F.col(name).cast(SPARK_TYPE[typ]))
            else:
                bad = F.lit(True)
                values.append(F.lit(None).cast(SPARK_TYPE[typ]))
        tick = F.lit(None).cast("bigint")
        stamped = TICK in types and isinstance(types[TICK], _INTEGRAL)  # any other tick is refused
        if TICK in types:
            if stamped:
                tick = F.col(TICK).cast("bigint")
                bad = bad | (tick < 1)
            else:
                bad = bad | F.col(TICK).isNotNull()
        if footer is not None:  # every row valid (`valid_footer`): nothing to look for
            return Read(raw.select(*[x.alias(f"c{i}") for i, x in enumerate(values)], tick.alias(TICK)), stamped,
                        footer[1], None if TICK in types else self.path)
        raw = raw.withColumn(_ROW, F.monotonically_increasing_id())
        checked = raw.select(_ROW, *[F.col(f"`{n}`") for n in types], bad.alias("__row_bad"),
                             *[x.alias(f"__c{i}") for i, x in enumerate(values)],
                             tick.alias("__tick")).localCheckpoint(eager=False)
        found = checked.agg(F.min(F.when(F.col("__row_bad"), F.col(_ROW))).alias("bad"),
                            F.count(F.lit(1)).alias("rows")).first()
        if found["bad"] is not None:
            row = checked.where(F.col(_ROW) == found["bad"]).first()
            record = {name: row[name] for name in types}
            self.fail_with_reference(record, self.number_of(checked, found["bad"]), text=False)
        return Read(checked.select(*[F.col(f"__c{i}").alias(f"c{i}") for i in range(len(values))],
                                   F.col("__tick").alias(TICK)), stamped, found["rows"])
