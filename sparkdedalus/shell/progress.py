"""A progress bar for runs on a terminal: ticks done, facts of the last
tick, its seconds, elapsed. Silent when standard error is not a terminal or with --quiet.
`unit` names what is counted (`sparkdedalus faults` counts scenarios)."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class TickProgress:
    def __init__(self, ticks: int, enabled: bool = True, stream=None, unit: str = "tick"):
        stream = stream or sys.stderr
        self.enabled = enabled and stream.isatty()
        self._progress = None
        if self.enabled:
            self._progress = Progress(TextColumn(unit), MofNCompleteColumn(), BarColumn(),
                                      TextColumn("{task.fields[last]}"), TimeElapsedColumn(), transient=True,
                                      console=Console(file=stream, force_terminal=True))
            self._task = self._progress.add_task("run", total=ticks, last="")

    def __enter__(self) -> "TickProgress":
        if self._progress is not None:
            self._progress.start()
        return self

    def advance(self, tick: int, seconds: float, facts: int, placement: str | None = None) -> None:
        """Tick `tick` done: the facts it hands on, its seconds and where it ran (spark/placement.py)."""
        where = f" ({'in the driver' if placement == 'driver' else 'on Spark'})" if placement else ""
        self.show(tick, f"{facts:,} facts, last tick {seconds:.2f}s{where}")

    def show(self, done: int, last: str) -> None:
        """`done` units so far, and a note on the last one."""
        if self._progress is not None:
            self._progress.update(self._task, completed=done, last=last)
            self._progress.refresh()

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()
