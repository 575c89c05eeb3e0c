"""`sparkdedalus run`: evaluate a program and print the facts of one tick as JSON.

    sparkdedalus run FILE... --ticks N [--engine spark|reference] [--format json|table|csv]
                     [--relations a,b] [--at K] [--seed S] [--network SPEC]
                     [--inputs DIR] [--master URL | --remote URL] [--conf KEY=VALUE]... [--ui]
                     [--stats FILE] [--quiet] [--store PATH [--resume] [--commit-every K]] [--gc auto|on|off]
                     [--provenance]

Prints the facts of tick K (default: the last); `--format json` (the default)
prints `{"tick": K, "relations": {"name": [[row], ...]}}`, the shared JSON
contract of the engines (see `output.facts_json`); the Spark engine adds
`"placement"`, where each tick it ran went (`["driver", "spark", ...]`,
docs/engine.md: the facts are the same either way). With `--store PATH` (Spark
engine) every tick (every K with `--commit-every K`) is committed to a run
directory of Delta tables (docs/storage.md) and `--resume` continues the run
stored there. `--conf` settings apply to the session the command creates.
`--gc` drops persisted facts that can no longer change anything (docs/gc.md):
`auto` (the default) only facts of relations outside the declared outputs, and
nothing when the program declares no `.output`; `on` every relation the GC
analysis finds a rule for; `off` nothing. When a printed relation is collected,
a line on stderr says so, and `--format json` names it in `"gc_collected"`.
`--stats` reports the persisted rows carried after every tick (both engines).
`--provenance` (not with csv, nor --store) adds every derivation of every
printed fact: a `"provenance"` list of records in JSON, a derivations section
after the table (docs/provenance.md).
Exit codes: 0 success, 1 program or data errors (a run out of memory among
them), 2 usage errors (one line each).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from sparkdedalus.errors import UsageError
from sparkdedalus.network import Network
from sparkdedalus.output import FORMATS, render
from sparkdedalus.shell.check import add_hidden_strict
from sparkdedalus.shell.options import integer, key_value, names, network, writable
from sparkdedalus.shell.run_spark import DEFAULT_MASTER
from sparkdedalus.shell.stats import collected, gc_stats, say_collected, shown_collected, write_stats

ENGINES = ("spark", "reference")
GC_MODES = ("auto", "on", "off")  # analysis.gc.MODES



def add_parser(commands) -> None:
    """Add the `run` subcommand to the CLI's subparsers."""
    run = commands.add_parser("run", help="run a program and print the facts of one tick as JSON")
    add_arguments(run)
    run.set_defaults(handler=handle)


def add_arguments(run, session_options: bool = True) -> None:
    """The options of `run`. Without `session_options` (a spark-submit job,
    jobs/run_program.py): no --engine, --master, --remote or --verbose, and
    --store is required."""
    run.add_argument("files", nargs="+", metavar="FILE")
    if session_options:
        run.add_argument("--engine", default="spark", choices=ENGINES, help="spark (default) or reference")
    else:  # the job's session is spark-submit's: these options have fixed values
        run.set_defaults(engine="spark", master=None, remote=None, verbose=False, ui=False, provenance=False)
    run.add_argument("--ticks", metavar="N", dest="tick_count", required=True, type=integer(minimum=1),
                     help="run ticks 1..N (required)")
    run.add_argument("--format", default="json", choices=FORMATS, help="output format: json (default), table or csv")
    run.add_argument("--relations", metavar="A,B", dest="relation_list", type=names,
                     help="relations to print (default: the program's outputs)")
    run.add_argument("--at", metavar="K", dest="at_tick", type=integer(minimum=1),
                     help="the tick to print (default: the last)")
    run.add_argument("--seed", metavar="S", type=integer(),
                     help="seed of the delay model and of choose (overrides seed= in --network)")
    run.add_argument("--network", metavar="SPEC", dest="network_model", default=Network(), type=network,
                     help="e.g. 'delay=uniform(1,3),omit=a>b@2,crash=b@3' (default: every message arrives at t+1)")
    run.add_argument("--inputs", metavar="DIR", help="directory .input paths are relative to (default: the program's)")
    if session_options:
        run.add_argument("--master", metavar="URL", default=DEFAULT_MASTER,
                         help="Spark master for the session the run creates (default local[2])")
        run.add_argument("--remote", metavar="URL", help="use Spark Connect at URL (e.g. sc://host:15002 or local[2])")
    run.add_argument("--conf", metavar="KEY=VALUE", action="append", default=[], type=key_value,
                     help="a Spark setting for the session the run creates (repeatable), e.g. spark.driver.memory=8g"
                     if session_options else "a runtime Spark setting for the job's session (repeatable); "
                     "the driver's memory is spark-submit's --driver-memory")
    if session_options:
        run.add_argument("--ui", action="store_true", help="keep the Spark UI on and print its address")
    run.add_argument("--stats", metavar="FILE", type=writable, help="write run statistics as JSON to FILE")
    run.add_argument("--store", metavar="PATH", required=not session_options,
                     help="commit every tick to the run directory PATH (Delta tables)")
    run.add_argument("--gc", choices=GC_MODES, default="auto",
                     help="garbage-collect persisted facts: auto (default: only relations outside the "
                          "declared .output ones, none without .output), on (every relation with a GC rule) or off")
    run.add_argument("--resume", action="store_true", help="continue the run stored in --store from its last tick")
    run.add_argument("--commit-every", metavar="K", type=integer(minimum=1), help="with --store: commit every K ticks and the last (default 1)")
    run.add_argument("--store-writer", default="auto", help=argparse.SUPPRESS)  # auto, spark or delta-rs
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    if session_options:
        run.add_argument("--provenance", action="store_true",
                         help="also print every derivation of every printed fact (json or table)")
        run.add_argument("--verbose", action="store_true", help="keep Spark's own log output")
    add_hidden_strict(run)


def handle(args, new_session=None) -> int:
    """`run`; `new_session(args)` makes the Spark engine's session (default: the
    one --master or --remote asks for)."""
    _check_options(args)
    from sparkdedalus.program import Program
    program = Program.from_files(*args.files, strict=args.strict)
    if program.warnings:
        print(program.render_warnings(), file=sys.stderr)
    unknown = [name for name in args.relation_list or () if name not in program.relations]
    if unknown:
        raise UsageError(f"--relations: unknown relation '{unknown[0]}'")
    if args.engine == "spark":
        from sparkdedalus.shell.run_spark import run_spark
        return run_spark(program, args, new_session)
    return _run_reference(program, args)


def _run_reference(program, args) -> int:
    from sparkdedalus.reference import run
    collect = collected(program, args)
    trace = run(program, ticks=args.tick_count, network=args.network_model, inputs_dir=args.inputs, gc=collect,
                provenance=args.provenance)
    tick = args.at_tick or args.tick_count
    names = args.relation_list or list(program.outputs)
    hidden = shown_collected(collect, names)
    text = render(args.format, tick, {name: trace.relation(name, tick) for name in names}, program, hidden)
    if args.provenance:
        from sparkdedalus.reference.why import tick_derivations
        from sparkdedalus.shell.provenance import with_provenance
        text = with_provenance(args.format, text, program, tick_derivations(trace, tick, names))
    print(text)
    say_collected(hidden)
    if args.stats:
        _write_reference_stats(args.stats, trace, collect)
    return 0


def _write_reference_stats(path: str, trace, collect: list) -> None:
    stats = {
        "engine": "reference",
        "total_seconds": round(sum(s["seconds"] for s in trace.stats), 3),
        "tick_seconds": [round(s["seconds"], 4) for s in trace.stats],
        **gc_stats(collect, [s["persisted_rows"] for s in trace.stats], [s["collected_rows"] for s in trace.stats]),
        "facts": {name: len(rows) for name, rows in sorted(trace.at(trace.ticks).items())},
    }
    write_stats(path, stats)


def _check_options(args) -> None:
    """Refuse the options that do not go together and add the values they make:
    commit_period, conf_settings, and the --seed in network_model."""
    if args.provenance and args.store:
        raise UsageError("--provenance is recorded from the run in memory: not with --store")
    if args.provenance and args.format == "csv":
        raise UsageError("--provenance prints with --format json or table: a CSV of facts has no place for "
                         "derivations")
    if args.resume and not args.store:
        raise UsageError("--resume needs --store PATH")
    if args.store and args.engine != "spark":
        raise UsageError("--store needs the spark engine")
    if args.commit_every is not None and not args.store:
        raise UsageError("--commit-every needs --store PATH")
    args.commit_period = args.commit_every or 1
    args.conf_settings = dict(args.conf)
    if (args.conf_settings or args.ui) and args.engine != "spark":
        raise UsageError(f"{'--conf' if args.conf_settings else '--ui'} needs the spark engine")
    if args.ui and args.remote:
        raise UsageError("--ui needs a local session: a Spark Connect server has its own UI")
    if args.at_tick is not None and args.at_tick > args.tick_count:
        raise UsageError(f"--at {args.at_tick} is after the last tick ({args.tick_count})")
    if args.seed is not None:
        args.network_model = replace(args.network_model, seed=args.seed)
