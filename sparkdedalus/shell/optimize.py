"""`sparkdedalus optimize FILE... --budget MACHINES [--clients N] [--capacity C]
[--ticks T] [--max-partitions K] [--engine reference|spark] [--out FILE]
[--format text|json]`: search for the rewrite plan that raises a closed-loop
program's simulated throughput within a machine budget (docs/protocols.md).

The search is the library's (`sparkdedalus.throughput.optimize`: greedy on
the bottleneck node, each plan simulated under `capacity=C`); this module
parses the options, picks the simulator (the reference evaluator, or with
`--engine spark` the Spark engine's, `spark.traffic.Simulator`, in the
session --master or --remote asks for, as `run` makes it) and prints the plan
as `rewrite` options, its predicted throughput and the base's, the machines,
the time the search took (without the session's start); `--out` writes the
rewritten program. Bad options, a program that is not closed-loop
(docs/protocols.md) and a budget below the program's own machines: one line,
exit 2.
"""

from __future__ import annotations

import json

from sparkdedalus.errors import UsageError
from sparkdedalus.shell.check import add_hidden_strict
from sparkdedalus.shell.options import integer, key_value, writable, write_text
from sparkdedalus.shell.run_spark import DEFAULT_MASTER

FORMATS = ("text", "json")
#: --engine -> what the search simulates on, as the text output names it
ENGINES = {"reference": "the reference evaluator", "spark": "the Spark engine"}


def add_parser(commands) -> None:
    parser = commands.add_parser("optimize", help="search rewrites for the best simulated throughput in a budget")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--budget", metavar="MACHINES", required=True, type=integer(minimum=1),
                        help="the most machines (nodes other than the clients) the plan may use")
    parser.add_argument("--clients", metavar="N", default=64, type=integer(minimum=1),
                        help="the most closed-loop clients: each plan's peak over 1, 2, 4, .. N (default 64)")
    parser.add_argument("--capacity", metavar="C", default=8, type=integer(minimum=1),
                        help="messages a node handles per tick (default 8)")
    parser.add_argument("--ticks", metavar="T", default=100, type=integer(minimum=4),
                        help="ticks per simulation; throughput over the second half (default 100)")
    parser.add_argument("--max-partitions", metavar="K", default=5, type=integer(minimum=2),
                        help="the most partitions tried for a component (default 5)")
    parser.add_argument("--engine", default="reference", choices=tuple(ENGINES),
                        help="the simulator: reference (default) or spark (the same plan, each run on Spark)")
    parser.add_argument("--out", metavar="FILE", type=writable, help="write the rewritten program to FILE")
    parser.add_argument("--format", default="text", choices=FORMATS, help="text (default) or json")
    parser.add_argument("--master", metavar="URL", default=DEFAULT_MASTER, help="Spark master (default local[2])")
    parser.add_argument("--remote", metavar="URL", help="use Spark Connect at URL")
    parser.add_argument("--conf", metavar="KEY=VALUE", action="append", default=[], type=key_value,
                        help="a Spark setting for the session the command creates (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="keep Spark's own log output")
    add_hidden_strict(parser)
    parser.set_defaults(handler=handle, ui=False)


def render(result, files, network: str, engine: str) -> str:
    plan, base = result.plan, result.base
    m = plan.measurement
    ratio = f", {plan.throughput / base.throughput:.2f}x" if base.throughput else ""
    command = " ".join(["sparkdedalus rewrite", *files, *(s.option() for s in plan.steps)])
    return "\n".join([
        f"plan: {command if plan.steps else 'the program as written (no rewrite raises the throughput)'}",
        f"throughput: {plan.throughput:g} commands/tick (base {base.throughput:g}{ratio}); peak at {m.clients} "
        f"clients, {network}, ticks {m.window[0] + 1}..{m.window[1]}",
        f"machines: {plan.machines} (base {base.machines})",
        f"bottleneck: {m.bottleneck} (component {m.components.get(m.bottleneck)}), "
        f"{m.load.get(m.bottleneck, 0.0):g} messages/tick",
        f"searched: greedy on the bottleneck, {result.tried} plan(s) simulated on {ENGINES[engine]} in "
        f"{result.seconds:.1f} s",
        *(["scope: the clients' rules stay as written (rewrite --decouple has no scope: rerun, it redirects what "
           "they send instead of relaying it; --out writes the program measured)"] if plan.steps else [])])


def handle(args, new_session=None) -> int:
    """`optimize`; with `--engine spark`, `new_session(args)` makes the Spark
    session (default: the one --master or --remote asks for, as `run` makes it)."""
    from sparkdedalus.network import Network
    from sparkdedalus.program import Program
    from sparkdedalus.rewrite.source import source_rules
    from sparkdedalus.rewrite.text import program_text
    from sparkdedalus.throughput import apply_plan, client_rows
    from sparkdedalus.throughput.optimize import optimize
    program = Program.from_files(*args.files, strict=args.strict)
    network = Network.parse(f"capacity={args.capacity}")
    if args.conf and args.engine != "spark":
        raise UsageError("--conf needs the spark engine")
    try:
        client_rows(program, 1)  # a program that is not closed-loop is refused before a session starts
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    simulate = _simulator(args, new_session)
    try:
        result = optimize(program, args.budget, args.clients, network, args.ticks, args.max_partitions, simulate)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.out:
        rewritten, notes = apply_plan(result.base.program, result.plan.steps, result.base.scope, coordinated=False)
        write_text(args.out, program_text(rewritten, source_rules(rewritten),
                                          header=["sparkdedalus optimize: " + n for n in notes]))
    print(json.dumps({**result.to_json(), "engine": args.engine}, indent=2) if args.format == "json"
          else render(result, args.files, network.spec(), args.engine))
    return 0


def _simulator(args, new_session):
    """The simulator of `--engine`: the reference evaluator's, or the Spark
    engine's in a session made once for the whole search."""
    from sparkdedalus.throughput.measure import reference
    if args.engine == "reference":
        return reference
    from sparkdedalus.shell.run_spark import command_session
    from sparkdedalus.spark.traffic import Simulator
    args.conf_settings = dict(args.conf)
    return Simulator(command_session(args, new_session))
