"""Why an analysis said what it said: a message and, where it has one, the
place in the program (`file:line:col`) of the rule or construct it is about.
Every analysis verdict carries its reasons as a tuple of `Reason`, and turns
into JSON with `to_json()` (docs/analyses.md).

>>> from sparkdedalus.syntax.ast import Pos
>>> print(Reason("negates acks", Pos("a.ded", 3, 7)))
a.ded:3:7: negates acks
>>> Reason("no rule reads it").to_json()
{'message': 'no rule reads it', 'where': None}
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.syntax.ast import Pos


@dataclass(frozen=True)
class Reason:
    message: str
    pos: Pos | None = None

    @property
    def where(self) -> str | None:
        """`file:line:col`, or None when the reason is about no one place."""
        return None if self.pos is None else str(self.pos)

    def __str__(self) -> str:
        return self.message if self.pos is None else f"{self.where}: {self.message}"

    def to_json(self) -> dict:
        return {"message": self.message, "where": self.where}
