"""The result of a run: the facts of every relation at every tick, and the messages.

`facts_json` is the JSON contract shared with the Spark engine (`sparkdedalus run
--format json` prints it)::

    {"tick": 3, "relations": {"log": [["a", "hi"], ["b", "hi"]], "node": [...]}}

relations in name order, rows as JSON arrays sorted by `output.sort_key`
(booleans < numbers < strings, column by column).
"""

from __future__ import annotations

from sparkdedalus.network import Message
from sparkdedalus.output import facts_json

__all__ = ["Message", "Trace"]


class Trace:
    """What a run computed. Ticks are 1..`ticks`."""

    def __init__(self, program, network, history: list, messages: list, stats: list | None = None,
                 provenance=None):
        self.program = program
        #: every derivation of every fact (`reference.provenance.Provenance`) when
        #: the run was asked for it (`run(..., provenance=True)`), else None
        self.provenance = provenance
        #: per tick: {"tick", "persisted_rows" (carried to the next tick by persistence
        #: rules), "persisted" (the same per relation), "collected_rows" (dropped by
        #: GC), "seconds"}
        self.stats: list[dict] = stats or []
        self.network = network
        self._history = history  # history[t - 1]: relation -> frozenset of rows
        self.messages: list[Message] = messages

    @property
    def ticks(self) -> int:
        return len(self._history)

    def at(self, tick: int) -> dict:
        """relation -> frozenset of the rows holding at the end of `tick` (every
        relation of the program, empty ones included)."""
        if not (isinstance(tick, int) and 1 <= tick <= self.ticks):
            raise ValueError(f"tick {tick!r} is outside the run (ticks 1..{self.ticks})")
        return dict(self._history[tick - 1])

    def relation(self, name: str, tick: int | None = None) -> frozenset:
        """The rows of `name` at `tick` (default: the last tick)."""
        facts = self.at(self.ticks if tick is None else tick)
        if name not in facts:
            raise ValueError(f"unknown relation '{name}'")
        return facts[name]

    def to_json(self, tick: int | None = None, relations=None) -> dict:
        """The facts of `relations` (default: the program's outputs) at `tick`
        (default: the last), as in `facts_json`."""
        tick = self.ticks if tick is None else tick
        facts = self.at(tick)
        names = list(self.program.outputs if relations is None else relations)
        for name in names:
            if name not in facts:
                raise ValueError(f"unknown relation '{name}'")
        return facts_json(tick, {name: facts[name] for name in names})
