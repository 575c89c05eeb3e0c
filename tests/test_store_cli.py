"""`sparkdedalus run --store/--resume` and `sparkdedalus show` as a user runs
them: subprocesses of the installed command. `show` reads with delta-rs only:
it never imports pyspark and answers in a fraction of a second."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from sparkdedalus.output import facts_json
from sparkdedalus.store.lock import WriterLock
from store_helpers import EXAMPLES, example, reference

REPO = os.path.dirname(EXAMPLES)
BROADCAST = os.path.join(EXAMPLES, "broadcast.ded")
COMMAND = os.path.join(os.path.dirname(sys.executable), "sparkdedalus")


def sparkdedalus(*args, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run([COMMAND, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def show_in_process(store: str, *args) -> tuple[str, bool, float]:
    """`show` run by a fresh interpreter: (stdout, whether pyspark got imported, seconds)."""
    script = ("import sys, time; started = time.perf_counter(); from sparkdedalus.shell.cli import main; "
              f"code = main(['show', {store!r}, *{list(args)!r}]); "
              "print('#', code, 'pyspark' in sys.modules, time.perf_counter() - started)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60).stdout
    body, _, last = out.rpartition("# ")
    code, imported, seconds = last.split()
    assert code == "0", out
    return body, imported == "True", float(seconds)


@pytest.mark.spark
def test_run_store_resume_and_show(tmp_path):
    store = str(tmp_path / "runs" / "broadcast")
    first = sparkdedalus("run", BROADCAST, "--ticks", "3", "--store", store, "-q")
    assert first.returncode == 0, first.stderr
    assert f"stored ticks 1..3 in {store}" in first.stderr
    trace = reference(example("broadcast.ded"), 5)
    printed = json.loads(first.stdout)
    assert printed.pop("placement") == ["spark"] * 3  # a stored run's ticks are Spark's
    assert printed == facts_json(3, {n: trace.relation(n, 3) for n in ("bcast", "log", "node")})

    again = sparkdedalus("run", BROADCAST, "--ticks", "5", "--store", store, "-q")  # no --resume
    assert again.returncode == 1 and again.stderr.count("\n") == 1 and "add --resume" in again.stderr

    resumed = sparkdedalus("run", BROADCAST, "--ticks", "5", "--store", store, "--resume", "-q", "--format", "csv")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed after tick 3" in resumed.stderr

    for tick in (1, 3, 5):
        body, imported, seconds = show_in_process(store, "log", "--at", str(tick), "--format", "json")
        assert json.loads(body) == facts_json(tick, {"log": trace.relation("log", tick)})
        assert not imported, "show imported pyspark"
        assert seconds < 3, seconds  # about 0.1 s unloaded; generous for a busy machine
    table, _, _ = show_in_process(store, "node")
    assert table.startswith("tick 5\n\nnode (5 facts)\n  loc  c1\n")
    listing, _, _ = show_in_process(store)
    assert "ticks 1..5 committed" in listing and "log(loc: string, c1: string)" in listing


def test_second_writer_and_bad_requests_are_one_line_errors(tmp_path):
    store = tmp_path / "run"
    store.mkdir()
    lock = WriterLock(str(store))
    lock.acquire()
    try:
        started = time.perf_counter()
        refused = sparkdedalus("run", BROADCAST, "--ticks", "2", "--store", str(store), "--resume")
        assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
        assert "is being written by another process" in refused.stderr and f"pid {os.getpid()}" in refused.stderr
        assert time.perf_counter() - started < 30  # refused before Spark starts
    finally:
        lock.release()
    missing = sparkdedalus("show", str(tmp_path / "nowhere"), "log")
    assert missing.returncode == 1 and missing.stderr.strip() == (
        f"sparkdedalus: error: {tmp_path / 'nowhere'} is not a sparkdedalus run directory (no manifest.json)")
    usage = sparkdedalus("run", BROADCAST, "--ticks", "2", "--resume")
    assert usage.returncode == 2 and "--resume needs --store" in usage.stderr
