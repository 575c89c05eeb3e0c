"""`sparkdedalus diagram`: the spacetime diagram of a stored run, read with
delta-rs (no Spark, no JVM).

    sparkdedalus diagram STORE --out run.html [--format html|svg] [--relation REL] [--from K] [--to K]

Nodes are vertical lines, ticks go downward; every message sent in ticks K..K'
(default: all committed ticks) is an arrow from its sender at its send tick to its
receiver at its arrival tick, or a short stroke ending in an x when the network
lost it; a crashed node gets an X and a dashed line from its crash tick on. With
--relation, hovering a dot on a node's line lists the relation's facts there.
The format comes from --format or the extension of --out (.html, .htm, .svg).
Exit codes: 0, 1 (no such run, relation or tick; cannot write), 2 (bad options).
"""

from __future__ import annotations

import os

from sparkdedalus.errors import UsageError, UserError

FORMATS = {".html": "html", ".htm": "html", ".svg": "svg"}


def add_parser(commands) -> None:
    diagram = commands.add_parser("diagram", help="draw the spacetime diagram of a stored run (HTML or SVG)")
    diagram.add_argument("store", metavar="STORE", help="a run directory written by 'run --store'")
    diagram.add_argument("--out", metavar="FILE", required=True, help="the file to write")
    diagram.add_argument("--format", help="html or svg (default: from the extension of --out)")
    diagram.add_argument("--relation", metavar="REL", help="list this relation's facts at each node and tick")
    diagram.add_argument("--from", dest="first", metavar="K", help="the first tick (default: 1)")
    diagram.add_argument("--to", dest="last", metavar="K", help="the last tick (default: the last committed)")
    diagram.set_defaults(handler=handle)


def handle(args) -> int:
    from sparkdedalus.diagram import from_store, html_text, summary, svg_text
    fmt = args.format or FORMATS.get(os.path.splitext(args.out)[1].lower())
    if fmt not in ("html", "svg"):
        raise UsageError(f"--format: expected html or svg, got '{args.format}'" if args.format
                         else f"--out: cannot tell the format of '{args.out}'; add --format html or --format svg")
    ticks = {}
    for option, text in (("--from", args.first), ("--to", args.last)):
        try:
            ticks[option] = None if text is None else int(text)
        except ValueError:
            raise UsageError(f"{option}: expected an integer, got '{text}'") from None
    diagram = from_store(args.store, args.relation, ticks["--from"], ticks["--to"])
    text = svg_text(diagram) if fmt == "svg" else html_text(diagram, f"Spacetime diagram of {args.store}")
    try:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UserError(f"cannot write '{args.out}': {exc.strerror or exc}") from exc
    print(f"wrote {args.out}: {summary(diagram)}")
    return 0
