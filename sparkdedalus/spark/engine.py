"""The Spark engine's API.

    from sparkdedalus import Program
    from sparkdedalus.spark.engine import Engine
    run = Engine(spark).run(Program.from_files("examples/broadcast.ded"), ticks=5)
    run.relation("log").show()            # the last tick, as a DataFrame
    run.relation("log", tick=2).show()

The engine is given its SparkSession; it never creates, stops or reconfigures
one. It uses no RDD, `sparkContext` or JVM handle, so Spark Connect works too.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkdedalus.network import Network
from sparkdedalus.program import Program
from sparkdedalus.spark.pack import MESSAGE, STATE
from sparkdedalus.spark.runtime import LoopState, TickLoop
from sparkdedalus.syntax.ast import TickTime


class Run:
    """The result of a run: every relation at every kept tick."""

    def __init__(self, program: Program, loop: TickLoop, state: LoopState, ticks: int):
        self.program = program
        self.ticks = ticks
        self._loop = loop
        self._state = state

    @property
    def stats(self) -> list:
        """Per-tick wall seconds and semi-naive iterations."""
        return self._state.stats

    def _pack(self, tick: int | None) -> tuple[int, DataFrame]:
        tick = self.ticks if tick is None else tick
        if tick not in self._state.packs:
            kept = sorted(self._state.packs)
            raise ValueError(f"tick {tick} is not available (kept: {kept[0]}..{kept[-1]})" if kept
                             else f"tick {tick} is not available")
        return tick, self._state.packs[tick]

    def relation(self, name: str, tick: int | None = None) -> DataFrame:
        """Relation `name` at `tick` (default: the last), with its declared column names."""
        if name not in self.program.relations:
            raise ValueError(f"unknown relation '{name}'")
        _, pack = self._pack(tick)
        frame = self._loop.layout.extract(pack, name, STATE)
        return frame.toDF(*self.program.relations[name].columns)

    def messages(self, tick: int | None = None) -> DataFrame:
        """Messages sent at `tick`: relation, sender, send and arrival ticks (NULL: lost), row."""
        t, pack = self._pack(tick)
        return pack.where((F.col("__kind") == MESSAGE) & (F.col("__sent") == t))

    def facts(self, tick: int | None = None, relations=None) -> dict:
        """{relation: set of row tuples} at `tick`, collected with one job."""
        t, pack = self._pack(tick)
        names = list(relations or self.program.outputs)
        slots = self._loop.layout.slot
        rows = pack.where((F.col("__kind") == STATE) & F.col("__rel").isin(names)) \
            .select("__rel", *[slots[n] for n in names]).collect()
        out = {n: set() for n in names}
        for row in rows:
            name = row["__rel"]
            out[name].add(tuple(row[slots[name]]))
        return out


class Engine:
    def __init__(self, spark: SparkSession):
        self.spark = spark

    def run(self, program: Program, ticks: int, network: Network | None = None, edb: dict | None = None,
            keep_history: bool = True, partitions: int | None = None, progress=None) -> Run:
        """Run ticks 1..ticks. `edb` maps relation names to DataFrames or lists of
        rows holding at every tick. Without `keep_history` only the last tick (and
        ticks read by `r(..)@k` atoms) stay readable. `partitions` sizes each
        tick's shuffle (default: the session's shuffle partitions, at most 8).
        `progress(tick, stats)` is called after each tick."""
        if ticks < 1:
            raise ValueError("ticks must be at least 1")
        loop = TickLoop(self.spark, program, network, edb, partitions)
        state = LoopState()
        keep = {lit.time.tick for r in program.rules for lit in r.positive_atoms + r.negated_atoms
                if isinstance(lit.time, TickTime)}
        previous = None
        for tick in range(1, ticks + 1):
            pack = loop.run_tick(tick, previous, state)
            state.packs[tick] = pack
            if not keep_history and tick - 1 in state.packs and tick - 1 not in keep:
                del state.packs[tick - 1]
            previous = pack
            if progress is not None:
                progress(tick, state.stats[-1])
        return Run(program, loop, state, ticks)
