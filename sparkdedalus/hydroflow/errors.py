"""The error of a Hydroflow import or export: one located line per problem.

>>> str(HydroflowError(["leader.rs:4:9: a Rust closure used as a value"]))
'leader.rs:4:9: a Rust closure used as a value'
"""

from __future__ import annotations

from sparkdedalus.errors import UsageError


class HydroflowError(UsageError):
    """What cannot be read or translated, `FILE.rs:line:col: message` per line
    (a usage error: the CLI exits 2)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)
        super().__init__("\n".join(self.lines))
