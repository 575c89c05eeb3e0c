"""`.input` relations in the Spark tick loop.

Each `.input` is read once with `sparkdedalus.store.inputs.read_input` (checked,
materialised). Its rows without a tick hold at every tick: they join the loop's
EDB. Its rows stamped with a tick k join the start facts of tick k, like a
program fact `r(...)@k`: the tick loop adds them to that tick's facts.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sparkdedalus.reference.inputs import TICK


def read_inputs(spark, program, inputs_dir: str | None = None) -> tuple[dict, dict]:
    """({relation: frame of rows holding at every tick}, {relation: (frame of
    stamped rows with a `tick` column, set of ticks)}) for the `.input`s of `program`."""
    from sparkdedalus.store.inputs import read_input
    static: dict = {}
    stamped: dict = {}
    for decl in program.inputs:
        frame = read_input(spark, program, decl, base_dir=inputs_dir)
        values = [c for c in frame.columns if c != TICK]
        static[decl.name] = _union(static.get(decl.name), frame.where(F.col(TICK).isNull()).select(*values))
        ticks = {row[0] for row in frame.where(F.col(TICK).isNotNull()).select(TICK).distinct().collect()}
        if ticks:
            previous, known = stamped.get(decl.name, (None, set()))
            stamped[decl.name] = (_union(previous, frame.where(F.col(TICK).isNotNull())), known | ticks)
    return static, stamped


def _union(a: DataFrame | None, b: DataFrame) -> DataFrame:
    return b if a is None else a.unionAll(b)

