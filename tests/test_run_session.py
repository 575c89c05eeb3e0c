"""The session `sparkdedalus run` and the run job create: --conf settings, --ui,
--commit-every's checks, the driver's default memory, and a run out of memory
ending in one line that names the setting to raise. No Spark: the session
factories and the engine are replaced by fakes (the engine raising the errors
Spark raises), so the same code path runs without exhausting any memory."""

from __future__ import annotations

import os

import pytest

from frontend_helpers import EXAMPLES, exit_code
from sparkdedalus.shell import cli, jobs, run_spark
from sparkdedalus.plumbing import session
from sparkdedalus.spark.engine import Engine

BROADCAST = os.path.join(EXAMPLES, "broadcast.ded")
HEAP = "An error occurred while calling o812.count.\n: java.lang.OutOfMemoryError: Java heap space\n\tat java.base/"


class FakeSession:
    """What run_spark asks of a session before and after the engine runs."""

    def __init__(self, memory="2g"):
        self.conf = self
        self.memory = memory
        self.stopped = False

    def get(self, key, default=None):
        return self.memory if key == "spark.driver.memory" else default

    @property
    def sparkContext(self):
        raise AttributeError("no SparkContext here")

    def stop(self):
        self.stopped = True


@pytest.fixture
def sessions(monkeypatch):
    """Calls of local_session/remote_session, each answered with a FakeSession."""
    calls = []

    def factory(kind):
        def make(*args, **kwargs):
            calls.append((kind, args, kwargs))
            return FakeSession()
        return make
    monkeypatch.setattr(session, "local_session", factory("local"))
    monkeypatch.setattr(session, "remote_session", factory("remote"))
    return calls


def failing_engine(monkeypatch, exc):
    """Engine.run raising `exc`, as Spark would: from a started session (the
    command's session starts when a tick goes to Spark: plumbing/lazy.py)."""
    def run(self, *args, **kwargs):
        getattr(self.spark, "session", None)  # a LazySession starts here; the others have started
        raise exc
    monkeypatch.setattr(Engine, "run", run)


def test_conf_and_ui_reach_the_session_the_run_creates(sessions, monkeypatch, capsys):
    failing_engine(monkeypatch, RuntimeError("stop here"))
    code = cli.main(["run", BROADCAST, "--ticks", "2", "--quiet", "--master", "local[1]", "--conf",
                     "spark.driver.memory=3g", "--conf", "spark.sql.shuffle.partitions = 4", "--conf", "a.b=x=y"])
    assert code == 1 and "internal error: RuntimeError: stop here" in capsys.readouterr().err
    ((kind, _, kwargs),) = sessions
    assert kind == "local" and kwargs["master"] == "local[1]"
    assert kwargs["extra_conf"] == {session.JIT: "quick", "spark.driver.memory": "3g",
                                    "spark.sql.shuffle.partitions": "4", "a.b": "x=y"}

    class UISession(FakeSession):
        sparkContext = type("Context", (), {"uiWebUrl": "http://127.0.0.1:4041"})()
    monkeypatch.setattr(session, "local_session", lambda **kwargs: sessions.append(kwargs) or UISession())
    cli.main(["run", BROADCAST, "--ticks", "2", "--quiet", "--ui"])
    assert sessions[-1]["extra_conf"] == {"spark.ui.enabled": "true", session.JIT: "quick"}
    assert "Spark UI: http://127.0.0.1:4041\n" in capsys.readouterr().err

    cli.main(["run", BROADCAST, "--ticks", "2", "--quiet", "--remote", "sc://h:15002", "--conf", "k=v"])
    assert sessions[-1] == ("remote", ("sc://h:15002",), {"extra_conf": {"k": "v"}, "delta": False})


def test_short_runs_over_the_programs_own_facts_get_the_quick_compiler(sessions, monkeypatch, tmp_path):
    """spark.sparkdedalus.jit=quick (plumbing/session.py) for a run of at most
    50 ticks without .input, in a JVM the run starts; --conf overrides it."""
    failing_engine(monkeypatch, RuntimeError("stop here"))
    program = tmp_path / "p.ded"
    program.write_text('.decl edge(a: string, b: string)\n.input edge from "edges.csv"\np(X) :- edge(X, _);\n')
    (tmp_path / "edges.csv").write_text("a,b\n")
    for argv in (["--ticks", "50"], ["--ticks", "51"], ["--ticks", "5", "--conf", "spark.sparkdedalus.jit=full"],
                 ["--ticks", "5", "--remote", "local[2]"], ["--ticks", "5", "--remote", "sc://h:15002"]):
        cli.main(["run", BROADCAST, "--quiet", *argv])
    cli.main(["run", str(program), "--ticks", "2", "--quiet"])
    assert [kwargs["extra_conf"].get(session.JIT) for _, _, kwargs in sessions] == \
        ["quick", None, "full", "quick", None, None]


def test_delta_only_in_the_sessions_of_runs_that_need_it(sessions, monkeypatch, tmp_path):
    """A run starts Delta Lake with a store or a Delta `.input`, and not otherwise."""
    failing_engine(monkeypatch, RuntimeError("stop here"))
    table = tmp_path / "edges"
    table.mkdir()  # a directory is a Delta table
    program = tmp_path / "p.ded"
    program.write_text('.decl edge(a: string, b: string)\n.input edge from "edges"\np(X) :- edge(X, _);\n')
    cli.main(["run", BROADCAST, "--ticks", "2", "--quiet"])
    cli.main(["run", BROADCAST, "--ticks", "2", "--quiet", "--store", str(tmp_path / "run")])
    cli.main(["run", str(program), "--ticks", "2", "--quiet"])
    assert [kwargs["delta"] for _, _, kwargs in sessions] == [False, True, True]


@pytest.mark.parametrize("argv, message", [
    (["--conf", "spark.driver.memory"],
     "sparkdedalus run: error: argument --conf: expected KEY=VALUE, got 'spark.driver.memory' (see --help)"),
    (["--conf", "=4g"], "sparkdedalus run: error: argument --conf: expected KEY=VALUE, got '=4g' (see --help)"),
    (["--engine", "reference", "--conf", "a=b"], "sparkdedalus: error: --conf needs the spark engine"),
    (["--ui", "--remote", "sc://h:1"],
     "sparkdedalus: error: --ui needs a local session: a Spark Connect server has its own UI"),
    (["--commit-every", "3"], "sparkdedalus: error: --commit-every needs --store PATH"),
    (["--store", "x", "--commit-every", "0"],
     "sparkdedalus run: error: argument --commit-every: expected an integer >= 1, got 0 (see --help)"),
])
def test_bad_session_options_are_one_line_exit_2(sessions, capsys, argv, message):
    assert exit_code(["run", BROADCAST, "--ticks", "2", *argv]) == 2
    assert capsys.readouterr().err == f"{message}\n"
    assert sessions == []  # refused before any session


class Py4JJavaError(Exception):
    """Stands in for py4j's error (same name, a Java stack trace as its text)."""


class Py4JNetworkError(Exception):
    """Stands in for py4j's error when the JVM is gone."""


@pytest.mark.parametrize("exc, said", [
    (Py4JJavaError(HEAP), "java.lang.OutOfMemoryError: Java heap space"),
    (RuntimeError("Job aborted due to stage failure: Task 0 in stage 41.0 failed 1 times, most recent failure: "
                  "Lost task 0.0: org.apache.spark.SparkException: Checkpoint block rdd_97_0 not found! Either the "
                  "executor that originally checkpointed this partition is no longer alive"),
     "Checkpoint block rdd_97_0 not found"),
])
def test_a_run_out_of_memory_says_which_setting_to_raise(sessions, monkeypatch, capsys, exc, said):
    failing_engine(monkeypatch, exc)
    assert cli.main(["run", BROADCAST, "--ticks", "2", "--quiet"]) == 1
    assert capsys.readouterr().err == (f"sparkdedalus: error: Spark ran out of memory ({said}); raise "
                                       "spark.driver.memory (now 2g), e.g. --conf spark.driver.memory=8g\n")
    with pytest.raises(Exception) as raised:  # --debug: the traceback, the Spark error as its cause
        cli.main(["--debug", "run", BROADCAST, "--ticks", "2", "--quiet"])
    assert raised.value.__cause__ is exc


def test_the_run_job_applies_its_conf_and_names_spark_submits_memory_option(monkeypatch, capsys):
    from pyspark.sql import SparkSession
    fake, settings = FakeSession(memory="1g"), {}

    class Builder:
        def config(self, key, value):
            settings[key] = value
            return self

        def getOrCreate(self):
            return fake
    monkeypatch.setattr(SparkSession, "builder", Builder())
    failing_engine(monkeypatch, Py4JJavaError(HEAP))
    code = jobs.run_program([BROADCAST, "--ticks", "2", "--store", "unused", "--quiet", "--conf",
                             "spark.sql.shuffle.partitions=8"])
    assert code == 1 and fake.stopped and settings == {"spark.sql.shuffle.partitions": "8"}
    assert capsys.readouterr().err == ("run_program.py: error: Spark ran out of memory (java.lang.OutOfMemoryError: "
                                       "Java heap space); raise the driver's memory (now 1g): spark-submit "
                                       "--driver-memory, e.g. --driver-memory 8g\n")


def test_a_jvm_killed_by_a_memory_error_is_recognised_by_its_log(tmp_path):
    log = tmp_path / "jvm.log"
    log.write_text("26/11/24 11:02:13 ERROR SparkUncaughtExceptionHandler: Uncaught exception in thread "
                   "Thread[#90,Executor task launch worker for task 0.0]\njava.lang.OutOfMemoryError: Java heap space\n")
    gone = Py4JNetworkError("Answer from Java side is empty")
    assert run_spark.memory_failure(gone, str(log)) == "java.lang.OutOfMemoryError: Java heap space"
    log.write_text("26/11/24 11:02:13 WARN SomeOtherThing: nothing about memory\n")
    assert run_spark.memory_failure(gone, str(log)) is None
    # a memory error in the log says nothing when the JVM is alive and the error is another one
    log.write_text("java.lang.OutOfMemoryError: Java heap space\n")
    assert run_spark.memory_failure(ValueError("bad row 3"), str(log)) is None


def test_local_sessions_get_a_quarter_of_the_machine_unless_told(monkeypatch):
    monkeypatch.setattr(session, "machine_memory_bytes", lambda: 24 * 2**30)
    assert session._session_conf("x", None, delta=False)["spark.driver.memory"] == "6144m"
    assert session._session_conf("x", {"spark.driver.memory": "2g"}, delta=False)["spark.driver.memory"] == "2g"
    monkeypatch.setattr(session, "spark_defaults", lambda: {"spark.driver.memory": "3g"})
    assert session._session_conf("x", None, delta=False)["spark.driver.memory"] == "3g"
    monkeypatch.setattr(session, "machine_memory_bytes", lambda: None)
    assert session.default_driver_memory() == "1024m"
