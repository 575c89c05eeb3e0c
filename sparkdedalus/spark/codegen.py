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
  defaults, compiled code, and so does the rest of a tick once one of its
  materialisations (a recursion's facts) counts that many; any other tick runs
  interpreted. After a tick the session is left compiled when the pack it
  handed on has that many rows, else interpreted: the queries a user runs over
  a large run's results compile too (counting a closure's 15.6 million pairs
  took 10-16 s interpreted, 1.2-1.9 s compiled);
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
#: at which the loop leaves one partition (sizer.ROWS_PER_PARTITION); measured in
#: docs/performance.md, "Code generation by tick size".
COMPILED_ROWS = 200_000
#: Spark's defaults, the settings of compiled code
COMPILED = {"spark.sql.codegen.wholeStage": "true", "spark.sql.codegen.factoryMode": "FALLBACK"}
#: interpreted expressions, as conf/spark-defaults.conf sets the session (`auto`'s small ticks)
INTERPRETED = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}


class Codegen:
    """The session's code generation, switched per tick (see the module)."""

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self.mode = spark.conf.get(SETTING, None)
        if self.mode is not None and self.mode not in MODES:
            raise ValueError(f"{SETTING}: expected one of {', '.join(MODES)}, got '{self.mode}'")
        self._saved: dict | None = None  # the session's settings while a tick runs compiled
        self._in_tick = False

    @staticmethod
    def wanted(mode: str | None, rows: int) -> bool:
        """Whether a tick whose input has `rows` rows runs compiled code."""
        return mode == "on" or (mode == "auto" and rows >= COMPILED_ROWS)

    @property
    def compiled(self) -> bool:
        """Whether the tick being run (or the last one) has switched to compiled code."""
        return self._saved is not None

    @contextmanager
    def tick(self, rows: int, handed_on):
        """Run the block (a tick's planning and jobs) with compiled code if
        wanted for `rows` input rows, or from the moment `grow` finds it
        wanted; the session's settings come back at the end, except under
        `auto`, where `handed_on` (the rows of the pack the tick handed on,
        read at the end) chooses them (see the module)."""
        self._saved, self._in_tick = None, True
        if self.mode == "auto":  # interpreted unless it grows, whatever the last tick left
            self._set(INTERPRETED)
        self.grow(rows)
        try:
            yield self
        finally:
            self._in_tick = False
            if self.mode == "auto":
                self._set(COMPILED if self.wanted(self.mode, handed_on()) else INTERPRETED)
            else:
                self._set(self._saved or {})

    @contextmanager
    def compiling(self):
        """Compile the block's jobs whenever the mode is `auto` or `on`,
        whatever the tick's size: for a job whose output can be far larger
        than its input (the Arrow fixpoint's), where compiled code cost small
        ticks nothing measurable and saved 20-30% of the job on a large one
        (docs/performance.md)."""
        if self.mode not in ("auto", "on") or self.compiled:
            yield
            return
        saved = self._compile()
        try:
            yield
        finally:
            self._set(saved)

    def _compile(self) -> dict:
        """Compiled code on; returns the settings it replaced."""
        saved = {key: self.spark.conf.get(key, None) for key in COMPILED}
        self._set(COMPILED)
        return saved

    def _set(self, settings: dict) -> None:
        for key, value in settings.items():
            if value is None:
                self.spark.conf.unset(key)
            else:
                self.spark.conf.set(key, value)

    def grow(self, rows: int) -> None:
        """Within a tick: compiled code for the rest of it if `rows` (a
        materialisation's size, e.g. a recursion's facts) calls for it. Plans
        run after this compile; those already run are done."""
        if not self._in_tick or self.compiled or not self.wanted(self.mode, rows):
            return
        self._saved = self._compile()
