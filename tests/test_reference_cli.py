"""`sparkdedalus run --engine reference`: the JSON output contract and the errors."""

from __future__ import annotations

import json
import os

import pytest

from frontend_helpers import exit_code
from reference_helpers import EXAMPLES
from sparkdedalus.shell.cli import main

BROADCAST = os.path.join(EXAMPLES, "broadcast.ded")


def run_cli(capsys, *argv):
    status = exit_code(["run", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_json_of_the_last_tick(capsys):
    status, out, err = run_cli(capsys, BROADCAST, "--engine", "reference", "--ticks", "2")
    assert status == 0, err
    assert json.loads(out) == {"tick": 2, "relations": {
        "bcast": [["b", "yo"]],
        "log": [["a", "hi"], ["b", "hi"], ["b", "yo"], ["c", "hi"], ["d", "hi"]],
        "node": [["a", "b"], ["a", "c"], ["a", "d"], ["b", "a"], ["b", "c"]]}}
    assert list(json.loads(out)["relations"]) == ["bcast", "log", "node"]  # names sorted


def test_relations_at_and_network_options(capsys):
    status, out, err = run_cli(capsys, BROADCAST, "--engine", "reference", "--ticks", "5", "--at", "3",
                               "--relations", "log", "--network", "delay=fixed,omit=a>c@1", "--seed", "3")
    assert status == 0, err
    assert json.loads(out) == {"tick": 3, "relations": {"log": [
        ["a", "bye"], ["a", "hi"], ["a", "yo"], ["b", "hi"], ["b", "yo"], ["c", "yo"], ["d", "hi"]]}}


def test_rows_of_mixed_types_sort_deterministically(tmp_path, capsys):
    path = tmp_path / "mixed.ded"
    path.write_text('p("a", 10); p("a", 9); p("a", -1); q("b", "x"); q("b", "B"); q("a", "z");\n'
                    'r("a", true); r("a", false);\n')
    status, out, err = run_cli(capsys, str(path), "--engine", "reference", "--ticks", "1")
    assert status == 0, err
    assert json.loads(out)["relations"] == {"p": [["a", -1], ["a", 9], ["a", 10]],
                                            "q": [["a", "z"], ["b", "B"], ["b", "x"]],
                                            "r": [["a", False], ["a", True]]}


@pytest.mark.parametrize("argv,message", [
    (["--engine", "reference"], "sparkdedalus run: error: the following arguments are required: --ticks"),
    (["--engine", "reference", "--ticks", "x"], "sparkdedalus run: error: argument --ticks: expected an integer, got 'x'"),
    (["--engine", "reference", "--ticks", "0"], "sparkdedalus run: error: argument --ticks: expected an integer >= 1"),
    (["--engine", "reference", "--ticks", "2", "--at", "3"], "sparkdedalus: error: --at 3 is after the last tick (2)"),
    (["--engine", "reference", "--ticks", "2", "--relations", "log,nope"],
     "sparkdedalus: error: --relations: unknown relation 'nope'"),
    (["--engine", "reference", "--ticks", "2", "--relations", "log,"],
     "sparkdedalus run: error: argument --relations: expected comma-separated names, got 'log,'"),
    (["--engine", "reference", "--ticks", "2", "--network", "delay=uniform(2,1)"],
     "sparkdedalus run: error: argument --network: bad network item"),
    (["--engine", "reference", "--ticks", "2", "--seed", "s"], "sparkdedalus run: error: argument --seed: expected an integer"),
    (["--engine", "duckdb", "--ticks", "2"], "sparkdedalus run: error: argument --engine: invalid choice: 'duckdb'"),
    (["--engine", "reference", "--ticks", "2", "--format", "xml"],
     "sparkdedalus run: error: argument --format: invalid choice: 'xml'"),
])
def test_usage_errors_exit_2_with_one_line(capsys, argv, message):
    status, out, err = run_cli(capsys, BROADCAST, *argv)
    assert status == 2
    assert out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(message)


def test_bad_input_data_exits_1(tmp_path, capsys):
    (tmp_path / "p.ded").write_text('.decl n(loc: string, x: int)\n.input n from "n.csv"\n')
    (tmp_path / "n.csv").write_text("loc,x\na,one\n")
    status, out, err = run_cli(capsys, str(tmp_path / "p.ded"), "--engine", "reference", "--ticks", "1")
    assert status == 1 and out == ""
    assert err.strip() == f"sparkdedalus: error: {tmp_path / 'n.csv'}: row 1: column 'x': cannot read 'one' as int"


def test_an_engine_failure_is_an_internal_error_not_a_data_error(capsys, monkeypatch):
    """PySpark's errors subclass ValueError; an engine failure must not read as bad data."""
    from pyspark.errors import PySparkValueError

    import sparkdedalus.reference

    def broken(*args, **kwargs):
        raise PySparkValueError(errorClass="CANNOT_BE_EMPTY", messageParameters={"item": "plan"})

    monkeypatch.setattr(sparkdedalus.reference, "run", broken)
    status, out, err = run_cli(capsys, BROADCAST, "--engine", "reference", "--ticks", "1")
    assert (status, out) == (1, "")
    assert err.startswith("sparkdedalus: internal error: PySparkValueError: ")
    assert "--debug" in err and "Traceback" not in err and err.count("\n") == 2
    with pytest.raises(PySparkValueError):
        main(["--debug", "run", BROADCAST, "--engine", "reference", "--ticks", "1"])


def test_bad_data_in_the_evaluation_is_one_line(tmp_path, capsys):
    """An integer overflow while evaluating (the reference's own error) is one line."""
    path = tmp_path / "overflow.ded"
    path.write_text('big("a", 9223372036854775807);\nbigger(L, X + 1) :- big(L, X);\n')
    status, out, err = run_cli(capsys, str(path), "--engine", "reference", "--ticks", "1")
    assert (status, out) == (1, "")
    assert err.startswith("sparkdedalus: error: ") and "overflow" in err and err.count("\n") == 1
