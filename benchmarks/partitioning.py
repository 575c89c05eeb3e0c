#!/usr/bin/env python
"""Distribution policies as Spark's partitioning (issue 20): the Spark engine with and
without `policy` on the same programs, in one process and one session.

    .venv/bin/python benchmarks/partitioning.py                    # 100,000 ballots and transactions
    .venv/bin/python benchmarks/partitioning.py --quick            # 300 of each in 2 partitions (smoke test)
    .venv/bin/python benchmarks/partitioning.py --size 20000 --repeat 2
    .venv/bin/python benchmarks/partitioning.py --conf spark.sql.codegen.wholeStage=true

Workloads (the participants are facts of the text, so every partition knows them; the
rest is EDB generated with Spark, never in Python):
- "voting": benchmarks/programs/voting_bench.ded, SIZE ballots all asked at tick 1 to a
  leader with 3 participants (every 7th ballot gets a "no"); done by tick 6.
- "two_phase_commit": benchmarks/programs/two_phase_commit_components_bench.ded, SIZE
  transactions all begun at tick 1 with 3 participants (every 10th refused), 10
  inquiries at tick 4; done by tick 6.

Each is run with the policy (`Engine.run(policy=True)`, the default) and without it,
alternately, `--repeat` times each. Per tick: wall seconds, the Exchange operators of the
tick's physical plans (`TickStats.exchanges`) and the facts handed on; per run the
median tick; and a digest of every tick (per relation: the number of facts and the sum
of their hashes, one Spark job per tick) compared between the two sides: "identical".

Prints one JSON object per line on standard output ("measurement": "load", "config",
"run", "comparison", "done") and nothing else there.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for path in (REPO, REPO / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from engine import emit, load, spark_settings, start_session  # noqa: E402

PROGRAMS = REPO / "benchmarks" / "programs"
TICKS = 6


def voting_edb(spark, size: int) -> dict:
    ballots = spark.range(size).selectExpr("id", "concat('b', id) AS b")
    parts = spark.range(1, 4).selectExpr("concat('p', id) AS p", "id AS k")
    return {
        "ask_at": ballots.selectExpr("'client' AS client", "'leader' AS leader", "b", "1L AS at"),
        "opinion": ballots.crossJoin(parts).selectExpr(
            "p", "b", "CASE WHEN id % 7 = 6 AND k = 2 THEN 'no' ELSE 'yes' END AS v"),
    }


def tpc_edb(spark, size: int) -> dict:
    txns = spark.range(size).selectExpr("id", "concat('t', id) AS x")
    return {
        "txn": txns.selectExpr("'coord' AS coord", "x", "1L AS start"),
        "refuse": txns.where("id % 10 = 9").selectExpr("concat('p', id % 3 + 1) AS part", "x"),
        "inquire_at": txns.where("id < 10").selectExpr("'p3' AS part", "'coord' AS coord", "x", "4L AS at"),
    }


WORKLOADS = {
    "voting": ("voting_bench.ded", voting_edb),
    "two_phase_commit": ("two_phase_commit_components_bench.ded", tpc_edb),
}


def digest(run, program, tick: int) -> dict:
    """{relation: [facts, sum of their hashes]} at `tick`, with one Spark job."""
    from functools import reduce

    from pyspark.sql import DataFrame

    frames = [run.relation(name, tick).selectExpr(f"'{name}' AS rel", "CAST(xxhash64(*) AS DECIMAL(38, 0)) AS h")
              for name in program.relations]
    rows = reduce(DataFrame.unionAll, frames).groupBy("rel").agg({"h": "sum", "*": "count"}).collect()
    return {r["rel"]: [r["count(1)"], str(r["sum(h)"])] for r in rows}


def run_once(spark, name: str, size: int, policy: bool, partitions: int | None) -> dict:
    from sparkdedalus import Program
    from sparkdedalus.spark.engine import Engine

    file, edb_of = WORKLOADS[name]
    program = Program.from_files(str(PROGRAMS / file))
    started = time.perf_counter()
    def progress(tick, stats):  # on standard error: a large tick takes minutes
        print(f"{name} policy={policy} tick {tick}: {stats.seconds:.1f} s, {stats.facts} facts",
              file=sys.stderr, flush=True)

    run = Engine(spark).run(program, TICKS, edb=edb_of(spark, size), policy=policy, partitions=partitions,
                            count_exchanges=True, progress=progress)
    total = time.perf_counter() - started
    per_tick = [{"tick": s.tick, "seconds": round(s.seconds, 3), "exchanges": s.exchanges, "facts": s.facts}
                for s in run.stats]
    digests = {t: digest(run, program, t) for t in range(1, TICKS + 1)}
    return {"per_tick": per_tick, "total_seconds": round(total, 3), "digests": digests,
            "tick_seconds_median": statistics.median(t["seconds"] for t in per_tick),
            "exchanges_total": sum(t["exchanges"] or 0 for t in per_tick)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000, help="ballots and transactions (default 100000)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side (default 1)")
    parser.add_argument("--partitions", type=int, default=None,
                        help="fix the engine's partitions (default: sized to the data)")
    parser.add_argument("--quick", action="store_true", help="300 of each in 2 partitions, one run (smoke test)")
    parser.add_argument("--workloads", default="voting,two_phase_commit")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for the session (repeatable)")
    args = parser.parse_args(argv)
    conf = spark_settings(parser, args.conf)
    size = 300 if args.quick else args.size
    partitions = 2 if args.quick else args.partitions
    load("start")
    spark = start_session(conf)
    emit("config", size=size, repeat=args.repeat, ticks=TICKS, quick=args.quick, partitions=partitions, conf=conf,
         spark=spark.version, shuffle_partitions=spark.conf.get("spark.sql.shuffle.partitions"),
         require_all_cluster_keys=spark.conf.get("spark.sql.requireAllClusterKeysForCoPartition"))
    failed = 0
    for name in args.workloads.split(","):
        results: dict = {True: [], False: []}
        for _ in range(args.repeat):
            for policy in (True, False):
                result = run_once(spark, name, size, policy, partitions)
                results[policy].append(result)
                emit("run", workload=name, size=size, policy=policy,
                     **{k: v for k, v in result.items() if k != "digests"})
        with_, without = results[True], results[False]
        identical = all(r["digests"] == without[0]["digests"] for r in with_ + without)
        med_with = statistics.median(t["seconds"] for r in with_ for t in r["per_tick"])
        med_without = statistics.median(t["seconds"] for r in without for t in r["per_tick"])
        exchanges = {side: [t["exchanges"] for t in rs[0]["per_tick"]] for side, rs in
                     (("with_policy", with_), ("without_policy", without))}
        fewer = sum(exchanges["with_policy"]) < sum(exchanges["without_policy"])
        failed += not (identical and fewer)
        emit("comparison", workload=name, size=size, identical=identical, fewer_exchanges=fewer,
             exchanges_per_tick=exchanges,
             tick_seconds_median={"with_policy": med_with, "without_policy": med_without},
             ratio_without_over_with=round(med_without / med_with, 3) if med_with else None,
             facts_last_tick=with_[0]["per_tick"][-1]["facts"])
    load("end")
    emit("done", failed=failed)
    spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
