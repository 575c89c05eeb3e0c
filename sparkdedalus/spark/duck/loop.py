"""The tick loop on a `DuckSession`: a tick of the same plan, run in the driver.

`DriverTickLoop(settings, program, ...)` is a `TickLoop` (spark/loop.py) over a
DuckSession (session.py), in one partition and with no partitioner (so no
Spark `hash` buckets: spark/placement.py gives a pack moving to Spark its
partition column). Three of its parts differ from Spark's: its queries name
each subquery once in a WITH clause (`DriverTickSql`), the sizer counts a
materialised frame in DuckDB (`DriverSizer`), and a recursive component the
Arrow fixpoint takes is solved by its kernel (`ArrowFixpoint.solve`) on the
frames' Arrow tables (`DriverExecutor`), where Spark runs it in tasks.
"""

from __future__ import annotations

from sparkdedalus.spark.duck.session import DuckFrame, DuckSession
from sparkdedalus.spark.executor import Executor, LoopState
from sparkdedalus.spark.fixpoint import ArrowFixpoint
from sparkdedalus.spark.loop import TickLoop
from sparkdedalus.spark.sizer import Sizer
from sparkdedalus.spark.statement import Statement
from sparkdedalus.spark.tick_sql import TickSql


class DriverSizer(Sizer):
    """The sizer of a tick in the driver: one partition; counts in DuckDB."""

    def counted(self, frame: DuckFrame) -> DuckFrame:
        return frame

    def materialised(self, frame: DuckFrame, *conditions: str) -> tuple[DuckFrame, tuple]:
        counts = (frame.count(),)
        if conditions:
            sums = ", ".join(f"count(CASE WHEN {c} THEN 1 END) AS n{i}" for i, c in enumerate(conditions))
            counts += tuple(frame.session.query([frame], f"SELECT {sums} FROM {{0}}").collect()[0].values())
        self.sized(counts[0])
        return frame, counts


class DriverTickSql(TickSql):
    """The tick's SQL text for DuckDB: the subqueries a query reads named once
    each in a WITH clause (`Statement.render_with`), where Spark's text writes
    them in place as often as they are read."""

    @staticmethod
    def render(statement: Statement, sql: str) -> str:
        return statement.render_with(sql)


class DriverExecutor(Executor):
    """The executor of a tick in the driver (see the module)."""

    appends_state = False  # a pack in the driver is Arrow in memory: copied, not appended to

    def _arrow(self, arrow: ArrowFixpoint, names: list, current: dict, news: dict | None, tick: int,
               state: LoopState, shared: bool) -> tuple[dict, dict]:
        """The component solved by the Arrow fixpoint's kernel on what it reads."""
        tables = {n: self.sql.frame_of(current[n]).toArrow().cast(arrow.schemas[n]) for n in arrow.reads}
        grown = {n: self.sql.frame_of(news[n]).toArrow().cast(arrow.schemas[n]) for n in arrow.reads if n in news} \
            if news is not None and arrow.differential else None
        found = arrow.solve(tables, bucket=0, buckets=1, news=grown)
        return ({n: self.sql.views.of(DuckFrame(self.spark, found[n])) for n in names},
                {n: found[n].num_rows for n in names})


class DriverTickLoop(TickLoop):
    """A tick loop run in the driver by DuckDB (see the module); `settings`:
    the session settings it reads (`spark.sparkdedalus.*`)."""

    sizer_class = DriverSizer
    sql_class = DriverTickSql
    executor_class = DriverExecutor

    def __init__(self, settings: dict, program, network=None, edb: dict | None = None, gc: list | None = None,
                 stamped: dict | None = None, input_apart: bool = True, names=None, session: DuckSession | None = None):
        """`edb`: {relation: rows} at every tick; `stamped`: {relation: (pa.Table with a
        `tick` column, set of its ticks)}, rows at their tick only (TickLoop's, as Arrow);
        `session`: the DuckSession to run on (a fault run's loops share one), else a new one."""
        session = session or DuckSession(settings)
        stamped = {name: (DuckFrame(session, table), ticks) for name, (table, ticks) in (stamped or {}).items()}
        super().__init__(session, program, network, edb, partitions=1, stamped=stamped, gc=gc, policy=False,
                         input_apart=input_apart, names=names)
