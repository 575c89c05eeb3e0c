"""The tick driver: a run's ticks one after the other on a tick loop, each
tick's pack kept as long as it is needed.

Both of the engine's runs drive their ticks with it: `Engine.run`
(spark/engine.py), which also commits every tick to a store and can resume
one, and the fault run (spark/faults.py), which between ticks rewrites the
packs it keeps (`keep`, `rewrite`) and changes loops when its worlds split.
A tick's pack is kept while the next tick needs it, for good when a rule
reads its tick back (`r(..)@k`), and always with `keep_history`.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from sparkdedalus.plumbing.jobnames import JobNames
from sparkdedalus.program import Program
from sparkdedalus.spark.executor import LoopState
from sparkdedalus.spark.loop import TickLoop
from sparkdedalus.syntax.ast import TickTime


def ticks_read_back(program: Program) -> set:
    """The ticks k that rules read with `r(..)@k`: their packs stay in memory.

    >>> ticks_read_back(Program.parse('p(1)@2; q(X) :- p(X)@2; r(X) :- p(X);'))
    {2}
    """
    return {lit.time.tick for r in program.rules for lit in r.positive_atoms + r.negated_atoms
            if isinstance(lit.time, TickTime)}


class TickDriver:
    """Runs ticks on `loop` (which a caller may replace between ticks) and
    keeps their packs and stats (see the module)."""

    def __init__(self, loop: TickLoop | None, program: Program, names: JobNames, keep_history: bool = True):
        self.loop = loop
        self.names = names
        self.state = LoopState()
        #: the ticks whose packs rules read back: kept for good
        self.read_back = ticks_read_back(program)
        self.keep_history = keep_history

    @property
    def packs(self) -> dict:
        """{tick: its pack} of the ticks kept."""
        return self.state.packs

    @property
    def stats(self) -> list:
        """Every tick's `TickStats` (spark/executor.py)."""
        return self.state.stats

    @property
    def previous(self) -> DataFrame | None:
        """The pack the next tick starts from: that of the last tick kept."""
        return self.packs[max(self.packs)] if self.packs else None

    def run_tick(self, tick: int) -> DataFrame:
        """Tick `tick`'s pack from the previous one, kept; the pack before it
        forgotten unless kept for good."""
        with self.names.scope("tick", tick):
            pack = self.loop.run_tick(tick, self.previous, self.state)
        self.keep(tick, pack)
        if not self.keep_history and tick - 1 in self.packs and tick - 1 not in self.read_back:
            del self.packs[tick - 1]
        return pack

    def keep(self, tick: int, pack: DataFrame) -> None:
        """Keep `pack` as tick `tick`'s (a resumed run's, or a tick's rewritten)."""
        self.packs[tick] = pack

    def rewrite(self, rewritten) -> None:
        """Every kept pack replaced by `rewritten(pack)`."""
        self.state.packs = {k: rewritten(p) for k, p in self.packs.items()}
