"""The Spark engine's API.

    from sparkdedalus import Program
    from sparkdedalus.spark.engine import Engine
    run = Engine(spark).run(Program.from_files("examples/broadcast.ded"), ticks=5)
    run.relation("log").show()            # the last tick, as a DataFrame
    run.relation("log", tick=2).show()

    # every failure scenario of a space in one run (sparkdedalus/spark/faults.py)
    checked = Engine(spark).faults(program, nodes=("a", "b", "c"), eot=4, eff=2, crashes=0)
    checked.scenarios, checked.counterexamples[:1]

    # durable: every tick committed to a run directory of Delta tables
    run = Engine(spark).run(program, ticks=500, store="runs/broadcast")
    run = Engine(spark).run(program, ticks=500, store="runs/broadcast", resume=True)  # after a crash
    run = Engine(spark).run(program, ticks=500, store="runs/b10", commit_every=10)  # a commit every 10 ticks

    # garbage collection (docs/gc.md): persisted facts that can no longer matter are dropped
    run = Engine(spark).run(program, ticks=500, gc=True)
    [s.persisted for s in run.stats]      # persisted rows carried after every tick

The engine is given its SparkSession; it never creates, stops or reconfigures
one. It uses no RDD or JVM handle, and `sparkContext` only to describe its jobs
where the session has one (plumbing/jobnames.py), so Spark Connect works too.
"""

from __future__ import annotations

import uuid

from pyspark.sql import SparkSession

from sparkdedalus.analysis.gc import applied
from sparkdedalus.errors import InputError, UsageError
from sparkdedalus.network import Network
from sparkdedalus.program import Program
from sparkdedalus.plumbing.jobnames import JobNames
from sparkdedalus.spark.driver import TickDriver, ticks_read_back
from sparkdedalus.faults.space import Space, resolve
from sparkdedalus.faults.verdict import Checked
from sparkdedalus.spark.faults import FaultRun, run_faults
from sparkdedalus.spark.ldfi import search as ldfi
from sparkdedalus.spark.inputs import read_inputs
from sparkdedalus.spark.duck.session import DuckFrame
from sparkdedalus.spark.placement import PlacedLoop, inputs_in_driver, placed_loop
from sparkdedalus.spark.provenance import provenance as derivations
from sparkdedalus.spark.run import Run


class Engine:
    def __init__(self, spark: SparkSession):
        self.spark = spark

    def run(self, program: Program, ticks: int, network: Network | None = None, edb: dict | None = None,
            keep_history: bool = True, partitions: int | None = None, progress=None, store: str | None = None,
            resume: bool = False, store_writer: str = "auto", inputs_dir: str | None = None,
            commit_every: int = 1, gc: bool | str | list = False, policy: bool = True,
            count_exchanges: bool = False, provenance: bool = False) -> Run:
        """Run ticks 1..ticks. `edb` maps relation names to DataFrames or lists of
        rows holding at every tick; `.input` files are read relative to
        `inputs_dir` (default: the declaring file's directory). Without
        `keep_history` only the last tick (and ticks read by `r(..)@k` atoms) stay
        in memory. `partitions` fixes the number of partitions (default: sized to
        the data, one below 200,000 rows, at most the session's shuffle partitions
        and at most 64; a fixed number is not capped). `progress(tick, stats)` is called after
        each tick.

        With `store` (a run directory, see docs/storage.md) ticks are committed to
        Delta tables: every tick as soon as it is computed, or with `commit_every=K`
        at ticks K, 2K, ... and the last (one Delta commit per changed table for
        the K ticks; a crash loses the ticks since the last commit). Only the packs
        the loop still needs stay in memory, and `Run.relation` reads the tables
        (time travel). `resume=True` continues the run stored there from its last
        committed tick. `store_writer`: "auto", "spark" or "delta-rs".

        `gc`: True applies the GC rules of `analysis.gc.gc_rules(program)`, a
        mode of `run --gc` ("auto", "on", "off") those of `analysis.gc.rules_for`,
        a list those `GcRule`s: a persisted fact a rule matches on the
        final state of a tick is not carried to the next (the tick keeps it;
        so does the store's time travel).

        Every Spark job is named by what it is (`plumbing/jobnames.py`): tags
        `sparkdedalus-run-<Run.job_id>`, `-tick-N`, `-stratum-S`, `-iteration-I`,
        `-commit-N`, and on a classic session a description listing them.

        A tick in more than one partition has its facts hash-partitioned by the
        analyses' distribution policies (by location where a component has
        none), so that a component's joins shuffle nothing; `policy=False`
        leaves the shuffles to Spark (docs/engine.md). `count_exchanges=True`
        fills `TickStats.exchanges` (it plans every materialised frame twice).

        `provenance=True` gives `Run.provenance`: every derivation of every fact
        of ticks 1..ticks as a DataFrame (spark/provenance.py), computed when
        read from the packs of every tick, which the run then keeps. Without it
        (the default) the run is unchanged. Not with `store`."""
        if ticks < 1:
            raise ValueError("ticks must be at least 1")
        if provenance and store is not None:
            raise ValueError("provenance is recorded from the packs in memory: not with store")
        if commit_every < 1:
            raise ValueError("commit_every must be at least 1")
        if store is not None and network is not None and network.capacity is not None:
            raise UsageError("a run with capacity= cannot be stored yet: leave out --store")
        names = JobNames(self.spark)
        job_id = uuid.uuid4().hex[:8]
        with names.scope("run", job_id):
            with names.scope("setup", "inputs"):
                def spark_inputs():
                    static, stamped, rows, files = read_inputs(self.spark, program, inputs_dir, last_tick=ticks)
                    for name, frame in (edb or {}).items():
                        static[name] = static[name].unionAll(_edb_frame(frame, name, program)) \
                            if name in static else frame
                        rows.pop(name, None)  # not counted
                        files.pop(name, None)  # not held by the files alone
                    return static, stamped, rows, files
                collect = applied(program, gc)
                spark_only = store is not None or partitions is not None or count_exchanges
                loop = placed_loop(self.spark, program, network, spark_inputs,
                                   None if spark_only else inputs_in_driver(self.spark, program, inputs_dir, edb),
                                   partitions, collect, policy, names, count_exchanges, ticks_read_back(program),
                                   spark_only, edb={n for n, given in (edb or {}).items() if not isinstance(given, list)})
            writer = None
            if store is not None:
                from sparkdedalus.store import Store
                writer = Store.open(self.spark, store, program, network, resume=resume, writer=store_writer,
                                    gc=[rule.text() for rule in collect])
                writer.names = names
                keep_history = False
            driver = TickDriver(loop, program, names, keep_history or provenance)
            try:
                self._ticks(driver, ticks, writer, commit_every, progress, names)
            finally:
                if writer is not None:
                    writer.close()
        recorded = _derivations(self.spark, program, loop, driver.state, ticks) if provenance else None
        return Run(program, driver, ticks, writer, job_id, recorded)

    @staticmethod
    def _ticks(driver: TickDriver, ticks: int, writer, commit_every: int, progress, names: JobNames) -> None:
        """Ticks 1..ticks on `driver` (with a store: from its last committed
        tick on), each committed to the store when there is one."""
        layout = driver.loop.layout
        stored = None  # the store's pack of the previous tick (every relation)
        first = 1
        if writer is not None and writer.last_tick:
            with names.scope("setup", "resume"):
                for k in driver.read_back:
                    if k <= writer.last_tick:
                        driver.keep(k, layout.adopt(writer.pack_at(k)))
                stored = layout.adopt(writer.resume_pack())
            driver.keep(writer.last_tick, stored)
            first = writer.last_tick + 1
        for tick in range(first, ticks + 1):
            pack = driver.run_tick(tick)
            if writer is not None:
                full = driver.loop.full(pack)
                if tick % commit_every == 0 or tick == ticks:
                    writer.commit(tick, full, stored)
                else:
                    writer.stage(tick, full, stored)
                stored = full
            if progress is not None:
                progress(tick, driver.stats[-1])

    def faults(self, program: Program, nodes, eot: int, eff: int, crashes: int = 0,
               sample: int | None = None, seed: int = 0, search: str = "all") -> FaultRun | Checked:
        """Check Molly's invariant (every `pre` fact at EOT has an equal `post`
        fact) under every failure scenario of `Space(nodes, eot, eff, crashes)`,
        or `sample` of them drawn with `seed`, all in one run: see
        `sparkdedalus.spark.faults`. Returns a `FaultRun` (`.scenarios`,
        `.counterexamples` smallest first, `.frame` of the missing facts per
        scenario, `.classes`: the distinct executions after each tick). ValueError for a program without `pre`/`post`.
        `search="ldfi"` (or "auto" on a space larger than AUTO_ENUMERATE) runs
        lineage-driven fault injection instead (`sparkdedalus.spark.ldfi`) and
        returns a `faults.verdict.Checked` (`.executions`, at most one
        counterexample)."""
        space = Space(tuple(nodes), eot, eff, crashes)
        if resolve(search, space, sample) == "ldfi":
            return ldfi(self, program, space)
        return run_faults(self.spark, program, nodes, eot, eff, crashes, sample, seed)


def _derivations(spark: SparkSession, program: Program, loop: PlacedLoop, state, ticks: int):
    """The run's derivations (spark/provenance.py) where its packs are: in the
    driver when every tick ran there, else on Spark (the driver's packs moved there)."""
    if all(isinstance(pack, DuckFrame) for pack in state.packs.values()):
        driver, (static, stamped) = loop.driver_loop, loop.held
        frames = {name: (DuckFrame(driver.spark, table), at) for name, (table, at) in stamped.items()}
        return derivations(driver.spark, program, driver, state, ticks, static, frames)
    state.packs = {t: loop.on_spark(pack) for t, pack in state.packs.items()}
    static, stamped, _, _ = loop.spark_inputs()
    return derivations(spark, program, loop.spark_loop, state, ticks, static, stamped)


def _edb_frame(frame, name: str, program: Program):
    """An `edb=` value as a frame c0..cn-1 (lists of rows are typed by the loop)."""
    if isinstance(frame, list):
        raise InputError(f"edb '{name}': give a DataFrame when '{name}' also has an .input")
    return frame.toDF(*[f"c{i}" for i in range(program.relations[name].arity)])
