"""`sparkdedalus check FILE... [--strict]`: diagnostics as file:line:col; exit 1
when a program has errors, 0 otherwise (warnings go to standard error)."""

from __future__ import annotations

import argparse
import sys


def add_parser(commands) -> None:
    add_arguments(commands.add_parser("check", help="check programs; exit 1 with diagnostics when invalid"))


def add_arguments(parser) -> None:
    """The arguments and handler of `check` (also jobs/check_program.py)."""
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--strict", action="store_true",
                        help="global observer rules and variables only in negated atoms are errors, not warnings")
    parser.set_defaults(handler=handle)


def load(args):
    """The checked program of `args.files` (raises `DiagnosticError`)."""
    from sparkdedalus.program import Program
    return Program.from_files(*args.files, strict=args.strict)


def handle(args) -> int:
    program = load(args)
    if program.warnings:
        print(program.render_warnings(), file=sys.stderr)
    print(f"ok: {len(program.relations)} relations, {len(program.rules)} rules, "
          f"{len(program.strata)} strata, {len(program.warnings)} warning(s)")
    return 0


def add_hidden_strict(parser) -> None:
    """`--strict` for commands that load programs but do not advertise it."""
    parser.add_argument("--strict", action="store_true", help=argparse.SUPPRESS)
