"""`sparkdedalus import hydroflow ROLE=FILE.rs... --out PROGRAM.ded [--nodes ROLE=A,B]`
and `sparkdedalus export hydroflow PROGRAM.ded... --out-dir DIR` (docs/hydroflow.md).

What cannot be translated is one `FILE.rs:line:col: ...` line per problem, exit 2.
"""

from __future__ import annotations

import os
import sys

from sparkdedalus.errors import UsageError
from sparkdedalus.shell.options import key_value, writable, write_text


def add_parser(commands) -> None:
    for verb, help_text in (("import", "read another tool's programs"), ("export", "write a program for another tool")):
        parser = commands.add_parser(verb, help=help_text)
        formats = parser.add_subparsers(dest="format", required=True, metavar="FORMAT")
        hydroflow = formats.add_parser("hydroflow", help="Hydroflow's datalog! dialect, one Rust file per role")
        if verb == "import":
            hydroflow.add_argument("roles", nargs="+", type=key_value, metavar="ROLE=FILE.rs")
            hydroflow.add_argument("--out", required=True, type=writable, metavar="PROGRAM.ded")
            hydroflow.add_argument("--nodes", action="append", type=key_value, default=[], metavar="ROLE=A,B",
                                   help="the nodes of a role (default: one node named after the role)")
            hydroflow.set_defaults(handler=handle_import)
        else:
            hydroflow.add_argument("files", nargs="+", metavar="PROGRAM.ded")
            hydroflow.add_argument("--out-dir", required=True, metavar="DIR")
            hydroflow.set_defaults(handler=handle_export)


def handle_import(args) -> int:
    from sparkdedalus.hydroflow import HydroflowError, checked, import_text
    roles = args.roles
    nodes = {role: names.split(",") for role, names in args.nodes}
    unknown = sorted(set(nodes) - {role for role, _ in roles})
    if unknown:
        raise UsageError(f"--nodes names a role that is not imported: {unknown[0]}")
    try:
        text = import_text(roles, nodes)
        checked(text, args.out)  # what Hydroflow accepts and this dialect does not: located in the Rust file
    except HydroflowError as exc:
        return _refused(exc)
    write_text(args.out, text)
    print(f"wrote {args.out} ({len(roles)} component(s))")
    return 0


def handle_export(args) -> int:
    from sparkdedalus.hydroflow import HydroflowError
    from sparkdedalus.hydroflow.export import export_files
    try:
        written = export_files(args.files, args.out_dir)
    except HydroflowError as exc:
        return _refused(exc)
    for path in written:
        print(f"wrote {os.path.normpath(path)}")
    return 0


def _refused(exc) -> int:
    """Every located line of a `HydroflowError`, exit 2."""
    for line in exc.lines:
        print(line, file=sys.stderr)
    return 2
