"""Shared helpers for the front-end tests (parser, checks, analyses, CLI)."""

from __future__ import annotations

import os
import textwrap

from sparkdedalus import Program
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.diagnostics import Diagnostic, DiagnosticError
from sparkdedalus.syntax.parser import parse_text

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples")

FILE = "t.ded"


def V(name: str) -> ast.Var:
    return ast.Var(name)


def C(value) -> ast.Const:
    return ast.Const(value)


def A(name: str, *args, time=None) -> ast.Atom:
    """An atom; bare strings starting with an upper-case letter or '_' are
    variables, other Python values constants (use C("x") for a string constant)."""
    return ast.Atom(name, tuple(_arg(a) for a in args), time)


def _arg(a):
    if isinstance(a, str) and (a[:1].isupper() or a.startswith("_")):
        return ast.Wildcard() if a == "_" else ast.Var(a)
    if isinstance(a, (str, int, float, bool)):
        return ast.Const(a)
    return a


def stmts(text: str) -> tuple:
    """The statements of a source text (dedented)."""
    return parse_text(textwrap.dedent(text), FILE).statements


def one(text: str):
    """The single statement of a source text."""
    (stmt,) = stmts(text)
    return stmt


def diagnostics(text: str, strict: bool = False) -> list[Diagnostic]:
    """Every diagnostic (errors and warnings) of a program text; [] when clean."""
    try:
        program = Program.parse(text, FILE, strict=strict)
    except DiagnosticError as exc:
        return list(exc.diagnostics)
    return list(program.warnings)


def errors(text: str, strict: bool = False) -> list[tuple[int, int, str]]:
    """(line, col, message) of every error of a program text."""
    return [(d.pos.line, d.pos.col, d.message) for d in diagnostics(text, strict) if d.is_error]


def warnings(text: str, strict: bool = False) -> list[tuple[int, int, str]]:
    return [(d.pos.line, d.pos.col, d.message) for d in diagnostics(text, strict) if not d.is_error]


def write(directory, name: str, text: str) -> str:
    path = os.path.join(str(directory), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(text))
    return path


def exit_code(argv: list) -> int:
    """The exit code of `sparkdedalus ARGV`: what `main` returns, or the code of
    argparse's `SystemExit` (an option its `type=` or `choices=` refused)."""
    from sparkdedalus.shell.cli import main
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code
