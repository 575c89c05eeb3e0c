"""The driver placement of a tick: the tick loop's SQL run by DuckDB in the driver.

A small tick runs the same plan as a Spark tick (the same SQL text, written by
spark/executor.py and the modules it uses) on a `DuckSession`: the part of a
SparkSession the tick loop uses, over an in-process DuckDB database whose frames
are Arrow tables. No JVM, no Spark job. `dialect.duckdb_sql` reads Spark SQL
text as DuckDB's, `functions` gives DuckDB Spark's functions value for value,
and `loop.DriverTickLoop` is the tick loop on such a session (spark/placement.py
chooses where each tick runs).
"""
