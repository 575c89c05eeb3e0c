"""The tick loop: a run's tick plan, loader, sizer and executor put together.

`TickLoop(spark, program, ...)` decides what every tick runs (spark/plan.py),
loads the run's facts (spark/loader.py) and sizes the partitions to them
(spark/sizer.py); `run_tick` computes a tick's pack from the previous one
(spark/executor.py), and `full(pack)` adds back the inputs kept apart for
whoever reads every relation of a tick. The driver (spark/driver.py) runs the
ticks one after the other and keeps their packs.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from sparkdedalus.network import Network
from sparkdedalus.pack.layout import Layout
from sparkdedalus.plumbing.jobnames import JobNames
from sparkdedalus.program import Program
from sparkdedalus.spark.executor import Executor, LoopState
from sparkdedalus.spark.loader import Loader
from sparkdedalus.spark.plan import TickPlan
from sparkdedalus.spark.sizer import Sizer, max_partitions
from sparkdedalus.spark.tick_sql import TickSql


class TickLoop:
    """A run's tick loop (see the module)."""

    #: the parts that depend on where the tick runs (spark/duck/loop.py has the driver's)
    sizer_class = Sizer
    sql_class = TickSql
    executor_class = Executor

    def __init__(self, spark: SparkSession, program: Program, network: Network | None = None,
                 edb: dict | None = None, partitions: int | None = None, stamped: dict | None = None,
                 gc: list | None = None, policy: bool = True, input_apart: bool = True,
                 names: JobNames | None = None, count_exchanges: bool = False, rows: dict | None = None,
                 files: dict | None = None):
        """`edb`: {relation: frame or rows} holding at every tick; `stamped`:
        {relation: (frame with a `tick` column, set of its ticks)}, rows holding
        at their tick only (`.input` rows with a tick, see spark/inputs.py);
        `partitions`: a fixed number (default: sized to the data); `gc`: the
        `GcRule`s to apply (analysis/gc.py); `policy`: partition by the
        distribution policies (spark/partitioner.py); `input_apart`: keep the
        relations no rule derives out of the packs (`full` adds them back);
        `names`: names the jobs (default: a JobNames of its own);
        `count_exchanges`: fill `TickStats.exchanges`; `rows`: {relation: rows}
        of the `edb` frames whose rows are known (counted when read); `files`:
        {relation: Parquet files} of the `edb` frames that are all their rows
        (valid by their footers: the driver may read them, spark/inputs.py)."""
        #: the session its queries run on (a DuckSession for the driver's, spark/duck/)
        self.spark = spark
        stamped = dict(stamped or {})
        most = partitions or max_partitions(spark)
        self.plan = TickPlan(spark, program, network or Network(), frozenset(stamped), list(gc or ()), policy, most)
        self.sizer = self.sizer_class(partitions, most, self.plan.partitioner is not None, count_exchanges)
        #: the tick's SQL text (spark/tick_sql.py), the placement's
        self.tick_sql = sql = self.sql_class(spark, self.plan, self.sizer)
        self.loader = Loader(spark, self.plan, sql, self.sizer, edb or {}, stamped, input_apart, rows or {},
                             files or {})
        self.executor = self.executor_class(spark, self.plan, sql, self.sizer, self.loader, names or JobNames(spark))

    @property
    def layout(self) -> Layout:
        """The packs' layout (pack/layout.py)."""
        return self.plan.layout

    def run_tick(self, tick: int, previous: DataFrame | None, state: LoopState) -> DataFrame:
        """Tick `tick`'s pack from the previous one (None at the first tick),
        materialised; its TickStats appended to `state.stats`."""
        return self.executor.run_tick(tick, previous, state)

    @staticmethod
    def on_spark(pack: DataFrame) -> DataFrame:
        """A pack of this loop as a Spark frame: itself (spark/placement.py moves the driver's)."""
        return pack

    def holding(self, pack: DataFrame, name: str) -> DataFrame:
        """What holds relation `name`'s facts of a tick whose pack is `pack`:
        the pack, or the inputs kept apart for one of them."""
        return self.loader.holding(pack, name)

    def loop_of(self, pack: DataFrame) -> "TickLoop":
        """The loop whose layout and plan read `pack`: this one (a run's
        PlacedLoop, spark/placement.py, answers with the placement's)."""
        return self

    def full(self, pack: DataFrame) -> DataFrame:
        """A tick's pack with the relations kept apart: every fact of the tick, once."""
        return self.loader.full(pack)
