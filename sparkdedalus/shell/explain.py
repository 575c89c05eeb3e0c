"""`sparkdedalus explain FILE...`: relations, types, roles, strata and
components of a checked program (`sparkdedalus.analysis.explain`)."""

from __future__ import annotations

from sparkdedalus.shell import check


def add_parser(commands) -> None:
    parser = commands.add_parser("explain", help="relations, types, roles, strata, components")
    parser.add_argument("files", nargs="+", metavar="FILE")
    check.add_hidden_strict(parser)
    parser.set_defaults(handler=handle)


def handle(args) -> int:
    from sparkdedalus.analysis.explain import explain
    print(explain(check.load(args)))
    return 0
