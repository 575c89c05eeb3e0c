"""LDFI on the Spark engine (sparkdedalus/spark/ldfi.py): its verdicts against
the reference's LDFI and the reference evaluator (a counterexample it reports
breaks the invariant when the reference runs its scenario), the candidates of
a round in one batched fault run, and the CLI, with the runs placed in the
driver and on Spark (`placed`). Each Spark run costs seconds: the spaces are
small, the larger ones under `slow`."""

import json
import os

import pytest

from reference_helpers import FAULT_EXAMPLES, broken
from sparkdedalus import Program
from sparkdedalus.faults.space import Scenario
from sparkdedalus.reference.faults import faults as reference_faults
from sparkdedalus.shell import cli
from sparkdedalus.shell import faults as command
from sparkdedalus.spark import ldfi
from sparkdedalus.spark.engine import Engine


def example(name: str) -> Program:
    return Program.from_files(os.path.join(FAULT_EXAMPLES, name))


def agree(spark, name: str, nodes: tuple, eot: int, eff: int, crashes: int = 0):
    """Spark LDFI's result, checked: a counterexample exactly when the
    reference's LDFI finds one, and a real one (the reference evaluator's run
    of its scenario misses its `post` facts)."""
    program = example(name)
    checked = Engine(spark).faults(program, nodes, eot, eff, crashes, search="ldfi")
    reference = reference_faults(program, nodes=nodes, eot=eot, eff=eff, crashes=crashes, search="ldfi")
    assert checked.search == "ldfi" and checked.scenarios == reference.scenarios
    assert bool(checked.counterexamples) == bool(reference.counterexamples)
    for found in checked.counterexamples:
        assert broken(program, eot, found.scenario.network().spec()) == set(found.missing)
    return checked


def counted(monkeypatch) -> dict:
    """The batched fault runs (their scenarios) and the runs with provenance
    (their networks) that spark/ldfi.py makes."""
    calls = {"batched": [], "provenance": []}
    batched, run = ldfi.run_faults, Engine.run

    def batched_run(spark, program, *space, only):
        calls["batched"].append(list(only))
        return batched(spark, program, *space, only=only)

    def provenance_run(self, program, ticks, network=None, **options):
        calls["provenance"].append(network.spec())
        return run(self, program, ticks, network, **options)

    monkeypatch.setattr(ldfi, "run_faults", batched_run)
    monkeypatch.setattr(Engine, "run", provenance_run)
    return calls


def test_a_broken_broadcast_runs_its_round_of_candidates_in_one_batched_run(placed, monkeypatch):
    # simple_log.ded: a sends once to b and c. The good run's lineage: post(b) rests on a>b@1, post(c) on
    # a>c@1, so the candidates are {a>b@1} and {a>c@1}, both counterexamples: one batched run of the two,
    # which stops the search; only the good run ran with provenance.
    calls = counted(monkeypatch)
    checked = agree(placed, "simple_log.ded", ("a", "b", "c"), 4, 2)
    assert calls["batched"] == [[Scenario((("a", "b", 1),)), Scenario((("a", "c", 1),))]]
    assert calls["provenance"] == ["delay=fixed,seed=0"]
    assert checked.executions == 3
    assert [c.to_json() for c in checked.counterexamples] == [
        {"omissions": [["a", "b", 1]], "crashes": [], "missing": [["b", "hi"]]}]


def test_a_correct_broadcast_has_no_counterexample_in_one_execution(placed, monkeypatch):
    # retry_broadcast.ded re-sends every tick: with EFF 2 the copies of ticks 2 and 3 cannot be lost,
    # so the good run's lineage leaves no candidate
    calls = counted(monkeypatch)
    checked = agree(placed, "retry_broadcast.ded", ("a", "b", "c"), 4, 2)
    assert (checked.counterexamples, checked.executions, checked.scenarios) == ([], 1, 64)
    assert calls == {"batched": [], "provenance": ["delay=fixed,seed=0"]}


#: pre(b) holds by b's message from a, or else by b's timeout, which only `notin p(b)` blocks in the good
#: run; post(b) needs the message. Losing it (omit=a>b@1) is the counterexample (the enumeration's
#: 2 of 4 scenarios: with or without b>a@1, which carries nothing); without the rule instances only a
#: negated atom blocked, LDFI knows no derivation of pre(b) that survives the loss and finds none.
TIMEOUT = '''node("a", "b"); go("a")@1; wait("b");
p(M)@async :- go(N), node(N, M);
pre(M) :- p(M);
pre(M) :- wait(M), notin p(M);
post(M) :- p(M);'''


def test_a_counterexample_only_a_blocked_rule_instance_shows(placed, monkeypatch):
    program = Program.parse(TIMEOUT)
    calls = counted(monkeypatch)
    checked = Engine(placed).faults(program, ("a", "b"), 2, 2, search="ldfi")
    assert [c.to_json() for c in checked.counterexamples] == [
        {"omissions": [["a", "b", 1]], "crashes": [], "missing": [["b"]]}]
    assert broken(program, 2, "omit=a>b@1") == {("b",)}
    assert checked.executions == 2  # the good run, then its one candidate, alone: no batched run
    assert calls == {"batched": [], "provenance": ["delay=fixed,seed=0", "delay=fixed,seed=0,omit=a>b@1"]}
    reference = reference_faults(program, nodes=("a", "b"), eot=2, eff=2, search="ldfi")
    assert (reference.counterexamples, reference.executions) == (checked.counterexamples, 2)


@pytest.mark.slow
@pytest.mark.parametrize("name, nodes, eot, eff, crashes, executions", [
    ("retry_broadcast.ded", ("a", "b", "c"), 4, 2, 1, None),  # broken by a lost copy and a crash of a
    ("ack_broadcast.ded", ("a", "b", "c"), 5, 3, 0, 3),  # correct: each candidate's run shows the copy of tick 3
    ("two_phase_commit.ded", ("coord", "p1", "p2", "p3"), 5, 0, 1, None),  # broken by a crash of coord
])
def test_spark_ldfi_agrees_with_the_reference_on_the_examples(placed, name, nodes, eot, eff, crashes, executions):
    checked = agree(placed, name, nodes, eot, eff, crashes)
    if executions is not None:
        assert checked.executions == executions


def test_cli_search_ldfi_on_spark_text_and_json(spark, capsys):
    # nodes a and b: 4 scenarios; the good run, then its one candidate {a>b@1}, run alone with provenance
    argv = ["faults", os.path.join(FAULT_EXAMPLES, "simple_log.ded"), "--eot", "4", "--eff", "2", "--engine", "spark",
            "--quiet"]
    args = cli._parser().parse_args(argv + ["--nodes", "a,b", "--search", "ldfi", "--format", "json"])
    assert command.handle(args, new_session=lambda args: spark) == 1
    out = json.loads(capsys.readouterr().out)
    assert (out["scenarios"], out["executions"], out["search"]) == (4, 2, "ldfi")
    assert out["counterexamples"] == [{"omissions": [["a", "b", 1]], "crashes": [], "missing": [["b", "hi"]]}]


def test_cli_auto_searches_a_space_beyond_auto_enumerate_with_ldfi_on_spark(spark, capsys):
    # a, b, c with EFF 4: 18 channel-ticks, 262,144 scenarios > AUTO_ENUMERATE; the candidates {a>b@1} and
    # {a>c@1} (simple_log.ded sends once, at tick 1) in one batched run, both counterexamples: 3 executions
    argv = ["faults", os.path.join(FAULT_EXAMPLES, "simple_log.ded"), "--nodes", "a,b,c", "--eot", "5", "--eff", "4",
            "--engine", "spark", "--quiet"]
    assert command.handle(cli._parser().parse_args(argv), new_session=lambda args: spark) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("262,144 scenarios, 1 counterexample (search ldfi, 3 executions, ")
    assert lines[0].endswith(" s), the first found:")
    assert lines[1:] == ['  1. omit=a>b@1: missing post("b", "hi")',
                         f"replay the first: sparkdedalus run {argv[1]} --ticks 5 --engine reference "
                         "--relations pre,post --format table --network 'omit=a>b@1'"]


def test_ldfi_in_the_driver_costs_no_spark_job(spark):
    """Every run of the search (the good run with provenance, the batched round,
    the rule instances) in the driver: no Spark job, the reference's verdict."""
    from engine_helpers import placement
    from test_provenance_spark import jobs

    program, found = example("simple_log.ded"), []
    with placement(spark, "driver"):
        assert jobs(spark, lambda: found.append(Engine(spark).faults(program, ("a", "b", "c"), 4, 2,
                                                                     search="ldfi"))) == 0
    reference = reference_faults(program, nodes=("a", "b", "c"), eot=4, eff=2, search="ldfi")
    assert found[0].counterexamples == reference.counterexamples != []
