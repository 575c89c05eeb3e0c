"""`sparkdedalus explain FILE... [--component NAME] [--format text|json]`: the
relations, strata and, per component, the analyses' verdicts with their
reasons (`sparkdedalus.analysis.explain`; the JSON schema is in docs/analyses.md).
A decoupling candidate and a component's distribution policy offer the
rewrites `rewrite` applies to them: the report asks the rewrite table (`sparkdedalus.rewrite.refusals`)."""

from __future__ import annotations

import json

from sparkdedalus.errors import UsageError
from sparkdedalus.shell import check

FORMATS = ("text", "json")


def add_parser(commands) -> None:
    parser = commands.add_parser("explain", help="relations, strata, and per component the analyses' verdicts")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--component", metavar="NAME", help="report on this component only")
    parser.add_argument("--format", default="text", choices=FORMATS, help="text (default) or json")
    check.add_hidden_strict(parser)
    parser.set_defaults(handler=handle)


def handle(args) -> int:
    from sparkdedalus.analysis.explain import explain, report
    from sparkdedalus.rewrite import refusals
    program = check.load(args)
    if args.component is not None and args.component not in program.components:
        raise UsageError(f"--component: unknown component '{args.component}' "
                         f"(components: {', '.join(program.components)})")
    if args.format == "json":
        print(json.dumps(report(program, args.component, refusals), indent=2))
    else:
        print(explain(program, args.component, refusals))
    return 0
