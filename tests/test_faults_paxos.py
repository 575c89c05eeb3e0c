"""examples/faults/paxos_synod.ded on the reference engine: the verdicts its header
derives (enumeration), LDFI's verdicts and executions, a counterexample replayed from
its network spec, and the duel of space E, which LDFI finds by joining what
different runs showed; the minimal reproductions of a fact first seen in a later
run and of a max<> replaced by a greater member agree with the enumeration."""

import itertools
import os
import textwrap

import pytest

from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.reference import run
from sparkdedalus.reference.faults import faults as check
from reference_helpers import FAULT_EXAMPLES, broken, faults_json, spec

PAXOS = ("p1", "p2", "a1", "a2", "a3")
A = ("p2", "a1", "a2")
DECIDES = lambda p: (p, "decides", "some")  # noqa: E731


def paxos():
    return Program.from_files(os.path.join(FAULT_EXAMPLES, "paxos_synod.ded"))


def decided(program, eot: int, network_spec: str) -> set:
    return set(run(program, ticks=eot, network=Network.parse(network_spec)).relation("decided", eot))


@pytest.mark.parametrize("network_spec, eot, values, lost", [
    ("", 5, {("p1", "y"), ("p2", "y")}, set()),                          # p2's ballot 2 wins round 1
    ("omit=p2>a1@1,omit=p2>a2@1", 5, {("p1", "x"), ("p2", "x")}, set()),  # p1 has a1 and a2
    ("crash=p2@2", 5, set(), {DECIDES("p1")}),                           # p2's accept lost, no time to retry
    ("crash=p2@2", 9, {("p1", "x"), ("p2", "x")}, set()),                # p1 retries alone (p2, crashed, still hears)
    ("omit=p2>a1@1,crash=a2@1", 5, set(), {DECIDES("p1"), DECIDES("p2")}),  # a quorum's promises lost
    ("omit=p2>a1@1,crash=a2@1", 9, {("p1", "y"), ("p2", "y")}, set()),  # the retry: ballot 4 wins
    # p1's ballot 1 accepted by a1 (silent: crashed at 3) and a2: p2's retry adopts "x"
    ("omit=p2>a1@1,omit=p2>a2@1,crash=a1@3", 9, {("p1", "x"), ("p2", "x")}, set()),
    # the duel: round 1 without a quorum, both retry, p2's accept of tick 7 lost
    ("omit=p1>a3@1,omit=p2>a2@1,omit=p2>a3@1,crash=p2@6", 9, set(), {DECIDES("p1")}),
    ("omit=p1>a3@1,omit=p2>a2@1,omit=p2>a3@1", 9, {("p1", "y"), ("p2", "y")}, set()),
])
def test_paxos_scenarios_of_the_header(network_spec, eot, values, lost):
    program = paxos()
    assert decided(program, eot, network_spec) == values
    assert broken(program, eot, network_spec) == lost


def test_paxos_one_round_counterexamples_by_enumeration(capsys):
    # space A: p2, a1, a2, EOT 5, EFF 2, 1 crash: 1024 scenarios, 288 counterexamples,
    # every one a lost decision, none a disagreement
    code, out = faults_json(capsys, "paxos_synod.ded", "--nodes", ",".join(A), "--eot", "5", "--eff", "2",
                            "--crashes", "1", "--search", "all")
    assert (code, out["scenarios"], len(out["counterexamples"]), out["executions"]) == (1, 1024, 288, 1024)
    first = out["counterexamples"][0]
    assert first == {"omissions": [], "crashes": [["p2", 2]], "missing": [["p1", "decides", "some"]]}
    assert all(kind == "decides" for c in out["counterexamples"] for _, kind, _ in c["missing"])
    assert broken(paxos(), 5, spec(first)) == {DECIDES("p1")}
    # the header's predicate, with o1 = p2>a1@1 and o2 = p2>a2@1 omitted
    def expected(c):
        omitted = {tuple(o) for o in c["omissions"]}
        o1, o2 = ("p2", "a1", 1) in omitted, ("p2", "a2", 1) in omitted
        (node, tick), = c["crashes"]
        return (node == "p2" and tick in (2, 3) and not (o1 and o2)
                or node == "a1" and (tick in (1, 2) and o2 or tick in (3, 4) and o1 and o2)
                or node == "a2" and (tick in (1, 2) and o1 or tick in (3, 4) and o1 and o2))
    assert all(expected(c) for c in out["counterexamples"])


def test_paxos_the_retry_saves_every_one_round_counterexample():
    # space B: the same with EOT 9: 1792 scenarios, none; LDFI: none in 7 executions: the
    # good run, crash=p2@1 (p1 decides alone) and one scenario of each kind of space A's
    # counterexamples (header: p2 crashed at 2; a1, a2 crashed at 1 with the other's
    # prepare from p2 lost; a1, a2 crashed at 3 with both lost), each saved by a retry
    # its run shows (which the lineage, joining the runs' facts, then knows for the
    # other scenarios of its kind)
    every = check(paxos(), A, 9, 2, 1, search="all")
    searched = check(paxos(), A, 9, 2, 1, search="ldfi")
    assert (every.scenarios, every.counterexamples) == (1792, [])
    assert (searched.executions, searched.counterexamples) == (7, [])
    assert broken(paxos(), 9, "crash=p2@2") == broken(paxos(), 9, "omit=p2>a1@1,crash=a2@1") == set()


def test_paxos_survives_one_crash_not_two(capsys):
    # space C: all nodes, EFF 0, 1 crash: 46 scenarios, none; D: 2 crashes: 856, 48 (two
    # acceptors crashed at <= 4); LDFI agrees: 3 and 4 executions
    program = paxos()
    one = check(program, PAXOS, 9, 0, 1, search="all")
    assert (one.scenarios, one.counterexamples) == (46, [])
    assert (check(program, PAXOS, 9, 0, 1, search="ldfi").executions, ) == (3, )
    two = check(program, PAXOS, 9, 0, 2, search="all")
    assert (two.scenarios, len(two.counterexamples)) == (856, 48)
    assert {tuple(sorted(c.scenario.crashes)) for c in two.counterexamples} == {
        ((a, s), (b, t)) for a, b in itertools.combinations(("a1", "a2", "a3"), 2) for s in range(1, 5)
        for t in range(1, 5)}
    code, out = faults_json(capsys, "paxos_synod.ded", "--nodes", ",".join(PAXOS), "--eot", "9", "--eff", "0",
                            "--crashes", "2", "--search", "ldfi")
    assert (code, out["search"], out["executions"]) == (1, "ldfi", 4)
    assert out["counterexamples"] == [{"omissions": [], "crashes": [["a1", 1], ["a2", 1]],
                                       "missing": [["p1", "decides", "some"], ["p2", "decides", "some"]]}]
    assert broken(program, 9, spec(out["counterexamples"][0])) == {DECIDES("p1"), DECIDES("p2")}


# the prepares of tick 1: the only channel-ticks before EFF 2 that carry a message
PREPARES = tuple((p, a, 1) for p in ("p1", "p2") for a in ("a1", "a2", "a3"))


def no_quorum(omitted: set) -> bool:
    """Round 1 without a quorum: at most one acceptor got p2's prepare, at most one p1's alone."""
    got2 = [("p2", a, 1) not in omitted for a in ("a1", "a2", "a3")]
    only1 = [("p1", a, 1) not in omitted and not g for a, g in zip(("a1", "a2", "a3"), got2)]
    return sum(got2) <= 1 and sum(only1) <= 1


def test_paxos_duel_predicate_on_every_combination_of_the_prepares():
    # space E restricted to the 6 prepares and to no crash or a crash of p2 or a1
    # (64 x 19 = 1216 scenarios): a counterexample iff round 1 has no quorum and p2
    # crashes at 6 or 7; agreement holds in all of them
    program = paxos()
    assert sum(no_quorum({c for c, b in zip(PREPARES, bits) if b})
               for bits in itertools.product((False, True), repeat=6)) == 22
    crashes = [()] + [((n, t),) for n in ("p2", "a1") for t in range(1, 10)]
    counted = 0
    for bits in itertools.product((False, True), repeat=len(PREPARES)):
        omitted = {c for c, b in zip(PREPARES, bits) if b}
        for crash in crashes:
            expected = no_quorum(omitted) and crash in ((("p2", 6),), (("p2", 7),))
            network_spec = ",".join([f"omit={a}>{b}@{t}" for a, b, t in sorted(omitted)]
                                    + [f"crash={n}@{t}" for n, t in crash])
            assert broken(program, 9, network_spec) == ({DECIDES("p1")} if expected else set()), network_spec
            counted += expected
    assert counted == 22 * 2


def test_paxos_agreement_is_not_vacuous():
    # a proposer that ignores the values the promises report (always its own) breaks
    # agreement: p1's ballot 1 decided "x" through a1, a2 while p2's retry decides "y"
    text = open(os.path.join(FAULT_EXAMPLES, "paxos_synod.ded")).read()
    wrong = text.replace("val(P, B, V) :- current(P, B), own(P, V), notin adopted(P, B);",
                         "val(P, B, V) :- current(P, B), own(P, V);").replace(
        "val(P, B, V) :- prom(P, B, A, AB, V), AB > 0, notin prom_above(P, B, AB);", "")
    assert wrong != text
    program = Program.parse(wrong)
    lost = broken(program, 9, "omit=p2>a1@1,omit=p2>a2@1,omit=a1>p2@4,omit=a2>p2@4")
    assert ("p1", "agrees", "x") in lost and ("p2", "agrees", "y") in lost
    assert broken(paxos(), 9, "omit=p2>a1@1,omit=p2>a2@1,omit=a1>p2@4,omit=a2>p2@4") == set()


# --- LDFI on the spaces where it used to differ from the enumeration

def test_paxos_ldfi_finds_the_one_round_counterexamples():
    # the second run shows p1's round, resting on notin outranked(Ai, 1), a fact of the
    # good run: looked up there too, it makes crash=p2@2 a candidate (3 executions)
    searched = check(paxos(), A, 5, 2, 1, search="ldfi")
    assert searched.executions == 3
    assert [c.scenario.crashes for c in searched.counterexamples] == [(("p2", 2),)]  # the enumeration's smallest


def test_paxos_ldfi_finds_the_duel():
    # space E: 720,896 counterexamples (header, and the predicate test above): round 1
    # without a quorum and p2 crashed at 6 or 7. p1's retry is outranked by p2's only
    # where both retry, which no run shows until round 1 fails for both; the runs of
    # p2 crashed at 2 (p1 retries alone) and of p1 crashed at 1 (p2 retries alone)
    # show prepare(Ai, "p1", 3) and promised(Ai, 4) at tick 6 in different runs, and
    # the lineage joins them: outranked(Ai, 3), so p1's retry fails with p2's
    searched = check(paxos(), PAXOS, 9, 2, 1, search="ldfi")
    (found,) = searched.counterexamples
    omitted, crashes = set(found.scenario.omissions), found.scenario.crashes
    assert omitted <= set(PREPARES) and no_quorum(omitted) and crashes in ((("p2", 6),), (("p2", 7),))
    assert len(omitted) + len(crashes) == 4  # the smallest (header)
    assert found.missing == (DECIDES("p1"),) and broken(paxos(), 9, spec(found.to_json())) == {DECIDES("p1")}
    assert searched.executions < 20


def tiny(text: str):
    return Program.parse(textwrap.dedent(text))


# r holds post through viaA (b's big and c's confirmation, both sent at tick 1), or
# through viaB unless b's big arrived. Omitting c>r@1 is a counterexample.
RELOOKUP = """
    .persist gotbig
    .persist conf
    gotbig(R) :- big(R);
    conf(R) :- confirm(R);
    big(R)@async :- sends_big(B, R);
    confirm(R)@async :- confirms(C, R);
    viaA(R) :- gotbig(R), conf(R);
    outranked(R) :- gotbig(R);
    viaB(R) :- alt(R), notin outranked(R);
    post(R) :- viaA(R);
    post(R) :- viaB(R);
    pre(R) :- alt(R);
    alt("r");
    sends_big("b", "r")@1;
    confirms("c", "r")@1;
"""

# the same with a maximum: post when the maximum is 1, or 2 with the confirmation
MAXIMUM = """
    .persist got
    .persist conf
    got(R, X) :- two(R, X);
    conf(R) :- confirm(R);
    two(R, 2)@async :- sends_two(B, R);
    confirm(R)@async :- confirms(C, R);
    top(R, max<X>) :- got(R, X);
    post(R) :- top(R, 1);
    post(R) :- top(R, 2), conf(R);
    pre(R) :- got(R, 1);
    got("r", 1);
    sends_two("b", "r")@1;
    confirms("c", "r")@1;
"""


@pytest.mark.parametrize("text", [
    pytest.param(RELOOKUP, id="notin-fact-of-an-earlier-run"),  # outranked(r), first seen in run 2, holds in run 1
    pytest.param(MAXIMUM, id="max-aggregate"),  # top(r, 1), first seen in run 2, is lost when got(r, 2) holds
])
def test_ldfi_agrees_with_the_enumeration_minimal(text):
    program = tiny(text)
    every = check(program, ("r", "b", "c"), 3, 2, 0, search="all")
    assert (every.scenarios, len(every.counterexamples)) == (64, 16)
    assert broken(program, 3, "omit=c>r@1") == {("r",)}
    searched = check(program, ("r", "b", "c"), 3, 2, 0, search="ldfi")
    assert bool(searched.counterexamples) == bool(every.counterexamples)
    # the good run, {b>r@1} (shows the other derivation of post), then {c>r@1}: a counterexample
    assert searched.executions == 3
