#!/usr/bin/env python
"""Two settings of the per-tick overhead (issue 22), measured in one process and one session.

    .venv/bin/python benchmarks/overhead.py                       # both measurements
    .venv/bin/python benchmarks/overhead.py --only commit_every   # or --only codegen
    .venv/bin/python benchmarks/overhead.py --quick               # smoke test

Prints one JSON object per line on standard output (flushed), each with a
"measurement" key:

- "load": `uptime` at the start and the end (the times depend on it);
- "codegen": benchmarks/programs/two_phase_commit_bench.ded (100 transactions
  by default, --transactions N) run with `spark.sparkdedalus.codegen` off
  (every tick interpreted: the engine's sessions' settings), on (every tick
  compiled: Spark's defaults) and auto (compiled from 200,000 input rows), in
  rotating order in the same session so that the load of a shared machine
  falls on all alike: per run the median of its steady ticks, the facts each
  tick hands on and the ticks run compiled;
- "commit_every": benchmarks/programs/broadcast_bench.ded with 3 nodes stored
  with a commit every K ticks (`Engine.run(..., commit_every=K)`, Spark's Delta
  Lake): K = 10 and 100 over --ticks ticks, K = 1 over --k1-ticks (its cost is
  per commit: fewer ticks measure it as well); run seconds, the seconds spent
  in `Store.stage` and `Store.commit`, and their sum per tick (the amortized
  cost of storing).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for path in (REPO, REPO / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import engine as bench  # noqa: E402 (benchmarks/engine.py: session, jobs, 2pc workload)

MODES = ("off", "on", "auto")  # spark.sparkdedalus.codegen (sparkdedalus/spark/codegen.py)


def codegen(spark, jobs, transactions: int, ticks: int, rounds: int) -> None:
    from sparkdedalus import Program
    from sparkdedalus.spark.codegen import SETTING
    program = Program.from_files(str(bench.PROGRAMS / "two_phase_commit_bench.ded"))
    rows = bench.tpc_edb(transactions, 5, abort_every=min(10, max(2, transactions // 2)))
    schemas = {"participant": "coord string, part string", "txn": "coord string, x string, start bigint",
               "refuse": "part string, x string", "inquire_at": "part string, coord string, x string, at bigint"}
    edb = {name: bench.frame(spark, r, schemas[name]) for name, r in rows.items()}
    before = spark.conf.get(SETTING, None)
    medians: dict = {mode: [] for mode in MODES}
    try:
        for round_ in range(rounds):
            shift = round_ % len(MODES)  # each mode first in turn: the load falls on all alike
            for mode in MODES[shift:] + MODES[:shift]:
                spark.conf.set(SETTING, mode)
                _, per_tick, total, status = bench.run_program(spark, jobs, program, ticks, edb,
                                                               f"codegen-{mode}-{round_}", 1800)
                steady = bench.window(per_tick, min(5, ticks), ticks)
                medians[mode].append(bench.median(steady))
                bench.emit("codegen_run", mode=mode, round=round_, status=status, ticks=ticks,
                           steady_tick_seconds_median=medians[mode][-1], total_seconds=round(total, 2),
                           facts_per_tick=[t["facts"] for t in per_tick],
                           compiled_ticks=[t["tick"] for t in per_tick if t["compiled"]])
    finally:
        spark.conf.set(SETTING, before) if before else spark.conf.unset(SETTING)
    summary = {mode: round(statistics.median(values), 4) for mode, values in medians.items() if values}
    bench.emit("codegen", workload=f"two_phase_commit_bench.ded, {transactions} transactions", ticks=ticks,
               rounds=rounds, steady_tick_seconds_median=summary,
               on_over_off=bench.ratio(summary.get("on"), summary.get("off")),
               auto_over_best=bench.ratio(summary.get("auto"), min(summary.get("on"), summary.get("off"))))


def commit_every(spark, ticks: dict, root: str) -> None:
    """`ticks`: {K: ticks of the run committing every K}."""
    from sparkdedalus import Program
    from sparkdedalus.spark.engine import Engine
    from sparkdedalus.store.store import Store
    program = Program.from_files(str(bench.PROGRAMS / "broadcast_bench.ded"))
    edb = {"node": [("n0", "n1"), ("n0", "n2")], "leader": [("n0",)]}
    # warm-up: the first Delta commits of a JVM load classes
    Engine(spark).run(program, 3, edb=edb, keep_history=False, store=os.path.join(root, "warm-up"))
    spent = {"stage": 0.0, "commit": 0.0}
    originals = {name: getattr(Store, name) for name in spent}

    depth = [0]

    def timed(name):
        def call(store, *args):  # outermost calls only: a commit stages its own tick
            depth[0] += 1
            started = time.perf_counter()
            try:
                return originals[name](store, *args)
            finally:
                depth[0] -= 1
                if not depth[0]:
                    spent[name] += time.perf_counter() - started
        return call
    for name in spent:
        setattr(Store, name, timed(name))
    try:
        for period, count in ticks.items():
            spent.update(stage=0.0, commit=0.0)
            started = time.perf_counter()
            run = Engine(spark).run(program, count, edb=edb, keep_history=False,
                                    store=os.path.join(root, f"k{period}"), commit_every=period)
            seconds = time.perf_counter() - started
            store_seconds = spent["stage"] + spent["commit"]
            bench.log(f"commit_every {period}: {seconds:.1f}s for {count} ticks, {store_seconds:.1f}s storing")
            bench.emit("commit_every", workload="broadcast_bench.ded, 3 nodes", writer=run.store.writer, ticks=count,
                       commit_every=period, commits=len(run.store.written), run_seconds=round(seconds, 2),
                       stage_seconds=round(spent["stage"], 2), commit_seconds=round(spent["commit"], 2),
                       store_seconds_per_tick=round(store_seconds / count, 4),
                       engine_tick_seconds_median=round(statistics.median(s.seconds for s in run.stats), 4))
    finally:
        for name, original in originals.items():
            setattr(Store, name, original)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("codegen", "commit_every"), help="one of the two measurements")
    parser.add_argument("--ticks", type=int, default=100, help="ticks of the commit_every runs with K = 10 and 100")
    parser.add_argument("--k1-ticks", type=int, default=20, help="ticks of the commit_every run with K = 1")
    parser.add_argument("--periods", default="1,10,100", help="the values of K, comma-separated")
    parser.add_argument("--transactions", type=int, default=100)
    parser.add_argument("--codegen-ticks", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2, help="codegen: runs per mode")
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    args = parser.parse_args()
    periods = {k: args.k1_ticks if k == 1 else args.ticks for k in map(int, args.periods.split(","))}
    if args.quick:
        args.transactions, args.codegen_ticks, args.rounds, periods = 4, 3, 1, {1: 3, 2: 4}
    root = tempfile.mkdtemp(prefix="overhead-bench-")
    bench.load("start")
    from sparkdedalus.shell.run_spark import _jvm_stdout
    from sparkdedalus.plumbing.session import local_session
    try:
        with _jvm_stdout(verbose=True):  # the JVM's output to stderr, never to stdout; Delta Lake for the store
            spark = local_session(extra_conf={"spark.ui.retainedJobs": "100000",
                                              "spark.ui.retainedStages": "100000"})
        bench.emit("config", git=bench.git_state(), driver_memory=spark.conf.get("spark.driver.memory"),
                   master=spark.sparkContext.master)
        if args.only != "commit_every":
            codegen(spark, bench.Jobs(spark), args.transactions, args.codegen_ticks, args.rounds)
        if args.only != "codegen":
            commit_every(spark, periods, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    bench.load("end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
