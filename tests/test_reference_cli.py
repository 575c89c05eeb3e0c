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


# ------------------------------------------------------------ --provenance

def _message(fact_row, tick, sender, sent, body):
    """The record of `log(fact_row)` at `tick`, delivered from `sender` sent at `sent`
    by the @async rule of broadcast.ded:27."""
    return {"relation": "log", "row": fact_row, "tick": tick, "kind": "message", "rule": 2,
            "pos": f"{BROADCAST}:27", "text": "log(M, P)@async :- bcast(N, P), node(N, M);", "absent": [],
            "message": {"sender": sender, "send_tick": sent, "receiver": fact_row[0], "arrival": tick},
            "body": [{"relation": r, "row": row, "tick": sent} for r, row in body]}


def _carried(fact_row, tick):
    """The record of `log(fact_row)` at `tick`, persisted by the rule of broadcast.ded:26."""
    return {"relation": "log", "row": fact_row, "tick": tick, "kind": "next", "rule": 1,
            "pos": f"{BROADCAST}:26", "text": "log(N, P)@next :- log(N, P);", "absent": [], "message": None,
            "body": [{"relation": "log", "row": fact_row, "tick": tick - 1}]}


def test_provenance_json_of_broadcast_by_hand(capsys):
    """broadcast.ded at tick 2: log("a", "hi") holds since tick 1 (a's own broadcast,
    line 28) and is carried by line 26; "a" sent "hi" to b, c, d at tick 1 (line 27,
    its neighbours from lines 30-32); "b" broadcasts "yo" at tick 2 (line 37, line 28).
    One derivation each: "a" is nobody's neighbour but b's, and b sends nothing at tick 1."""
    status, out, err = run_cli(capsys, BROADCAST, "--engine", "reference", "--ticks", "3", "--at", "2",
                               "--relations", "log", "--provenance")
    assert status == 0, err
    result = json.loads(out)
    assert result["relations"] == {"log": [["a", "hi"], ["b", "hi"], ["b", "yo"], ["c", "hi"], ["d", "hi"]]}
    sent_hi = lambda to: [("bcast", ["a", "hi"]), ("node", ["a", to])]  # noqa: E731
    assert result["provenance"] == [
        _carried(["a", "hi"], 2),
        _message(["b", "hi"], 2, "a", 1, sent_hi("b")),
        {"relation": "log", "row": ["b", "yo"], "tick": 2, "kind": "rule", "rule": 3, "pos": f"{BROADCAST}:28",
         "text": "log(N, P) :- bcast(N, P);", "absent": [], "message": None,
         "body": [{"relation": "bcast", "row": ["b", "yo"], "tick": 2}]},
        _message(["c", "hi"], 2, "a", 1, sent_hi("c")),
        _message(["d", "hi"], 2, "a", 1, sent_hi("d"))]


def test_provenance_json_carried_and_program_facts(capsys):
    """At tick 3 log("c", "hi") is only carried (no second message to c); log("c", "yo")
    arrives from "b" (sent at 2, node("b", "c") carried there); bcast("a", "bye") is
    the fact of line 38, no rule."""
    status, out, err = run_cli(capsys, BROADCAST, "--engine", "reference", "--ticks", "3",
                               "--relations", "log,bcast", "--provenance")
    assert status == 0, err
    records = json.loads(out)["provenance"]
    of = lambda relation, row: [r for r in records if (r["relation"], r["row"]) == (relation, row)]  # noqa: E731
    assert of("log", ["c", "hi"]) == [_carried(["c", "hi"], 3)]
    assert of("log", ["c", "yo"]) == [_message(["c", "yo"], 3, "b", 2, [("bcast", ["b", "yo"]), ("node", ["b", "c"])])]
    assert of("bcast", ["a", "bye"]) == [
        {"relation": "bcast", "row": ["a", "bye"], "tick": 3, "kind": "fact", "rule": None, "pos": f"{BROADCAST}:38",
         "text": None, "absent": [], "message": None, "body": []}]
    assert len(records) == 9  # 8 log facts and 1 bcast fact, one derivation each
    assert [r["relation"] for r in records] == ["bcast"] + ["log"] * 8  # relations sorted


def test_provenance_shows_negated_atoms_absent_and_every_derivation(tmp_path, capsys):
    path = tmp_path / "p.ded"
    path.write_text('q("a")@1; s("a")@1;\np(X) :- q(X), notin r(X);\np(X) :- s(X);\n')
    status, out, err = run_cli(capsys, str(path), "--engine", "reference", "--ticks", "1", "--relations", "p",
                               "--provenance")
    assert status == 0, err
    (first, second) = json.loads(out)["provenance"]
    assert (first["pos"], first["body"], first["absent"]) == (
        f"{path}:2", [{"relation": "q", "row": ["a"], "tick": 1}], [{"relation": "r", "pattern": ["a"], "tick": 1}])
    assert (second["pos"], second["body"], second["absent"]) == (
        f"{path}:3", [{"relation": "s", "row": ["a"], "tick": 1}], [])


def test_provenance_table_section(capsys):
    status, out, err = run_cli(capsys, BROADCAST, "--engine", "reference", "--ticks", "3", "--at", "2",
                               "--relations", "log", "--provenance", "--format", "table")
    assert status == 0, err
    table, section = out.rstrip("\n").split("\n\nderivations")
    assert table.startswith("tick 2\n\nlog (5 facts)")
    assert section.splitlines()[:5] == [
        " (5)",
        '  log("a", "hi")@2',
        f'    persisted from tick 1 by rule {BROADCAST}:26: log(N, P)@next :- log(N, P);',
        '      log("a", "hi")@1',
        '  log("b", "hi")@2']


@pytest.mark.parametrize("fmt", ["json", "table", "csv"])
def test_without_provenance_the_output_is_unchanged(capsys, fmt):
    argv = [BROADCAST, "--engine", "reference", "--ticks", "3", "--format", fmt]
    status, plain, err = run_cli(capsys, *argv)
    assert status == 0, err
    assert "derivations" not in plain and "provenance" not in plain
    if fmt != "csv":
        status, with_provenance, err = run_cli(capsys, *argv, "--provenance")
        assert status == 0, err
        if fmt == "json":
            assert {k: v for k, v in json.loads(with_provenance).items() if k != "provenance"} == json.loads(plain)
        else:
            assert with_provenance.startswith(plain.rstrip("\n") + "\n\nderivations (")
