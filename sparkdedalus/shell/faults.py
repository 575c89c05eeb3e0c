"""`sparkdedalus faults`: check a program's `pre`/`post` invariant under every
failure scenario of a bounded space (docs/faults.md).

    sparkdedalus faults FILE... --nodes a,b,c --eot 4 --eff 2 [--crashes 0]
                        [--sample N [--seed S]] [--engine spark|reference]
                        [--search auto|ldfi|all] [--network SPEC] [--format text|json]
                        [--store PATH] [--quiet] [--master URL | --remote URL]
                        [--verbose]

The space: every subset of the omissions of the messages A sends to B at tick t
(A != B among --nodes, t < EFF), times the crashes of at most --crashes nodes,
each at one tick in 1..EOT. A scenario is a counterexample when a `pre` fact at
EOT has no equal `post` fact. `--search all` runs every scenario, `--search ldfi`
those the lineage of the runs points to and stops at the first counterexample;
`auto` (the default) enumerates spaces of at most 10,000 scenarios and searches
larger ones. `--network SPEC` (reference engine only)
is the network every scenario adds its failures to: its delay, seed, capacity
and failures. Prints the number of scenarios checked,
the search, the executions and the counterexamples, smallest first (`--format
json`: every one of them). With
--store PATH the smallest ones are also run on the Spark engine and stored in
PATH/counterexample-1, ... for `sparkdedalus diagram`.
Exit codes: 0 no counterexample, 1 some (or program errors), 2 usage errors.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time

from sparkdedalus.errors import UsageError
from sparkdedalus.faults.space import AUTO_ENUMERATE, SEARCHES, resolve
from sparkdedalus.network import Network
from sparkdedalus.shell.check import add_hidden_strict
from sparkdedalus.shell.options import integer, key_value, names, network
from sparkdedalus.shell.run_spark import DEFAULT_MASTER

ENGINES = ("spark", "reference")
FORMATS = ("text", "json")
#: the counterexamples the text format lists (json lists them all)
SHOWN = 10
#: the counterexamples --store stores, smallest first
STORED = 3


def add_parser(commands) -> None:
    """Add the `faults` subcommand to the CLI's subparsers."""
    faults = commands.add_parser("faults", help="check the pre/post invariant under every failure scenario")
    faults.add_argument("files", nargs="+", metavar="FILE")
    faults.add_argument("--nodes", metavar="A,B,..", required=True, type=names, help="the nodes whose messages may be lost or who may crash")
    faults.add_argument("--eot", metavar="N", required=True, type=integer(minimum=1), help="the last tick; pre and post are read there")
    faults.add_argument("--eff", metavar="N", required=True, type=integer(minimum=0), help="omissions at the send ticks t < EFF (0: none)")
    faults.add_argument("--crashes", metavar="N", default=0, type=integer(minimum=0), help="crash at most N nodes (default 0)")
    faults.add_argument("--sample", metavar="N", type=integer(minimum=1), help="check N scenarios drawn at random instead of all")
    faults.add_argument("--seed", metavar="S", type=integer(), help="seed of --sample (default 0)")
    faults.add_argument("--engine", default="spark", choices=ENGINES, help="spark (default: all scenarios at once) or reference (one by one)")
    faults.add_argument("--search", default="auto", choices=SEARCHES,
                        help="all scenarios, ldfi (lineage-driven) or auto (default: all up to "
                             f"{AUTO_ENUMERATE:,} scenarios, else ldfi)")
    faults.add_argument("--network", metavar="SPEC", type=network,
                        help="the network the scenarios add their failures to (reference engine only), "
                             "e.g. capacity=2 (see `run --network`)")
    faults.add_argument("--format", default="text", choices=FORMATS, help="text (default) or json")
    faults.add_argument("--store", metavar="PATH", help=f"store the {STORED} smallest counterexamples as runs under PATH")
    faults.add_argument("--master", metavar="URL", default=DEFAULT_MASTER, help="Spark master (default local[2])")
    faults.add_argument("--remote", metavar="URL", help="use Spark Connect at URL")
    faults.add_argument("--conf", metavar="KEY=VALUE", action="append", default=[], type=key_value,
                        help="a Spark setting for the session the command creates (repeatable)")
    faults.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    faults.add_argument("--verbose", action="store_true", help="keep Spark's own log output")
    add_hidden_strict(faults)
    faults.set_defaults(handler=handle, ui=False)


def handle(args, new_session=None) -> int:
    """`faults`; `new_session(args)` makes the Spark session (default: the one
    --master or --remote asks for, as `run` makes it)."""
    from sparkdedalus.faults.space import MAX_SCENARIOS, Space
    from sparkdedalus.faults.verdict import check_invariant
    from sparkdedalus.program import Program
    options = _options(args)
    args.conf_settings = dict(args.conf)
    program = Program.from_files(*args.files, strict=args.strict)
    try:
        check_invariant(program, options["nodes"])
        space = Space(options["nodes"], options["eot"], options["eff"], options["crashes"])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    base = _base_network(args)
    search = _search(args, space, base)
    if search == "all" and options["sample"] is None and space.count > MAX_SCENARIOS:
        raise UsageError(f"the space has {space.count:,} scenarios, more than {MAX_SCENARIOS:,}: add --sample N")
    stores = _store_paths(args.store)
    if program.warnings:
        print(program.render_warnings(), file=sys.stderr)
    spark = _session(args, new_session) if args.engine == "spark" else None
    started = time.perf_counter()  # the check alone, without the session's start
    if spark is None:
        total = None if search == "ldfi" else min(space.count, options["sample"] or space.count)
        checked = _reference(program, {**options, "search": search, "network": base}, total, args.quiet)
    else:
        from sparkdedalus.faults.verdict import Checked
        from sparkdedalus.spark.engine import Engine
        found = Engine(spark).faults(program, **options, search=search)
        # LDFI's is a Checked; the enumeration's, one batched run over every scenario
        checked = found if search == "ldfi" else Checked(found.scenarios, found.counterexamples,
                                                         executions=found.scenarios)
    seconds = time.perf_counter() - started
    print(_render(args.format, checked, seconds, _replay(args.files, options["eot"]), base))
    if stores and checked.counterexamples:
        _store(program, checked.counterexamples[:STORED], stores, options["eot"], spark or _session(args, new_session),
               base)
    return 1 if checked.counterexamples else 0


def _options(args) -> dict:
    """The space's options as `Engine.faults` takes them; --seed without --sample is refused."""
    if args.seed is not None and args.sample is None:
        raise UsageError("--seed needs --sample N: it seeds the sample's draw")
    return {"nodes": args.nodes, "eot": args.eot, "eff": args.eff, "crashes": args.crashes, "sample": args.sample,
            "seed": args.seed or 0}


def _search(args, space, base) -> str:
    """The search that runs ("all" or "ldfi") over the `base` network."""
    try:
        return resolve(args.search, space, args.sample, base)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _base_network(args):
    """The --network the scenarios add their failures to; refused on Spark,
    whose batched run models only the scenarios' failures."""
    if args.network is None:
        return Network()
    if args.engine == "spark":
        raise UsageError("--network runs on the reference engine only for now: add --engine reference")
    return args.network


def _reference(program, options: dict, total: int | None, quiet: bool):
    """The reference check; `total` scenarios on the progress bar (None: LDFI,
    which counts its executions)."""
    from sparkdedalus.reference.faults import faults
    from sparkdedalus.shell.progress import TickProgress
    with TickProgress(total, enabled=not quiet, unit="scenario" if total else "execution") as bar:
        return faults(program, **options, progress=lambda done, found: bar.show(done, f"{found:,} counterexamples"))


def _session(args, new_session):
    """The session of --master or --remote (`command_session`): given no
    --master, one that starts when a fault run first needs Spark (a space the
    driver holds never does)."""
    from sparkdedalus.shell.run_spark import command_session
    return command_session(args, new_session)


def _render(fmt: str, checked, seconds: float, replay: str, base) -> str:
    """The result as text or json; `replay` + a scenario's network spec (with
    the `base` network's items unless it is the default) replays it."""
    found = checked.counterexamples
    if fmt == "json":
        return json.dumps({"scenarios": checked.scenarios, "counterexamples": [c.to_json() for c in found],
                           "seconds": round(seconds, 3), "executions": checked.executions,
                           "search": checked.search})
    head = _count(checked.scenarios, "scenario") + ", "
    how = f"search {checked.search}, {_count(checked.executions, 'execution')}, {seconds:.2f} s"
    if not found:
        return head + f"no counterexample ({how})"
    order = "the first found" if checked.search == "ldfi" else "smallest first"
    lines = [head + _count(len(found), "counterexample") + f" ({how}), {order}:"]
    lines += [f"  {i}. {_failures(c.scenario)}: missing {', '.join(_fact(f) for f in c.missing)}"
              for i, c in enumerate(found[:SHOWN], 1)]
    if len(found) > SHOWN:
        lines.append(f"  ... {len(found) - SHOWN:,} more (--format json lists them all)")
    default = base == Network()
    first = _failures(found[0].scenario) if default else found[0].scenario.network(base).spec()
    shown = found[0].scenario.size or not default
    lines.append(f"replay the first: {replay}" + (f" --network {shlex.quote(first)}" if shown else ""))
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _replay(files: list, eot: int) -> str:
    """The `run` command that replays a scenario, but for its --network."""
    return f"sparkdedalus run {' '.join(shlex.quote(f) for f in files)} --ticks {eot} --engine reference " \
           f"--relations pre,post --format table"


def _failures(scenario) -> str:
    """A scenario as `--network` items: omit=A>B@T,crash=N@T."""
    items = [f"omit={a}>{b}@{t}" for a, b, t in scenario.omissions] + [f"crash={n}@{t}" for n, t in scenario.crashes]
    return ",".join(items) or "no failure"


def _fact(row: tuple) -> str:
    from sparkdedalus.syntax.printer import format_const
    return f"post({', '.join(format_const(v) for v in row)})"


def _store_paths(store: str | None) -> list:
    """PATH/counterexample-1.. for --store, refused before any work when one is
    locked or already holds a run."""
    if store is None:
        return []
    from sparkdedalus.shell.run_spark import check_store
    paths = [os.path.join(store, f"counterexample-{i}") for i in range(1, STORED + 1)]
    for path in paths:
        check_store(path)
    return paths


def _store(program, counterexamples: list, paths: list, eot: int, spark, base) -> None:
    """Run each counterexample's scenario (over the `base` network) on the Spark engine with a store."""
    from sparkdedalus.spark.engine import Engine
    engine = Engine(spark)
    for path, counterexample in zip(paths, counterexamples):
        engine.run(program, ticks=eot, network=counterexample.scenario.network(base), store=path)
        print(f"stored {_failures(counterexample.scenario)} in {path} "
              f"(draw it: sparkdedalus diagram {path} --out diagram.html)", file=sys.stderr)
