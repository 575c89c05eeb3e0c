"""A Spark run's traffic (`sparkdedalus.traffic.Traffic`), read from its
packs in one query, and the simulator that measures closed-loop programs on
the Spark engine (`Simulator`: `optimize --engine spark`).

A message is a row of every tick's pack from the tick it was derived until
its destination takes it in (spark/queues.py): a `QUEUED` row while it waits
in its sender's outbox (under a capacity), then a `MESSAGE` row, carried
while it is in flight or waits in the inbox; a lost one (arrival NULL) is in
the pack of the tick it left only. So it left at the first tick whose pack
holds it as a `MESSAGE` row, and, when not lost, was taken in the tick after
the last one, unless that is the last tick of the run.

    simulate = Simulator(spark)
    traffic = simulate(program, 20, Network(capacity=8), client_rows(program, 4), "committed", (10, 20))
"""

from __future__ import annotations

from sparkdedalus.network import Network
from sparkdedalus.pack.columns import MESSAGE, QUEUED, SOURCE_COLUMN, STATE
from sparkdedalus.spark.duck.session import DuckFrame
from sparkdedalus.spark.engine import Engine
from sparkdedalus.spark.expressions import sql_literal
from sparkdedalus.spark.queues import Queues
from sparkdedalus.traffic import Traffic


class Simulator:
    """A simulator (`sparkdedalus.traffic`) on the Spark engine: each call is
    one `Engine.run` in `spark` with GC on, every tick's pack kept for the
    query that reads the traffic."""

    def __init__(self, spark):
        self.engine = Engine(spark)

    def __call__(self, program, ticks: int, network: Network | None, edb: dict, relation: str, at) -> Traffic:
        run = self.engine.run(program, ticks, network=network, edb=edb, gc=True, keep_history=True)
        return traffic(run, network or Network(), relation, at)


def traffic(run, network: Network, relation: str, at) -> Traffic:
    """The messages of `run` (ran under `network`, every pack kept) and the
    facts of `relation` at the ticks `at`, in one query collected once: in the
    driver when every tick ran there (no Spark job), else on Spark."""
    placed, ticks = run.driver.loop, run.ticks
    packs = dict(sorted(run.driver.packs.items()))
    if not all(isinstance(pack, DuckFrame) for pack in packs.values()):
        packs = {t: placed.on_spark(pack) for t, pack in packs.items()}  # wherever the ticks ran
    loop = placed.loop_of(packs[ticks])
    layout = loop.layout
    dst = Queues(layout, network, run.program).printed(0)
    values = ", ".join(layout.value_columns)
    frames = {f"p{t}": pack for t, pack in packs.items()}
    frames.update({f"f{t}": loop.full(packs[t]) for t in sorted(set(at))})
    rows = " UNION ALL ".join(
        f"SELECT {t}L AS __tick, __rel, __kind, __sent, __arrival, {SOURCE_COLUMN}, {dst} AS __dst, {values}"
        f" FROM {{p{t}}} WHERE __kind IN ('{MESSAGE}', '{QUEUED}')" for t in packs)
    sizes = " UNION ALL ".join(f"SELECT {t}L AS __tick FROM {{f{t}}} WHERE __kind = '{STATE}' AND __rel = "
                               f"{sql_literal(relation)}" for t in sorted(set(at)))
    message = f"__kind = '{MESSAGE}'"
    keys = f"__rel, {SOURCE_COLUMN}, __dst, __sent"
    query = (
        f"WITH per_message AS (SELECT {keys}, min(CASE WHEN {message} THEN __tick END) AS __left,"
        f" max(CASE WHEN {message} THEN __tick END) AS __last, max(__arrival) AS __arrival FROM ({rows})"
        f" GROUP BY {keys}, {values}),"
        f" hops AS (SELECT {keys}, __left, CASE WHEN __arrival IS NOT NULL AND __last < {ticks}L THEN __last + 1L"
        f" END AS __taken FROM per_message)"
        f" SELECT {keys}, __left, __taken, count(1) AS __n, CAST(NULL AS BIGINT) AS __tick FROM hops"
        f" GROUP BY {keys}, __left, __taken")
    if sizes:
        query += (f" UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, count(1), __tick FROM ({sizes})"
                  f" GROUP BY __tick")
    messages, found = {}, {t: 0 for t in at}
    for row in loop.spark.sql(query, **frames).collect():
        if row["__tick"] is not None:  # a size
            found[row["__tick"]] = row["__n"]
        else:
            messages[(row["__rel"], row[SOURCE_COLUMN], row["__dst"], row["__sent"], row["__left"],
                      row["__taken"])] = row["__n"]
    return Traffic(messages, found)
