#!/usr/bin/env python
"""The calibrated throughput model's predictions beside the artifact's measurements
(issue 49, item 8; docs/protocols.md, "The calibrated model").

    .venv/bin/python benchmarks/calibrated.py [--clients 8] [--ticks 300] [--format markdown|json]

Fits `sparkdedalus.throughput.calibrated` on the three base protocols' measured
throughputs (seed 000: voting 100,000, 2PC 30,000, Paxos 50,000 commands/s) and
predicts every variant of the artifact's table (base and scalable on 1, 3 and 5
partitions, the programs of benchmarks/protocols.py), each node's work per command
read from a run of `--ticks` ticks with `--clients` clients (and which relations are
broadcasts, from a run with one). Prints the coefficients, then
one row per variant: predicted and measured commands/s and ratios, the error, the
bottleneck node and its work.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for path in (REPO, REPO / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from protocols import base, scalable  # noqa: E402

from sparkdedalus.throughput.calibrated import MEASURED, bottleneck, calibrate, predict, work  # noqa: E402

NAMES = {"voting": "voting", "2pc": "2PC", "paxos": "Paxos"}


def rows(clients: int, ticks: int) -> tuple:
    """(the coefficients, one dict per variant of `MEASURED`)."""
    works = {p: work(base(p), clients, ticks) for p in dict.fromkeys(m.protocol for m in MEASURED)}
    c = calibrate(works)
    out, bases = [], {}
    for m in MEASURED:
        w = works[m.protocol] if m.base else work(scalable(m.protocol, m.partitions)[0], clients, ticks)
        predicted = predict(w, c)
        if m.base:
            bases[m.protocol] = (predicted, m.throughput)
        node = bottleneck(w, c)
        out.append({"protocol": m.protocol, "partitions": m.partitions, "predicted": predicted,
                    "measured": m.throughput, "error": predicted / m.throughput - 1,
                    "predicted_ratio": predicted / bases[m.protocol][0],
                    "measured_ratio": m.throughput / bases[m.protocol][1], "fitted": m.base,
                    "bottleneck": node, "work": asdict(w[node])})
    return c, out


def markdown(c, table) -> str:
    lines = [f"coefficients (microseconds): {', '.join(f'{k} {v:.3f}' for k, v in asdict(c).items())}", "",
             "| protocol | configuration | predicted (commands/s) | measured | error | predicted ratio | "
             "measured ratio | within 30% | bottleneck (received, sent, fan-out, commands per command) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in table:
        config = "base (fitted)" if r["fitted"] else f"scalable, {r['partitions']} partition(s)"
        w = ", ".join(f"{v:.2f}" for v in r["work"].values())
        lines.append(f"| {NAMES[r['protocol']]} | {config} | {r['predicted']:,.0f} | {r['measured']:,.0f} | "
                     f"{r['error']:+.0%} | {r['predicted_ratio']:.1f}x | {r['measured_ratio']:.1f}x | "
                     f"{'yes' if abs(r['error']) <= 0.3 else 'no'} | {r['bottleneck']} ({w}) |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="closed-loop clients of each run (default 8)")
    parser.add_argument("--ticks", type=int, default=300, help="ticks of each run (default 300)")
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    args = parser.parse_args(argv)
    if args.ticks < 4 or args.clients < 1:
        parser.error("--ticks needs at least 4 and --clients at least 1")
    c, table = rows(args.clients, args.ticks)
    if args.format == "json":
        sys.stdout.write(json.dumps({"coefficients": asdict(c), "rows": table}) + "\n")
    else:
        sys.stdout.write(markdown(c, table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
