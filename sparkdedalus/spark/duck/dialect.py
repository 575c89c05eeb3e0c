"""Spark SQL text, as the tick loop writes it, read as DuckDB SQL.

The tick loop writes Spark SQL (spark/statement.py); the driver placement runs
the same text in DuckDB. sqlglot translates the dialect (backticks, `2L`,
`div`, `LEFT ANTI JOIN`, hints dropped, `NULLS FIRST` made explicit, ...), and
this module what it leaves: an `inline(array(struct(...)))` of rows becomes a
`VALUES` list, `range(0, 1, 1, 1)` DuckDB's `range(0, 1)`, and the canonical text
of a double (`udfs.registry.spark_string_sql`, a long Spark expression) the
function `sd_double_text` (spark/duck/functions.py). Spark's `hash` (Murmur3,
the partitioner's buckets) has no DuckDB twin: a text that calls it raises
`NotInDriver` (the driver's loop has no partitioner, so its own texts never do).

A tick's texts differ from the last tick's in their numbers (the tick, row
counts) and the names of their views only: those are taken out before the
translation (`_parameterised`), which is then looked up in a cache, and put
back into what it gives. Steady ticks translate nothing; the cache is also kept
on disk (translations.py), so a program run again translates nothing either,
and sqlglot is imported only for a text never translated before.

>>> duckdb_sql("SELECT /*+ COALESCE(1) */ `v0` div 2L AS q FROM t l LEFT ANTI JOIN u r USING (`v0`)")
'SELECT "v0" // CAST(2 AS BIGINT) AS q FROM t AS l ANTI JOIN u AS r USING ("v0")'
>>> duckdb_sql("SELECT inline(array(struct(CAST('a' AS string) AS c0, CAST(1 AS bigint) AS c1))) FROM range(0, 1, 1, 1)")
"SELECT * FROM (VALUES (TRY_CAST('a' AS TEXT), TRY_CAST(1 AS BIGINT))) AS __rows(c0, c1)"
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

from sparkdedalus.spark.duck.translations import Translations
from udfs.registry import spark_string_sql

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # "Hints are not supported": dropped on purpose

_MARK = "\x00"
#: the Spark SQL text of a double's canonical text, around the expression it prints
_DOUBLE_BEFORE, _DOUBLE_AFTER = spark_string_sql(_MARK, "double").split(_MARK)
_SPARK_HASH = re.compile(r"(?<![A-Za-z0-9_])HASH\(")
#: a Spark string literal (backslash escapes), or a name or number outside one
_TOKENS = re.compile(r"'(?:[^'\\]|\\.)*'|\b(?:__sd\d+_v|__sd_in|__q)\d+\b|(?<![\w.])\d+L?(?![\w.])")
_PLACEHOLDER = re.compile(r"\b__sdp(\d+)__\b")


class NotInDriver(Exception):
    """A Spark SQL text the driver placement cannot run (see the module)."""


def _doubles_as_text(sql: str) -> str:
    """`sql` with each canonical double text (innermost first) a call of `sd_double_text`."""
    while True:
        start = sql.rfind(_DOUBLE_BEFORE)
        if start < 0:
            return sql
        end = sql.find(_DOUBLE_AFTER, start + len(_DOUBLE_BEFORE))
        if end < 0:
            raise NotInDriver("an unfinished double text")
        inner = sql[start + len(_DOUBLE_BEFORE):end]
        sql = f"{sql[:start]}sd_double_text(CAST({inner} AS DOUBLE)){sql[end + len(_DOUBLE_AFTER):]}"


def _rows(select):
    """A `SELECT inline(array(struct(...), ...)) FROM range(...)` (sqlglot trees) as a VALUES subquery, else None."""
    import sqlglot
    from sqlglot import exp

    if len(select.expressions) != 1 or not isinstance(select.expressions[0], exp.Inline):
        return None
    structs = select.expressions[0].this.expressions
    names = [field.this.name for field in structs[0].expressions]
    rows = ", ".join("(" + ", ".join(field.expression.sql("duckdb") for field in struct.expressions) + ")"
                     for struct in structs)
    return sqlglot.parse_one(f"SELECT * FROM (VALUES {rows}) AS __rows({', '.join(names)})", read="duckdb")


def _parameterised(sql: str) -> tuple[str, list]:
    """`sql` with its numbers and view names outside string literals replaced
    by placeholders `__sdpI__`, and the DuckDB text of each (`2L` as a BIGINT).

    >>> _parameterised("SELECT 2L, 'a 3', c1 FROM __sd1_v7 WHERE x = 10")
    ("SELECT __sdp0__, 'a 3', c1 FROM __sdp1__ WHERE x = __sdp2__", ['CAST(2 AS BIGINT)', '__sd1_v7', '10'])
    """
    values: list = []

    def replace(match) -> str:
        token = match.group(0)
        if token.startswith("'"):
            return token
        values.append(f"CAST({token[:-1]} AS BIGINT)" if token.endswith("L") else token)
        return f"__sdp{len(values) - 1}__"
    return _TOKENS.sub(replace, sql), values


def duckdb_sql(sql: str) -> str:
    """The DuckDB text of the tick loop's Spark SQL `sql` (see the module)."""
    template, values = _parameterised(_doubles_as_text(sql.replace("range(0, 1, 1, 1)", "range(0, 1)")))
    return _PLACEHOLDER.sub(lambda m: values[int(m.group(1))], _translated(template))


def _code_version() -> str:
    """A digest of what translates: this module's source and sqlglot's version."""
    source = Path(__file__).read_bytes() + version("sqlglot").encode()
    return hashlib.sha1(source).hexdigest()[:16]


_KEPT = Translations(os.environ.get("SPARKDEDALUS_CACHE_DIR") or os.path.join(Path.home(), ".cache", "sparkdedalus"),
                     _code_version())


@lru_cache(maxsize=512)
def _translated(sql: str) -> str:
    """The DuckDB text of Spark SQL `sql` with placeholders (`_parameterised`):
    kept on disk, else made (`_translation`) and kept."""
    text = _KEPT.get(sql)
    if text is None:
        text = _translation(sql)
        _KEPT.put(sql, text)
    return text


def _translation(sql: str) -> str:
    """`_translated`, by sqlglot."""
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(sql, read="spark")
    if "inline(" in sql:
        tree = tree.transform(lambda node: (_rows(node) or node) if isinstance(node, exp.Select) else node,
                              copy=False)
    text = tree.sql("duckdb", unsupported_level=sqlglot.ErrorLevel.IGNORE)
    if _SPARK_HASH.search(text) or "REFLECT(" in text:
        raise NotInDriver(f"Spark-only function in: {text[:200]}")
    return text
