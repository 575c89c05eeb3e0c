"""Durability: a writer killed with SIGKILL at random moments (while starting,
between ticks, during Delta commits) and resumed ends with exactly the results
of an uninterrupted run, and never leaves the store unreadable.

Two chains of writer processes run one after the other (tests/store_driver.py),
one on sessions with Delta Lake (Spark's Delta Lake commits) and one on
sessions without (the delta-rs fallback); each process resumes where the last
one was killed. After every kill the store is checked without a JVM: the
manifest loads, every relation's Delta table opens and reads, every committed
tick equals the reference run, and no table got a tick twice. The default
suite kills one writer between two commits (`--commit-every 3`); the slow tests
kill 3 writers (2 with Delta Lake, 1 without) and SPARKDEDALUS_KILLS_PER_CHAIN per
chain (default 10: 20 kills, still killing writers while they start, during
commits and after a tick)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.store import read
from store_helpers import CHANGING, reference, store_differences

pytestmark = pytest.mark.spark

NETWORK = "delay=uniform(1,3),seed=5"
DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "store_driver.py")
KILLS_PER_CHAIN = int(os.environ.get("SPARKDEDALUS_KILLS_PER_CHAIN", "10"))
STEP_TIMEOUT = 600  # seconds a process may go without printing (a loaded machine is slow)


class Writer:
    """One driver process in its own process group, its stdout read by a thread."""

    def __init__(self, store: str, program: str, ticks: int, session: str, log: str, local_dir: str,
                 commit_every: int = 1):
        env = dict(os.environ, STORE_DRIVER_LOCAL_DIR=local_dir)
        self.log = open(log, "a")
        self.proc = subprocess.Popen([sys.executable, DRIVER, store, program, str(ticks), NETWORK, session,
                                      str(commit_every)],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True, env=env,
                                     start_new_session=True)
        self.started = time.monotonic()
        self.lines: list[str] = []
        self.times: list[float] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self.changed:
                self.lines.append(line.strip())
                self.times.append(time.monotonic())
                self.changed.notify_all()
        with self.changed:
            self.lines.append("<eof>")
            self.times.append(time.monotonic())
            self.changed.notify_all()

    def wait_for(self, predicate, seen: int | None = None) -> str | None:
        """The first line (from now on) matching `predicate`, or None at the end of output."""
        seen = len(self.lines) if seen is None else seen
        deadline = time.monotonic() + STEP_TIMEOUT
        with self.changed:
            while True:
                for line in self.lines[seen:]:
                    if line == "<eof>":
                        return None
                    if predicate(line):
                        return line
                seen = len(self.lines)
                remaining = deadline - time.monotonic()
                assert remaining > 0, "the store driver printed nothing for too long"
                self.changed.wait(remaining)

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.log.close()

    def finish(self) -> int:
        code = self.proc.wait(timeout=STEP_TIMEOUT * 4)
        self.log.close()
        return code


def check_store(path: str, trace, commit_every: int = 1) -> int:
    """The store as a reader finds it after a kill; returns its last committed tick."""
    import json

    import pyarrow as pa
    if not os.path.exists(os.path.join(path, "manifest.json")):
        return 0
    found = read.manifest(path)
    last = found.last_tick
    for name in found.relations:
        if not os.path.exists(os.path.join(path, name, "_delta_log", f"{0:020d}.json")):
            assert last == 0  # tables are created before the first tick
            continue
        table = read.delta_table(path, name)
        rows = pa.table(table.to_pyarrow_table()).to_pylist()  # every data file of the table opens
        assert max((r["_tick"] for r in rows), default=0) <= last + commit_every  # at most the ticks being redone
        ticks = [int(h.get("sparkdedalus.tick") or json.loads(h.get("userMetadata", "{}")).get("sparkdedalus.tick", 0))
                 for h in table.history()]
        assert sorted(ticks) == sorted(set(ticks)), (name, ticks)  # no tick committed twice to a table
        assert not [k for k, n in Counter(repr(sorted(r.items())) for r in rows).items() if n > 1]
    if last:
        assert store_differences(path, trace, range(1, last + 1)) == []
    return last


class Pace:
    """How long this machine takes to open a store, commit a tick and run one
    (medians of what the writers printed so far), so that the random kill
    moments fall where they are meant to on a fast or a loaded machine."""

    def __init__(self):
        self.open, self.commit, self.tick = [8.0], [1.0], [2.0]

    def learn(self, writer: Writer) -> None:
        lines, times = writer.lines, writer.times
        for i, line in enumerate(lines):
            if line.startswith("open "):
                self.open.append(times[i] - writer.started)
            if line.startswith("done ") and i and lines[i - 1].startswith("begin "):
                self.commit.append(times[i] - times[i - 1])
            if line.startswith("done ") and i >= 2 and lines[i - 2].startswith("done "):
                self.tick.append(times[i] - times[i - 2])

    @staticmethod
    def median(values):
        return sorted(values)[len(values) // 2]


def kill_at_random(writer: Writer, rng: random.Random, pace: Pace, mode: str) -> None:
    """startup: while the process starts or opens the store; commit: during a
    Delta commit (after 0-2 completed ones); tick: after a commit, within a tick."""
    if mode == "startup":
        time.sleep(rng.uniform(0.2, 1.2) * Pace.median(pace.open))
        return
    if writer.wait_for(lambda line: line.startswith("open "), seen=0) is None:
        return
    for _ in range(rng.choice([0, 1, 2])):
        if writer.wait_for(lambda line: line.startswith("done ")) is None:
            return
    if mode == "commit":
        if writer.wait_for(lambda line: line.startswith("begin ")) is not None:
            time.sleep(rng.uniform(0.0, 1.1) * Pace.median(pace.commit))
    else:
        if writer.wait_for(lambda line: line.startswith("done ")) is not None:
            time.sleep(rng.uniform(0.0, 1.0) * Pace.median(pace.tick))


def run_chain(root: str, session: str, seed: int, program_file: str, trace, report: list, trials: int,
              ticks: int) -> None:
    rng = random.Random(seed)
    pace = Pace()
    rounds, kills = 0, 0
    while kills < trials:
        rounds += 1
        path = os.path.join(root, f"run{rounds}")
        while kills < trials:
            writer = Writer(path, program_file, ticks, session, os.path.join(root, "driver.log"), root)
            mode = "startup" if kills in (0, 5) and trials > 2 else rng.choice(["commit", "commit", "tick"])
            kill_at_random(writer, rng, pace, mode)
            writer.kill()
            kills += 1
            finished = "finished" in writer.lines
            printed = [line for line in writer.lines if line != "<eof>"]
            in_commit = bool(printed) and printed[-1].startswith("begin ")
            pace.learn(writer)
            last = check_store(path, trace)
            report.append((session, rounds, mode, in_commit, last, finished))
            if finished or last == ticks:
                break  # this run is complete: the next kills go to a new run
        writer = Writer(path, program_file, ticks, session, os.path.join(root, "driver.log"), root)
        assert writer.finish() == 0, open(os.path.join(root, "driver.log")).read()[-3000:]
        assert check_store(path, trace) == ticks
        assert store_differences(path, trace, range(1, ticks + 1)) == []


def changing_program(tmp_path, ticks: int):
    """The program file and its reference trace of `ticks` ticks."""
    program_file = str(tmp_path / "changing.ded")
    with open(program_file, "w") as handle:
        handle.write(CHANGING)
    return program_file, reference(Program.from_files(program_file), ticks, Network.parse(NETWORK))


def kill_and_resume(tmp_path, chains: dict, ticks: int) -> list:
    """Chains of killed and resumed writers, one after the other (one JVM at a
    time); returns (session, run, mode, killed during a commit, last tick, finished)
    per kill."""
    program_file, trace = changing_program(tmp_path, ticks)
    report: list = []
    for session, seed in (("delta", 13), ("plain", 29)):
        root = str(tmp_path / session)
        os.makedirs(root)
        run_chain(root, session, seed, program_file, trace, report, chains[session], ticks)
    return report


@pytest.mark.slow
def test_a_few_killed_writers_resume_to_the_uninterrupted_result(tmp_path):
    report = kill_and_resume(tmp_path, {"delta": 2, "plain": 1}, ticks=6)
    assert len(report) >= 3
    assert sum(in_commit for _, _, _, in_commit, _, _ in report) >= 1, report


def test_a_writer_killed_between_commits_resumes_from_the_last_commit(tmp_path):
    """--commit-every 3: a writer killed after committing ticks 1..3, while it
    computes ticks 4 and 5 (staged, not committed), leaves tick 3 as the last
    commit and nothing of later ticks; the next writer redoes ticks 4.. and ends
    with the uninterrupted result."""
    program_file, trace = changing_program(tmp_path, 7)
    path, log = str(tmp_path / "run"), str(tmp_path / "driver.log")
    writer = Writer(path, program_file, 7, "delta", log, str(tmp_path), commit_every=3)
    assert writer.wait_for(lambda line: line == "done 3", seen=0) == "done 3"
    time.sleep(0.1)  # within tick 4
    writer.kill()
    printed = [line for line in writer.lines if line != "<eof>"]
    assert printed[-1] == "done 3", printed  # killed between commits
    assert [line for line in printed if line.startswith("begin ")] == ["begin 3"]
    assert check_store(path, trace, commit_every=3) == 3
    for name in read.relations(path):  # nothing beyond the commit point was written
        assert max(pa_rows(path, name, "_tick"), default=0) <= 3
    writer = Writer(path, program_file, 7, "delta", log, str(tmp_path), commit_every=3)
    assert writer.finish() == 0, open(log).read()[-3000:]
    assert writer.wait_for(lambda line: line.startswith("open "), seen=0) == "open 3"
    assert [line for line in writer.lines if line.startswith("done ")] == ["done 6", "done 7"]
    assert check_store(path, trace, commit_every=3) == 7
    assert store_differences(path, trace, range(1, 8)) == []


def pa_rows(path: str, name: str, column: str) -> list:
    import pyarrow as pa
    return pa.table(read.delta_table(path, name).to_pyarrow_table()).column(column).to_pylist()


@pytest.mark.slow
def test_many_killed_writers_resume_to_the_uninterrupted_result(tmp_path):
    report = kill_and_resume(tmp_path, {"delta": KILLS_PER_CHAIN, "plain": KILLS_PER_CHAIN}, ticks=24)
    print("\n".join(map(str, report)))
    assert len(report) >= 2 * KILLS_PER_CHAIN
    # the kills landed at different points: during commits, and after some ticks were committed
    assert sum(in_commit for _, _, _, in_commit, _, _ in report) >= 3, report
    assert len({last for *_, last, finished in report if not finished} - {0}) >= 2, report
