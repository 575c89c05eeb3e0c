#!/usr/bin/env python
"""Two settings of the per-tick overhead (issue 22), measured in one process and one session.

    .venv/bin/python benchmarks/overhead.py                       # both measurements
    .venv/bin/python benchmarks/overhead.py --only commit_every   # or --only codegen
    .venv/bin/python benchmarks/overhead.py --quick               # smoke test

Prints one JSON object per line on standard output (flushed), each with a
"measurement" key:

- "load": `uptime` at the start and the end (the times depend on it);
- "codegen": benchmarks/programs/two_phase_commit_bench.ded (100 transactions
  by default) run with `spark.sql.codegen.factoryMode` NO_CODEGEN (the setting
  of the sessions sparkdedalus creates) and FALLBACK (Spark's default),
  alternating in the same session (A B B A ...), so that the load of a shared
  machine falls on both alike: per run the median of its steady ticks;
- "commit_every": benchmarks/programs/broadcast_bench.ded with 3 nodes for
  --ticks ticks, without a store and with a store committed every K ticks
  (`Engine.run(..., commit_every=K)`, Spark's Delta Lake): run seconds, and the
  amortized cost of storing per tick, (run with the store - run without) / ticks.
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

FACTORY_MODE = "spark.sql.codegen.factoryMode"


def codegen(spark, jobs, transactions: int, ticks: int, rounds: int) -> None:
    from sparkdedalus import Program
    program = Program.from_files(str(bench.PROGRAMS / "two_phase_commit_bench.ded"))
    rows = bench.tpc_edb(transactions, 5, abort_every=min(10, max(2, transactions // 2)))
    schemas = {"participant": "coord string, part string", "txn": "coord string, x string, start bigint",
               "refuse": "part string, x string", "inquire_at": "part string, coord string, x string, at bigint"}
    edb = {name: bench.frame(spark, r, schemas[name]) for name, r in rows.items()}
    before = spark.conf.get(FACTORY_MODE, None)
    medians: dict = {"NO_CODEGEN": [], "FALLBACK": []}
    order = [("NO_CODEGEN", "FALLBACK"), ("FALLBACK", "NO_CODEGEN")]
    try:
        for round_ in range(rounds):
            for mode in order[round_ % 2]:
                spark.conf.set(FACTORY_MODE, mode)
                _, per_tick, total, status = bench.run_program(spark, jobs, program, ticks, edb,
                                                               f"codegen-{mode}-{round_}", 1800)
                steady = bench.window(per_tick, min(5, ticks), ticks)
                medians[mode].append(bench.median(steady))
                bench.emit("codegen_run", mode=mode, round=round_, status=status, ticks=ticks,
                           steady_tick_seconds_median=medians[mode][-1], total_seconds=round(total, 2))
    finally:
        spark.conf.set(FACTORY_MODE, before) if before else spark.conf.unset(FACTORY_MODE)
    summary = {mode: round(statistics.median(values), 4) for mode, values in medians.items()}
    bench.emit("codegen", workload=f"two_phase_commit_bench.ded, {transactions} transactions", ticks=ticks,
               rounds=rounds, steady_tick_seconds_median=summary,
               fallback_over_no_codegen=bench.ratio(summary["FALLBACK"], summary["NO_CODEGEN"]))


def commit_every(spark, ticks: int, periods: list, root: str) -> None:
    from sparkdedalus import Program
    from sparkdedalus.spark.engine import Engine
    program = Program.from_files(str(bench.PROGRAMS / "broadcast_bench.ded"))
    edb = {"node": [("n0", "n1"), ("n0", "n2")], "leader": [("n0",)]}
    # warm-up: the first Delta commits of a JVM load classes
    Engine(spark).run(program, 3, edb=edb, keep_history=False, store=os.path.join(root, "warm-up"))
    seconds: dict = {}
    for period in [None, *periods]:
        started = time.perf_counter()
        store = None if period is None else os.path.join(root, f"k{period}")
        Engine(spark).run(program, ticks, edb=edb, keep_history=False, store=store, commit_every=period or 1)
        seconds[period] = time.perf_counter() - started
        bench.log(f"commit_every {period}: {seconds[period]:.1f}s for {ticks} ticks")
        bench.emit("commit_every", workload="broadcast_bench.ded, 3 nodes", writer="spark-delta", ticks=ticks,
                   commit_every=period, run_seconds=round(seconds[period], 2),
                   seconds_per_tick=round(seconds[period] / ticks, 4),
                   store_seconds_per_tick=None if period is None else round((seconds[period] - seconds[None]) / ticks, 4))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("codegen", "commit_every"), help="one of the two measurements")
    parser.add_argument("--ticks", type=int, default=100, help="ticks of each commit_every run")
    parser.add_argument("--transactions", type=int, default=100)
    parser.add_argument("--codegen-ticks", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2, help="codegen: runs per mode")
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    args = parser.parse_args()
    periods = [1, 10, 100]
    if args.quick:
        args.ticks, args.transactions, args.codegen_ticks, args.rounds, periods = 4, 4, 3, 1, [1, 2]
    root = tempfile.mkdtemp(prefix="overhead-bench-")
    bench.load("start")
    from sparkdedalus.shell.run_spark import _jvm_stdout
    from sparkdedalus.spark.session import local_session
    try:
        with _jvm_stdout(verbose=True):  # the JVM's output to stderr, never to stdout; Delta Lake for the store
            spark = local_session(extra_conf={"spark.ui.retainedJobs": "100000",
                                              "spark.ui.retainedStages": "100000"})
        bench.emit("config", git=bench.git_state(), driver_memory=spark.conf.get("spark.driver.memory"),
                   master=spark.sparkContext.master)
        if args.only != "commit_every":
            codegen(spark, bench.Jobs(spark), args.transactions, args.codegen_ticks, args.rounds)
        if args.only != "codegen":
            commit_every(spark, args.ticks, periods, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    bench.load("end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
