"""Fault scenarios as a world column (sparkdedalus/faults/worlds.py, spark/faults.py).

The rewrite is checked against rules written out by hand; the batched Spark
run against its oracle, the reference evaluator run alone on every scenario
(`Scenario.network()`): the missing facts per scenario and every relation at
EOT per world. The batched run is checked in both placements (`placed`: in the
driver, on DuckDB, and on Spark)."""

from __future__ import annotations

import pytest
from engine_helpers import placement

from sparkdedalus import Program
from sparkdedalus.faults.space import Space
from sparkdedalus.faults.verdict import missing
from sparkdedalus.faults.worlds import with_worlds, world_dependent
from sparkdedalus.reference import run as reference_run
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.syntax.printer import format_rule

NODES = 'node("a", "b"); node("a", "c"); node("b", "a"); node("b", "c"); node("c", "a"); node("c", "b");\n'

#: Molly's simple log: the broadcast is sent once; a lost copy is never resent
BROADCAST = NODES + """
node(N, M)@next :- node(N, M);
log(N, P)@next :- log(N, P);
log(M, P)@async :- bcast(N, P), node(N, M);
log(N, P) :- bcast(N, P);
bcast("a", "hi")@1;
pre(X, P) :- log(Y, P), node(X, Y)@1, notin crash(X, X, _);
post(X, P) :- log(X, P), notin crash(X, X, _);
"""

#: the same broadcast resent by every node that has it, at every tick
RETRY = BROADCAST.replace("log(M, P)@async :- bcast(N, P), node(N, M);", "log(M, P)@async :- log(N, P), node(N, M);")

#: votes sent to a coordinator, counted (count, min), one chosen, the missing ones negated,
#: and the choice announced back
VOTES = """
member("b", "a"); member("c", "a"); coord("a");
vote(C, N, V)@async :- member(N, C), V == 10;
vote(C, N, V)@async :- member(N, C), retry(N), V == 20;
retry("c");
got(C, N, V)@next :- got(C, N, V);
got(C, N, V) :- vote(C, N, V);
tally(C, count<N>, min<V>) :- got(C, N, V);
pick(C, N) :- got(C, N, _), choose((C), (N));
silent(C, N) :- coord(C), member(N, C), notin got(C, N, _);
picked(N, C)@async :- pick(C, N);
knows(N, C)@next :- knows(N, C);
knows(N, C) :- picked(N, C);
pre(C, 2) :- coord(C);
post(C, K) :- tally(C, K, _);
"""

#: a leader that a backup replaces when it reads that the leader crashed
TAKEOVER = NODES + """
node(N, M)@next :- node(N, M);
log(N, P)@next :- log(N, P);
log(M, P)@async :- log(N, P), node(N, M), leader(N);
leader("a");
leader("b") :- crash("b", "a", T);
log("a", "x")@1;
log("b", "y") :- crash("b", "a", T), T > 1;
pre(X, P) :- log(Y, P), node(X, Y)@1, notin crash(X, X, _);
post(X, P) :- log(X, P), notin crash(X, X, _);
"""


#: a message around the ring a -> b -> c -> a, relayed once by each node on receipt
RING = """
hop("a", "b"); hop("b", "c"); hop("c", "a");
start("a", "hi")@1;
relay(M, P)@async :- start(N, P), hop(N, M);
relay(M, P)@async :- relay(N, P), hop(N, M);
back(N, P)@next :- back(N, P);
back(N, P) :- relay(N, P), N == "a";
pre("a", "hi");
post(N, P) :- back(N, P);
"""


def rules_of(program) -> list:
    return [format_rule(r.rule) for r in source_rules(program)]


# ---------------------------------------------------------------- the rewrite (no Spark)

def test_world_dependent_relations():
    p = Program.parse(BROADCAST)
    # log gets messages; pre/post read log and crash; node and bcast are the same in every world
    assert world_dependent(p) == {"log", "crash", "pre", "post"}
    assert world_dependent(Program.parse(VOTES)) == {"vote", "got", "tally", "pick", "silent", "picked", "knows",
                                                     "pre", "post"}


def test_rewrite_of_a_small_program_by_hand():
    p = Program.parse("""
    seen(N, W)@next :- seen(N, W);
    ping(M, N)@async :- peer(N, M), W > 0, W == 1;
    seen(N, M) :- ping(N, M), notin crash(N, M, _);
    n(N, count<M>) :- seen(N, M);
    one(N, M) :- seen(N, M), choose((N), (M));
    ack("a", N)@async :- one(N, _);
    pre(N, 1) :- peer(N, _);
    post(N, C) :- n(N, C);
    peer("a", "b"); seen("a", "a")@1;
    """)
    assert rules_of(with_worlds(p).program) == [
        # W is used by the rule: its world variable is W1
        "ping(M, W1, N)@async :- peer(N, M), W > 0, W == 1, faults.world(W1);",
        "seen(N, W, M) :- ping(N, W, M), notin faults.crash(N, W, M, _);",
        "n(N, W, count<M>) :- seen(N, W, M);",
        "one(N, W, M) :- seen(N, W, M), choose((N, W), (M));",
        'ack("a", W, N)@async :- one(N, W, _);',
        "pre(N, W, 1) :- peer(N, _), faults.world(W);",
        "post(N, W, C) :- n(N, W, C);",
        "seen(X0, W, X1) :- faults.fact.seen(X0, X1), faults.world(W);",
    ]
    rewritten = with_worlds(p).program
    assert [f"{f.atom.name}{f.row}@{f.tick}" for f in rewritten.facts] == \
        ["peer('a', 'b')@None", "faults.fact.seen('a', 'a')@1"]
    assert rewritten.relations["seen"].arity == 3 and rewritten.relations["peer"].arity == 2
    assert sorted(r.head.name for r in rewritten.rules if r.persistence) == ["seen"]


def test_rewrite_refuses_programs_it_cannot_check():
    with pytest.raises(ValueError, match="needs relations 'pre' and 'post'"):
        with_worlds(Program.parse('log(M, P)@async :- log(N, P), node(N, M); pre("a", 1);'))
    with pytest.raises(ValueError, match="reserved"):
        with_worlds(Program.parse('faults.x("a"); pre("a", 1); post("a", 1);'))


# ---------------------------------------------------------------- batched vs one by one

def reference_verdicts(program, space: Space, indices) -> dict:
    """{index: (missing facts, relations at EOT)} from the reference, one run per scenario."""
    out = {}
    for i in indices:
        trace = reference_run(program, space.eot, space[i].network())
        facts = {n: set(rows) for n, rows in trace.at(space.eot).items() if not program.relations[n].auxiliary}
        out[i] = (missing(facts["pre"], facts["post"]), facts)
    return out


def check_against_reference(spark, text: str, nodes, eot: int, eff: int, crashes: int, sample=None,
                            compared: int = 24):
    """The batched verdicts of a space equal the reference's, scenario by
    scenario; every relation at EOT too for `compared` of them. Returns the
    batched check (`FaultRun`)."""
    from sparkdedalus.spark.engine import Engine
    program = Program.parse(text)
    space = Space(tuple(nodes), eot, eff, crashes)
    checked = Engine(spark).faults(program, nodes=nodes, eot=eot, eff=eff, crashes=crashes, sample=sample, seed=3)
    indices = space.sample_indices(sample, 3) if sample else list(range(space.count))
    assert checked.scenarios == len(indices)
    assert checked.placement == spark.conf.get("spark.sparkdedalus.placement")
    expected = reference_verdicts(program, space, indices)
    by_scenario = {c.scenario: c.missing for c in checked.counterexamples}
    for i in indices:
        assert by_scenario.get(space[i], ()) == expected[i][0], space[i]
    step = max(1, len(indices) // compared)
    few = indices[::step]
    facts = checked.facts(few)
    for i in few:
        assert facts[i] == expected[i][1], space[i]
    return checked


def test_broadcast_without_retry_has_counterexamples(placed):
    found = check_against_reference(placed, BROADCAST, ("a", "b", "c"), eot=4, eff=2, crashes=1,
                                    sample=60).counterexamples
    assert found  # e.g. a -> b omitted at tick 1: b never logs "hi"
    assert all(c.scenario.size >= 1 for c in found)


def test_retrying_broadcast_has_none_without_crashes(placed):
    # every channel-tick of the space omitted at tick 1 is retried at tick 2 (EFF 2)
    assert check_against_reference(placed, RETRY, ("a", "b", "c"), eot=4, eff=2, crashes=0).counterexamples == []


@pytest.mark.slow
def test_retrying_broadcast_with_a_crash(placed):
    found = check_against_reference(placed, RETRY, ("a", "b", "c"), eot=4, eff=2, crashes=1).counterexamples
    # a crashes at tick 1 after logging "hi" at tick 1: nobody else ever gets it
    assert any(c.scenario.crashes == (("a", 1),) and not c.scenario.omissions for c in found)


@pytest.mark.slow
def test_votes_with_aggregation_choice_and_negation(placed):
    found = check_against_reference(placed, VOTES, ("a", "b", "c"), eot=4, eff=3, crashes=1,
                                    sample=80).counterexamples
    assert found


@pytest.mark.slow
def test_takeover_reads_crash(placed):
    check_against_reference(placed, TAKEOVER, ("a", "b", "c"), eot=4, eff=2, crashes=1)


def test_classes_split_at_the_tick_a_failure_first_matters(placed):
    # a -> b at tick 1, b -> c at 2, c -> a at 3: over omissions at tick 1 and one crash
    # (64 x 13 = 832 scenarios) there are 4 executions, and each arises at its own tick:
    # tick 1: a's message to b is lost (a>b@1 omitted, or a crashes at 1) or not;
    # tick 2: of those where b has it, b's relay is lost (b crashes at 1 or 2) or not;
    # tick 3: of those where c has it, c's relay to a is lost (c crashes at 1..3) or not;
    # tick 4 (EOT): nothing splits. No other channel ever carries a message.
    checked = check_against_reference(placed, RING, ("a", "b", "c"), eot=4, eff=2, crashes=1)
    assert checked.classes == [2, 3, 4, 4]
    # a gets its message back only with a>b@1 kept (32 of 64 masks) and a crash among
    # none, a@2..4, b@3..4, c@4 (7 of 13): 832 - 32 x 7 counterexamples
    assert len(checked.counterexamples) == 832 - 32 * 7


def test_a_wrong_split_rule_is_caught_by_the_reference(placed, monkeypatch):
    # the check must say no: a split rule that forgets crashes (a crashed sender's
    # messages are delivered) keeps crashed scenarios in the class that got the message
    from sparkdedalus.spark import faults

    def forgets_crashes(self, tick):
        return " OR ".join([f"(src = '{src}' AND dst = '{dst}' AND (shiftright(scenario, {j}) & 1) = 1)"
                            for (src, dst, t), j in self.bits.items() if t == tick] + ["false"])

    monkeypatch.setattr(faults.Failures, "lost", forgets_crashes)
    with pytest.raises(AssertionError):
        check_against_reference(placed, RING, ("a", "b", "c"), eot=4, eff=0, crashes=1)


def test_a_program_without_invariant_is_refused(spark):
    from sparkdedalus.spark.engine import Engine
    with pytest.raises(ValueError, match="needs relations 'pre' and 'post'"):
        Engine(spark).faults(Program.parse('p("a")@1;'), nodes=("a",), eot=1, eff=0)


def test_a_fault_run_costs_few_spark_jobs(spark):
    """The benchmark's fault run (benchmarks/faults.py's program and space), 30
    scenarios: classes by crash schedule, a split at tick 1, crashed senders'
    messages dropped at ticks 2 and 3. Every Spark job is a fixed cost of about
    0.1-0.25 s: 16 jobs (the crash schedules read as a literal, not joined;
    the members, copies and packs without crashed senders' messages
    checkpointed lazily); 41 before. The verdicts are the reference's."""
    from pathlib import Path

    from test_provenance_spark import jobs

    from sparkdedalus.spark.engine import Engine
    program = Program.from_files(str(Path(__file__).parent.parent / "benchmarks/programs/faults_retry_bench.ded"))
    space = Space(("a", "b", "c", "d"), eot=4, eff=2, crashes=2)
    found = []
    assert jobs(spark, lambda: found.append(Engine(spark).faults(program, nodes=space.nodes, eot=4, eff=2, crashes=2,
                                                                 sample=30, seed=0))) <= 18
    indices = space.sample_indices(30, 0)
    expected = reference_verdicts(program, space, indices)
    by_scenario = {c.scenario: c.missing for c in found[0].counterexamples}
    assert found[0].classes == [29, 29, 29, 29]
    assert all(by_scenario.get(space[i], ()) == expected[i][0] for i in indices)
    assert by_scenario  # some scenarios break the invariant


def test_a_small_fault_run_runs_in_the_driver_with_no_spark_job(spark):
    """`auto` places a space of 64 scenarios of a 4-fact program in the driver:
    no Spark job at all; the verdicts are the reference's. With driverRows
    below 64 x 4 the same run goes to Spark, and says so."""
    from test_provenance_spark import jobs

    from sparkdedalus.spark.engine import Engine
    program = Program.parse(BROADCAST)
    space = Space(("a", "b", "c"), eot=4, eff=2, crashes=0)
    found = []
    with placement(spark, "auto"):
        assert jobs(spark, lambda: found.append(Engine(spark).faults(program, nodes=space.nodes, eot=4, eff=2))) == 0
    assert found[0].placement == "driver"
    expected = reference_verdicts(program, space, range(space.count))
    assert found[0].counterexamples
    assert {c.scenario: c.missing for c in found[0].counterexamples} \
        == {space[i]: lost for i, (lost, _) in expected.items() if lost}
    with placement(spark, "auto", **{"spark.sparkdedalus.fixpoint.driverRows": 64 * len(program.facts) - 1}):
        assert Engine(spark).faults(program, nodes=space.nodes, eot=4, eff=2).placement == "spark"


def test_the_driver_s_missing_facts_as_a_spark_dataframe(spark):
    from sparkdedalus.spark.engine import Engine
    with placement(spark, "driver"):
        found = Engine(spark).faults(Program.parse(BROADCAST), nodes=("a", "b", "c"), eot=3, eff=2)
    assert found.placement == "driver"
    rows = {tuple(r) for r in found.frame.collect()}
    assert rows
    assert rows == {(c_index, *fact) for c_index, c in _indexed(found) for fact in c.missing}


def _indexed(found):
    return [(found.space.index(c.scenario), c) for c in found.counterexamples]
