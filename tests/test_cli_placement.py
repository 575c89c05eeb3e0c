"""`sparkdedalus run` starts Spark only when a tick goes there (shell/run_spark.py,
plumbing/lazy.py): a run whose ticks all fit the driver runs with no Java at all,
and prints the reference evaluator's facts; a run whose ticks go to Spark starts it."""

import json
import os
import subprocess
import sys

import pytest

from sparkdedalus import Program
from sparkdedalus.output import facts_json
from sparkdedalus.reference import run as reference_run
from engine_helpers import EXAMPLES

COMMAND = os.path.join(os.path.dirname(sys.executable), "sparkdedalus")
BROADCAST = str(EXAMPLES / "broadcast.ded")


def sparkdedalus(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([COMMAND, *args], capture_output=True, text=True, timeout=600, env=env)


def expected(ticks: int) -> dict:
    program = Program.from_files(BROADCAST)
    trace = reference_run(program, ticks=ticks)
    return facts_json(ticks, {n: trace.relation(n, ticks) for n in program.outputs})


def facts_only(printed: str) -> dict:
    """`run --format json`'s output without the Spark engine's `placement`."""
    return {k: v for k, v in json.loads(printed).items() if k != "placement"}


def without_java() -> dict:
    """An environment in which starting Spark fails: no Java to be found."""
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if not os.path.exists(os.path.join(p, "java")))
    return {**os.environ, "JAVA_HOME": "/nonexistent", "PATH": path}


def test_a_run_in_the_driver_needs_no_java(tmp_path):
    stats = tmp_path / "stats.json"
    done = sparkdedalus("run", BROADCAST, "--ticks", "5", "--format", "json", "--stats", str(stats),
                        env=without_java())
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed.pop("placement") == ["driver"] * 5  # where each tick ran; the facts the reference's
    assert printed == expected(5)
    assert json.loads(stats.read_text())["placement_per_tick"] == ["driver"] * 5


@pytest.mark.spark
def test_a_run_whose_ticks_go_to_spark_starts_it(tmp_path):
    """driverRows 0: every tick on Spark; without Java the same run fails, one line, exit 1 or 2."""
    args = ["run", BROADCAST, "--ticks", "3", "--format", "json", "--conf", "spark.sparkdedalus.fixpoint.driverRows=0"]
    stats = tmp_path / "stats.json"
    done = sparkdedalus(*args, "--stats", str(stats))
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed.pop("placement") == ["spark"] * 3
    assert printed == expected(3)
    assert json.loads(stats.read_text())["placement_per_tick"] == ["spark"] * 3
    failed = sparkdedalus(*args, env=without_java())
    assert failed.returncode != 0 and "Traceback" not in failed.stderr


def test_a_run_with_small_input_files_needs_no_java(tmp_path):
    (tmp_path / "votes.ded").write_text('.decl vote(voter: string, choice: long)\n.input vote from "vote.csv"\n'
                                        '.output tally\ntally(C, count<V>) :- vote(V, C);\n')
    (tmp_path / "vote.csv").write_text("voter,choice\n" + "".join(f"v{i},{i % 3}\n" for i in range(100)))
    done = sparkdedalus("run", str(tmp_path / "votes.ded"), "--ticks", "2", "--format", "json", env=without_java())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["relations"] == {"tally": [[0, 34], [1, 33], [2, 33]]}


def test_a_program_run_again_translates_nothing(tmp_path):
    """The translations of a run's SQL are kept on disk (spark/duck/translations.py):
    a second run of the program finds them all and never imports sqlglot."""
    script = ("import sys; from sparkdedalus.shell.cli import main; "
              f"code = main(['run', {BROADCAST!r}, '--ticks', '4', '--format', 'json']); "
              "print('#', code, 'sqlglot' in sys.modules)")
    env = {**os.environ, "SPARKDEDALUS_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
            for _ in range(2)]
    outputs = [run.stdout.rpartition("# ") for run in runs]
    assert [last.split() for _, _, last in outputs] == [["0", "True"], ["0", "False"]], runs[1].stderr
    assert facts_only(outputs[0][0]) == facts_only(outputs[1][0]) == expected(4)
    assert any((tmp_path / "cache").iterdir())


def test_a_small_fault_space_needs_no_java():
    """`faults` (Spark engine) on 64 scenarios: run in the driver, with no Java,
    the reference engine's counterexamples (48 of 64 break simple_log's invariant)."""
    args = [str(EXAMPLES / "faults" / "simple_log.ded"), "--nodes", "a,b,c", "--eot", "4", "--eff", "2",
            "--format", "json"]
    driver = sparkdedalus("faults", *args, env=without_java())
    reference = sparkdedalus("faults", *args, "--engine", "reference")
    assert driver.returncode == reference.returncode == 1, driver.stderr
    found, oracle = json.loads(driver.stdout), json.loads(reference.stdout)
    assert len(found["counterexamples"]) == 48
    assert found["counterexamples"] == oracle["counterexamples"]


def test_why_on_the_spark_engine_needs_no_java_for_a_small_run():
    """`why --engine spark`: the run and its provenance in the driver, no Java;
    the reference engine's answer, word for word."""
    args = [BROADCAST, "--ticks", "3", 'log("c", "hi")@3']
    driver = sparkdedalus("why", *args, "--engine", "spark", env=without_java())
    reference = sparkdedalus("why", *args, "--engine", "reference")
    assert driver.returncode == reference.returncode == 0, driver.stderr
    assert "message from \"a\" sent at tick 1" in driver.stdout
    assert driver.stdout == reference.stdout
