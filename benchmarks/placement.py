#!/usr/bin/env python
"""Where a tick is faster: in the driver (DuckDB) or on Spark, by the tick's size.

    .venv/bin/python benchmarks/placement.py                       # sizes 1,000 .. 400,000
    .venv/bin/python benchmarks/placement.py --sizes 1000,20000 --ticks 4

One program (`PROGRAM`: N edges given as rows, a persisted relation of N facts, a
join of the two: about 3N facts a tick) runs each size with every tick in the
driver and with every tick on Spark (`spark.sparkdedalus.placement`), in one
session; both runs' last facts must be equal. Prints JSON lines: "load" at the start
and end, "size" per size (median seconds of ticks 2..T in each placement, their
ratio, the facts a tick hands on), and "crossover": the smallest size at which
Spark's median tick was below the driver's (None: the driver won at every size).
The engine's default threshold (`spark.sparkdedalus.fixpoint.driverRows`) is set
from it (docs/engine.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import emit, load, log, spark_settings, start_session  # noqa: E402

PROGRAM = """
.decl edge(a: long, b: long)
.output two
kept(X, Y)@next :- kept(X, Y);
kept(X, Y) :- edge(X, Y);
two(X, Z) :- kept(X, Y), edge(Y, Z);
"""


def edges(n: int) -> list:
    """n edges over n nodes: node i to i + 1 and to 2i (mod n), half each."""
    return [(i, (i + 1) % n) if i % 2 else (i, (2 * i) % n) for i in range(n)]


def timed(spark, program, n: int, ticks: int, placement: str) -> tuple[list, dict, list]:
    from sparkdedalus.spark.engine import Engine
    from sparkdedalus.spark.placement import SETTING
    spark.conf.set(SETTING, placement)
    run = Engine(spark).run(program, ticks=ticks, edb={"edge": edges(n)}, keep_history=False)
    return [s.seconds for s in run.stats], run.facts(ticks, relations=["two"]), [s.placement for s in run.stats]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000,100000,200000,400000")
    parser.add_argument("--ticks", type=int, default=4)
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    from sparkdedalus import Program
    load("start")
    spark = start_session(spark_settings(parser, args.conf))
    program = Program.parse(PROGRAM)
    timed(spark, program, 100, 2, "spark")  # warm-up: the JVM's first queries
    crossover = None
    for n in [int(s) for s in args.sizes.split(",")]:
        medians, facts, rows = {}, {}, None
        for placement in ("driver", "spark"):
            seconds, facts[placement], where = timed(spark, program, n, args.ticks, placement)
            assert set(where) == {placement}, where
            medians[placement] = round(statistics.median(seconds[1:]), 4)
            log(f"n={n} {placement}: {seconds}")
        if facts["driver"] != facts["spark"]:
            raise SystemExit(f"n={n}: the placements disagree")
        rows = 3 * n
        emit("size", edges=n, facts_per_tick_about=rows, driver_seconds=medians["driver"],
             spark_seconds=medians["spark"], spark_over_driver=round(medians["spark"] / medians["driver"], 3))
        if crossover is None and medians["spark"] < medians["driver"]:
            crossover = n
    emit("crossover", edges=crossover, facts_per_tick_about=crossover and 3 * crossover)
    load("end")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
