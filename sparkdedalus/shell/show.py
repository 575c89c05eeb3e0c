"""`sparkdedalus show`: a stored relation at any committed tick, read with
delta-rs (no Spark, no JVM: it answers in a fraction of a second).

    sparkdedalus show STORE                 the run's relations and last committed tick
    sparkdedalus show STORE REL [--at K] [--format table|json|csv]

Prints relation REL at the end of tick K (default: the last committed) in the
formats of `sparkdedalus run`. When the run garbage-collected REL (its
manifest's GC rules, docs/gc.md) a line on stderr says so and `--format json`
names it in `"gc_collected"`; the listing marks such relations. Exit codes: 0, 1 (no such run, relation or
tick), 2 (bad options).
"""

from __future__ import annotations

from types import SimpleNamespace

from sparkdedalus.errors import UsageError
from sparkdedalus.output import FORMATS, render
from sparkdedalus.shell.options import integer
from sparkdedalus.shell.stats import say_collected, shown_collected


def add_parser(commands) -> None:
    show = commands.add_parser("show", help="print a relation of a stored run at a committed tick")
    show.add_argument("store", metavar="STORE", help="a run directory written by 'run --store'")
    show.add_argument("relation", metavar="REL", nargs="?", help="the relation (default: list the relations)")
    show.add_argument("--at", metavar="K", type=integer(minimum=1), help="the tick (default: the last committed)")
    show.add_argument("--format", choices=FORMATS, help="table (default), json or csv")
    show.set_defaults(handler=handle)


def handle(args) -> int:
    from sparkdedalus.store import read
    if args.relation is None and (args.at is not None or args.format is not None):
        raise UsageError(f"{'--at' if args.at is not None else '--format'} needs REL: without it, show lists the "
                         f"run's relations")
    manifest = read.manifest(args.store)
    if args.relation is None:
        print(f"{args.store}: ticks 1..{manifest.last_tick} committed")
        swept = shown_collected(manifest.gc, manifest.relations)
        for info in manifest.relations.values():
            print(f"  {info.name}({', '.join(f'{c}: {t}' for c, t in zip(info.columns, info.types))})"
                  + ("  (garbage-collected: not every fact that holds is stored)" if info.name in swept else ""))
        return 0
    rows = read.relation_rows(args.store, args.relation, args.at)
    tick = manifest.last_tick if args.at is None else args.at
    hidden = shown_collected(manifest.gc, [args.relation])
    print(render(args.format or "table", tick, {args.relation: rows}, SimpleNamespace(relations=manifest.relations),
                 hidden))
    say_collected(hidden)
    return 0
