#!/usr/bin/env python
"""The scalable protocols at scale on the Spark engine (issue 32, "Scale on Spark";
docs/protocols.md): ScalableVoting and Scalable2PC as `benchmarks/protocols.py`
builds them (the paper's decouplings, `--partitions` partitions each, the clients
outside the rewrites), run by `Engine.run` with the distribution policies as the
physical partitioning, with 10, 100 and 1,000 closed-loop clients for 100 ticks.

    .venv/bin/python benchmarks/protocols_spark.py > benchmarks/results/protocols-spark-DATE.jsonl
    .venv/bin/python benchmarks/protocols_spark.py --protocols voting --clients 4 --ticks 6 --check

One JSON line per run: protocol, partitions, clients, ticks, wall seconds (the
engine's run, the session already started and warmed by a small run), simulated
ticks per second, facts per second (the facts the ticks hand on, `TickStats.facts`,
summed, over the seconds), the median tick, Spark jobs, and the commands answered
(`committed` at the last tick). With `--check` the reference evaluator then runs the
same program (a "protocol_check" line after the run's) and its answered commands must
be the same (exit 1 otherwise). The
programs' clients number their commands K, K + 1000, ...: at most 1,000 clients (client
1,000's ids are the multiples of 1,000, which no other client's are). The
network is the default one: a capacity models a node's cost in the simulation
(`benchmarks/protocols.py`), it is not what the engine's speed is measured on.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import protocols  # noqa: E402
from engine import Jobs, emit, git_state, load, log, start_session  # noqa: E402

from sparkdedalus.throughput.closed_loop import COMMITTED, client_rows  # noqa: E402


def run_once(spark, jobs, protocol: str, partitions: int, clients: int, ticks: int) -> tuple[dict, tuple]:
    """The engine's run: its row, and (program, edb) for `check`."""
    from sparkdedalus.spark.engine import Engine

    program, _ = protocols.scalable(protocol, partitions)
    edb = client_rows(program, clients)
    group = f"{protocol}-{partitions}-{clients}"
    jobs.group(group)
    started = time.perf_counter()
    run = Engine(spark).run(program, ticks=ticks, edb=edb, gc=True, keep_history=False)
    answered = len(run.facts(ticks, [COMMITTED])[COMMITTED])
    seconds = time.perf_counter() - started
    jobs.settle()
    facts = sum(s.facts for s in run.stats)
    out = {"protocol": protocol, "variant": "scalable", "partitions": partitions, "clients": clients,
           "ticks": ticks, "seconds": round(seconds, 2), "ticks_per_second": round(ticks / seconds, 2),
           "facts": facts, "facts_per_second": round(facts / seconds),
           "median_tick_seconds": round(statistics.median(s.seconds for s in run.stats), 3),
           "spark_jobs": len(jobs.ids(group)), "answered": answered}
    return out, (program, edb)


def check(row: dict, program, edb) -> dict:
    """The reference evaluator's run of the same program: its seconds, the
    commands it answered and whether they are the engine's number."""
    from sparkdedalus.reference import run as reference_run

    started = time.perf_counter()
    trace = reference_run(program, ticks=row["ticks"], edb=edb, gc=True)
    answered = len(trace.relation(COMMITTED, tick=row["ticks"]))
    return {"protocol": row["protocol"], "partitions": row["partitions"], "clients": row["clients"],
            "ticks": row["ticks"], "reference_seconds": round(time.perf_counter() - started, 2),
            "reference_answered": answered, "answered": row["answered"], "agree": answered == row["answered"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocols", default="voting,2pc",
                        help="voting, 2pc, paxos (comma-separated)")
    parser.add_argument("--partitions", type=int, default=5, help="partitions of each scalable component")
    parser.add_argument("--clients", default="10,100,1000", help="client counts (at most 1000)")
    parser.add_argument("--ticks", type=int, default=100)
    parser.add_argument("--check", action="store_true", help="compare the answered commands with the reference")
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.clients.split(",")]
    if any(not 1 <= c <= 1000 for c in counts):
        parser.error("--clients: each count between 1 and 1000 (the programs' command ids)")
    names = args.protocols.split(",")
    if any(n not in protocols.SHAPES for n in names):
        parser.error(f"--protocols: of {', '.join(protocols.SHAPES)}")
    load("start")
    spark = start_session({})
    jobs = Jobs(spark)
    run_once(spark, jobs, names[0], args.partitions, 2, 3)  # warm-up: JVM, first plans
    agree = True
    for protocol in names:
        for clients in counts:
            result, (program, edb) = run_once(spark, jobs, protocol, args.partitions, clients, args.ticks)
            log(f"{protocol} {clients} clients: {result['seconds']} s, {result['answered']} answered")
            emit("protocol_on_spark", commit=git_state(), **result)
            if args.check:
                checked = check(result, program, edb)
                agree = agree and checked["agree"]
                emit("protocol_check", **checked)
    load("end")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
