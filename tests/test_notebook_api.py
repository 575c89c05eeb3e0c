"""The notebook-facing API: `from sparkdedalus import Engine, Program`, EDB relations
given as DataFrames, `run.explain()`, and `sparkdedalus.testing` for users' tests.
Expected facts come from examples/broadcast.ded's header (derived by hand)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from chispa import DataFramesNotEqualError

from sparkdedalus import Engine, Program
from sparkdedalus.reference import run as reference_run
from sparkdedalus.testing import assert_relation_equals
from engine_helpers import EXAMPLES

pytestmark = pytest.mark.spark

#: broadcast.ded at tick 2, from its header
LOG_AT_2 = [("a", "hi"), ("b", "hi"), ("c", "hi"), ("d", "hi"), ("b", "yo")]

RELAY = """
.decl node(n: string, m: string)
got(M, P)@async :- node(N, M), say(N, P);
got(N, P)@next :- got(N, P);
say("a", "x")@1;
"""


@pytest.fixture(scope="module")
def broadcast_run(spark):
    return Engine(spark).run(Program.from_files(str(EXAMPLES / "broadcast.ded")), ticks=2)


def test_assert_relation_equals_accepts_the_hand_derived_rows(broadcast_run):
    assert_relation_equals(broadcast_run, "log", LOG_AT_2, tick=2)
    assert_relation_equals(broadcast_run, "log", list(reversed(LOG_AT_2)))  # the last tick, any order


def test_assert_relation_equals_rejects_missing_and_extra_rows(broadcast_run):
    with pytest.raises(DataFramesNotEqualError):
        assert_relation_equals(broadcast_run, "log", LOG_AT_2[:-1], tick=2)
    with pytest.raises(DataFramesNotEqualError):
        assert_relation_equals(broadcast_run, "log", LOG_AT_2 + [("d", "yo")], tick=2)


def test_edb_from_a_dataframe(spark):
    # a -> b and a -> c: "x" said by a at tick 1 arrives at b and c at tick 2, then persists
    program = Program.parse(RELAY)
    nodes = spark.createDataFrame([("a", "b"), ("a", "c")], "n string, m string")
    run = Engine(spark).run(program, ticks=3, edb={"node": nodes})
    assert_relation_equals(run, "got", [], tick=1)
    assert_relation_equals(run, "got", [("b", "x"), ("c", "x")], tick=3)
    trace = reference_run(program, ticks=3, edb={"node": [("a", "b"), ("a", "c")]})
    assert trace.relation("got", 3) == frozenset({("b", "x"), ("c", "x")})


def test_run_explain_shows_the_program_and_the_ticks(broadcast_run):
    text = broadcast_run.explain()
    assert "strata" in text and "persisted: log, node" in text
    assert "run: 2 tick(s)" in text and "tick 1:" in text and "tick 2:" in text


def test_importing_sparkdedalus_does_not_import_pyspark():
    code = ("import sys, sparkdedalus; from sparkdedalus import Program; "
            "assert 'pyspark' not in sys.modules; sparkdedalus.Engine; assert 'pyspark' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
