"""Import Hydroflow `datalog!` files as one checked `Program`.

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "echo.rs").write_text('fn main() { datalog!(r#" .input n `repeat_iter([(7,),])`\\n'
...                                     ' .output m `for_each(|v| println!("{:?}", v))`\\n m(x) :- n(x) "#); }')
>>> program = import_hydroflow([("echo", str(folder / "echo.rs"))])
>>> program.components, sorted(f.atom.name for f in program.facts), program.outputs
(('echo',), ['n'], ('m',))
"""

from __future__ import annotations

import re

from sparkdedalus.errors import UserError
from sparkdedalus.hydroflow.errors import HydroflowError
from sparkdedalus.hydroflow.rust_source import find_datalog
from sparkdedalus.hydroflow.translate import translate
from sparkdedalus.program import Program
from sparkdedalus.syntax.diagnostics import DiagnosticError

_ORIGIN = re.compile(r"//\s*(\S+:\d+:\d+)\s*$")


def import_text(roles: list, nodes: dict | None = None) -> str:
    """The dialect text of (role, path.rs) pairs (see `translate.translate`)."""
    sources = []
    for role, path in roles:
        try:
            with open(path, encoding="utf-8") as handle:
                rust = handle.read()
        except OSError as exc:
            raise UserError(f"cannot read '{path}': {exc.strerror or exc}") from exc
        sources.append((role, find_datalog(rust, path)))
    return translate(sources, nodes)


def import_hydroflow(roles: list, nodes: dict | None = None, extra: str = "", file: str = "<hydroflow>") -> Program:
    """The checked Program of (role, path.rs) pairs, with `extra` dialect text
    (facts for the relations to fill) appended."""
    return checked(import_text(roles, nodes) + extra, file)


def checked(text: str, file: str) -> Program:
    """`Program.parse(text)`; its errors are `HydroflowError` lines located at
    the Rust rule each generated rule came from (its `// FILE.rs:line:col`)."""
    try:
        return Program.parse(text, file)
    except DiagnosticError as exc:
        lines = text.splitlines()

        def origin(line: int, fallback: str) -> str:
            found = _ORIGIN.search(lines[line - 1]) if 1 <= line <= len(lines) else None
            return found.group(1) if found else fallback

        elsewhere = re.compile(re.escape(file) + r":(\d+):\d+")
        located = []
        for diagnostic in exc.diagnostics:
            if not diagnostic.is_error:
                continue
            at = diagnostic.pos
            message = elsewhere.sub(lambda m: origin(int(m.group(1)), m.group(0)), diagnostic.message)
            located.append(f"{origin(at.line, str(at)) if at.file == file else at}: {message}")
        raise HydroflowError(located) from None
