"""The `sparkdedalus` command line.

    sparkdedalus check FILE... [--strict]   exit 0 when valid, 1 with diagnostics
    sparkdedalus fmt FILE... [--write|--check]
    sparkdedalus explain FILE...
    sparkdedalus run FILE... --ticks N [--engine spark|reference] [--at K] [--store PATH [--resume]] ...
    sparkdedalus show STORE [REL] [--at K] [--format table|json|csv]
    sparkdedalus diagram STORE --out FILE [--format html|svg] [--relation REL] [--from K] [--to K]
    sparkdedalus rewrite FILE... --decouple COMPONENT:RULES[:NEWNAME] [--out FILE] [--force]
    sparkdedalus equiv A.ded B.ded --ticks N [--mode strict|refinement] [--seeds K] [--observe R1,R2] [--network SPEC]
    sparkdedalus faults FILE... --nodes A,B --eot N --eff N [--crashes N] [--sample N] [--engine E] [--store PATH]
    sparkdedalus why FILE... --ticks N 'rel(args)@T' [--network SPEC] [--seed S] [--format text|json|html] [--out FILE]
    sparkdedalus import hydroflow ROLE=FILE.rs... --out PROGRAM.ded [--nodes ROLE=A,B]
    sparkdedalus export hydroflow PROGRAM.ded... --out-dir DIR

Exit codes: 0 success, 1 program or data errors (and internal errors), 2 usage
errors. No traceback unless --debug.
"""

from __future__ import annotations

import argparse
import sys

from sparkdedalus.errors import UsageError, UserError
from sparkdedalus.shell import check, diagram, equiv, explain, faults, fmt, hydroflow, optimize, rewrite, run, show, why
from sparkdedalus.syntax.diagnostics import DiagnosticError


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (exit 2); its
    subcommands' parsers are of the same class."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="sparkdedalus", description="Dedalus on Spark")
    add_debug_argument(parser)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (check, fmt, explain, run, show, diagram, equiv, rewrite, optimize, faults, why, hydroflow):
        command.add_parser(commands)
    return parser


def add_debug_argument(parser) -> None:
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    return dispatch(args, parser.prog)


def dispatch(args, prog: str = "sparkdedalus") -> int:
    """Call `args.handler(args)` and show what went wrong: diagnostics and
    `UserError`s exit 1, `UsageError`s exit 2 (one line each), any other
    exception is an internal error (exit 1); `args.debug` re-raises instead."""
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        return _report(exc, prog)


def _report(exc: Exception, prog: str) -> int:
    if isinstance(exc, DiagnosticError):
        print(exc.render(), file=sys.stderr)
        print(f"{sum(d.is_error for d in exc.diagnostics)} error(s)", file=sys.stderr)
        return 1
    if isinstance(exc, UsageError):
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    if isinstance(exc, UserError):
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    print(f"{prog}: internal error: {type(exc).__name__}{': ' + first if first else ''}\n"
          f"  (a bug in sparkdedalus or Spark, not in your program; rerun with --debug for the traceback)",
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
