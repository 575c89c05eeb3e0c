#!/usr/bin/env python
"""Tick time and persisted state of the Spark engine with and without garbage
collection (docs/gc.md), on voting or two-phase commit (benchmarks/gc_workloads.py).

    .venv/bin/python benchmarks/gc_spark.py >> benchmarks/results/gc-spark-DATE.jsonl
    .venv/bin/python benchmarks/gc_spark.py --workload two_phase_commit --requests 100 --ticks 60

Runs the workload on one local session with GC off, then on, checks that the
declared outputs are the same at the last tick, and prints JSON lines: the
machine's load (`uptime`) before and after, and per run the seconds and
persisted rows per tick (`TickStats.persisted`) with their medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gc_workloads  # noqa: E402
from engine import emit, git_state, load, start_session  # noqa: E402

from sparkdedalus import Program  # noqa: E402

WORKLOADS = {"voting": gc_workloads.voting, "two_phase_commit": gc_workloads.two_phase_commit}


def measure(spark, name: str, requests: int, ticks: int) -> None:
    from sparkdedalus.spark.engine import Engine
    program = Program.parse(WORKLOADS[name](requests, ticks), f"{name}_{requests}.ded")
    last = {}
    for gc in (False, True):
        run = Engine(spark).run(program, ticks, gc=gc, keep_history=False)
        last[gc] = run.facts(ticks, relations=list(program.outputs))
        seconds = [s.seconds for s in run.stats]
        emit("gc_spark", workload=name, requests=requests, ticks=ticks, gc=gc, engine="spark", commit=git_state(),
             persisted_rows=[s.persisted for s in run.stats], collected_rows=[s.collected for s in run.stats],
             tick_seconds=[round(s, 4) for s in seconds],
             median_tick_seconds=round(statistics.median(seconds), 4),
             median_tick_seconds_last_quarter=round(statistics.median(seconds[-(ticks // 4):]), 4),
             total_seconds=round(sum(seconds), 2))
    if last[False] != last[True]:
        raise SystemExit(f"{name}: the outputs at tick {ticks} differ with GC")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="voting", choices=sorted(WORKLOADS))
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--ticks", type=int, default=60)
    args = parser.parse_args()
    load("start")
    spark = start_session({})
    try:
        measure(spark, args.workload, args.requests, args.ticks)
    finally:
        spark.stop()
    load("end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
