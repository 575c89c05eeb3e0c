"""explain and rewrite agree on generated programs (issue 31 point 3): every
decoupling and partitioning `explain` offers (the report with the rewrites'
refusals, as the shell asks it) is applied by `rewrite` without error, the
printed program checks, and the result refines the original (`equiv` in
refinement mode, every relation both have, over random delays).

The mode: a rewrite adds network hops (forwarding, relays, coordinators) and
splits a node's facts over several, so what holds at a given tick may differ
while the facts that ever hold may not (section 2.5's criterion: outcomes up to
the timing of messages). So an outcome is the facts that hold at some tick
(`refine(..., final=False)`), and B's outcomes must be among A's over several
seeds. Runs that have not settled by the horizon (a value that grows with the
tick, a counter) can show a fact in A and not yet in B, however correct B is:
those programs are counted, not compared. Programs with `choose` are left out:
its pick is one of many legal ones, and a run shows only one.

The checker must say "no" too: a decoupling forced past its failed
precondition (the monotonic mechanism on two relations joined within a tick)
gives an outcome the original never has, and refinement says so.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from program_generator import SMALL, programs
from sparkdedalus import Program
from sparkdedalus.analysis.explain import report
from sparkdedalus.equivalence import refine
from sparkdedalus.equivalence.views import views
from sparkdedalus.network import Network
from sparkdedalus.rewrite import REWRITES, Target, monotonic, refusals
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.rewrite.text import program_text

EXAMPLES = int(os.environ.get("SPARKDEDALUS_REWRITE_EXAMPLES", "40"))
SLOW_EXAMPLES = 150
SETTINGS = dict(deadline=None, database=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much, HealthCheck.large_base_example])
#: delays of 1 to 3 ticks; SEEDS runs of each program; the horizon leaves the network
#: time to drain after the last input (tick 4 at most) and a rewrite's extra hops
NETWORK, SEEDS, AFTER = Network.parse("delay=uniform(1,3)"), 6, 12
#: a run has settled when nothing new held in its last QUIET ticks
QUIET = 5
BY_NAME = {r.REWRITE: r for r in REWRITES}
GENERATED = programs(avoid=frozenset({"choose", "choose_no_keys"}), shape=SMALL)


def offered(program) -> list:
    """(rewrite, Target) for every decoupling and partitioning `explain` offers."""
    found = []
    for component in report(program, refusals=refusals)["components"]:
        for cand in component["decouplings"]:
            target = Target(component["name"], tuple(r["index"] for r in cand["rules"]))
            found += [(name, target) for name in cand["rewrites"]]
        found += [(name, Target(component["name"], partitions=2))
                  for name in component["partition_rewrites"]["rewrites"]]
    return found


def settled(program, ticks: int) -> bool:
    """Whether a run (seed 0) shows nothing new in its last QUIET ticks."""
    seen = views(program, ticks, NETWORK, tuple(program.relations))
    return all(set().union(*(facts[t] for t in range(ticks - QUIET + 1, ticks + 1)))
               <= set().union(*(facts[t] for t in range(1, ticks - QUIET + 1))) for facts in seen.values())


def check(generated, counts: Counter) -> None:
    program = generated.parse()
    ticks = generated.ticks + AFTER
    quiet = None
    for name, target in offered(program):
        rewritten, _ = BY_NAME[name].apply(program, target)  # offered: applies without error
        Program.parse(program_text(rewritten, source_rules(rewritten)))  # the printed program checks
        counts[name] += 1
        quiet = settled(program, ticks) if quiet is None else quiet
        if not quiet:
            counts["not settled"] += 1
            continue
        verdict = refine(program, rewritten, ticks, SEEDS, NETWORK, final=False)
        assert verdict.refines, (f"{name} of {target} does not refine the original: {verdict.new[0]}\n"
                                 f"{generated.text}")
        counts["compared"] += 1


def _run(examples: int) -> Counter:
    counts: Counter = Counter()

    @settings(max_examples=examples, **SETTINGS)
    @given(GENERATED)
    def run(generated):
        counts["programs"] += 1
        check(generated, counts)

    run()
    print(f"\nrewrites offered and compared: {dict(counts)}")
    return counts


def test_every_rewrite_explain_offers_applies_and_refines():
    counts = _run(EXAMPLES)
    assert counts["compared"] >= 20  # the sample does exercise the rewrites


@pytest.mark.slow
def test_every_rewrite_explain_offers_applies_and_refines_many():
    counts = _run(SLOW_EXAMPLES)
    assert all(counts[r.REWRITE] for r in REWRITES[:5])  # every decoupling offered somewhere


# Two relations derived from the same input at the same tick, joined by the rule to move:
# it reads them as they are at that tick, so it is no monotonic decoupling (neither is
# persisted). Forced with the monotonic mechanism, the copies are persisted at the new node
# and meet across ticks: a(1) of tick 1 joins b(1) of tick 2, which never hold together in
# the original (by hand: in(n, 1)@1 gives a(n, 1) at 1; in2(n, 1)@2 gives b(n, 1) at 2).
FORCED = """
a(L, X) :- in(L, X);
b(L, X) :- in2(L, X);
both(L, X) :- a(L, X), b(L, X);
in("n", 1)@1;
in2("n", 1)@2;
"""


def test_a_rewrite_forced_past_its_precondition_is_caught_negative():
    program = Program.parse(FORCED)
    target = Target("main", (2,), "joined")
    assert "monotonic" not in [name for name, t in offered(program) if t.rules == (2,)]
    assert not monotonic.precondition(program, target).applies
    forced, _ = monotonic.mechanism(program, target)  # what `--force` applies
    verdict = refine(program, forced, 12, SEEDS, NETWORK, final=False)
    assert not verdict.refines
    assert ("both", "at some tick", (), (("n", 1),)) in verdict.new[0].differences


# Found by the generator. A moved rule negating an atom that repeats an existential variable
# reads, once checked, an auxiliary projection `r-exists1` (checks/normalize.py); the batches
# of the state machine decoupling forwarded that name, which no program may write. The rule
# as written reads r: r is what is forwarded.
PROJECTED = """
r(L, X, X, 1) :- in(L, X);
out(L, X) :- w(L, X), notin r(L, E, E, X);
in("n", 1)@1;
w("n", 1)@2;
w("n", 2)@2;
"""


def test_a_moved_negation_through_a_projection_forwards_the_relation_it_projects():
    program = Program.parse(PROJECTED)
    target = Target("main", (1,), "sm")
    rewritten, _ = BY_NAME["state machine"].apply(program, target)
    text = program_text(rewritten, source_rules(rewritten))
    assert "-exists" not in text and "r_sm(Lr, X1, X2, X3, T)@async :- r(L, X1, X2, X3)@T" in text
    Program.parse(text)
    # by hand: w(n, 1) and w(n, 2) at tick 2, r(n, 1, 1, 1) at 1 only: out(n, 1), out(n, 2) at 2
    assert refine(program, rewritten, 12, SEEDS, NETWORK, final=False).refines


def test_a_negation_at_a_given_tick_through_a_projection_is_no_state_machine_negative():
    # the tick is read inside the projection: `notin r(L, E, E, X)@1` reads r as it was at tick 1
    program = Program.parse(PROJECTED.replace("notin r(L, E, E, X);", "notin r(L, E, E, X)@1;"))
    reasons = [str(r) for r in BY_NAME["state machine"].precondition(program, Target("main", (1,))).reasons]
    assert reasons == ["<string>:3:29: the rule for out (line 3) reads r as it was at tick 1"]  # r at column 29


# Found by the generator: a rule runs wherever its positive atoms hold. peer is constant, so
# a decoupling copies it to the new node, and the component's node keeps it.
OTHER_SIDE = """
peer("n1", "n2");
e0("n1", 2, 5);
e0(L, X, X)@next :- e0(L, X, Y);
r(L, X) :- peer(L, X), notin e0(L, _, _);
h(L, H) :- peer(L, _), hash(L, H);
s(L, X) :- e0(L, X, _), peer(L, _);
"""


@pytest.mark.parametrize("text, moved, why", [
    # r and e0's rule move: e0's facts go to n1/m, so at n1 (peer holds there) r would find e0
    # empty and derive r(n1, n2), which the original never does (e0 always holds at n1)
    (OTHER_SIDE, (0, 1), "<string>:5:1: the rule for r reads only peer, which the component's node holds too, "
                         "and negates e0: it would derive other facts there"),
    # s moves and reads peer, copied to n1/m; r stays, reads only peer and negates e0, which
    # n1/m does not hold: it would derive r there (read home: r(n1, n2))
    (OTHER_SIDE, (3,), "<string>:5:1: the rule for r reads only peer, which the new node holds too, "
                       "and negates e0: it would derive other facts there"),
    # without r: h stays, reads only peer and hashes its location: at n1/m it would derive
    # h(n1/m, hash("n1/m")), read home as another h fact of n1 (h now at line 5, s at 6)
    (OTHER_SIDE.replace('r(L, X) :- peer(L, X), notin e0(L, _, _);\n', ""), (2,),
     "<string>:5:1: the rule for h reads only peer, which the new node holds too, and uses its location "
     "as data: it would derive other facts there")])
def test_a_rule_that_would_run_on_the_other_side_is_refused_negative(text, moved, why):
    program = Program.parse(text)
    target = Target("main", moved, "m")
    for rewrite in REWRITES[:5]:
        assert why in [str(r) for r in rewrite.precondition(program, target).reasons] or \
            not rewrite.analysis(program, target).applies
    assert not any(t.rules == moved for _, t in offered(program))
