"""The distribution policies as the Spark engine's partitioning (spark/partitioner.py):
which rules keep their bucket, Spark's hash reproduced, and runs in two partitions that
give the reference evaluator's facts with fewer exchanges than without the policy."""

import pytest

from sparkdedalus import Program
from sparkdedalus.reference import run as reference_run
from sparkdedalus.spark.engine import Engine
from sparkdedalus.spark.partitioner import Partitioner, bucket_values, spark_hash_int
from engine_helpers import EXAMPLES, compared_run

VOTING = Program.from_files(str(EXAMPLES / "voting.ded"))


def rule_of(program, head: str):
    return next(r for r in program.rules if r.head.name == head and not r.persistence)


def test_policy_rules_keep_their_bucket_and_static_relations_are_replicated():
    partitioner = Partitioner(VOTING, 4)
    # participant and nparts are known at every tick: a copy in every bucket
    assert partitioner.replicated == {"participant", "nparts"}
    # the leader's policy keys votes by the ballot (column 2), so complete and waiting join in place
    assert partitioner.keys["votes"] == (2, ())
    assert all(partitioner.local(r) for r in VOTING.rules if not r.persistence)


def test_rules_whose_atoms_may_be_in_different_buckets_are_not_local():
    program = Program.parse("""
        .decl e(l: string, x: int, y: int)
        .decl f(l: string, y: int)
        .decl t(l: string, x: int)
        .decl u(l: string, y: int)
        .decl dest(l: string, m: string)
        component a { p(L, X, Y) :- e(L, X, Y); q(L, X) :- p(L, X, _), t(L, X); }
        component b { r(L, Y) :- p(L, _, Y), f(L, Y); }
        s(L, Y) :- t(L, X), choose((X), (Y)), u(L, Y);
        n(M, count<X>)@async :- t(L, X), dest(L, M);""")
    partitioner = Partitioner(program, 2)
    assert partitioner.replicated == frozenset()  # no relation is filled by the text alone
    # component a keys p by X; b would key it by Y: p is then bucketed by location only
    assert partitioner.keys["e"] == (1, ()) and "p" not in partitioner.keys
    assert not partitioner.local(rule_of(program, "r"))  # f keyed by Y, p by location
    assert not partitioner.local(rule_of(program, "p"))  # e keyed by X, p by location
    assert not partitioner.local(rule_of(program, "q"))  # t keyed by X, p by location
    assert not partitioner.local(rule_of(program, "s"))  # choose: its groups may span buckets
    assert not partitioner.local(rule_of(program, "n"))  # an aggregate sent @async, the same


def test_a_replicated_body_negating_a_bucketed_relation_is_not_local():
    program = Program.parse('peer("n3", "n2");\nm0("n3", 0)@1;\n'
                            'r(L, X) :- peer(L, X), notin m0(L, _);\n'
                            'k(L, X) :- peer(L, X);\nk(L, X)@next :- k(L, X);')
    partitioner = Partitioner(program, 2)
    assert "peer" in partitioner.replicated and not {"m0", "k"} & partitioner.replicated
    assert not partitioner.local(rule_of(program, "r"))  # each bucket has peer, one has m0
    assert partitioner.local(rule_of(program, "k"))  # no negation: each bucket keeps its own k facts


def test_bucket_values_land_in_their_partition():
    for n in (1, 2, 3, 8):
        values = bucket_values(n)
        assert [spark_hash_int(v) % n for v in values] == list(range(n))


@pytest.mark.spark
def test_spark_hash_int_is_sparks_hash(spark):
    values = [0, 1, 2, 7, 42, -5, 2**31 - 1]
    rows = spark.createDataFrame([(v,) for v in values], "v int").selectExpr("v", "hash(v) AS h").collect()
    assert {r["v"]: r["h"] for r in rows} == {v: spark_hash_int(v) for v in values}


def facts_by_tick(run, program, ticks: int) -> list:
    return [run.facts(t, relations=list(program.relations)) for t in range(1, ticks + 1)]


@pytest.mark.spark
@pytest.mark.parametrize("name, ticks", [("voting", 7), pytest.param("two_phase_commit", 6, marks=pytest.mark.slow)])
def test_policy_partitioning_gives_the_reference_facts_with_fewer_exchanges(spark, name, ticks):
    program = Program.from_files(str(EXAMPLES / f"{name}.ded"))
    trace = reference_run(program, ticks=ticks)
    expected = [{n: set(trace.at(t).get(n, ())) for n in program.relations} for t in range(1, ticks + 1)]
    with_policy = Engine(spark).run(program, ticks, partitions=2, count_exchanges=True)
    without = Engine(spark).run(program, ticks, partitions=2, policy=False, count_exchanges=True)
    assert facts_by_tick(with_policy, program, ticks) == expected
    assert facts_by_tick(without, program, ticks) == expected
    exchanges = [s.exchanges for s in with_policy.stats]
    baseline = [s.exchanges for s in without.stats]
    assert all(isinstance(x, int) for x in exchanges + baseline)
    assert sum(exchanges) < sum(baseline), (exchanges, baseline)
    # the user's view has no partition column, and a replicated relation's facts once
    assert with_policy.relation("participant").count() == 3


@pytest.mark.spark
def test_a_long_run_in_two_partitions_keeps_its_size_estimates_bounded(spark):
    # A pack is a checkpoint of joins over the previous pack, and Spark's estimate of a
    # join is the product of its inputs': inherited from checkpoint to checkpoint, the
    # pack's estimate had 182,512 digits at tick 16 of this run and its products doubled a
    # tick's time from tick 19 on (9 s at tick 22, then out of memory). Each pack in
    # several partitions now starts from Spark's default estimate (Long.MaxValue, 63 bits).
    found, run = compared_run(spark, VOTING, 16, partitions=2)
    assert found == []
    bits = [run.driver.packs[t]._jdf.queryExecution().optimizedPlan().stats().sizeInBytes().bit_length()
            for t in (2, 16)]
    assert bits == [63, 63], bits
