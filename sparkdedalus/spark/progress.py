"""A progress bar for runs on a terminal: ticks done, last tick's seconds,
elapsed. Silent when standard error is not a terminal or with --quiet."""

from __future__ import annotations

import sys

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class TickProgress:
    def __init__(self, ticks: int, enabled: bool = True, stream=None):
        stream = stream or sys.stderr
        self.enabled = enabled and stream.isatty()
        self._progress = None
        if self.enabled:
            self._progress = Progress(TextColumn("tick"), MofNCompleteColumn(), BarColumn(),
                                      TextColumn("{task.fields[last]}"), TimeElapsedColumn(), transient=True)
            self._task = self._progress.add_task("run", total=ticks, last="")

    def __enter__(self) -> "TickProgress":
        if self._progress is not None:
            self._progress.start()
        return self

    def advance(self, tick: int, seconds: float) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=tick, last=f"last tick {seconds:.2f}s")

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()
