"""The result of a run (`Run`): every relation at every kept tick, or with a
store at every committed tick, read from the packs the tick loop kept.

    run = Engine(spark).run(program, ticks=5)
    run.relation("log", tick=2).show()
    run.facts(3)                          # {relation: set of rows}, one job
    run.provenance                        # with provenance=True: the derivations (spark/provenance.py)
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sparkdedalus.pack.columns import MESSAGE, STATE
from sparkdedalus.program import Program
from sparkdedalus.spark.driver import TickDriver
from sparkdedalus.spark.duck.session import DuckFrame


class Run:
    """The result of a run: every relation at every kept tick, or with a store
    at every committed tick."""

    def __init__(self, program: Program, driver: TickDriver, ticks: int, store=None,
                 job_id: str = "", provenance=None):
        self.program = program
        #: the derivations, where they were computed: a DataFrame, or a driver frame (spark/duck/)
        self._provenance = provenance
        #: the run's Spark jobs carry the tag `sparkdedalus-run-<job_id>` (`spark.interruptTag` cancels them)
        self.job_id = job_id
        self.ticks = ticks
        #: the tick driver that ran it: its loop (`driver.loop`) and the packs it kept (`driver.packs`)
        self.driver = driver
        #: the run directory (a `sparkdedalus.store.Store`, lock released), or None
        self.store = store

    def explain(self) -> str:
        """The program's relations, strata and roles (as `sparkdedalus explain`),
        then how the run went: per tick seconds, facts handed on, semi-naive
        iterations and rules evaluated on new facts only."""
        from sparkdedalus.analysis.explain import explain
        lines = [explain(self.program), f"run: {self.ticks} tick(s)"
                 + (f", stored in {self.store.path}" if self.store is not None else "")]
        for s in self.stats:
            lines.append(f"  tick {s.tick}: {s.seconds:.3f} s, {s.facts} facts"
                         + (f", {s.iterations} semi-naive iteration(s)" if s.iterations else "")
                         + (f", {s.incremental} rule(s) on new facts only" if s.incremental else ""))
        return "\n".join(lines)

    @property
    def provenance(self) -> DataFrame | None:
        """Every derivation of every fact of ticks 1..ticks (spark/provenance.py)
        when the run was asked for it (`Engine.run(..., provenance=True)`), else
        None: a Spark DataFrame (made from the driver's Arrow table when every
        tick ran in the driver)."""
        if isinstance(self._provenance, DuckFrame):
            return self.driver.loop.spark.createDataFrame(self._provenance.toArrow())
        return self._provenance

    def derivation_rows(self) -> list:
        """The rows of `provenance`, collected where they were computed (one
        Spark job, or none for a run in the driver); fields read by name."""
        return self._provenance.collect()

    @property
    def stats(self) -> list:
        """Per tick: wall seconds, facts, semi-naive iterations, incremental rules
        (`sparkdedalus.spark.executor.TickStats`)."""
        return self.driver.stats

    def _pack(self, tick: int | None) -> tuple[int, DataFrame]:
        tick = self.ticks if tick is None else tick
        if tick not in self.driver.packs:
            kept = sorted(self.driver.packs)
            raise ValueError(f"tick {tick} is not available (kept: {kept[0]}..{kept[-1]})" if kept
                             else f"tick {tick} is not available")
        return tick, self.driver.packs[tick]

    def relation(self, name: str, tick: int | None = None) -> DataFrame:
        """Relation `name` at `tick` (default: the last), with its declared column names."""
        if name not in self.program.relations:
            raise ValueError(f"unknown relation '{name}'")
        if self.store is not None:  # time travel through the Delta tables
            return self.store.relation(name, self.ticks if tick is None else tick)
        _, pack = self._pack(tick)
        frame = self.driver.loop.layout.extract(self.driver.loop.holding(pack, name), name, STATE)
        return frame.toDF(*self.program.relations[name].columns)

    def messages(self, tick: int | None = None) -> DataFrame:
        """Messages sent at `tick`: relation, sender, send and arrival ticks (NULL: lost), row."""
        t, pack = self._pack(tick)
        return self.driver.loop.on_spark(pack).where((F.col("__kind") == MESSAGE) & (F.col("__sent") == t))

    def facts(self, tick: int | None = None, relations=None) -> dict:
        """{relation: set of row tuples} at `tick`, collected with one job (with a
        store and a tick no longer in memory: one job per relation)."""
        names = list(relations or self.program.outputs)
        wanted = self.ticks if tick is None else tick
        if self.store is not None and wanted not in self.driver.packs:
            return {n: {tuple(r) for r in self.store.relation(n, wanted).collect()} for n in names}
        t, pack = self._pack(tick)
        layout = self.driver.loop.layout
        wanted_names = ", ".join(f"'{n}'" for n in names) or "NULL"
        rows = self.driver.loop.full(pack).where(f"__kind = '{STATE}' AND __rel IN ({wanted_names})") \
            .select("__rel", *layout.value_columns).collect()
        out = {n: set() for n in names}
        for row in rows:
            name = row["__rel"]
            out[name].add(layout.row_of(name, row))
        return out
