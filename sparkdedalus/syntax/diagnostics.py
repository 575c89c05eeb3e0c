"""Diagnostics that point at the source text, in the gcc/clang style.

    broadcast.ded:3:12: error: variable 'Q' in the head is not bound by a positive body atom
      log(M, Q)@async :- bcast(N, P), node(N, M);
             ^

A `DiagnosticError` carries every diagnostic of a failed phase, not only the first.
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.syntax.ast import Pos


@dataclass(frozen=True, order=True)
class Diagnostic:
    pos: Pos
    severity: str  # "error" or "warning"
    message: str

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def header(self) -> str:
        return f"{self.pos}: {self.severity}: {self.message}"

    def render(self, sources: "Sources") -> str:
        """The header line, then the source line and a caret under the column."""
        line = sources.line(self.pos.file, self.pos.line)
        if line is None:
            return self.header()
        caret = " " * (self.pos.col - 1) + "^"
        return f"{self.header()}\n  {line}\n  {caret}"


class Sources:
    """The text of every file read into a program, for rendering diagnostics."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}

    def add(self, file: str, text: str) -> None:
        self._lines[file] = text.splitlines()

    def line(self, file: str, line: int) -> str | None:
        lines = self._lines.get(file)
        if lines is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1].expandtabs(1)


class DiagnosticError(Exception):
    """Raised when a phase found errors; `diagnostics` holds all of them
    (warnings included), sorted by position."""

    def __init__(self, diagnostics: list[Diagnostic], sources: Sources | None = None):
        self.diagnostics = sorted(diagnostics)
        self.sources = sources or Sources()
        errors = [d for d in self.diagnostics if d.is_error]
        super().__init__(errors[0].header() if errors else "no errors")

    def render(self) -> str:
        return "\n".join(d.render(self.sources) for d in self.diagnostics)
