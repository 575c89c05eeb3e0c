"""Why-provenance on the Spark engine (`Engine.run(..., provenance=True)`,
`run --engine spark --provenance`) against the reference evaluator, its oracle.

The differential tests compare every derivation of every fact of ticks 1..N,
as sets of normalised records (`normalised`): values printed as `spark_string`
prints them, an aggregate's group body sorted (the reference lists it in the
order its bindings came). The hand-derived cases say in comments how each
expected record follows from the program. Nothing is excluded from the
comparison: docs/provenance.md lists no case where the engines differ.
"""

from __future__ import annotations

import glob
import json
import os
import time
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_helpers import PLACEMENTS, placement
from frontend_helpers import exit_code
from program_generator import SETTINGS, SMALL, networks, programs
from reference_helpers import EXAMPLES
from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.reference import run as reference_run
from sparkdedalus.spark.engine import Engine
from udfs.registry import spark_string

pytestmark = pytest.mark.spark

BROADCAST = os.path.join(EXAMPLES, "broadcast.ded")
#: the reference provenance module's doctest program
DOCTEST = 'q("a", 1)@1;\np(L, X)@next :- q(L, X), notin r(L);'

# ------------------------------------------------------------ comparing

def _text(values) -> tuple:
    return tuple(None if v is None else spark_string(v) for v in values)


def normalised(program, records) -> set:
    """Reference records ((FactAt, Derivation), `Provenance.records`) as tuples
    (relation, row, tick, kind, rule, pos, body, absent, message) of printed
    values; a rule's group body (an aggregate's, but for `@async`) sorted."""
    out = set()
    for fact, d in records:
        body = tuple((f.relation, _text(f.row), f.tick) for f in d.body)
        absent = tuple((a.relation, _text(a.pattern), a.tick) for a in d.absent)
        if d.kind in ("rule", "next") and program.rules[d.rule].is_aggregate:
            body, absent = tuple(sorted(body)), tuple(sorted(absent, key=repr))
        m = d.message
        message = None if m is None else (spark_string(m.src), m.send_tick, spark_string(m.row[0]), m.arrival)
        out.add((fact.relation, _text(fact.row), fact.tick, d.kind, d.rule, d.pos, body, absent, message))
    return out


def spark_records(rows) -> set:
    """Rows of `run.provenance` (Spark Rows, or a driver frame's dicts: fields
    read by name) as the tuples of `normalised`."""
    return {(r["relation"], tuple(r["row"]), r["tick"], r["kind"], r["rule"], r["pos"],
             tuple((b["relation"], tuple(b["row"]), b["tick"]) for b in r["body"]),
             tuple((a["relation"], tuple(a["pattern"]), a["tick"]) for a in r["absent"]),
             None if r["message"] is None else tuple(r["message"][k] for k in ("sender", "send_tick", "receiver",
                                                                               "arrival")))
            for r in rows}


def differences(expected: set, actual: set) -> list:
    """What tells two record sets apart (empty: they agree)."""
    return [f"missing on Spark: {r}" for r in sorted(expected - actual, key=repr)[:5]] \
        + [f"only on Spark: {r}" for r in sorted(actual - expected, key=repr)[:5]]


def both(spark, program, ticks: int, network=None, **options) -> tuple[set, set]:
    """The reference's and the Spark engine's records of a run (`options`: edb,
    inputs_dir, gc, as both engines take them)."""
    trace = reference_run(program, ticks=ticks, network=network, provenance=True, **options)
    run = Engine(spark).run(program, ticks=ticks, network=network, provenance=True, **options)
    return normalised(program, trace.provenance.records(ticks)), spark_records(run.derivation_rows())


def assert_agree(spark, program, ticks: int, network=None, **options) -> set:
    expected, actual = both(spark, program, ticks, network, **options)
    assert not differences(expected, actual), "\n".join(differences(expected, actual))
    return actual


@pytest.fixture(params=PLACEMENTS)
def placed(spark, request):
    """conftest's, and alternating (the derivations computed in the driver only
    when every tick ran there: here they move to Spark)."""
    with placement(spark, request.param):
        yield spark


# ------------------------------------------------------------ hand-derived lineages

def test_the_reference_doctest_program(placed):
    # q("a", 1) is written at tick 1 (line 1); at tick 1 the @next rule (line 2) binds
    # L="a", X=1 and finds no r("a"): p("a", 1) holds at 2, by that binding. Nothing
    # else holds at ticks 1..2 (q is not persisted; p derives nothing at tick 2 for 3).
    actual = assert_agree(placed, Program.parse(DOCTEST), ticks=2)
    assert actual == {
        ("q", ("a", "1"), 1, "fact", None, "<string>:1", (), (), None),
        ("p", ("a", "1"), 2, "next", 0, "<string>:2", (("q", ("a", "1"), 1),), (("r", ("a",), 1),), None),
    }


def test_broadcast_as_docs_provenance_md_derives_it(placed):
    # docs/provenance.md: log("c", "yo")@3 is the message "b" sends at tick 2 by the
    # @async rule (line 27), from bcast("b", "yo")@2 (fact, line 37) and node("b", "c")@2,
    # which the persistence rule (line 25) carries from node("b", "c")@1 (fact, line 34).
    actual = assert_agree(placed, Program.from_files(BROADCAST), ticks=3)
    rule = f"{BROADCAST}:"
    log = [r for r in actual if r[:3] == ("log", ("c", "yo"), 3)]
    assert log == [("log", ("c", "yo"), 3, "message", 2, rule + "27",
                    (("bcast", ("b", "yo"), 2), ("node", ("b", "c"), 2)), (), ("b", 2, "c", 3))]
    node = {r for r in actual if r[:3] == ("node", ("b", "c"), 2)}
    assert node == {("node", ("b", "c"), 2, "next", 0, rule + "25", (("node", ("b", "c"), 1),), (), None)}
    assert ("node", ("b", "c"), 1, "fact", None, rule + "34", (), (), None) in actual
    assert ("bcast", ("b", "yo"), 2, "fact", None, rule + "37", (), (), None) in actual


def test_a_lost_message_derives_nothing(placed):
    # docs/provenance.md: with a>c omitted at tick 1, log("c", "hi") never reaches c:
    # no record of it at any tick, while log("b", "hi")@2 still comes as a message.
    network = Network.parse("omit=a>c@1")
    actual = assert_agree(placed, Program.from_files(BROADCAST), ticks=3, network=network)
    assert not [r for r in actual if r[:2] == ("log", ("c", "hi"))]
    assert [r[3] for r in actual if r[:3] == ("log", ("b", "hi"), 2)] == ["message"]


def test_an_aggregate_has_one_derivation_whose_body_is_its_group(placed):
    # n = count<X> over v("a", 1), v("a", 2): one derivation of n("a", 2), its body both
    # facts. m is a min lattice (docs/language.md, section 9): its candidates 5 and 1
    # (line 4) and 1 + 1 (line 5, from the best row) leave m("a", 1); each rule's
    # bindings on that final state are recorded, those of rows that do not hold too.
    program = Program.parse('v("a", 1); v("a", 2);\nn(L, count<X>) :- v(L, X);\nw("a", 5); w("a", 1);\n'
                            'm(L, X) :- w(L, X);\nm(L, min<D>) :- m(L, D1), D == D1 + 1;')
    actual = assert_agree(placed, program, ticks=1)
    assert {r for r in actual if r[0] == "n"} == {
        ("n", ("a", "2"), 1, "rule", 0, "<string>:2", (("v", ("a", "1"), 1), ("v", ("a", "2"), 1)), (), None)}
    assert {r for r in actual if r[0] == "m"} == {
        ("m", ("a", "1"), 1, "rule", 1, "<string>:4", (("w", ("a", "1"), 1),), (), None),
        ("m", ("a", "5"), 1, "rule", 1, "<string>:4", (("w", ("a", "5"), 1),), (), None),
        ("m", ("a", "2"), 1, "rule", 2, "<string>:5", (("m", ("a", "1"), 1),), (), None)}


def test_inputs_and_crashes_are_leaves(placed, tmp_path):
    # r's rows: one from edb= at every tick, one from an .input row stamped at tick 2; a
    # crash of n2 at tick 2 gives crash("n1", "n2", 2) at every tick (the failure model).
    (tmp_path / "r.csv").write_text("a,b,tick\nn1,x,2\n")
    program = Program.parse('.decl r(a: string, b: string)\n.input r from "r.csv";\n'
                            '.decl e(a: string, b: string)\n'
                            'p(L, B) :- r(L, B), notin crash(L, _, _);\nq(L, N) :- crash(L, N, T), e(L, _);')
    actual = assert_agree(placed, program, ticks=2, network=Network.parse("crash=n2@2"),
                          edb={"e": [("n1", "y")]}, inputs_dir=str(tmp_path))
    leaves = {(r[0], r[1], r[2], r[3]) for r in actual if r[3] in ("input", "crash")}
    assert {("e", ("n1", "y"), 1, "input"), ("e", ("n1", "y"), 2, "input"), ("r", ("n1", "x"), 2, "input")} <= leaves
    assert ("crash", ("n1", "n2", "2"), 1, "crash") in leaves


def test_the_comparison_says_no(spark):
    # the checker must see a record changed, one missing, and another program's records
    program = Program.parse(DOCTEST)
    expected, actual = both(spark, program, ticks=2)
    assert not differences(expected, actual)
    (fact,) = [r for r in expected if r[0] == "p"]
    wrong_body = {r for r in expected if r != fact} | {fact[:6] + ((("q", ("a", "2"), 1),),) + fact[7:]}
    assert differences(wrong_body, actual)
    assert differences({r for r in expected if r != fact}, actual)
    other, _ = both(spark, Program.parse(DOCTEST.replace("notin r(L)", "notin r(X)")), ticks=2)
    assert differences(other, actual)


# ------------------------------------------------------------ examples and generated programs

DELAYS = Network.parse("delay=uniform(1,3),seed=5")


def test_an_example_with_aggregates_negation_and_delayed_messages(placed):
    assert_agree(placed, Program.from_files(os.path.join(EXAMPLES, "voting.ded")), 3, DELAYS)


def test_an_example_with_gc(placed):
    # with these delays GC collects a `statement` fact at tick 3 (the reference's
    # stats say so): its persistence rule gives it no derivation at tick 4
    program = Program.from_files(os.path.join(EXAMPLES, "nonconfluent.ded"))
    assert [s["collected_rows"] for s in reference_run(program, ticks=4, network=DELAYS, gc=True).stats] \
        == [0, 0, 1, 0]
    assert_agree(placed, program, 4, DELAYS, gc=True)


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(EXAMPLES, "**", "*.ded"), recursive=True)),
                         ids=lambda path: os.path.relpath(path, EXAMPLES))
def test_every_example_agrees(spark, path):
    assert_agree(spark, Program.from_files(path), 4, Network.parse("delay=uniform(1,3),seed=5,crash=b@3"), gc=True)


@settings(max_examples=int(os.environ.get("SPARKDEDALUS_PROVENANCE_EXAMPLES", "4")), **SETTINGS)
@given(programs(shape=SMALL), networks, st.sampled_from(PLACEMENTS))
def test_generated_programs_agree(spark, program, network, mode):
    with placement(spark, mode):
        assert_agree(spark, program.parse(), program.ticks, network)


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("SPARKDEDALUS_PROVENANCE_SLOW", "60")), **SETTINGS)
@given(programs(), networks, st.sampled_from(PLACEMENTS))
def test_more_generated_programs_agree(spark, program, network, mode):
    with placement(spark, mode):
        assert_agree(spark, program.parse(), program.ticks, network)


# ------------------------------------------------------------ what it costs

def jobs(spark, action) -> int:
    """The Spark jobs `action()` runs (counted in a job group of their own)."""
    context, group = spark.sparkContext, f"provenance-{uuid.uuid4().hex}"
    context.setJobGroup(group, group)
    try:
        action()
    finally:  # the job group's description too, which later tests' job names would inherit
        context.setLocalProperty("spark.jobGroup.id", None)
        context.setLocalProperty("spark.job.description", None)
    counted = [-1, len(context.statusTracker().getJobIdsForGroup(group))]
    while counted[-1] != counted[-2]:  # the status store hears of jobs a little later
        time.sleep(0.5)
        counted.append(len(context.statusTracker().getJobIdsForGroup(group)))
    return counted[-1]


def test_recording_costs_no_job_and_reading_it_one(spark):
    program = Program.from_files(BROADCAST)
    runs = {}
    assert jobs(spark, lambda: runs.setdefault("plain", Engine(spark).run(program, ticks=2))) \
        == jobs(spark, lambda: runs.setdefault(2, Engine(spark).run(program, ticks=2, provenance=True)))
    assert runs["plain"].provenance is None
    runs[5] = Engine(spark).run(program, ticks=5, provenance=True)
    assert [jobs(spark, runs[ticks].provenance.collect) for ticks in (2, 5)] == [1, 1]  # whatever the ticks
    with pytest.raises(ValueError, match="not with store"):  # refused before any work
        Engine(spark).run(program, ticks=1, store="runs/never-written", provenance=True)


# ------------------------------------------------------------ the command

def test_run_provenance_prints_the_same_on_both_engines(capsys):
    outputs = {}
    for engine in ("reference", "spark"):
        argv = ["run", BROADCAST, "--engine", engine, "--ticks", "3", "--provenance", "--quiet", "--relations", "log"]
        assert exit_code(argv) == 0
        outputs[engine] = json.loads(capsys.readouterr().out)
    assert outputs["spark"].pop("placement") == ["driver"] * 3  # the Spark engine's only: where each tick ran
    assert outputs["spark"] == outputs["reference"]
    assert outputs["spark"]["provenance"]


def test_a_run_in_the_driver_records_its_derivations_there(spark):
    """Every tick in the driver: the derivations are computed there (no Spark
    job), and `run.provenance` is still a Spark DataFrame of the same rows."""
    program = Program.from_files(BROADCAST)
    with placement(spark, "driver"):
        runs = []
        assert jobs(spark, lambda: runs.append(Engine(spark).run(program, ticks=3, provenance=True))) == 0
        rows = runs[0].derivation_rows()
    assert [s.placement for s in runs[0].stats] == ["driver"] * 3
    assert spark_records(rows) == spark_records(runs[0].provenance.collect()) != set()
