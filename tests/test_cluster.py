"""jobs/run_program.py submitted to a local Spark standalone cluster (one
master, two workers: scripts/cluster-start.sh) through scripts/submit.sh: the
store read back at every tick equals the reference evaluator's trace, the
application ran on both workers, and scripts/cluster-stop.sh leaves no process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine_helpers import EXAMPLES, example_ticks
from sparkdedalus import Program
from sparkdedalus.output import facts_json
from store_helpers import reference, store_differences

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

REPO = EXAMPLES.parent


@dataclass
class Cluster:
    url: str
    ui_port: int
    state: Path

    def status(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=10) as answer:
            return json.load(answer)


def script(name: str, *args, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(REPO / "scripts" / name), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO)


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def processes_in(state: Path) -> list[int]:
    """Live processes started from a daemon pid file in `state` or working in it (executors)."""
    pids = {int(p.read_text()) for p in state.glob("*.pid")}
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and os.readlink(proc / "cwd").startswith(str(state)):
                pids.add(int(proc.name))
        except OSError:
            pass
    return sorted(pid for pid in pids if _alive(pid))


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    state = tmp_path_factory.mktemp("cluster")
    port, ui_port = free_ports(2)
    pids = []
    try:
        started = script("cluster-start.sh", "--dir", state, "--port", port, "--webui-port", ui_port)
        pids = processes_in(state)
        assert started.returncode == 0, started.stderr
        assert started.stdout == f"spark://127.0.0.1:{port}\n"
        assert len(pids) == 3
        again = script("cluster-start.sh", "--dir", state)
        assert again.returncode == 1 and "already running" in again.stderr
        yield Cluster(started.stdout.strip(), ui_port, state)
        pids = processes_in(state)
    finally:
        stopped = script("cluster-stop.sh", "--dir", state)
    assert stopped.returncode == 0, stopped.stderr
    assert not [pid for pid in pids if _alive(pid)] and processes_in(state) == []
    assert script("cluster-stop.sh", "--dir", state).stderr == f"cluster-stop.sh: no cluster running in {state}\n"


@pytest.mark.parametrize("name", ["broadcast.ded", "two_phase_commit.ded"])
def test_run_job_on_the_cluster_stores_the_reference_trace(cluster, tmp_path, name):
    path = EXAMPLES / name
    ticks = example_ticks(path)
    store = tmp_path / "store"
    before = {app["id"] for app in cluster.status()["completedapps"]}
    done = script("submit.sh", "--master", cluster.url, REPO / "jobs" / "run_program.py", path,
                  "--ticks", ticks, "--store", store, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]

    program = Program.from_files(str(path))
    trace = reference(program, ticks)
    # spark-submit merges the Python driver's standard error into its standard output
    *messages, facts = done.stdout.splitlines()
    assert messages == [f"stored ticks 1..{ticks} in {store} ({len(program.relations)} Delta tables, writer spark-delta)"]
    printed = json.loads(facts)
    assert printed.pop("placement") == ["spark"] * ticks  # a stored run's ticks are Spark's
    assert printed == facts_json(ticks, {n: trace.relation(n, ticks) for n in program.outputs})
    assert store_differences(str(store), trace, range(1, ticks + 1)) == []

    [app] = [app for app in cluster.status()["completedapps"] if app["id"] not in before]
    assert (app["name"], app["state"]) == ("run_program.py", "FINISHED")
    for worker in ("worker1", "worker2"):  # an executor on each worker
        assert (cluster.state / worker / app["id"]).is_dir()
