"""The spark-submit jobs (jobs/*.py) run as scripts without spark-submit: help,
usage and program errors, none of which starts Spark or imports pyspark; and
the cluster scripts' argument errors. The jobs on a cluster: test_cluster.py."""

from __future__ import annotations

import os
import subprocess
import sys

from frontend_helpers import EXAMPLES, REPO, write

BAD_PROGRAM = 'p(X)@5 :- q(X);\n'


def job(name: str, *args: str) -> tuple[int, str, str, bool]:
    """Run jobs/NAME: (exit code, stdout, stderr, whether pyspark was imported)."""
    done = subprocess.run([sys.executable, "-X", "importtime", os.path.join(REPO, "jobs", name), *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    imports = [line for line in done.stderr.splitlines(keepends=True) if line.startswith("import time:")]
    stderr = "".join(line for line in done.stderr.splitlines(keepends=True) if line not in imports)
    return done.returncode, done.stdout, stderr, any(" pyspark" in line for line in imports)


def test_run_job_help_lists_the_run_options_without_spark():
    code, out, err, pyspark = job("run_program.py", "--help")
    assert (code, err, pyspark) == (0, "", False)
    assert out.startswith("usage: run_program.py ")
    for option in ("--ticks N", "--store PATH", "--network SPEC", "--seed S", "--resume", "--debug",
                   "scripts/submit.sh --master spark://"):
        assert option in out
    options = out.split("\nexample")[0]
    for option in ("--master", "--remote", "--engine"):  # spark-submit decides where it runs
        assert option not in options


def test_check_job_help():
    code, out, err, pyspark = job("check_program.py", "--help")
    assert (code, err, pyspark) == (0, "", False)
    assert out.startswith("usage: check_program.py [-h] [--debug] [--strict] FILE [FILE ...]\n")


def test_usage_errors_are_one_line_exit_2():
    broadcast = os.path.join(EXAMPLES, "broadcast.ded")
    cases = {
        ("run_program.py", broadcast, "--ticks", "3", "--store", "x", "--bogus"):
            "run_program.py: error: unrecognized arguments: --bogus (see --help)\n",
        ("run_program.py", broadcast, "--ticks", "3"):
            "run_program.py: error: the following arguments are required: --store (see --help)\n",
        ("run_program.py", broadcast, "--ticks", "0", "--store", "x"):
            "run_program.py: error: argument --ticks: expected an integer >= 1, got 0 (see --help)\n",
        ("run_program.py", broadcast, "--ticks", "3", "--store", "x", "--network", "delay=never"):
            None,  # the network parser's own message, checked for shape only
        ("check_program.py",): "check_program.py: error: the following arguments are required: FILE (see --help)\n",
    }
    for (name, *args), message in cases.items():
        code, out, err, pyspark = job(name, *args)
        assert (code, out, pyspark) == (2, "", False), (args, err)
        assert err.count("\n") == 1, err
        if message is not None:
            assert err == message
        else:
            assert err.startswith("run_program.py: error: argument --network: ")


def test_bad_programs_exit_1_with_file_line_col_before_spark(tmp_path):
    bad = write(tmp_path, "bad.ded", BAD_PROGRAM)
    for name, args in (("check_program.py", [bad]), ("run_program.py", [bad, "--ticks", "2", "--store", "s"])):
        code, out, err, pyspark = job(name, *args)
        assert (code, out, pyspark) == (1, "", False), err
        assert err == f"{bad}:1:6: error: a rule head takes @next, @async or @later, not '@5'\n" \
                      f"  p(X)@5 :- q(X);\n       ^\n1 error(s)\n"
    assert not (tmp_path / "s").exists()


def test_debug_shows_the_traceback(tmp_path):
    bad = write(tmp_path, "bad.ded", BAD_PROGRAM)
    code, _, err, _ = job("check_program.py", "--debug", bad)
    assert code == 1
    assert "Traceback (most recent call last)" in err and "DiagnosticError" in err


def test_check_job_accepts_an_example():
    code, out, err, pyspark = job("check_program.py", os.path.join(EXAMPLES, "two_phase_commit.ded"), "--strict")
    assert (code, err, pyspark) == (0, "", False)
    assert out.startswith("ok: ") and " 0 warning(s)" in out


def script(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", os.path.join(REPO, "scripts", name), *args],
                          capture_output=True, text=True, timeout=60)


def test_cluster_scripts_refuse_bad_arguments_and_stop_nothing(tmp_path):
    for name, args in (("cluster-start.sh", ["--bogus"]), ("cluster-start.sh", ["--port"]),
                       ("cluster-stop.sh", ["--dir"]), ("cluster-stop.sh", ["extra"])):
        done = script(name, *args)
        assert done.returncode == 2 and done.stderr.startswith(f"usage: {name} "), (args, done.stderr)
    stopped = script("cluster-stop.sh", "--dir", str(tmp_path))
    assert stopped.returncode == 0
    assert stopped.stderr == f"cluster-stop.sh: no cluster running in {tmp_path}\n"
