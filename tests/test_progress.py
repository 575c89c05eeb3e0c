"""The terminal progress bar: ticks done, facts, seconds, elapsed on a
terminal; nothing when standard error is not a terminal or with --quiet."""

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from sparkdedalus.shell.progress import TickProgress

ROOT = Path(__file__).resolve().parents[1]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_shows_ticks_facts_and_seconds_on_a_terminal():
    stream = Terminal()
    with TickProgress(3, stream=stream) as bar:
        bar.advance(1, 0.25, 1234)
        shown = stream.getvalue()
    assert "1/3" in shown and "1,234 facts" in shown and "0.25s" in shown


@pytest.mark.parametrize("placement, said", [("driver", "in the driver"), ("spark", "on Spark")])
def test_bar_says_where_the_tick_ran(placement, said):
    stream = Terminal()
    with TickProgress(3, stream=stream) as bar:
        bar.advance(2, 0.01, 5, placement)
        shown = stream.getvalue()
    assert said in shown and "2/3" in shown


@pytest.mark.parametrize("stream, enabled", [(io.StringIO(), True), (Terminal(), False)])
def test_bar_is_silent_off_a_terminal_or_when_quiet(stream, enabled):
    with TickProgress(3, enabled=enabled, stream=stream) as bar:
        bar.advance(1, 0.25, 10)
    assert stream.getvalue() == ""


def _stderr_on_a_terminal(args: list[str]) -> tuple[int, str, str]:
    """Run the CLI with standard error on a pseudo-terminal: (exit, stdout, terminal text)."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "sparkdedalus.shell.cli", *args], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=terminal, stdin=subprocess.DEVNULL)
    os.close(terminal)
    seen = b""
    while True:
        ready, _, _ = select.select([controller], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: the process ended
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    out = process.stdout.read().decode()
    os.close(controller)
    return process.wait(timeout=300), out, seen.decode(errors="replace")


@pytest.mark.spark
def test_cli_run_shows_a_progress_bar_on_a_terminal():
    code, out, shown = _stderr_on_a_terminal(["run", "examples/broadcast.ded", "--ticks", "3"])
    assert code == 0, shown
    assert '"tick": 3' in out  # the result on stdout, without bar characters
    assert "\x1b[" not in out
    assert "3/3" in shown and "facts" in shown
