"""`crash(L, N, T)` holds at every location of the run, in both engines: the
locations of the program's facts, of every input row (stamped with a tick or
not) and of the failure model (docs/semantics.md, section 3)."""

from __future__ import annotations

import pytest

from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.reference import run as reference_run
from sparkdedalus.spark.engine import Engine

pytestmark = pytest.mark.spark

PROGRAM = """
.decl visit(loc: string, who: string)
.input visit from "visit.csv"
.decl peer(loc: string, who: string)
peer("a", "b");
up(L, N) :- peer(L, N), notin crash(L, N, _);
"""


def test_a_node_named_only_in_a_stamped_input_row_gets_crash_facts(spark, tmp_path):
    (tmp_path / "program.ded").write_text(PROGRAM)
    # "z" appears only in a row stamped with tick 2; "u" only in an unstamped row
    (tmp_path / "visit.csv").write_text("loc,who,tick\nz,b,2\nu,b,\n")
    program = Program.from_files(str(tmp_path / "program.ded"))
    network = Network.parse("crash=b@2")
    # by hand: locations a (fact), z and u (input rows), b (the crashed node)
    expected = {(loc, "b", 2) for loc in ("a", "z", "u", "b")}
    trace = reference_run(program, ticks=2, network=network)
    run = Engine(spark).run(program, ticks=2, network=network)
    for tick in (1, 2):
        assert trace.relation("crash", tick) == expected
        assert run.facts(tick, relations=["crash"])["crash"] == expected
    assert run.facts(1, relations=["up"])["up"] == set()


def test_a_double_location_of_an_input_row_is_named_by_its_canonical_text(spark, tmp_path):
    # By hand: the location 1e7 prints as "10000000.0" (docs/semantics.md), not Spark's "1.0E7".
    (tmp_path / "program.ded").write_text('.decl reading(loc: double, v: int)\n.input reading from "r.csv"\n'
                                          'down(L, N) :- reading(L, _), crash(L2, N, _), L2 == "b";\n')
    (tmp_path / "r.csv").write_text("loc,v,tick\n10000000.0,1,2\n")
    program = Program.from_files(str(tmp_path / "program.ded"))
    network = Network.parse("crash=b@2")
    expected = {("10000000.0", "b", 2), ("b", "b", 2)}
    assert reference_run(program, ticks=1, network=network).relation("crash", 1) == expected
    assert Engine(spark).run(program, ticks=1, network=network).facts(1, relations=["crash"])["crash"] == expected
