#!/usr/bin/env python
"""Fault scenarios checked per second (issue 21): all at once as a world column
(`Engine.faults`) against one by one through the Spark engine and through the
reference evaluator, in one process and one session.

    .venv/bin/python benchmarks/faults.py            # 10 .. 100,000 scenarios (docs/engine.md: the 100,000
                                                     # did not finish in 48 minutes at load 15-21)
    .venv/bin/python benchmarks/faults.py --quick    # 10 and 100 scenarios (smoke test)

The program is a retrying broadcast (benchmarks/programs/faults_retry_bench.ded: 4
nodes, every node that has the payload resends it at every tick) over the space
nodes a,b,c,d, EOT 4, EFF 2, at most 2 crashes: 12 channels x 113 crash schedules,
462,848 scenarios. Every size is a sample of it (`Space.sample_indices`, seed 0).

Prints JSON lines on standard output (JVM output goes to standard error):
- "load": `uptime` at the start and at the end (the machine is shared);
- "batched": per size, the wall seconds of `Engine.faults` (rewrite, failure data, the
  run, the verdict and collecting the counterexamples), scenarios per second, the
  counterexamples, the facts per tick, and the driver's memory (JVM peak heap and
  resident set, Python peak resident set) in the session's default driver memory;
- "one_by_one": per size, the rate of `Engine.run` with `scenario.network()` per
  scenario (measured on `--spark-sample` scenarios) and of the reference evaluator
  (measured on up to `--reference-sample`), extrapolated linearly to the size
  (`extrapolated: true` when fewer than all were run); where both ran the same
  scenarios, their verdicts are compared with the batched ones;
- "crossover": the smallest measured size from which the batched run is faster than
  each one-by-one way, and the crossover estimated from a line fitted to the batched
  times (fixed cost + cost per scenario).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import REPO, emit, git_state, jvm_memory, load, log, python_peak_mib, start_session  # noqa: E402

from sparkdedalus import Program  # noqa: E402
from sparkdedalus.faults.space import Space  # noqa: E402
from sparkdedalus.faults.verdict import missing  # noqa: E402

PROGRAM = REPO / "benchmarks" / "programs" / "faults_retry_bench.ded"
SPACE = dict(nodes=("a", "b", "c", "d"), eot=4, eff=2, crashes=2)


def batched(spark, program, size: int) -> dict:
    from sparkdedalus.spark.engine import Engine

    jvm_memory(spark, reset=True)
    started = time.perf_counter()
    checked = Engine(spark).faults(program, **SPACE, sample=size, seed=0)
    seconds = time.perf_counter() - started
    return {"scenarios": checked.scenarios, "seconds": round(seconds, 2),
            "per_second": round(checked.scenarios / seconds, 1),
            "counterexamples": len(checked.counterexamples),
            "facts_per_tick": [s.facts for s in checked.run.stats],
            "tick_seconds": [round(s.seconds, 2) for s in checked.run.stats],
            **jvm_memory(spark), "python_peak_rss_mib": python_peak_mib(),
            "verdicts": {c.scenario: c.missing for c in checked.counterexamples}}


def spark_one(spark, program, scenario) -> tuple:
    from sparkdedalus.spark.engine import Engine

    run = Engine(spark).run(program, SPACE["eot"], network=scenario.network(), keep_history=False)
    facts = run.facts(relations=["pre", "post"])
    return missing(facts["pre"], facts["post"])


def reference_one(program, scenario) -> tuple:
    from sparkdedalus.reference import run

    trace = run(program, SPACE["eot"], scenario.network())
    return missing(trace.relation("pre"), trace.relation("post"))


def one_by_one(fn, scenarios: list) -> tuple[float, dict]:
    """Seconds per scenario, and the verdicts."""
    started = time.perf_counter()
    verdicts = {s: fn(s) for s in scenarios}
    return (time.perf_counter() - started) / len(scenarios), verdicts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 and 100 scenarios only")
    parser.add_argument("--spark-sample", type=int, default=5, help="scenarios run one by one on Spark")
    parser.add_argument("--reference-sample", type=int, default=2000, help="most scenarios run by the reference")
    args = parser.parse_args(argv)
    sizes = [10, 100] if args.quick else [10, 1_000, 10_000, 100_000]
    load("start")
    program = Program.from_files(str(PROGRAM))
    space = Space(**SPACE)
    spark = start_session({})
    emit("config", commit=git_state(), program=str(PROGRAM.relative_to(REPO)), space={**SPACE, "count": space.count},
         sizes=sizes, driver_memory=spark.conf.get("spark.driver.memory", "1g (Spark's default)"))
    log("warm-up")
    batched(spark, program, 2)
    spark_seconds, spark_verdicts = one_by_one(lambda s: spark_one(spark, program, s),
                                               space.sample(sizes[0], 0)[:args.spark_sample])
    fitted = []
    rows = []
    for size in sizes:
        log(f"batched {size}")
        result = batched(spark, program, size)
        verdicts = result.pop("verdicts")
        emit("batched", **result)
        chosen = space.sample(size, 0)
        measured = chosen[:args.reference_sample]
        log(f"reference {len(measured)} of {size}")
        reference_seconds, reference_verdicts = one_by_one(lambda s: reference_one(program, s), measured)
        agree = all(verdicts.get(s, ()) == v for s, v in reference_verdicts.items())
        spark_agree = all(verdicts.get(s, ()) == v for s, v in spark_verdicts.items() if s in set(chosen))
        emit("one_by_one", scenarios=size,
             spark={"per_second": round(1 / spark_seconds, 2), "measured_on": len(spark_verdicts),
                    "extrapolated": True, "seconds_estimated": round(spark_seconds * size, 1)},
             reference={"per_second": round(1 / reference_seconds, 1), "measured_on": len(measured),
                        "extrapolated": len(measured) < size, "seconds_estimated": round(reference_seconds * size, 1)},
             batched_over_reference=round(result["per_second"] * reference_seconds, 2),
             batched_over_spark=round(result["per_second"] * spark_seconds, 2),
             reference_verdicts_agree=agree, spark_verdicts_agree_where_shared=spark_agree)
        fitted.append((size, result["seconds"]))
        rows.append((size, result["seconds"], reference_seconds, spark_seconds))
    # batched seconds ~ fixed + per * size, fitted by least squares
    n = len(fitted)
    mean_x = sum(x for x, _ in fitted) / n
    mean_y = sum(y for _, y in fitted) / n
    per = sum((x - mean_x) * (y - mean_y) for x, y in fitted) / sum((x - mean_x) ** 2 for x, _ in fitted)
    fixed = mean_y - per * mean_x
    crossover = {}
    for way, column in (("reference", 2), ("spark", 3)):
        wins = [size for size, seconds, *costs in rows if seconds < costs[column - 2] * size]
        each = sum(r[column] for r in rows) / len(rows)
        crossover[way] = {"first_measured_size_batched_wins": wins[0] if wins else None,
                          "estimated": round(fixed / (each - per)) if each > per else None}
    emit("crossover", batched_fixed_seconds=round(fixed, 2), batched_seconds_per_scenario=round(per, 6), **crossover)
    load("end")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
