"""Compiled or interpreted expressions, chosen by the size of a tick.

The sessions sparkdedalus creates interpret expressions (conf/spark-defaults.conf:
whole-stage code generation off, `factoryMode=NO_CODEGEN`). A small tick plans a
new query every tick, and compiling its code costs more than it saves (about 30%
of a 100-transaction two-phase-commit tick). A large tick is the opposite: at
100,000 transactions an interpreted hash aggregate ran for minutes where compiled
code took seconds (docs/performance.md).

The session setting `spark.sparkdedalus.codegen` chooses:
- `auto` (conf/spark-defaults.conf sets it): a tick whose input is at least
  COMPILED_ROWS rows (the last pack the loop materialised) runs with Spark's own
  defaults, compiled code; the session's settings come back after the tick;
- `on`: every tick runs compiled code; `off` or unset: the session's settings
  are left as they are (a session sparkdedalus did not create is never changed).

>>> Codegen.wanted("auto", 10), Codegen.wanted("auto", 10**6), Codegen.wanted(None, 10**6)
(False, True, False)
"""

from __future__ import annotations

from contextlib import contextmanager

from pyspark.sql import SparkSession

SETTING = "spark.sparkdedalus.codegen"
MODES = ("auto", "on", "off")
#: From this many rows in a tick's input the tick runs compiled code (`auto`): the size
#: at which the loop leaves one partition (runtime.ROWS_PER_PARTITION); measured in
#: docs/performance.md, "Code generation by tick size".
COMPILED_ROWS = 200_000
#: Spark's defaults, the settings of compiled code
COMPILED = {"spark.sql.codegen.wholeStage": "true", "spark.sql.codegen.factoryMode": "FALLBACK"}


class Codegen:
    """The session's code generation, switched per tick (see the module)."""

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self.mode = spark.conf.get(SETTING, None)
        if self.mode is not None and self.mode not in MODES:
            raise ValueError(f"{SETTING}: expected one of {', '.join(MODES)}, got '{self.mode}'")

    @staticmethod
    def wanted(mode: str | None, rows: int) -> bool:
        """Whether a tick whose input has `rows` rows runs compiled code."""
        return mode == "on" or (mode == "auto" and rows >= COMPILED_ROWS)

    @contextmanager
    def tick(self, rows: int):
        """Run the block (a tick's planning and jobs) with compiled code if
        wanted for `rows` input rows; yields whether it does."""
        if not self.wanted(self.mode, rows):
            yield False
            return
        saved = {key: self.spark.conf.get(key, None) for key in COMPILED}
        for key, value in COMPILED.items():
            self.spark.conf.set(key, value)
        try:
            yield True
        finally:
            for key, value in saved.items():
                if value is None:
                    self.spark.conf.unset(key)
                else:
                    self.spark.conf.set(key, value)
