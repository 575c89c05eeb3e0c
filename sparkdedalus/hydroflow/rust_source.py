"""Find the Datalog text of a Rust file: the raw string of its `datalog!` call.

The rest of the Rust file is ignored. `Embedded.position` maps a 1-based
line and column of the Datalog text back to the Rust file.

>>> found = find_datalog('fn f() {\\n  datalog!(r#"\\n  a(x) :- b(x)\\n"#)\\n}\\n', "a.rs")
>>> found.text.strip(), found.position(2, 3)
('a(x) :- b(x)', (3, 3))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sparkdedalus.hydroflow.errors import HydroflowError

_MACRO = re.compile(r"datalog!\s*[\(\{\[]\s*r(#*)\"")


@dataclass(frozen=True)
class Embedded:
    """The Datalog text of `file`, starting at `line`:`col` of the Rust file."""

    file: str
    text: str
    line: int
    col: int

    def position(self, line: int, col: int) -> tuple[int, int]:
        """(line, col) in the Rust file of (line, col) in the Datalog text."""
        return (self.line + line - 1, self.col + col - 1 if line == 1 else col)

    def locate(self, line: int, col: int) -> str:
        """`FILE.rs:line:col` of a position in the Datalog text."""
        at_line, at_col = self.position(line, col)
        return f"{self.file}:{at_line}:{at_col}"


def find_datalog(rust: str, file: str) -> Embedded:
    """The raw string of the first `datalog!(r#"..."#)` call of a Rust file;
    `HydroflowError` when there is none or it is not closed."""
    match = _MACRO.search(rust)
    if match is None:
        raise HydroflowError([f"{file}:1:1: no datalog! macro call with a raw string r#\"...\"# in this file"])
    start = match.end()
    closing = '"' + match.group(1)
    end = rust.find(closing, start)
    if end < 0:
        line, col = _line_col(rust, match.start())
        raise HydroflowError([f"{file}:{line}:{col}: the datalog! raw string is never closed ({closing!r} missing)"])
    line, col = _line_col(rust, start)
    return Embedded(file, rust[start:end], line, col)


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
