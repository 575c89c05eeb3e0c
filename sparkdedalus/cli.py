"""The `sparkdedalus` command line.

    sparkdedalus check FILE... [--strict]   exit 0 when valid, 1 with diagnostics
    sparkdedalus fmt FILE... [--write|--check]
    sparkdedalus explain FILE...
    sparkdedalus run FILE... --ticks N [--engine spark|reference] [--at K] [--store PATH [--resume]] ...
    sparkdedalus show STORE [REL] [--at K] [--format table|json|csv]
    sparkdedalus diagram STORE --out FILE [--format html|svg] [--relation REL] [--from K] [--to K]

Exit codes: 0 success, 1 program or data errors, 2 usage errors. No traceback
unless --debug.
"""

from __future__ import annotations

import argparse
import sys

from sparkdedalus.syntax.diagnostics import DiagnosticError


class UserError(Exception):
    """A one-line error about options or data (exit 1)."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (exit 2); its
    subcommands' parsers are of the same class."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="sparkdedalus", description="Dedalus on Spark")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    add_check_arguments(commands.add_parser("check", help="check programs; exit 1 with diagnostics when invalid"))

    fmt = commands.add_parser("fmt", help="print files in canonical format")
    fmt.add_argument("files", nargs="+", metavar="FILE")
    mode = fmt.add_mutually_exclusive_group()
    mode.add_argument("--write", "-w", action="store_true", help="rewrite the files in place")
    mode.add_argument("--check", action="store_true", help="exit 1 when a file is not formatted")
    fmt.set_defaults(handler=_fmt)

    explain = commands.add_parser("explain", help="relations, types, roles, strata, components")
    explain.add_argument("files", nargs="+", metavar="FILE")
    explain.add_argument("--strict", action="store_true", help=argparse.SUPPRESS)
    explain.set_defaults(handler=_explain)

    from sparkdedalus.run_command import add_run_parser
    add_run_parser(commands)
    from sparkdedalus.show_command import add_show_parser
    add_show_parser(commands)
    from sparkdedalus.diagram_command import add_diagram_parser
    add_diagram_parser(commands)
    return parser


def add_check_arguments(check) -> None:
    """The arguments and handler of `check` (also jobs/check_program.py)."""
    check.add_argument("files", nargs="+", metavar="FILE")
    check.add_argument("--strict", action="store_true",
                       help="global observer rules and variables only in negated atoms are errors, not warnings")
    check.set_defaults(handler=_check)


def _load(args):
    from sparkdedalus.program import Program
    return Program.from_files(*args.files, strict=args.strict)


def _check(args) -> int:
    program = _load(args)
    if program.warnings:
        print(program.render_warnings(), file=sys.stderr)
    print(f"ok: {len(program.relations)} relations, {len(program.rules)} rules, "
          f"{len(program.strata)} strata, {len(program.warnings)} warning(s)")
    return 0


def _fmt(args) -> int:
    from sparkdedalus.syntax.diagnostics import Sources
    from sparkdedalus.syntax.parser import parse_text
    from sparkdedalus.syntax.printer import format_unit
    status = 0
    for path in args.files:
        text = _read(path)
        formatted = format_unit(parse_text(text, path, Sources()))
        if args.check:
            if formatted != text:
                print(f"{path}: not formatted", file=sys.stderr)
                status = 1
        elif args.write:
            if formatted != text:
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(formatted)
        else:
            sys.stdout.write(formatted)
    return status


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise UserError(f"cannot read '{path}': {exc.strerror or exc}") from exc


def _explain(args) -> int:
    from sparkdedalus.explain import explain
    program = _load(args)
    print(explain(program))
    return 0


def main(argv: list[str] | None = None) -> int:
    return dispatch(_parser().parse_args(argv))


def dispatch(args) -> int:
    """Call `args.handler(args)`: program and data errors become messages and
    exit 1 (a traceback only with `args.debug`)."""
    try:
        return args.handler(args)
    except DiagnosticError as exc:
        if args.debug:
            raise
        print(exc.render(), file=sys.stderr)
        errors = sum(d.is_error for d in exc.diagnostics)
        print(f"{errors} error(s)", file=sys.stderr)
        return 1
    except UserError as exc:
        if args.debug:
            raise
        print(f"sparkdedalus: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("sparkdedalus: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
