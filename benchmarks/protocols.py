#!/usr/bin/env python
"""Simulated throughput of voting, two-phase commit and Paxos, base and scalable (issue 32,
docs/protocols.md): the scaling paper's section 5.2 experiment in the reference
evaluator, with each node's work per tick bounded by the network's capacity.

    .venv/bin/python benchmarks/protocols.py --out benchmarks/results/protocols-DATE.jsonl \\
        --plot docs/protocols_throughput.png
    .venv/bin/python benchmarks/protocols.py --protocols voting --partitions 1 --clients 1,2 --ticks 40

For each protocol (benchmarks/programs/voting_closed.ded, two_phase_commit_closed.ded:
3 participants, as in the paper; paxos_closed.ded: 3 acceptors, 3 replicas, its
scalable shape with the p2a and p2b proxy leaders) and each configuration, the base
program and the scalable one on 1, 3 and 5 partitions (`SHAPES`: the paper's
decouplings, applied with `sparkdedalus.throughput.apply_plan`, the clients outside
the scope), it runs growing client counts (`--clients`) under `--network capacity=C`
(`--capacity`) until the throughput stops growing (`throughput.saturate`), each for
`--ticks` ticks, and measures answered commands per tick over the second half of the run. One JSON object
per configuration on stdout, or in `--out`: protocol, variant, partitions, network,
participants, ticks, window, the curve (per client count: throughput, bottleneck node
and its load), peak_throughput and peak_clients, ratio (peak over the base's peak),
bottleneck (at the peak), bottleneck_load, machines, the plan (as `rewrite` options).
`--plot FILE` draws throughput against clients, one line per configuration.
Reference engine only: the figures are in ticks, deterministic, so wall time does
not matter; a configuration takes a few seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sparkdedalus import Program  # noqa: E402
from sparkdedalus.network import Network  # noqa: E402
from sparkdedalus.throughput import Step, apply_plan, saturate  # noqa: E402

PROGRAMS = REPO / "benchmarks" / "programs"
PARTICIPANTS = 3


def voting_plan(program, k: int) -> tuple:
    """ScalableVoting: the broadcasters (ballot) and collectors (the rest) leave the
    leader, which relays the clients' requests; they and the participants run on k
    partitions each (`rewrite --auto leader,participant --partitions K` gives the same
    shape, with the names ballot_broadcasters and vote_collectors)."""
    return (Step("decouple", "leader", ("ballot",), "broadcasters"),
            Step("decouple", "leader", ("votes", "nvotes", "complete", "result", "replied"), "collectors"),
            *(Step("partition", c, partitions=k) for c in ("broadcasters", "collectors", "participant")))


def two_phase_commit_plan(program, k: int) -> tuple:
    """Scalable2PC: each participant's ackers (its rules reading commit) leave it; the vote
    requesters (prepare), committers (votes, commit log, commit) and enders (acks, end
    log, answer) leave the coordinator, which relays the clients' requests; all but the
    coordinator run on k partitions (scripts/regen-protocols.sh's decouplings)."""
    ackers = tuple(str(r.pos.line) for r in program.rules
                   if r.component == "participant" and "commit" in (a.name for a in r.positive_atoms))
    return (Step("decouple", "participant", ackers, "ackers"),
            Step("decouple", "coordinator", ("prepare",), "requesters"),
            Step("decouple", "coordinator", ("yes", "nyes", "commit_log", "commit", "sent_commit"), "committers"),
            Step("decouple", "coordinator", ("acks", "nacks", "end_log", "done", "ended"), "enders"),
            *(Step("partition", c, partitions=k)
              for c in ("requesters", "committers", "enders", "participant", "ackers")))


def paxos_plan(program, k: int) -> tuple:
    """ScalablePaxos (docs/protocols.md, "ScalablePaxos"; examples/protocols/paxos_scalable.ded):
    the p2a proxy leaders (the p2a sends) and the p2b proxy leaders (the p2b collection)
    leave the proposer, and they and the acceptors run on k partitions, by slot (the
    acceptors partially partitioned, a coordinator each)."""
    return (Step("decouple", "proposer", ("p2a",), "p2a_proxy_leaders"),
            Step("decouple", "proposer", ("accepted_by", "accepts", "chosen", "decide", "announced"),
                 "p2b_proxy_leaders"),
            *(Step("partition", c, partitions=k) for c in ("p2a_proxy_leaders", "p2b_proxy_leaders", "acceptor")))


#: protocol -> (program file, the components in the rewrites' scope, the scalable plan for k partitions)
SHAPES = {
    "voting": ("voting_closed.ded", ("leader", "participant"), voting_plan),
    "2pc": ("two_phase_commit_closed.ded", ("coordinator", "participant"), two_phase_commit_plan),
    "paxos": ("paxos_closed.ded", ("proposer", "acceptor", "replica"), paxos_plan),
}


def base(protocol: str) -> Program:
    return Program.from_files(str(PROGRAMS / SHAPES[protocol][0]))


def scalable(protocol: str, k: int) -> tuple:
    """(the scalable program on k partitions, its plan)."""
    _, scope, plan = SHAPES[protocol]
    program = base(protocol)
    steps = plan(program, k)
    return apply_plan(program, steps, scope)[0], steps


def configuration(protocol: str, partitions, counts, network: Network, ticks: int) -> dict:
    """One configuration's curve and peak (partitions None: the base program)."""
    program, steps = (base(protocol), ()) if partitions is None else scalable(protocol, partitions)
    curve = saturate(program, counts, network, ticks)
    peak = max(curve, key=lambda m: m.throughput)  # the first of the best
    return {"protocol": protocol, "variant": "base" if partitions is None else "scalable",
            "partitions": partitions, "network": network.spec(), "participants": PARTICIPANTS,
            "ticks": ticks, "window": list(peak.window), "curve": [m.to_json() for m in curve],
            "peak_throughput": peak.throughput, "peak_clients": peak.clients,
            "bottleneck": peak.bottleneck, "bottleneck_load": peak.load.get(peak.bottleneck, 0.0),
            "machines": peak.machines, "plan": [s.option() for s in steps]}


def run_all(protocols, partitions, counts, network: Network, ticks: int) -> list[dict]:
    results = []
    for protocol in protocols:
        ks = (None, *partitions) if SHAPES[protocol][2] else (None,)
        rows = [configuration(protocol, k, counts, network, ticks) for k in ks]
        for row in rows:
            row["ratio"] = round(row["peak_throughput"] / rows[0]["peak_throughput"], 3) \
                if rows[0]["peak_throughput"] else None
        results += rows
    return results


def plot(results: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    protocols = list(dict.fromkeys(r["protocol"] for r in results))
    figure, axes = plt.subplots(1, len(protocols), figsize=(6 * len(protocols), 4.2), squeeze=False)
    for ax, protocol in zip(axes[0], protocols):
        for r in (r for r in results if r["protocol"] == protocol):
            label = "base" if r["variant"] == "base" else f"scalable, {r['partitions']} partition(s)"
            ax.plot([p["clients"] for p in r["curve"]], [p["throughput"] for p in r["curve"]], marker="o",
                    label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("clients")
        ax.set_ylabel("committed commands per tick")
        ax.set_title(f"{protocol} ({results[0]['network']})")
        ax.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def integers(text: str) -> list:
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got '{text}'") from None
    if not values or min(values) < 1 or values != sorted(set(values)):
        raise argparse.ArgumentTypeError(f"expected increasing integers >= 1, got '{text}'")
    return values


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocols", default="voting,2pc,paxos", help=f"comma-separated, of {', '.join(SHAPES)}")
    parser.add_argument("--clients", type=integers, default=[1, 2, 4, 8, 16, 32, 64, 128])
    parser.add_argument("--partitions", type=integers, default=[1, 3, 5])
    parser.add_argument("--capacity", type=int, default=8,
                        help="messages a node handles per tick (default 8; 0: no bound, the default network)")
    parser.add_argument("--ticks", type=int, default=200, help="ticks per run; throughput over the second half")
    parser.add_argument("--out", help="write the JSON lines to this file (default: stdout)")
    parser.add_argument("--plot", help="draw throughput against clients to this PNG")
    args = parser.parse_args(argv)
    protocols = args.protocols.split(",")
    unknown = [p for p in protocols if p not in SHAPES]
    if unknown:
        parser.error(f"unknown protocol '{unknown[0]}' (known: {', '.join(SHAPES)})")
    if args.ticks < 4 or args.capacity < 0:
        parser.error("--ticks needs at least 4 and --capacity at least 0")
    network = Network.parse(f"capacity={args.capacity}" if args.capacity else "")
    results = run_all(protocols, args.partitions, args.clients, network, args.ticks)
    text = "".join(json.dumps(r) + "\n" for r in results)
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    if args.plot:
        plot(results, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
