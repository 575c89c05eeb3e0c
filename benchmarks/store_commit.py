#!/usr/bin/env python
"""What the Delta store costs (issue 13), measured in one process and one session.

    .venv/bin/python benchmarks/store_commit.py                # 20 timed ticks, a 500-tick storage run
    .venv/bin/python benchmarks/store_commit.py --quick        # smoke test (5 and 20 ticks)

Prints one JSON object per line on standard output (flushed), each with a
"measurement" key:

- "load": `uptime` at the start and the end (times depend on it);
- "commit": per writer (Spark's Delta Lake, then the delta-rs fallback), the
  wall time `Store.commit` adds to a tick (median, mean, 90th percentile) and
  the Spark jobs per commit (median), next to the engine's median tick time,
  on benchmarks/programs/broadcast_bench.ded with 3 nodes (bcast and log change
  at every tick: two tables written per commit);
- "storage": examples/broadcast.ded run for --storage-ticks ticks into a store
  (Spark's Delta Lake; resumed every 100 ticks), bytes on disk and rows next to a naive layout: one row
  per fact per tick, one Delta table per relation with one delta-rs commit per
  tick (written from the states the store reconstructs: measured, not estimated).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: the storage run is resumed every CHUNK ticks (a fresh tick loop: the engine's
#: driver memory grows over a long loop, see docs/performance.md)
CHUNK = 100
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def emit(measurement: str, **fields) -> None:
    print(json.dumps({"measurement": measurement, **fields}, default=str), flush=True)


def log(message: str) -> None:
    print(f"[store-bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load(when: str) -> None:
    text = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    emit("load", when=when, uptime=text, cpus=os.cpu_count())


def summary(values: list) -> dict:
    ordered = sorted(values)
    return {"n": len(values), "median": round(statistics.median(values), 4),
            "mean": round(statistics.fmean(values), 4), "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 4)}


def directory_bytes(path: str) -> dict:
    data = log_bytes = total = 0
    for root, _, files in os.walk(path):
        for name in files:
            size = os.path.getsize(os.path.join(root, name))
            total += size
            if "_delta_log" in root.split(os.sep):
                log_bytes += size
            elif name.endswith(".parquet"):
                data += size
    return {"data_bytes": data, "log_bytes": log_bytes, "all_bytes": total}


class TimedCommits:
    """Wraps Store.commit (benchmark only) to record its wall time and the Spark
    jobs it runs (every job of the session: the commit's writes run on threads)."""

    def __init__(self, spark):
        from sparkdedalus.store.store import Store
        self.tracker = spark.sparkContext.statusTracker()
        self.records: list = []
        original = Store.commit

        def timed(store, tick, pack, previous=None):
            jobs = self.jobs()
            started = time.perf_counter()
            done = original(store, tick, pack, previous)
            self.records.append((store.writer, tick, time.perf_counter() - started, self.jobs() - jobs,
                                 len(store.written.get(tick, ()))))
            return done

        Store.commit = timed

    def jobs(self) -> int:
        return len(self.tracker.getJobIdsForGroup(None))


def commit_costs(spark, timed: TimedCommits, ticks: int, root: str) -> None:
    from sparkdedalus import Program
    from sparkdedalus.spark.engine import Engine
    program = Program.from_files(str(REPO / "benchmarks" / "programs" / "broadcast_bench.ded"))
    edb = {"node": [("n0", "n1"), ("n0", "n2")], "leader": [("n0",)]}
    for writer in ("spark", "delta-rs"):
        log(f"commit costs: {ticks} ticks, writer {writer}")
        timed.records.clear()
        run = Engine(spark).run(program, ticks, edb=edb, store=os.path.join(root, f"bench-{writer}"),
                                store_writer=writer)
        records = timed.records[1:]  # tick 1 also writes the static relations
        emit("commit", workload="broadcast_bench.ded, 3 nodes", writer=run.store.writer, ticks=ticks,
             commit_seconds=summary([r[2] for r in records]),
             jobs_per_commit_median=statistics.median(r[3] for r in records),
             tables_written_per_commit_median=statistics.median(r[4] for r in records),
             engine_tick_seconds_median=round(statistics.median(s.seconds for s in run.stats), 4),
             first_commit_seconds=round(timed.records[0][2], 3),
             store=directory_bytes(os.path.join(root, f"bench-{writer}")))


def naive_layout(store: str, ticks: int, root: str) -> tuple[dict, int]:
    """Every fact of every tick, one Delta table per relation, one delta-rs
    commit per tick; the states come from replaying the store's changes."""
    import pyarrow as pa
    from deltalake import write_deltalake

    from sparkdedalus.store import read
    manifest = read.manifest(store)
    rows = 0
    for name, info in manifest.relations.items():
        changes = pa.table(read.delta_table(store, name).to_pyarrow_table()).to_pylist()
        by_tick: dict = {}
        for change in changes:
            if change["_kind"] == "S":
                by_tick.setdefault(change["_tick"], []).append(change)
        schema = pa.schema([*(pa.field(c, pa.table(read.delta_table(store, name).to_pyarrow_table())
                                       .schema.field(c).type) for c in info.columns), pa.field("tick", pa.int64())])
        state: dict = {}
        for tick in range(1, ticks + 1):
            for change in by_tick.get(tick, ()):
                key = tuple(change[c] for c in info.columns)
                state[key] = state.get(key, 0) + change["_op"]
                if state[key] == 0:
                    del state[key]
            batch = [dict(zip(info.columns, key), tick=tick) for key in state]
            rows += len(batch)
            write_deltalake(os.path.join(root, "naive", name), pa.Table.from_pylist(batch, schema=schema),
                            mode="append")
    return directory_bytes(os.path.join(root, "naive")), rows


def storage(spark, ticks: int, root: str) -> None:
    import pyarrow as pa

    from sparkdedalus import Program
    from sparkdedalus.spark.engine import Engine
    from sparkdedalus.store import read
    program = Program.from_files(str(REPO / "examples" / "broadcast.ded"))
    store = os.path.join(root, "broadcast")
    log(f"storage: broadcast.ded, {ticks} ticks")
    started = time.perf_counter()
    for upto in range(min(ticks, CHUNK), ticks + CHUNK, CHUNK):  # resumed every CHUNK ticks
        Engine(spark).run(program, min(upto, ticks), store=store, resume=True)
        log(f"storage: {min(upto, ticks)} ticks stored")
    seconds = time.perf_counter() - started
    stored_rows = sum(pa.table(read.delta_table(store, n).to_pyarrow_table()).num_rows for n in program.relations)
    log("storage: writing the naive layout")
    naive, naive_rows = naive_layout(store, ticks, root)
    mine = directory_bytes(store)
    emit("storage", workload="examples/broadcast.ded", ticks=ticks, run_seconds=round(seconds, 1),
         store=mine, store_rows=stored_rows, naive=naive, naive_rows=naive_rows,
         ratio_all_bytes=round(naive["all_bytes"] / mine["all_bytes"], 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=20, help="timed ticks per writer")
    parser.add_argument("--storage-ticks", type=int, default=500)
    parser.add_argument("--quick", action="store_true", help="5 timed ticks, a 20-tick storage run")
    parser.add_argument("--only", choices=("commit", "storage"), help="one of the two measurements")
    args = parser.parse_args()
    if args.quick:
        args.ticks, args.storage_ticks = 5, 20
    from sparkdedalus.shell.run_spark import _jvm_stdout
    from sparkdedalus.plumbing.session import local_session
    root = tempfile.mkdtemp(prefix="store-bench-")
    load("start")
    try:
        with _jvm_stdout(verbose=False):  # the JVM's start-up chatter stays off stdout
            spark = local_session()
        if args.only != "storage":
            commit_costs(spark, TimedCommits(spark), args.ticks, root)
        if args.only != "commit":
            storage(spark, args.storage_ticks, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load("end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
