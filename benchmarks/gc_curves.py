#!/usr/bin/env python
"""Persisted state and tick time with and without garbage collection, on the
reference evaluator (docs/gc.md). The Spark engine does not collect yet.

    .venv/bin/python benchmarks/gc_curves.py --plot docs/gc_persisted.png > benchmarks/results/gc-DATE.jsonl
    .venv/bin/python benchmarks/gc_curves.py --quick         # 100 requests, 60 ticks

Runs voting and two-phase commit (benchmarks/gc_workloads.py) with GC on and
off, checks that every output relation is the same at every tick, prints one
JSON object per run (persisted rows per tick: all, and the program's own state,
i.e. without its declared outputs; seconds per tick) and, with --plot FILE,
draws the curves with matplotlib.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gc_workloads  # noqa: E402

from sparkdedalus import Program  # noqa: E402
from sparkdedalus.reference import run  # noqa: E402

WORKLOADS = {"voting": gc_workloads.voting, "two_phase_commit": gc_workloads.two_phase_commit}


def measure(name: str, requests: int, ticks: int) -> list[dict]:
    program = Program.parse(WORKLOADS[name](requests, ticks), f"{name}_{requests}.ded")
    traces = {gc: run(program, ticks, gc=gc) for gc in (True, False)}
    differ = [(t, r) for t in range(1, ticks + 1) for r in program.outputs
              if traces[True].relation(r, t) != traces[False].relation(r, t)]
    if differ:
        raise SystemExit(f"{name}: outputs differ with GC, e.g. {differ[0]}")
    out = []
    for gc, trace in traces.items():
        seconds = [s["seconds"] for s in trace.stats]
        out.append({
            "workload": name, "requests": requests, "ticks": ticks, "gc": gc, "engine": "reference",
            "persisted_rows": [s["persisted_rows"] for s in trace.stats],
            "state_rows": [sum(n for rel, n in s["persisted"].items() if rel not in program.outputs)
                           for s in trace.stats],
            "tick_seconds": [round(s, 5) for s in seconds],
            "median_tick_seconds_last_100": round(statistics.median(seconds[-100:]), 5),
            "total_seconds": round(sum(seconds), 2),
        })
    return out


def plot(results: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(dict.fromkeys(r["workload"] for r in results))
    figure, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 4.2))
    for ax, name in zip(axes, names):
        for r in (r for r in results if r["workload"] == name):
            label = "GC on" if r["gc"] else "GC off"
            ticks = range(1, r["ticks"] + 1)
            ax.plot(ticks, r["persisted_rows"], label=f"all persisted rows, {label}",
                    color="tab:green" if r["gc"] else "tab:red")
            ax.plot(ticks, r["state_rows"], label=f"without the outputs, {label}", linestyle="--",
                    color="tab:green" if r["gc"] else "tab:red")
        ax.set_title(f"{name}: {results[0]['requests']} requests, reference evaluator")
        ax.set_xlabel("tick")
        ax.set_ylabel("persisted rows carried to the next tick")
        ax.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 requests over 60 ticks")
    parser.add_argument("--plot", metavar="FILE", help="write the curves as an image (e.g. docs/gc_persisted.png)")
    args = parser.parse_args()
    requests, ticks = (100, 60) if args.quick else (1000, 500)
    results = []
    for name in WORKLOADS:
        for line in measure(name, requests, ticks):
            print(json.dumps(line), flush=True)
            results.append(line)
    if args.plot:
        plot(results, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
