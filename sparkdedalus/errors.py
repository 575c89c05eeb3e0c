"""The project's own errors, importable from any layer.

The shell (`sparkdedalus.shell`) shows each kind differently: a `UserError`
as one line (exit 1), a `UsageError` as one line (exit 2), anything else as an
internal error (exit 1, the traceback with `--debug`). Program errors with
source positions are `sparkdedalus.syntax.diagnostics.DiagnosticError`.

>>> isinstance(InputError("data.csv: row 3: column 'n': cannot read 'x' as int"), ValueError)
True
"""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the user's data, files or run directory: one line, exit 1."""


class InputError(UserError, ValueError):
    """A bad `.input` file or row, or a bad `edb=` row (a `ValueError` for API callers)."""


class UsageError(Exception):
    """A bad command-line option: one line, exit 2."""
