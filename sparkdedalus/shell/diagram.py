"""`sparkdedalus diagram`: the spacetime diagram of a stored run, read with
delta-rs (no Spark, no JVM).

    sparkdedalus diagram STORE --out run.html [--format html|svg] [--relation REL] [--from K] [--to K]

Nodes are vertical lines, ticks go downward; every message sent in ticks K..K'
(default: all committed ticks) is an arrow from its sender at its send tick to its
receiver at its arrival tick, or a short stroke ending in an x when the network
lost it; a crashed node gets an X and a dashed line from its crash tick on. With
--relation, hovering a dot on a node's line lists the relation's facts there
(and a line on stderr says so when the run garbage-collected it, docs/gc.md).
The format comes from --format or the extension of --out (.html, .htm, .svg).
Exit codes: 0, 1 (no such run, relation or tick), 2 (bad options, an --out that
cannot be written: refused before the store is read).
"""

from __future__ import annotations

import os

from sparkdedalus.errors import UsageError
from sparkdedalus.shell.options import integer, writable, write_text
from sparkdedalus.shell.stats import say_collected, shown_collected

FORMATS = {".html": "html", ".htm": "html", ".svg": "svg"}


def add_parser(commands) -> None:
    diagram = commands.add_parser("diagram", help="draw the spacetime diagram of a stored run (HTML or SVG)")
    diagram.add_argument("store", metavar="STORE", help="a run directory written by 'run --store'")
    diagram.add_argument("--out", metavar="FILE", required=True, type=writable, help="the file to write")
    diagram.add_argument("--format", choices=("html", "svg"), help="html or svg (default: from the extension of --out)")
    diagram.add_argument("--relation", metavar="REL", help="list this relation's facts at each node and tick")
    diagram.add_argument("--from", dest="first", metavar="K", type=integer(minimum=1), help="the first tick (default: 1)")
    diagram.add_argument("--to", dest="last", metavar="K", type=integer(minimum=1),
                         help="the last tick (default: the last committed)")
    diagram.set_defaults(handler=handle)


def handle(args) -> int:
    from sparkdedalus.diagram import from_store, html_text, summary, svg_text
    fmt = args.format or FORMATS.get(os.path.splitext(args.out)[1].lower())
    if fmt is None:
        raise UsageError(f"--out: cannot tell the format of '{args.out}'; add --format html or --format svg")
    diagram = from_store(args.store, args.relation, args.first, args.last)
    write_text(args.out, svg_text(diagram) if fmt == "svg" else html_text(diagram, f"Spacetime diagram of {args.store}"))
    print(f"wrote {args.out}: {summary(diagram)}")
    if args.relation:
        from sparkdedalus.store import read
        say_collected(shown_collected(read.manifest(args.store).gc, [args.relation]))
    return 0
