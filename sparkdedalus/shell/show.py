"""`sparkdedalus show`: a stored relation at any committed tick, read with
delta-rs (no Spark, no JVM: it answers in a fraction of a second).

    sparkdedalus show STORE                 the run's relations and last committed tick
    sparkdedalus show STORE REL [--at K] [--format table|json|csv]

Prints relation REL at the end of tick K (default: the last committed) in the
formats of `sparkdedalus run`. Exit codes: 0, 1 (no such run, relation or
tick), 2 (bad options).
"""

from __future__ import annotations

from types import SimpleNamespace

from sparkdedalus.errors import UsageError
from sparkdedalus.output import FORMATS, render


def add_parser(commands) -> None:
    show = commands.add_parser("show", help="print a relation of a stored run at a committed tick")
    show.add_argument("store", metavar="STORE", help="a run directory written by 'run --store'")
    show.add_argument("relation", metavar="REL", nargs="?", help="the relation (default: list the relations)")
    show.add_argument("--at", metavar="K", help="the tick (default: the last committed)")
    show.add_argument("--format", default="table", help="table (default), json or csv")
    show.set_defaults(handler=handle)


def handle(args) -> int:
    from sparkdedalus.store import read
    if args.format not in FORMATS:
        raise UsageError(f"--format: expected one of {', '.join(FORMATS)}, got '{args.format}'")
    try:
        tick = None if args.at is None else int(args.at)
    except ValueError:
        raise UsageError(f"--at: expected an integer, got '{args.at}'") from None
    manifest = read.manifest(args.store)
    if args.relation is None:
        print(f"{args.store}: ticks 1..{manifest.last_tick} committed")
        for info in manifest.relations.values():
            print(f"  {info.name}({', '.join(f'{c}: {t}' for c, t in zip(info.columns, info.types))})")
        return 0
    rows = read.relation_rows(args.store, args.relation, tick)
    tick = manifest.last_tick if tick is None else tick
    print(render(args.format, tick, {args.relation: rows}, SimpleNamespace(relations=manifest.relations)))
    return 0
