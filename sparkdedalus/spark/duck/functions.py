"""Spark's functions that DuckDB lacks or computes otherwise, as DuckDB functions.

The tick SQL calls `xxhash64` (seeded delays, `choose`, queues, `hash`) on text
only, `pmod`, and prints doubles with `udfs.registry`'s canonical text (in Spark
SQL a long expression, read here as `sd_double_text`: dialect.py). Each is the
value Spark computes: `xxhash64` is `udfs.registry.xxhash64_string`, the
double's text `udfs.registry.spark_string`.

>>> import duckdb
>>> connection = duckdb.connect()
>>> register(connection)
>>> connection.sql("SELECT pmod(-7, 3), sd_double_text(1e16), sd_double_text(2.5)").fetchall()
[(2, '1e+16', '2.5')]
"""

from __future__ import annotations

import pyarrow as pa

from udfs.registry import spark_string, xxhash64_string


def _xxhash64(texts: pa.Array) -> pa.Array:
    return pa.array([None if t is None else xxhash64_string(t) for t in texts.to_pylist()], pa.int64())


def _double_text(values: pa.Array) -> pa.Array:
    return pa.array([None if v is None else spark_string(float(v)) for v in values.to_pylist()], pa.string())


def register(connection) -> None:
    """Spark's functions on a DuckDB connection (see the module)."""
    connection.create_function("xxhash64", _xxhash64, ["VARCHAR"], "BIGINT", type="arrow",
                               null_handling="special", side_effects=False)
    connection.create_function("sd_double_text", _double_text, ["DOUBLE"], "VARCHAR", type="arrow",
                               null_handling="special", side_effects=False)
    # Spark's pmod: the remainder with the divisor's sign
    connection.execute("CREATE OR REPLACE MACRO pmod(a, b) AS ((a % b) + b) % b")
