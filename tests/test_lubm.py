"""benchmarks/lubm.py: the LUBM program (benchmarks/programs/lubm_bench.ded) on the
reference evaluator gives the DuckDB checker's answers to all 14 queries on a tiny
generated university, and the checker says no to a wrong answer set. The Spark runs
(`--quick`, both workloads) are slow."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import lubm  # noqa: E402 - after the path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A one-department university at a fifth of LUBM's counts (about 500 triples):
    its triples, the reference evaluator's answers and DuckDB's."""
    types, triples = lubm.university(1, seed=0, scale=0.2)
    path = lubm.lubm_program(tmp_path_factory.mktemp("lubm"), types, triples)
    return types, triples, lubm.reference_answers(path), lubm.duckdb_answers(types, triples)


def test_the_reference_evaluator_answers_all_14_queries_as_duckdb_does(tiny):
    _, _, reference, expected = tiny
    assert sorted(expected, key=lambda q: int(q[1:])) == lubm.QUERIES
    assert all(expected[q] for q in lubm.QUERIES), {q: len(rows) for q, rows in expected.items()}  # none empty
    assert lubm.compare(reference, expected) == {q: True for q in lubm.QUERIES}


def test_inference_is_needed_for_the_answers(tiny):
    types, triples, _, expected = tiny
    students = {s for s, c in types if c in ("UndergraduateStudent", "GraduateStudent")}
    assert {x for (x,) in expected["q6"]} == students  # no one is asserted a Student
    heads = {(s, o) for s, p, o in triples if p == "headOf"}
    assert expected["q12"] == heads  # Chair: a Person head of a Department; headOf is a worksFor
    assert expected["q13"] == {(s,) for s, p, o in triples if p.endswith("DegreeFrom") and o == lubm.U0}


def test_the_checker_says_no_to_a_wrong_answer_set(tiny):
    _, _, reference, expected = tiny
    missing = {**reference, "q6": set(sorted(reference["q6"])[1:])}
    extra = {**reference, "q9": reference["q9"] | {("x", "y", "z")}}
    assert lubm.compare(missing, expected) == {q: q != "q6" for q in lubm.QUERIES}
    assert not all(lubm.compare(extra, expected).values())
    assert not lubm.compare({}, expected)["q1"]


def test_the_generator_is_seeded_and_lubm_sized():
    assert lubm.university(2, seed=5) == lubm.university(2, seed=5)
    assert lubm.university(2, seed=5) != lubm.university(2, seed=6)
    types, triples = lubm.university(1, seed=0)
    assert 5_000 < len(types) + len(triples) < 8_000  # 15 departments: about 100,000
    assert doctest.testmod(lubm).failed == 0


@pytest.mark.slow
@pytest.mark.parametrize("workload", ["lubm", "points_to"])
def test_quick_run_on_spark_matches_duckdb(workload):
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "lubm.py"), "--quick", "--workload", workload],
                            cwd=REPO, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]  # nothing but JSON on stdout
    measured = [line for line in lines if line["measurement"] == workload]
    assert len(measured) == 1 and measured[0]["matches"] is True, measured
