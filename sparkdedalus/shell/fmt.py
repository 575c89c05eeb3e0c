"""`sparkdedalus fmt FILE... [--write|--check]`: print files in canonical format,
rewrite them (`--write`), or exit 1 when one is not formatted (`--check`)."""

from __future__ import annotations

import sys

from sparkdedalus.errors import UserError


def add_parser(commands) -> None:
    parser = commands.add_parser("fmt", help="print files in canonical format")
    parser.add_argument("files", nargs="+", metavar="FILE")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", "-w", action="store_true", help="rewrite the files in place")
    mode.add_argument("--check", action="store_true", help="exit 1 when a file is not formatted")
    parser.set_defaults(handler=handle)


def handle(args) -> int:
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
