"""The part of a SparkSession the tick loop uses, over DuckDB in the driver.

A `DuckSession` runs Spark SQL text (read as DuckDB's: dialect.py) on an
in-process DuckDB connection; its frames (`DuckFrame`) are Arrow tables,
computed when made (a tick's data is small here: that is why it runs here), so
a checkpoint is the frame itself and a temporary view is the table registered
under the view's name. Its settings (`conf`) are those of the Spark session the
run was given, or of the sessions sparkdedalus creates (conf/spark-defaults.conf).

>>> session = DuckSession({})
>>> frame = session.sql("SELECT inline(array(struct(CAST(1 AS bigint) AS c0), struct(CAST(2 AS bigint) AS c0))) FROM range(0, 1, 1, 1)")
>>> frame.createOrReplaceTempView("v")
>>> session.sql("SELECT c0 * 2L AS d FROM v WHERE c0 > 1").collect(), frame.count()
([{'d': 4}], 2)
"""

from __future__ import annotations

import itertools

import duckdb
import pyarrow as pa

from sparkdedalus.spark.duck.dialect import duckdb_sql
from sparkdedalus.spark.duck.functions import register


class Conf:
    """A session's settings, as `spark.conf` answers them."""

    def __init__(self, settings: dict):
        self._settings = {k: v for k, v in settings.items() if v is not None}

    def get(self, key: str, default=None):
        return self._settings.get(key, default)

    def set(self, key: str, value) -> None:
        self._settings[key] = str(value)

    def unset(self, key: str) -> None:
        self._settings.pop(key, None)


class Catalog:
    """`spark.catalog`'s temporary views."""

    def __init__(self, session: "DuckSession"):
        self.session = session

    def dropTempView(self, name: str) -> None:  # noqa: N802 (Spark's name)
        self.session.connection.unregister(name)


class DuckSession:
    """See the module."""

    def __init__(self, settings: dict):
        self.conf = Conf(settings)
        self.connection = duckdb.connect()
        self.connection.execute("SET threads = 1")  # a small tick: one thread plans and runs it fastest
        register(self.connection)
        self.catalog = Catalog(self)
        self._names = itertools.count(1)

    def addTag(self, tag: str) -> None:  # noqa: N802 (Spark's name)
        """Spark tags the jobs of a scope (plumbing/jobnames.py): here there are none."""

    def removeTag(self, tag: str) -> None:  # noqa: N802 (Spark's name)
        """See `addTag`."""

    def sql(self, text: str, **frames: "DuckFrame") -> "DuckFrame":
        """Spark SQL `text` run now (dialect.py); as Spark's, `{name}` in it reads
        the frame given as `name=`."""
        if frames:
            return self.query(list(frames.values()), text.format(**{k: f"{{{i}}}" for i, k in enumerate(frames)}))
        return DuckFrame(self, self.connection.sql(duckdb_sql(text)).to_arrow_table())

    def range(self, count: int) -> "DuckFrame":
        """The longs 0 .. count - 1 in a column `id`, as Spark's."""
        return DuckFrame(self, pa.table({"id": pa.array(range(count), pa.int64())}))

    def createDataFrame(self, table: pa.Table, schema=None) -> "DuckFrame":  # noqa: N802 (Spark's name)
        """An Arrow table as a frame (its own types: the loop builds it typed)."""
        return DuckFrame(self, table)

    def query(self, frames: list, text: str) -> "DuckFrame":
        """Spark SQL `text` over `frames`, each read as `{0}`, `{1}`, ... in it."""
        names = [f"__sd_in{next(self._names)}" for _ in frames]
        for name, frame in zip(names, frames):
            self.connection.register(name, frame.table)
        try:
            return self.sql(text.format(*names))
        finally:
            for name in names:
                self.connection.unregister(name)


class DuckFrame:
    """A computed relation: an Arrow table, with the DataFrame methods the tick loop calls."""

    def __init__(self, session: DuckSession, table: pa.Table):
        self.session = session
        self.table = table

    @property
    def columns(self) -> list[str]:
        return self.table.column_names

    def toArrow(self) -> pa.Table:  # noqa: N802 (Spark's name)
        return self.table

    def count(self) -> int:
        return self.table.num_rows

    def collect(self) -> list[dict]:
        """The rows, as {column: value}."""
        return self.table.to_pylist()

    def createOrReplaceTempView(self, name: str) -> None:  # noqa: N802 (Spark's name)
        self.session.connection.register(name, self.table)

    def localCheckpoint(self, eager: bool = False) -> "DuckFrame":  # noqa: N802 (Spark's name)
        return self  # computed already

    def where(self, condition: str) -> "DuckFrame":
        return self.session.query([self], f"SELECT * FROM {{0}} WHERE {condition}")

    def selectExpr(self, *exprs: str) -> "DuckFrame":  # noqa: N802 (Spark's name)
        return self.session.query([self], f"SELECT {', '.join(exprs)} FROM {{0}}")

    def select(self, *columns: str) -> "DuckFrame":
        return DuckFrame(self.session, self.table.select(list(columns)))

    def drop(self, *columns: str) -> "DuckFrame":
        return DuckFrame(self.session, self.table.drop_columns([c for c in columns if c in self.columns]))

    def distinct(self) -> "DuckFrame":
        return self.session.query([self], "SELECT DISTINCT * FROM {0}")

    def unionAll(self, other: "DuckFrame") -> "DuckFrame":  # noqa: N802 (Spark's name)
        return self.session.query([self, other], "SELECT * FROM {0} UNION ALL SELECT * FROM {1}")

    def unionByName(self, other: "DuckFrame", allowMissingColumns: bool = False) -> "DuckFrame":  # noqa: N802, N803
        """The rows of both, columns matched by name (a column one lacks: NULL there)."""
        if not allowMissingColumns and set(self.columns) != set(other.columns):
            raise ValueError(f"different columns: {self.columns} and {other.columns}")
        return self.session.query([self, other], "SELECT * FROM {0} UNION ALL BY NAME SELECT * FROM {1}")

    def crossJoin(self, other: "DuckFrame") -> "DuckFrame":  # noqa: N802 (Spark's name)
        return self.session.query([self, other], "SELECT * FROM {0} CROSS JOIN {1}")
