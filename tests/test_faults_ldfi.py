"""Lineage-driven fault injection (`faults --search ldfi`, sparkdedalus/faults/ldfi.py
and reference/ldfi.py), on the reference engine only: the formula on lineages
written by hand, the search on the examples of examples/faults/ (verdicts and
executions derived by hand in their headers), LDFI's verdict against the
enumeration's on every example space small enough to enumerate and on generated
broadcasts, and the option errors."""

import itertools
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparkdedalus import Program
from sparkdedalus.faults.ldfi import Beyond, Lineage, Support, Union
from sparkdedalus.faults.space import Scenario, Space, resolve
from sparkdedalus.network import Message
from sparkdedalus.reference.faults import faults as check
from sparkdedalus.reference.provenance import Absent, Derivation, FactAt
from sparkdedalus.shell import cli
from reference_helpers import ABC, FAULT_EXAMPLES, faults_json



def example(name):
    return Program.from_files(os.path.join(FAULT_EXAMPLES, name))


# --- a derivation as the formula sees it

def test_a_message_breaks_when_its_channel_is_omitted_or_its_sender_crashed_by_its_send_tick():
    lineage = Lineage(Space(("a", "b"), eot=3, eff=3, crashes=1))
    sent = Derivation("message", body=(FactAt("log", ("a", "hi"), 2),), message=Message("log", ("b", "hi"), "a", 2, 3))
    support = lineage.support(("log", ("b", "hi"), 3), sent)
    assert support.body == (("log", ("a", "hi"), 2),)
    assert support.broken_by == {("omit", "a", "b", 2), ("crash", "a", 1), ("crash", "a", 2)}


def test_a_message_sent_after_eff_or_by_a_node_outside_the_space_cannot_break():
    lineage = Lineage(Space(("a", "b"), eot=3, eff=2, crashes=0))
    late = Derivation("message", message=Message("log", ("b", "hi"), "a", 2, 3))
    outside = Derivation("message", message=Message("log", ("b", "hi"), "z", 1, 2))
    assert lineage.support(("log", ("b", "hi"), 3), late).broken_by == frozenset()
    assert lineage.support(("log", ("b", "hi"), 2), outside).broken_by == frozenset()


def test_notin_crash_breaks_when_a_matching_crash_happens():
    lineage = Lineage(Space(("a", "b"), eot=2, eff=1, crashes=1), locations=("a", "b"))
    rule = Derivation("rule", absent=(Absent("crash", ("b", "b", None), 2), Absent("crash", ("z", "a", None), 2)))
    # crash(b, b, _) holds when b crashes at 1 or 2; crash(z, a, _) never: z is no location of the run
    assert lineage.support(("pre", ("b",), 2), rule).broken_by == {("crash", "b", 1), ("crash", "b", 2)}


def _lineage(space, facts: dict, targets) -> Lineage:
    lineage = Lineage(space)
    for key, supports in facts.items():
        lineage.add_fact(key, supports)
    lineage.targets |= set(targets)
    return lineage


LEAF = Support((), frozenset())
OMIT_AB1 = frozenset({("omit", "a", "b", 1)})


def test_a_cycle_does_not_keep_a_post_fact():
    # post(b)@3 <- p@3; p@3 <- q@3 or the message a>b@1; q@3 <- p@3: losing the message loses both
    space = Space(("a", "b"), eot=3, eff=2)
    lineage = _lineage(space, {
        ("post", ("b",), 3): [Support((("p", ("b",), 3),), frozenset())],
        ("p", ("b",), 3): [Support((("q", ("b",), 3),), frozenset()), Support((), OMIT_AB1)],
        ("q", ("b",), 3): [Support((("p", ("b",), 3),), frozenset())],
        ("pre", ("b",), 3): [LEAF]}, [("b",)])
    assert lineage.candidates() == [Scenario(omissions=(("a", "b", 1),))]


def test_a_candidate_keeps_a_derivation_of_the_pre_fact():
    # post(b) needs a's message at 1; pre(b) holds only while a does not crash
    space = Space(("a", "b"), eot=2, eff=2, crashes=1)
    a_crashes = frozenset({("crash", "a", 1), ("crash", "a", 2)})
    lineage = _lineage(space, {
        ("post", ("b",), 2): [Support((), OMIT_AB1 | {("crash", "a", 1)})],
        ("pre", ("b",), 2): [Support((), a_crashes)]}, [("b",)])
    assert lineage.candidates() == [Scenario(omissions=(("a", "b", 1),))]


def test_a_fact_a_negated_atom_blocked_breaks_a_derivation_once_its_blocker_is_lost():
    # post(b)@2 :- notin alarm(b)@2; alarm(b)@2 :- notin heard(b)@2 (blocked: heard holds);
    # heard(b)@2 comes by a's message at 1: losing it raises the alarm, which loses post
    lineage = _lineage(Space(("a", "b"), eot=2, eff=2), {
        ("post", ("b",), 2): [Support((), frozenset(), unless=(("alarm", ("b",), 2),))],
        ("alarm", ("b",), 2): [Support((), frozenset(), unless=(("heard", ("b",), 2),))],
        ("heard", ("b",), 2): [Support((), OMIT_AB1)],
        ("pre", ("b",), 2): [LEAF]}, [("b",)])
    lineage.add_absent(("alarm", ("b",), 2), [("alarm", ("b",), 2)])
    lineage.add_absent(("heard", ("b",), 2), [("heard", ("b",), 2)])
    assert lineage.candidates() == [Scenario(omissions=(("a", "b", 1),))]
    # a scenario run already is not proposed again; the smallest model that was not run is
    assert lineage.candidates(tried=[Scenario(omissions=(("a", "b", 1),))]) == [
        Scenario(omissions=(("a", "b", 1), ("b", "a", 1)))]


def test_a_blocked_rule_instance_keeps_pre_alive_when_its_blocker_is_lost():
    # post(b)@2 and p(b)@2 both by a's message at 1; pre(b)@2 :- p(b)@2, or by a
    # rule instance that only `notin p(b)@2` blocked: losing the message loses post,
    # not pre. Without the blocked instance no candidate keeps pre.
    facts = {("post", ("b",), 2): [Support((), OMIT_AB1)], ("p", ("b",), 2): [Support((), OMIT_AB1)],
             ("pre", ("b",), 2): [Support((("p", ("b",), 2),), frozenset()),
                                  Support((), frozenset(), unless=(("p", ("b",), 2),))]}
    lineage = _lineage(Space(("a", "b"), eot=2, eff=2), facts, [("b",)])
    lineage.add_absent(("p", ("b",), 2), [("p", ("b",), 2)])
    assert lineage.candidates() == [Scenario(omissions=(("a", "b", 1),))]
    del facts["pre", ("b",), 2][1]
    assert _lineage(Space(("a", "b"), eot=2, eff=2), facts, [("b",)]).candidates() == []


def test_a_maximum_is_lost_when_a_greater_member_holds():
    # post(r)@3 :- top(r, 1)@3, or top(r, 2)@3 with conf(r)@3 (c's message at 1);
    # top(r, max<X>) :- got(r, X): top(r, 1) rests on got(r, 1) and is lost while
    # got(r, 2)@3 (b's message at 1) holds. Losing c's message alone loses post.
    omit_cr1, omit_br1 = frozenset({("omit", "c", "r", 1)}), frozenset({("omit", "b", "r", 1)})
    greater = ("got", ("r", Beyond(1)), 3)
    facts = {("post", ("r",), 3): [Support((("top", ("r", 1), 3),), frozenset()),
                                   Support((("top", ("r", 2), 3), ("conf", ("r",), 3)), frozenset())],
             ("top", ("r", 1), 3): [Support((("got", ("r", 1), 3),), frozenset(), others=(greater,))],
             ("top", ("r", 2), 3): [Support((("got", ("r", 1), 3), ("got", ("r", 2), 3)), frozenset())],
             ("got", ("r", 1), 3): [LEAF], ("got", ("r", 2), 3): [Support((), omit_br1)],
             ("conf", ("r",), 3): [Support((), omit_cr1)], ("pre", ("r",), 3): [LEAF]}
    lineage = _lineage(Space(("r", "b", "c"), eot=3, eff=2), facts, [("r",)])
    lineage.add_absent(greater, [("got", ("r", 2), 3)])
    assert lineage.candidates() == [Scenario(omissions=(("c", "r", 1),))]
    del facts["top", ("r", 1), 3][0]  # as the group alone: top(r, 1) survives, no candidate
    facts["top", ("r", 1), 3].append(Support((("got", ("r", 1), 3),), frozenset()))
    assert _lineage(Space(("r", "b", "c"), eot=3, eff=2), facts, [("r",)]).candidates() == []


def test_an_aggregate_derivation_lists_the_members_that_would_change_it():
    program = Program.parse("""top(R, max<X>) :- got(R, X, _);
        low(R, min<X>)@next :- got(R, X, Y), ok(Y);
        n(R, count<X>) :- got(R, X, Y), ok(Y);""")
    lineage = Lineage(Space(("a", "b"), eot=2, eff=2))
    body = (FactAt("got", ("r", 1, "y"), 2), FactAt("ok", ("y",), 2))
    others = [lineage.support(key, Derivation(kind, rule=i, body=body), program).others
              for i, (key, kind) in enumerate([(("top", ("r", 3), 2), "rule"), (("low", ("r", 1), 3), "next"),
                                               (("n", ("r", 1), 2), "rule")])]
    assert others == [(("got", ("r", Beyond(3), None), 2),),  # a greater X
                      (("got", ("r", Beyond(1, below=True), None), 2),),  # a smaller X, read at the tick before
                      (("got", ("r", None, None), 2), ("ok", (None,), 2))]  # any other member
    # a member in the derivation's own body does not count as another
    lineage.add_fact(("n", ("r", 1), 2), [lineage.support(("n", ("r", 1), 2),
                                                           Derivation("rule", rule=2, body=body), program)])
    lineage.add_absent(("got", ("r", None, None), 2), [("got", ("r", 1, "y"), 2)])
    lineage.add_absent(("ok", (None,), 2), [("ok", ("y",), 2)])
    for fact in (("got", ("r", 1, "y"), 2), ("ok", ("y",), 2), ("pre", ("b",), 2)):
        lineage.add_fact(fact, [LEAF])
    lineage.add_fact(("post", ("b",), 2), [Support((("n", ("r", 1), 2),), OMIT_AB1)])
    lineage.targets.add(("b",))
    assert lineage.candidates() == [Scenario(omissions=(("a", "b", 1),))]


def test_the_crash_bound_limits_the_candidates():
    # post(b) arrives from a and from c at tick 1, and EFF 1 omits nothing: only crashing both breaks it
    facts = {("post", ("b",), 2): [Support((), frozenset({("crash", "a", 1)})),
                                   Support((), frozenset({("crash", "c", 1)}))],
             ("pre", ("b",), 2): [LEAF]}
    assert _lineage(Space(ABC, eot=2, eff=1, crashes=1), facts, [("b",)]).candidates() == []
    assert _lineage(Space(ABC, eot=2, eff=1, crashes=2), facts, [("b",)]).candidates() == [
        Scenario(crashes=(("a", 1), ("c", 1)))]


def test_auto_enumerates_up_to_10000_scenarios_and_searches_above():
    assert resolve("auto", Space(ABC, eot=4, eff=2, crashes=1), None) == "all"  # 832
    assert resolve("auto", Space(ABC, eot=5, eff=3, crashes=1), None) == "ldfi"  # 65,536
    assert resolve("auto", Space(ABC, eot=5, eff=3, crashes=1), 100) == "all"  # a sample is enumerated
    assert resolve("all", Space(ABC, eot=5, eff=3, crashes=1), None) == "all"
    with pytest.raises(ValueError, match="--sample"):
        resolve("ldfi", Space(ABC, eot=4, eff=2), 10)


# --- the search on the examples (their headers derive verdicts and executions)

def test_simple_log_counterexample_in_two_executions(capsys):
    # the failure-free run; its lineage: b and c each have "hi" only by a's message at 1;
    # the minimal candidates {a>b@1} and {a>c@1}; the first is a counterexample
    code, out = faults_json(capsys, "simple_log.ded", "--nodes", "a,b,c", "--eot", "4", "--eff", "2", "--search", "ldfi")
    assert code == 1
    assert out["scenarios"] == 64 and out["executions"] == 2 and out["search"] == "ldfi"
    assert out["counterexamples"] == [{"omissions": [["a", "b", 1]], "crashes": [], "missing": [["b", "hi"]]}]


def test_the_counterexample_replays_with_run_network(capsys):
    code = cli.main(["faults", os.path.join(FAULT_EXAMPLES, "simple_log.ded"), "--nodes", "a,b,c", "--eot", "4",
                     "--eff", "2", "--search", "ldfi", "--engine", "reference", "--quiet"])
    text = capsys.readouterr().out
    assert code == 1 and text.splitlines()[0].startswith("64 scenarios, 1 counterexample (search ldfi, 2 executions, ")
    replay = text.splitlines()[-1].removeprefix("replay the first: sparkdedalus ")
    assert replay.endswith("--network 'omit=a>b@1'")
    argv = replay.replace("'", "").split()
    argv[argv.index("--format") + 1] = "json"
    assert cli.main(argv) == 0
    facts = json.loads(capsys.readouterr().out)["relations"]
    assert ["b", "hi"] in facts["pre"] and ["b", "hi"] not in facts["post"]


def test_acknowledged_broadcast_has_no_counterexample_in_three_executions(capsys):
    # the failure-free run, then {a>b@1, a>b@2} and {a>c@1, a>c@2}: each repaired by the copy sent at 3
    code, out = faults_json(capsys, "ack_broadcast.ded", "--nodes", "a,b,c", "--eot", "5", "--eff", "3", "--search", "ldfi")
    assert (code, out["scenarios"], out["executions"], out["counterexamples"]) == (0, 4096, 3, [])


def test_acknowledged_broadcast_among_five_nodes_needs_a_round_per_lineage():
    # "a" re-sends to M at every tick until M's ack arrives. For each of the 4 members
    # M: the good run shows copies sent at 1 and 2; losing both, "a" sends at 3 and 4
    # (the copy of 3 arrives at 4, its ack at 5); losing 1 to 4 too (EFF 6: ticks 1..5
    # omissible), "a" sends at 5 and 6, and 6 cannot be lost. 1 + 4 x 2 runs, no counterexample.
    program, nodes = _ack_broadcast_among_five_nodes()
    checked = check(program, nodes, eot=8, eff=6, search="ldfi")
    assert (checked.scenarios, checked.executions, checked.counterexamples) == (2 ** (20 * 5), 9, [])


def _ack_broadcast_among_five_nodes():
    nodes = ("a", "b", "c", "d", "e")
    text = open(os.path.join(FAULT_EXAMPLES, "ack_broadcast.ded")).read().split('node("a", "b");')[0]
    text += "".join(f'node("{x}", "{y}");' for x in nodes for y in nodes if x != y) + 'bcast("a", "hi")@1;'
    return Program.parse(text), nodes


def _every_fact_in_every_run(space, locations, runs, blocked, joined) -> Lineage:
    """The lineage as LDFI built it before it looked up only what is new (the
    oracle): after each run is added, every run and the runs' `Union` look up every
    known fact, again and again until none shows a new one."""
    lineage = Lineage(space, locations)
    for trace, pre in runs:
        lineage.runs.append(trace)
        lineage.targets |= set(pre)
        union = Union(lineage.runs)
        known = -1
        while known != len(lineage.supports) + len(lineage.matching):
            known = len(lineage.supports) + len(lineage.matching)
            for run in lineage.runs:
                lineage._look_up(run, blocked, lineage.keys(), set())
            lineage._look_up(union, joined, lineage.keys(), set())
    return lineage


def _as_sets(lineage: Lineage) -> tuple:
    return ({key: set(supports) for key, supports in lineage.supports.items()},
            {atom: set(facts) for atom, facts in lineage.matching.items()}, lineage.targets)


def test_a_run_added_looks_up_each_fact_once_per_run_and_the_lineage_is_the_same(monkeypatch):
    # The five-node search of the test above adds 9 runs (no counterexample). Each look-up
    # of a fact or of a negated atom in a run asks `blocked` once (in the runs' Union,
    # `joined`): looked up once per run, the search asks it (runs x facts and atoms known
    # at the end) times. The old way (every run looks
    # up every known fact after each run is added, until a pass shows nothing new) asks
    # more: after the 9th run its last pass alone asks that many, after at least one pass
    # before it. Both give the same lineage, hence the same candidates.
    import sparkdedalus.reference.ldfi as reference_ldfi
    from sparkdedalus.reference.why import blocked, joined
    calls, runs, built = [0], [], []

    def counting(*args):
        calls[0] += 1
        return blocked(*args)

    def recording(lineage, trace, pre_rows, blocked, joined):
        runs.append((trace, set(pre_rows)))
        built[:] = [lineage]
        add_run(lineage, trace, pre_rows, blocked, joined)

    add_run = Lineage.add_run
    monkeypatch.setattr(reference_ldfi, "blocked", counting)
    monkeypatch.setattr(Lineage, "add_run", recording)
    program, nodes = _ack_broadcast_among_five_nodes()
    checked = check(program, nodes, eot=8, eff=6, search="ldfi")
    assert (checked.executions, checked.counterexamples, len(runs)) == (9, [], 9)
    lineage = built[0]
    assert calls[0] == len(runs) * len(set(lineage.keys()))
    new = calls[0]
    calls[0] = 0
    oracle = _every_fact_in_every_run(lineage.space, lineage.locations, runs, counting, joined)
    assert _as_sets(oracle) == _as_sets(lineage)
    assert calls[0] > new  # 19,682 against 1,593 (docs/faults.md)
    assert oracle.candidates() == lineage.candidates()


def test_acknowledged_broadcast_with_a_crash_auto_searches_and_finds_the_smallest(capsys):
    # 65,536 scenarios: more than 10,000, so auto runs LDFI
    code, out = faults_json(capsys, "ack_broadcast.ded", "--nodes", "a,b,c", "--eot", "5", "--eff", "3", "--crashes", "1")
    assert (code, out["search"], out["scenarios"], out["executions"]) == (1, "ldfi", 65536, 2)
    assert out["counterexamples"] == [{"omissions": [["a", "b", 1]], "crashes": [["a", 2]], "missing": [["b", "hi"]]}]


def test_retry_broadcast_in_a_space_too_large_to_enumerate(capsys):
    # 6 channels x 4 ticks: 2^24 scenarios; the copy sent at 5 (arrives at EOT 6) cannot be omitted
    code, out = faults_json(capsys, "retry_broadcast.ded", "--nodes", "a,b,c", "--eot", "6", "--eff", "5")
    assert (code, out["search"], out["scenarios"], out["executions"], out["counterexamples"]) == \
        (0, "ldfi", 2 ** 24, 1, [])


def test_text_output_without_counterexample_says_the_search_and_executions(capsys):
    code = cli.main(["faults", os.path.join(FAULT_EXAMPLES, "relay_broadcast.ded"), "--nodes", "a,b,c", "--eot", "4",
                     "--eff", "2", "--crashes", "1", "--search", "ldfi", "--engine", "reference", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("832 scenarios, no counterexample (search ldfi, 1 execution, ")


# --- LDFI's verdict is the enumeration's

SPACES = [
    ("simple_log.ded", ABC, 4, 2, 0), ("simple_log.ded", ABC, 4, 2, 1),
    ("retry_broadcast.ded", ABC, 4, 2, 0), ("retry_broadcast.ded", ABC, 4, 2, 1),
    ("relay_broadcast.ded", ABC, 4, 2, 1), ("ack_broadcast.ded", ABC, 5, 3, 0),
    ("classic_broadcast.ded", ABC, 5, 2, 1), ("classic_broadcast.ded", ABC, 5, 3, 0),
    ("two_phase_commit.ded", ("coord", "p1", "p2", "p3"), 5, 0, 1),
    ("two_phase_commit.ded", ("coord", "p1", "p2"), 5, 2, 0),
]


@pytest.mark.parametrize("name, nodes, eot, eff, crashes", SPACES)
def test_ldfi_agrees_with_the_enumeration_on_the_examples(name, nodes, eot, eff, crashes):
    program = example(name)
    every = check(program, nodes, eot, eff, crashes, search="all")
    searched = check(program, nodes, eot, eff, crashes, search="ldfi")
    assert searched.scenarios == every.scenarios == every.executions
    assert bool(searched.counterexamples) == bool(every.counterexamples)
    assert set(searched.counterexamples) <= set(every.counterexamples)
    assert searched.executions < every.executions


# every example's nodes and EOT (its header's `ticks:`)
EXAMPLE_NODES = {
    "simple_log.ded": (ABC, 4), "retry_broadcast.ded": (ABC, 4), "relay_broadcast.ded": (ABC, 4),
    "classic_broadcast.ded": (ABC, 5), "ack_broadcast.ded": (ABC, 5),
    "two_phase_commit.ded": (("coord", "p1", "p2", "p3"), 5),
    "three_phase_commit.ded": (("coord", "p1", "p2", "p3"), 9),
    "kafka_replication.ded": (("client", "zk", "n1", "n2", "n3"), 7),
}
SMALL = [(0, 0), (0, 1), (2, 0), (2, 1), (3, 0), (3, 1)]  # (EFF, crashes): at most 2^4 x (1 + 2 x EOT) scenarios


def small_spaces(name: str, slow: bool):
    """The spaces of `name` over every pair of its nodes (EFF and crashes from
    SMALL; slow: EFF 4 with a crash, up to 1,216 scenarios) and, slow, over every
    three of its nodes with EFF 2 and a crash (up to 1,792)."""
    nodes, eot = EXAMPLE_NODES[name]
    for pair in itertools.combinations(nodes, 2):
        for eff, crashes in [(4, 1)] if slow else SMALL:
            yield Space(pair, eot, eff, crashes)
    for three in itertools.combinations(nodes, 3) if slow else ():
        yield Space(three, eot, 2, 1)


def agree(program, space: Space) -> tuple:
    """LDFI's verdict and counterexamples against the enumeration's on `space`:
    (the enumeration's counterexample count, LDFI's executions)."""
    every = check(program, space.nodes, space.eot, space.eff, space.crashes, search="all")
    searched = check(program, space.nodes, space.eot, space.eff, space.crashes, search="ldfi")
    assert bool(searched.counterexamples) == bool(every.counterexamples), space
    assert set(searched.counterexamples) <= set(every.counterexamples), space
    assert searched.executions <= every.executions, space
    return len(every.counterexamples), searched.executions


@pytest.mark.parametrize("name", sorted(EXAMPLE_NODES))
def test_ldfi_agrees_with_the_enumeration_on_every_small_space_of_every_example(name):
    # 18 to 60 spaces per example, 1 to 304 scenarios each
    program = example(name)
    for space in small_spaces(name, slow=False):
        agree(program, space)


def test_ldfi_finds_the_three_phase_commit_counterexamples_only_failures_make_possible():
    # coord, p1, EFF 4, 1 crash (1,216 scenarios): the counterexamples need the
    # participants' commit by timeout, which only a negated atom blocks in the good run
    assert agree(example("three_phase_commit.ded"), Space(("coord", "p1"), 9, 4, 1)) == (24, 3)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXAMPLE_NODES))
def test_ldfi_agrees_with_the_enumeration_on_the_larger_spaces_of_every_example(name):
    program = example(name)
    for space in small_spaces(name, slow=True):
        agree(program, space)


BROADCASTS = {
    "once": "log(M, P)@async :- bcast(N, P), link(N, M);",
    "retry": "log(M, P)@async :- log(N, P), origin(N), link(N, M);",
    "relay": "log(M, P)@async :- log(N, P), link(N, M);",
}
INVARIANTS = {
    "agreement": "pre(M, P) :- log(N, P), link(N, M), notin crash(N, N, _), notin crash(M, M, _);",
    "delivery": "pre(M, P) :- origin(N), link(N, M), bcast(N, P)@1, notin crash(M, M, _);",
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(BROADCASTS)), st.sampled_from(sorted(INVARIANTS)),
       st.sets(st.sampled_from([(x, y) for x in ABC for y in ABC if x != y]), min_size=1),
       st.integers(2, 4), st.integers(0, 3), st.integers(0, 1))
def test_ldfi_agrees_with_the_enumeration_on_generated_broadcasts(sends, invariant, links, eot, eff, crashes):
    """A broadcast from "a" over random links: sent once, re-sent by "a" every tick,
    or relayed by every holder every tick; the agreement invariant or delivery
    from "a". Spaces of at most 1,000 scenarios."""
    eff = min(eff, eot)
    space = Space(ABC, eot, eff, crashes)
    if space.count > 1000:
        eff = 1
    text = "\n".join([".persist log", "log(N, P) :- bcast(N, P);", BROADCASTS[sends], INVARIANTS[invariant],
                      "post(M, P) :- log(M, P);", 'origin("a");', 'bcast("a", "hi")@1;',
                      'member("a"); member("b"); member("c");']
                     + [f'link("{x}", "{y}");' for x, y in sorted(links)])
    program = Program.parse(text)
    every = check(program, ABC, eot, eff, crashes, search="all")
    searched = check(program, ABC, eot, eff, crashes, search="ldfi")
    assert bool(searched.counterexamples) == bool(every.counterexamples)
    assert set(searched.counterexamples) <= set(every.counterexamples)
    assert searched.executions <= every.executions


# --- option errors: one line, exit 2

@pytest.mark.parametrize("options, message", [
    (["--search", "dfs", "--engine", "reference"], "argument --search: invalid choice: 'dfs'"),
    (["--search", "ldfi", "--network", "capacity=2"], "--network runs on the reference engine only"),  # Spark
    (["--search", "ldfi", "--sample", "5"], "does not go with --search ldfi"),  # the default engine: Spark
    (["--search", "ldfi", "--sample", "5", "--engine", "reference"], "does not go with --search ldfi"),
])
def test_bad_search_options_are_one_line_exit_2(capsys, options, message):
    try:
        code = cli.main(["faults", os.path.join(FAULT_EXAMPLES, "simple_log.ded"), "--nodes", "a,b,c", "--eot", "4",
                         "--eff", "2", *options])
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err
