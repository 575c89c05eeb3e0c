"""Rows of `.input` relations and of the `edb=` argument, checked and typed.

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

A malformed row raises a one-line `ValueError` naming the file, the row and the column.
"""

from __future__ import annotations

import csv
import json
import os

from sparkdedalus.reference.values import EvaluationError, convert

TICK = "tick"


def read_inputs(program, inputs_dir: str | None = None) -> list[tuple]:
    """(relation, tick or None, row) for every row of every `.input` of `program`."""
    rows = []
    for decl in program.inputs:
        relation = program.relations[decl.name]
        path = _resolve(decl.path, decl.pos.file, inputs_dir)
        fmt = decl.format or _format_of(path)
        if fmt == "csv":
            records = _csv_records(path, relation.columns)
        elif fmt == "json":
            records = _json_records(path)
        elif fmt in ("parquet", "delta"):
            records = _arrow_records(path, fmt)
        else:
            raise ValueError(f"{path}: unknown input format '{fmt}' (csv, json, parquet or delta)")
        for number, record in enumerate(records, start=1):
            rows.append((decl.name,) + typed_record(record, relation, f"{path}: row {number}", text=fmt == "csv"))
    return rows


def edb_rows(program, edb: dict | None) -> list[tuple]:
    """(relation, None, row) for every row of the `edb=` argument of `run`."""
    rows = []
    for name, tuples in (edb or {}).items():
        relation = program.relations.get(name)
        if relation is None:
            raise ValueError(f"edb: unknown relation '{name}'")
        for number, row in enumerate(tuples, start=1):
            where = f"edb '{name}': row {number}"
            if len(row) != relation.arity:
                raise ValueError(f"{where}: {len(row)} values, '{name}' has {relation.arity} columns")
            rows.append((name, None, tuple(_typed(v, t, where, c) for v, t, c in
                                          zip(row, relation.types, relation.columns))))
    return rows


def typed_record(record: dict, relation, where: str, text: bool) -> tuple:
    """(tick or None, row) from a record {column: value}."""
    unknown = [key for key in record if key not in relation.columns and key != TICK]
    if unknown:
        raise ValueError(f"{where}: unknown column '{unknown[0]}' "
                         f"(columns of '{relation.name}': {', '.join(relation.columns)}, optional {TICK})")
    values = []
    for column, typ in zip(relation.columns, relation.types):
        if column not in record:
            raise ValueError(f"{where}: column '{column}' is missing")
        values.append(_parse_text(record[column], typ, where, column) if text
                      else _typed(record[column], typ, where, column))
    tick = record.get(TICK)
    if tick is not None and not (text and tick == ""):
        tick = _parse_text(tick, "int", where, TICK) if text else _typed(tick, "int", where, TICK)
        if tick < 1:
            raise ValueError(f"{where}: column '{TICK}': ticks start at 1, got {tick}")
    else:
        tick = None
    return tick, tuple(values)


def _typed(value, typ: str, where: str, column: str):
    try:
        return convert(value, typ)
    except EvaluationError:
        raise ValueError(f"{where}: column '{column}': {value!r} is not a value of type {typ}") from None


def _parse_text(text: str, typ: str, where: str, column: str):
    """A CSV cell as a value of type `typ`."""
    try:
        if typ in ("int", "long"):
            return convert(int(text.strip()), typ)
        if typ == "double":
            return float(text.strip())
        if typ == "bool":
            return {"true": True, "false": False}[text.strip().lower()]
        return text
    except (ValueError, KeyError, EvaluationError):
        raise ValueError(f"{where}: column '{column}': cannot read {text!r} as {typ}") from None


def _resolve(path: str, program_file: str, inputs_dir: str | None) -> str:
    if os.path.isabs(path):
        return path
    base = inputs_dir if inputs_dir is not None else os.path.dirname(program_file) if program_file != "<string>" else ""
    return os.path.join(base, path)


def _format_of(path: str) -> str:
    if os.path.isdir(path):
        return "delta"
    return os.path.splitext(path)[1].lstrip(".").lower() or "csv"


def _open(path: str):
    try:
        return open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise ValueError(f"cannot read input '{path}': {exc.strerror or exc}") from None


def _csv_records(path: str, columns: tuple) -> list[dict]:
    with _open(path) as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: empty file, expected a header line ({', '.join(columns)})")
        header = [name.strip() for name in header]
        records = []
        for cells in reader:
            if not cells:
                continue
            if len(cells) != len(header):
                raise ValueError(f"{path}: row {len(records) + 1}: {len(cells)} values, "
                                 f"the header has {len(header)}")
            records.append(dict(zip(header, cells)))
    return records


def _json_records(path: str) -> list[dict]:
    with _open(path) as handle:
        text = handle.read()
    try:
        if text.lstrip().startswith("["):
            records = json.loads(text)
        else:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON (line {exc.lineno}): {exc.msg}") from None
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise ValueError(f"{path}: row {number}: expected a JSON object, got {json.dumps(record)}")
    return records


def _arrow_records(path: str, fmt: str) -> list[dict]:
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq
            table = pq.read_table(path)
        else:
            from deltalake import DeltaTable
            table = DeltaTable(path).to_pyarrow_table()
    except Exception as exc:  # any reader failure is bad input data
        raise ValueError(f"cannot read {fmt} input '{path}': {str(exc).splitlines()[0] if str(exc) else exc!r}") \
            from None
    return table.to_pylist()
