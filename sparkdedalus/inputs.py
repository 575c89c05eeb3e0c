"""`.input` files and `edb=` rows: where they are, what a valid row is, and
the messages for bad ones, for both engines.

The reference evaluator reads inputs with `read_inputs` below. The Spark engine
(`sparkdedalus.spark.inputs`) reads them with Spark, using this module's path
and format rules, CSV cell grammar (`INT_TEXT`, `FLOAT_TEXT`) and, for the first
bad row it finds, `typed_record`'s message, so both engines accept the same rows
and say the same thing about the others.

`.input rel from "path" [format csv|json|parquet|delta]`: the path is relative to
`inputs_dir` when given, else to the file holding the declaration; without a
format, the extension decides (a directory is a Delta table). The columns are the
relation's column names (from its `.decl`); an optional extra column `tick`
stamps a row to that tick only (a row without one holds at every tick).

- CSV: a header line with the column names (any order), then one row a line.
  Cells are read as the column's type: int/long (decimal integer), double,
  bool (`true`/`false`, any case), string (as is; an empty cell is ""). An empty
  `tick` cell means every tick.
- JSON: a JSON array of objects, or JSON Lines (one object per line, what
  Spark's JSON reader expects). A value must have the column's JSON type
  (integer, number, boolean, string); a missing or null `tick` means every tick.
- Parquet and Delta: read with pyarrow / deltalake, values checked as for JSON.

A malformed row raises a one-line `InputError` (a `ValueError`) naming the file,
the row and the column.

>>> INT_TEXT.match("1_000") is not None, FLOAT_TEXT.match("1e") is None
(True, True)
"""

from __future__ import annotations

import csv
import json
import os
import re

from sparkdedalus.errors import InputError
from sparkdedalus.values import TypeMismatch, convert

TICK = "tick"
FORMATS = ("csv", "json", "parquet", "delta")

# What a CSV cell of an int or double column may hold, after stripping blanks:
# the grammars of Python's int() and float() (underscores between digits).
_DIGITS = r"[0-9](_?[0-9])*"
INT_TEXT = re.compile(rf"^[+-]?{_DIGITS}$")
FLOAT_TEXT = re.compile(rf"^[+-]?(({_DIGITS})(\.({_DIGITS})?)?([eE][+-]?{_DIGITS})?|\.{_DIGITS}([eE][+-]?{_DIGITS})?"
                        r"|(?i:inf|infinity|nan))$")


def read_inputs(program, inputs_dir: str | None = None) -> list[tuple]:
    """(relation, tick or None, row) for every row of every `.input` of `program`."""
    rows = []
    for decl in program.inputs:
        relation = program.relations[decl.name]
        path, fmt = locate(decl, inputs_dir)
        if fmt == "csv":
            records = csv_records(path, relation.columns)
        elif fmt == "json":
            records = json_records(path)
        else:
            records = _arrow_records(path, fmt)
        for number, record in enumerate(records, start=1):
            rows.append((decl.name,) + typed_record(record, relation, f"{path}: row {number}", text=fmt == "csv"))
    return rows


def edb_rows(program, edb: dict | None) -> list[tuple]:
    """(relation, None, row) for every row of the `edb=` argument of `run`."""
    rows = []
    for name, tuples in (edb or {}).items():
        relation = program.relations.get(name)
        if relation is None:
            raise InputError(f"edb: unknown relation '{name}'")
        for number, row in enumerate(tuples, start=1):
            where = f"edb '{name}': row {number}"
            if len(row) != relation.arity:
                raise InputError(f"{where}: {len(row)} values, '{name}' has {relation.arity} columns")
            rows.append((name, None, tuple(_typed(v, t, where, c) for v, t, c in
                                          zip(row, relation.types, relation.columns))))
    return rows


def typed_record(record: dict, relation, where: str, text: bool) -> tuple:
    """(tick or None, row) from a record {column: value}."""
    unknown = [key for key in record if key not in relation.columns and key != TICK]
    if unknown:
        raise InputError(f"{where}: unknown column '{unknown[0]}' "
                         f"(columns of '{relation.name}': {', '.join(relation.columns)}, optional {TICK})")
    values = []
    for column, typ in zip(relation.columns, relation.types):
        if column not in record:
            raise InputError(f"{where}: column '{column}' is missing")
        values.append(_parse_text(record[column], typ, where, column) if text
                      else _typed(record[column], typ, where, column))
    tick = record.get(TICK)
    if tick is not None and not (text and tick == ""):
        tick = _parse_text(tick, "int", where, TICK) if text else _typed(tick, "int", where, TICK)
        if tick < 1:
            raise InputError(f"{where}: column '{TICK}': ticks start at 1, got {tick}")
    else:
        tick = None
    return tick, tuple(values)


def _typed(value, typ: str, where: str, column: str):
    try:
        return convert(value, typ)
    except TypeMismatch:
        raise InputError(f"{where}: column '{column}': {value!r} is not a value of type {typ}") from None


def _parse_text(text: str, typ: str, where: str, column: str):
    """A CSV cell as a value of type `typ`."""
    stripped = text.strip()
    try:
        if typ in ("int", "long") and INT_TEXT.match(stripped):
            return convert(int(stripped.replace("_", "")), typ)
        if typ == "double" and FLOAT_TEXT.match(stripped):
            return float(stripped.replace("_", ""))
        if typ == "bool" and stripped.lower() in ("true", "false"):
            return stripped.lower() == "true"
        if typ == "string":
            return text
    except TypeMismatch:
        pass
    raise InputError(f"{where}: column '{column}': cannot read {text!r} as {typ}")


def locate(decl, inputs_dir: str | None) -> tuple[str, str]:
    """(path, format) of `.input` declaration `decl`: the path relative to
    `inputs_dir` when given, else to the declaring file; the format declared, or
    from the extension (a directory is a Delta table)."""
    path = decl.path
    if not os.path.isabs(path):
        program_file = decl.pos.file
        base = inputs_dir if inputs_dir is not None else \
            os.path.dirname(program_file) if program_file != "<string>" else ""
        path = os.path.join(base, path)
    if decl.format:
        fmt = decl.format.lower()
    elif os.path.isdir(path):
        fmt = "delta"
    else:
        fmt = os.path.splitext(path)[1].lstrip(".").lower() or "csv"
    if fmt not in FORMATS:
        raise InputError(f"{path}: unknown input format '{fmt}' (csv, json, parquet or delta)")
    return path, fmt


def _open(path: str):
    try:
        return open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise InputError(f"cannot read input '{path}': {exc.strerror or exc}") from None


def csv_header(path: str, columns: tuple) -> list[str]:
    """The column names of a CSV file's header line (blanks stripped)."""
    with _open(path) as handle:
        header = next(csv.reader(handle), None)
    if header is None:
        raise InputError(f"{path}: empty file, expected a header line ({', '.join(columns)})")
    return [name.strip() for name in header]


def csv_width_error(path: str, number: int, values: int, header: list) -> InputError:
    return InputError(f"{path}: row {number}: {values} values, the header has {len(header)}")


def csv_records(path: str, columns: tuple) -> list[dict]:
    """The records {header name: cell text} of a CSV file."""
    header = csv_header(path, columns)
    with _open(path) as handle:
        reader = csv.reader(handle)
        next(reader)
        records = []
        for cells in reader:
            if not cells:
                continue
            if len(cells) != len(header):
                raise csv_width_error(path, len(records) + 1, len(cells), header)
            records.append(dict(zip(header, cells)))
    return records


def json_error(path: str, text: str) -> InputError:
    """The error for `text`, which is not JSON, read from `path`."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return InputError(f"{path}: not JSON (line {exc.lineno}): {exc.msg}")
    return InputError(f"{path}: not JSON: {text[:60]!r}")


def json_object_error(path: str, number: int, record) -> InputError:
    return InputError(f"{path}: row {number}: expected a JSON object, got {json.dumps(record)}")


def json_records(path: str) -> list[dict]:
    """The records of a JSON array of objects or of a JSON Lines file."""
    with _open(path) as handle:
        text = handle.read()
    try:
        if text.lstrip().startswith("["):
            records = json.loads(text)
        else:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON (line {exc.lineno}): {exc.msg}") from None
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise json_object_error(path, number, record)
    return records


def reader_error(path: str, fmt: str, exc: Exception) -> InputError:
    """The error for a Parquet or Delta reader's failure on `path`."""
    first = str(exc).splitlines()[0] if str(exc) else repr(exc)
    return InputError(f"cannot read {fmt} input '{path}': {first}")


def footer_rows(path: str, fmt: str) -> int | None:
    """The rows of a Parquet input as its footer gives them, without reading
    it (a file, or a directory of `.parquet` files); None for another format
    or a footer pyarrow cannot read (the reader then says why).

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> path = os.path.join(tempfile.mkdtemp(), "e.parquet")
    >>> pq.write_table(pa.table({"x": [1, 2, 3]}), path)
    >>> footer_rows(path, "parquet"), footer_rows(path, "csv")
    (3, None)
    """
    if fmt != "parquet":
        return None
    import pyarrow.parquet as pq

    files = [path] if not os.path.isdir(path) else \
        [os.path.join(d, f) for d, _, names in os.walk(path) for f in names if f.endswith(".parquet")]
    try:
        return sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    except Exception:  # noqa: BLE001 - the reader reports a bad file
        return None


def _arrow_records(path: str, fmt: str) -> list[dict]:
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq
            table = pq.read_table(path)
        else:
            from deltalake import DeltaTable
            table = DeltaTable(path).to_pyarrow_table()
    except Exception as exc:  # any reader failure is bad input data
        raise reader_error(path, fmt, exc) from None
    return table.to_pylist()
