"""Read source files and resolve `include` into one flat list of statements.

`include "x.ded";` is resolved relative to the including file. A file included
twice is read once; an include cycle or a missing file is an error naming the
include chain. Several files given together form one program.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from sparkdedalus.syntax import ast
from sparkdedalus.syntax.diagnostics import Diagnostic, DiagnosticError, Sources
from sparkdedalus.syntax.parser import gc_paused, parse_text

DEFAULT_COMPONENT = "main"


@dataclass(frozen=True)
class Placed:
    """A statement with the component it belongs to."""

    statement: object
    component: str


@dataclass
class Loaded:
    """Statements to check; `homes` and `gc_annotations` add to the
    `// @home` and `// @gc` comments of `units`, and `sealed` (position ->
    relation) marks the rules at those positions as the desugaring of a
    `seal` head, as its own desugaring does (a rewrite's metadata)."""

    statements: list[Placed]
    sources: Sources
    units: list[ast.Unit]
    homes: tuple = ()
    gc_annotations: tuple = ()
    sealed: dict = field(default_factory=dict)


def load_files(paths: list[str]) -> Loaded:
    """Parse `paths` and everything they include. Raises `DiagnosticError`."""
    loader = _Loader()
    with gc_paused():
        for path in paths:
            loader.load(path, DEFAULT_COMPONENT, chain=())
    if loader.errors:
        raise DiagnosticError(loader.errors, loader.sources)
    return Loaded(loader.placed, loader.sources, loader.units)


def load_text(text: str, file: str = "<string>") -> Loaded:
    """Parse program text; includes are resolved against the working directory."""
    loader = _Loader()
    with gc_paused():
        loader.add_unit(text, file, DEFAULT_COMPONENT, chain=())
    if loader.errors:
        raise DiagnosticError(loader.errors, loader.sources)
    return Loaded(loader.placed, loader.sources, loader.units)


class _Loader:
    def __init__(self) -> None:
        self.sources = Sources()
        self.placed: list[Placed] = []
        self.units: list[ast.Unit] = []
        self.errors: list[Diagnostic] = []
        self.seen: set[str] = set()

    def load(self, path: str, component: str, chain: tuple) -> None:
        key = os.path.realpath(path)
        if key in self.seen:
            return
        self.seen.add(key)
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            reason = exc.strerror or str(exc)
            if chain:
                self.errors.append(Diagnostic(chain[-1][1], "error",
                                              f"cannot read included file '{path}': {reason} "
                                              f"(include chain: {_chain_text(chain)})"))
            else:
                self.errors.append(Diagnostic(ast.Pos(path, 0, 0), "error", f"cannot read '{path}': {reason}"))
            return
        self.add_unit(text, path, component, chain + ((key, None),))

    def add_unit(self, text: str, file: str, component: str, chain: tuple) -> None:
        try:
            unit = parse_text(text, file, self.sources)
        except DiagnosticError as exc:
            self.errors.extend(exc.diagnostics)
            return
        self.units.append(unit)
        if not chain:
            chain = ((os.path.realpath(file), None),)
        self._place(unit.statements, file, component, chain)

    def _place(self, statements, file: str, component: str, chain: tuple) -> None:
        for stmt in statements:
            if isinstance(stmt, ast.Component):
                self._place(stmt.statements, file, stmt.name, chain)
            elif isinstance(stmt, ast.Include):
                self._include(stmt, file, component, chain)
            else:
                self.placed.append(Placed(stmt, component))

    def _include(self, stmt: ast.Include, file: str, component: str, chain: tuple) -> None:
        target = os.path.normpath(os.path.join(os.path.dirname(file), stmt.path))
        key = os.path.realpath(target)
        # chain entries: (realpath of a file, position of the include that brought it in)
        here = chain[:-1] + ((chain[-1][0], stmt.pos),)
        if any(entry[0] == key for entry in chain):
            cycle = " -> ".join([os.path.basename(e[0]) for e in chain] + [os.path.basename(key)])
            self.errors.append(Diagnostic(stmt.pos, "error", f"include cycle: {cycle}"))
            return
        self.load(target, component, here)


def _chain_text(chain: tuple) -> str:
    return " -> ".join(str(pos) for _, pos in chain if pos is not None)
