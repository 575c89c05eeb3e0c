"""`sparkdedalus faults` on the reference engine: the verdicts of examples/faults/
derived by hand in their header comments, the output formats, exit codes and bad
input. The expected counterexamples are hand-written predicates over a scenario's
failures, checked against every scenario of the space (or of a sample)."""

import io
import json
import os

import pytest

from sparkdedalus.faults.space import Scenario, Space
from sparkdedalus.shell import cli
from sparkdedalus.shell import faults as command
from sparkdedalus.shell.progress import TickProgress
from reference_helpers import ABC, FAULT_EXAMPLES, faults_json



def counterexample_scenarios(output) -> set:
    return {Scenario(tuple(tuple(o) for o in c["omissions"]), tuple(tuple(k) for k in c["crashes"]))
            for c in output["counterexamples"]}


def expected(space, scenarios, predicate) -> set:
    """The scenarios the hand-derived `predicate(omitted set, crashes dict)` calls counterexamples."""
    return {s for s in scenarios if predicate(set(s.omissions), dict(s.crashes))}


# --- the verdicts of the examples (header comments of examples/faults/*.ded)

def simple_log_fails(omitted, crashes):
    return ("a", "b", 1) in omitted or ("a", "c", 1) in omitted


def test_simple_log_has_counterexamples_smallest_first(capsys):
    code, out = faults_json(capsys, "simple_log.ded", "--nodes", "a,b,c", "--eot", "4", "--eff", "2")
    assert code == 1 and out["scenarios"] == 64 and len(out["counterexamples"]) == 64 - 16
    space = Space(ABC, eot=4, eff=2)
    assert counterexample_scenarios(out) == expected(space, space, simple_log_fails)
    assert out["counterexamples"][:2] == [
        {"omissions": [["a", "b", 1]], "crashes": [], "missing": [["b", "hi"]]},
        {"omissions": [["a", "c", 1]], "crashes": [], "missing": [["c", "hi"]]}]
    sizes = [len(c["omissions"]) + len(c["crashes"]) for c in out["counterexamples"]]
    assert sizes == sorted(sizes)
    assert isinstance(out["seconds"], float)


def test_the_check_says_no_and_yes_retry_is_correct_where_simple_log_fails(capsys):
    space = ("--nodes", "a,b,c", "--eot", "4", "--eff", "2", "--crashes", "0")
    code, out = faults_json(capsys, "retry_broadcast.ded", *space)
    assert (code, out["scenarios"], out["counterexamples"]) == (0, 64, [])
    code, out = faults_json(capsys, "simple_log.ded", *space)
    assert (code, out["scenarios"]) == (1, 64) and out["counterexamples"]


def test_retry_broadcast_fails_with_one_crash(capsys):
    code, out = faults_json(capsys, "retry_broadcast.ded", "--nodes", "a,b,c", "--eot", "4", "--eff", "2", "--crashes", "1")
    assert code == 1 and out["scenarios"] == 64 * 13
    space = Space(ABC, eot=4, eff=2, crashes=1)

    def fails(omitted, crashes):  # a crashes at 2 after exactly one of its tick-1 copies was lost
        return crashes == {"a": 2} and (("a", "b", 1) in omitted) != (("a", "c", 1) in omitted)
    assert counterexample_scenarios(out) == expected(space, space, fails)
    assert len(out["counterexamples"]) == 2 * 2 ** 4
    assert out["counterexamples"][0] == {"omissions": [["a", "b", 1]], "crashes": [["a", 2]], "missing": [["b", "hi"]]}


def classic_fails(omitted, crashes):
    ab, ac = ("a", "b", 1) in omitted, ("a", "c", 1) in omitted
    return (ab and ac) or (ab and ("c", "b", 2) in omitted) or (ac and ("b", "c", 2) in omitted)


def test_classic_broadcast_on_a_sample(capsys):
    code, out = faults_json(capsys, "classic_broadcast.ded", "--nodes", "a,b,c", "--eot", "5", "--eff", "3",
                       "--sample", "300", "--seed", "7")
    assert code == 1 and out["scenarios"] == 300
    space = Space(ABC, eot=5, eff=3)
    drawn = space.sample(300, seed=7)
    assert counterexample_scenarios(out) == expected(space, drawn, classic_fails)


@pytest.mark.slow
def test_classic_broadcast_whole_space(capsys):
    code, out = faults_json(capsys, "classic_broadcast.ded", "--nodes", "a,b,c", "--eot", "5", "--eff", "3")
    space = Space(ABC, eot=5, eff=3)
    assert code == 1 and out["scenarios"] == 4096 and len(out["counterexamples"]) == 1024 + 512 + 512
    assert counterexample_scenarios(out) == expected(space, space, classic_fails)
    assert out["counterexamples"][0] == {"omissions": [["a", "b", 1], ["a", "c", 1]], "crashes": [],
                                         "missing": [["b", "hi"], ["c", "hi"]]}


def test_two_phase_commit_blocks_when_coordinator_or_a_voter_crashes_early(capsys):
    code, out = faults_json(capsys, "two_phase_commit.ded", "--nodes", "coord,p1,p2,p3", "--eot", "5", "--eff", "0",
                       "--crashes", "1")
    assert code == 1 and out["scenarios"] == 21
    crashes = [tuple(c["crashes"][0]) for c in out["counterexamples"]]
    assert crashes == [("coord", 2), ("coord", 3), ("p1", 1), ("p1", 2), ("p2", 1), ("p2", 2), ("p3", 1), ("p3", 2)]
    assert out["counterexamples"][0]["missing"] == [["p1", "t1"], ["p2", "t1"], ["p3", "t1"]]
    assert out["counterexamples"][2]["missing"] == [["p2", "t1"], ["p3", "t1"]]


# --- output

def test_text_output_lists_the_smallest_first(capsys):
    code = cli.main(["faults", os.path.join(FAULT_EXAMPLES, "simple_log.ded"), "--nodes", "a,b,c", "--eot", "4",
                     "--eff", "2", "--engine", "reference", "--quiet"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[0].startswith("64 scenarios, 48 counterexamples (")
    assert lines[1] == '  1. omit=a>b@1: missing post("b", "hi")'
    assert lines[3] == '  3. omit=a>b@1,omit=a>c@1: missing post("b", "hi"), post("c", "hi")'
    assert lines[11] == "  ... 38 more (--format json lists them all)"
    assert lines[12] == (f"replay the first: sparkdedalus run {os.path.join(FAULT_EXAMPLES, 'simple_log.ded')} --ticks 4 "
                         "--engine reference --relations pre,post --format table --network 'omit=a>b@1'")


def test_text_output_without_counterexample(capsys):
    code = cli.main(["faults", os.path.join(FAULT_EXAMPLES, "retry_broadcast.ded"), "--nodes", "a,b", "--eot", "3",
                     "--eff", "1", "--engine", "reference"])
    assert code == 0 and capsys.readouterr().out.startswith("1 scenario, no counterexample (")


def test_progress_counts_scenarios_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    stream = Terminal()
    with TickProgress(64, stream=stream, unit="scenario") as bar:
        bar.show(5, "2 counterexamples")
        shown = stream.getvalue()
    assert "scenario" in shown and "5/64" in shown and "2 counterexamples" in shown


# --- bad input: one line, exit 2

NO_INVARIANT = 'log(N, P)@next :- log(N, P); log("a", "hi")@1; log("b", "hi")@1;\n'
POST_ONLY = NO_INVARIANT + 'post(N, P) :- log(N, P);\n'


@pytest.mark.parametrize("program, options, message", [
    ("simple_log.ded", ["--nodes", "a,b,d", "--eot", "4", "--eff", "2"], "--nodes: unknown node 'd'"),
    ("simple_log.ded", ["--nodes", "a,b,c", "--eot", "4", "--eff", "5"], "EFF <= EOT"),
    ("simple_log.ded", ["--nodes", "a,b,c", "--eot", "12", "--eff", "5", "--search", "all"], "add --sample N"),
    ("simple_log.ded", ["--nodes", "a,b,c", "--eot", "4", "--eff", "2", "--crashes", "4"], "crashes"),
    ("simple_log.ded", ["--nodes", "a,b,c", "--eot", "four", "--eff", "2"], "--eot: expected an integer"),
    ("simple_log.ded", ["--nodes", "a,b,c", "--eot", "4", "--eff", "2", "--sample", "0"], "--sample"),
    ("simple_log.ded", ["--nodes", "a,b,c", "--eot", "4", "--eff", "2", "--engine", "molly"], "--engine"),
    ("simple_log.ded", ["--nodes", "a,b,c", "--eot", "4", "--eff", "2", "--format", "csv"], "--format"),
    ("simple_log.ded", ["--eot", "4", "--eff", "2"], "--nodes"),
    (NO_INVARIANT, ["--nodes", "a,b", "--eot", "2", "--eff", "1"], "no 'pre' relation"),
    (POST_ONLY, ["--nodes", "a,b", "--eot", "2", "--eff", "1"], "no 'pre' relation"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, program, options, message):
    if program.endswith(".ded"):
        path = os.path.join(FAULT_EXAMPLES, program)
    else:
        path = tmp_path / "p.ded"
        path.write_text(program)
    try:
        code = cli.main(["faults", str(path), "--engine", "reference", *options])
    except SystemExit as exc:  # argparse's own usage errors (a missing required option)
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


def test_a_large_space_runs_with_sample(capsys):
    code, out = faults_json(capsys, "retry_broadcast.ded", "--nodes", "a,b,c", "--eot", "12", "--eff", "5",
                       "--sample", "20", "--seed", "3")
    assert (code, out["scenarios"], out["counterexamples"]) == (0, 20, [])


# --- the Spark engine's path (Engine.faults is built on another branch: faked here)

def test_spark_engine_path_calls_engine_faults(monkeypatch, capsys):
    from sparkdedalus.reference.faults import faults as reference_faults
    import sparkdedalus.spark.engine as engine

    calls = []

    class FakeEngine:
        def __init__(self, spark):
            calls.append(spark)

        def faults(self, program, **options):
            calls.append(options)
            return reference_faults(program, **options)

    monkeypatch.setattr(engine, "Engine", FakeEngine)
    args = cli._parser().parse_args(["faults", os.path.join(FAULT_EXAMPLES, "simple_log.ded"), "--nodes", "a,b,c",
                                     "--eot", "4", "--eff", "2", "--format", "json", "--sample", "10"])
    code = command.handle(args, new_session=lambda args: "the session")
    out = json.loads(capsys.readouterr().out)
    assert calls == ["the session", {"nodes": ABC, "eot": 4, "eff": 2, "crashes": 0, "sample": 10, "seed": 0,
                                     "search": "all"}]  # auto: a sample is enumerated
    space = Space(ABC, eot=4, eff=2)
    assert out["scenarios"] == 10
    assert counterexample_scenarios(out) == expected(space, space.sample(10, seed=0), simple_log_fails)
    assert code == (1 if out["counterexamples"] else 0)


# --- --store: the smallest counterexamples as runs the diagram draws (Spark)

@pytest.mark.slow
def test_store_keeps_the_smallest_counterexamples_for_the_diagram(spark, tmp_path, capsys):
    from sparkdedalus.diagram import from_store

    store = str(tmp_path / "cx")
    args = cli._parser().parse_args(["faults", os.path.join(FAULT_EXAMPLES, "retry_broadcast.ded"), "--nodes", "a,b,c",
                                     "--eot", "4", "--eff", "2", "--crashes", "1", "--engine", "reference",
                                     "--store", store, "--quiet"])
    assert command.handle(args, new_session=lambda args: spark) == 1
    assert sorted(os.listdir(store)) == ["counterexample-1", "counterexample-2", "counterexample-3"]
    first = from_store(os.path.join(store, "counterexample-1"), relation="post")
    # omit=a>b@1, crash=a@2: the tick-1 copy to b is lost, a's later sends too; c has the entry
    assert {(m.src, m.row[0], m.send_tick) for m in first.lost} == {("a", "b", 1), ("a", "b", 2), ("a", "c", 2),
                                                                  ("a", "b", 3), ("a", "c", 3), ("a", "b", 4),
                                                                  ("a", "c", 4)}
    assert dict(first.crashes) == {"a": 2}
    assert first.facts[("c", 4)] == (("hi",),) and ("b", 4) not in first.facts
