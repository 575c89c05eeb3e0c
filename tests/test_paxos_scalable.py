"""examples/protocols/paxos_scalable.ded, what `rewrite` derives from paxos.ded
(scripts/regen-protocols.sh; tests/test_protocols.py regenerates it byte for byte):
the paper's ScalablePaxos (section 5.2, B.3, B.4): p2a proxy leaders, p2b proxy
leaders, both partitioned by slot, and partially partitioned acceptors; its clients
observe one of the base program's outcomes (`equiv`, refinement); agreement and validity
hold under random delays, a proposer crash, and every single crash of `faults`. And the
analyses' verdicts on the p2b collection, which docs/protocols.md quotes: mutually
independent as paxos.ded is written (the p2b carry the command, rejections are nacks),
and why no decoupling applied to the formulation before, the asymmetric one included."""

from __future__ import annotations

import pytest

from paxos_helpers import BOTH_AT_ONCE, PAXOS, REPLICAS, SAFETY, SCALABLE, paxos_text, violations
from sparkdedalus import Program
from sparkdedalus.analysis.decoupling import decoupling
from sparkdedalus.analysis.roles import component_rules
from sparkdedalus.network import Network
from sparkdedalus.reference import run
from sparkdedalus.rewrite import Target, asymmetric, partial_partitioning, partitioning
from sparkdedalus.shell.cli import main
from udfs.registry import FUNCTIONS


def test_the_paper_s_p2a_and_p2b_proxies_and_partitioned_acceptors():
    base, scalable = Program.from_files(PAXOS), Program.from_files(SCALABLE)
    assert set(scalable.components) == set(base.components) | {
        "p2a_proxy_leaders", "p2b_proxy_leaders", "acceptor_coord"}
    assert set(scalable.homes) == {"/p2a_proxy_leaders", "/p2b_proxy_leaders", "/p0", "/p1", "/p2", "/coord"}
    header = [line.split(": ", 1)[1] for line in open(SCALABLE).read().splitlines()
              if line.startswith("// sparkdedalus rewrite: ")]
    assert header == [
        "proposer -> p2a_proxy_leaders: functional decoupling of p2a",
        "proposer -> p2b_proxy_leaders: mutually independent decoupling of accepted_by, accepts, committed, "
        "decide, announced",
        # proposal(P, S, B, ..): by slot
        "p2a_proxy_leaders on 3 partitions (co-hashing): proposal_p2a_proxy_leaders by c1",
        # accepted_by(P, B, S, ..), announced(P, S), p2b(P, A, B, S, ..), ...: by slot
        "p2b_proxy_leaders on 3 partitions (co-hashing): accepted_by by c2, announced by c1, p2b by c3, "
        "accepts by c2, committed by c1",
        # p2a(A, P, B, S, ..) and log(A, S, ..): by slot
        "acceptor on 3 partitions (partial): p2a by c3, log by c1",
        "acceptor seals p1b per partition (B.4)",
        "acceptor replicates ballots, p1a, promised on every partition; "
        'p1a ordered by a coordinator at L + "/coord" (B.3)']
    # the paper's 29 machines: 2 proposers, 6 p2a proxies, 6 p2b proxies, 3 coordinators,
    # 9 acceptor partitions, 3 replicas
    # 9 acceptor partitions, 3 replicas: 29 nodes, of which all but the coordinators and
    # the replicas hold facts
    nodes = {f.atom.args[0].value for f in scalable.facts} - {"c1", "c2"}
    assert {"p1", "p2"} <= nodes and len(nodes) == 29 - 3 - 3


def _slot_partition(slot: int) -> str:
    """The partition the rewrite routes a slot to: `(hash(S) % 3 + 3) % 3`."""
    return f"p{(FUNCTIONS['hash'].python(slot)[0] % 3 + 3) % 3}"


def test_the_p2b_proxies_commit_by_slot_and_the_proposer_sees_no_p2b():
    # 8 more commands: slots 1..11 reach all three partitions (slots 1-4 hash to p1)
    more = "".join(f'send("c{1 + k % 2}", "w{k}")@{5 + k};\n' for k in range(8))
    trace = run(Program.parse(open(SCALABLE).read() + more), ticks=40)
    committed = {(where, slot) for where, slot, _, _ in trace.relation("committed", 40)}
    assert committed == {(f"p2/p2b_proxy_leaders/{_slot_partition(s)}", s) for s in range(1, 12)}
    assert {where for where, _ in committed} == {f"p2/p2b_proxy_leaders/p{k}" for k in range(3)}
    # the proposers send p1a and proposals only, and receive requests, p1b and nacks:
    # no p2b, no decide (the base proposer handles 3 of each a command)
    sent = {m.relation for m in trace.messages if m.src in ("p1", "p2")}
    received = {m.relation for m in trace.messages if m.row[0] in ("p1", "p2")}
    assert sent == {"p1a_coord", "proposal_p2a_proxy_leaders"}
    assert received == {"request", "p1bPart", "p1bCountPart", "nack"}
    assert violations(trace.at, 40) == []
    assert {c for _, _, c in trace.relation("executed", 40)} == {"x", "y", "z"} | {f"w{k}" for k in range(8)}


def test_the_clients_observe_an_outcome_of_the_base_program(capsys):
    assert main(["equiv", PAXOS, SCALABLE, "--ticks", "40", "--seeds", "20", "--observe", "reply",
                 "--mode", "refinement"]) == 0
    assert capsys.readouterr().out.startswith("refines: every outcome")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("both, failures", [(False, ",crash=p2@7"), (True, ",crash=p2@3")])
def test_safe_and_live_under_random_delays_and_a_proposer_crash(both, failures, seed):
    text = open(SCALABLE).read()
    if both:
        assert text.count(BOTH_AT_ONCE[0]) == 1
        text = text.replace(*BOTH_AT_ONCE)
    trace = run(Program.parse(text), ticks=50, network=Network.parse(f"delay=uniform(1,3),seed={seed}{failures}"))
    assert violations(trace.at, trace.ticks) == []
    done = {(r, c) for r, _, c in trace.relation("executed", 50) if c != "noop"}
    assert done == {(r, c) for r in REPLICAS for c in ("x", "y", "z")}


def test_faults_one_crash_anywhere_breaks_no_agreement(capsys):
    # a proposer, a p2a proxy, p1's p2b proxies p1 (slots 1-3 hash to it) and p0 (idle
    # here), or a partition of each acceptor, once, at any tick 1..14
    nodes = "p1,p2,p1/p2a_proxy_leaders/p0,p1/p2b_proxy_leaders/p0,p1/p2b_proxy_leaders/p1,a1/p0,a2/p1,a3/p2"
    assert main(["faults", SCALABLE, SAFETY, "--nodes", nodes, "--eot", "14", "--eff", "0", "--crashes", "1",
                 "--engine", "reference", "--search", "all", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("113 scenarios, no counterexample")


# --- the analyses' verdicts on the p2b collection (docs/protocols.md, "ScalablePaxos")

COLLECTION = {"accepted_by", "accepts", "committed", "decide", "announced"}


def collection_verdicts(text: str) -> dict:
    """rewrite -> (applies, reasons as text) for moving the proposer's p2b collection."""
    program = Program.parse(text)
    split = [i for i in component_rules(program, "proposer")
             if program.rules[i].head.name in COLLECTION | {"p2bs", "preempted"}]
    return {p.rewrite: (p.applies, [str(r) for r in p.reasons])
            for p in decoupling(program, "proposer", split).preconditions}


def test_the_p2b_collection_is_mutually_independent_of_the_proposer():
    found = collection_verdicts(open(PAXOS).read())
    assert found["mutually independent"] == (
        True, ["neither reads what the other derives, and no relation is read by both"])
    # no other rewrite applies: the collection reads the p2b as they arrive and sends each
    # decision once (notin announced), which is neither monotonic nor a state machine
    assert [r for r, (applies, _) in found.items() if applies] == ["mutually independent"]
    assert "<string>:139:39: the rule for accepted_by (line 139) reads p2b, which is not persisted, " \
        "not even logically" in found["monotonic"][1]
    assert "<string>:142:73: the rule for decide (line 142) negates announced" in found["monotonic"][1]


#: paxos.ded's two changes that make the collection independent, each undone: the p2b
#: carry the command (the commit reads no `assigned`), a rejection is a nack (the
#: proposer reads no p2b)
ACCEPT = "p2b(P, A, B, S, Cl, C)@async :- p2a(A, P, B, S, Cl, C), promised(A, MB), B >= MB;"
OUSTED = "ousted(P, B, MB) :- ballot(P, B), nack(P, _, B, MB), MB > B;"
REJECT = "nack(P, A, B, MB)@async :- p2a(A, P, B, S, _, _), promised(A, MB), MB > B;"
ACCEPTED_BY = "accepted_by(P, B, S, A, Cl, C) :- p2b(P, A, B, S, Cl, C);"
NO_NACK = [  # a p2b carries the acceptor's highest ballot, the proposer reads it
    (ACCEPT, "p2b(P, A, B, S, Cl, C, B)@async :- p2a(A, P, B, S, Cl, C), promised(A, MB), B >= MB;"),
    (REJECT, "p2b(P, A, B, S, Cl, C, MB)@async :- p2a(A, P, B, S, Cl, C), promised(A, MB), MB > B;"),
    (OUSTED, "ousted(P, B, MB) :- ballot(P, B), p2b(P, _, B, _, _, _, MB), MB > B;"),
    (ACCEPTED_BY, "accepted_by(P, B, S, A, Cl, C) :- p2b(P, A, B, S, Cl, C, B);")]
NO_PAYLOAD = [  # the commit takes the command from `assigned`
    (ACCEPT, "p2b(P, A, B, S, B)@async :- p2a(A, P, B, S, _, _), promised(A, MB), B >= MB;"),
    ("""    accepted_by(P, B, S, A, Cl, C) :- p2b(P, A, B, S, Cl, C);
    accepts(P, B, S, Cl, C, count<A>) :- accepted_by(P, B, S, A, Cl, C);
    committed(P, S, Cl, C) :- accepts(P, B, S, Cl, C, N), quorum(P, Q), N >= Q;""",
     """    accepted_by(P, B, S, A) :- p2b(P, A, B, S, B);
    accepts(P, B, S, count<A>) :- accepted_by(P, B, S, A);
    committed(P, S, Cl, C) :- accepts(P, B, S, N), quorum(P, Q), N >= Q, assigned(P, B, S, Cl, C);""")]
#: paxos.ded before both
BEFORE = NO_PAYLOAD + [(REJECT, "p2b(P, A, B, S, MB)@async :- p2a(A, P, B, S, _, _), promised(A, MB), MB > B;"),
                       (OUSTED, "ousted(P, B, MB) :- ballot(P, B), p2b(P, _, B, _, MB), MB > B;")]


def test_mutual_independence_says_no_without_the_nack_or_without_the_command_in_the_p2b():
    reasons = collection_verdicts(paxos_text(*NO_NACK))["mutually independent"]
    assert reasons == (False, ["<string>:139:39: both read p2b: an input can be redirected to one of them only"])
    reasons = collection_verdicts(paxos_text(*NO_PAYLOAD))["mutually independent"]
    assert reasons == (False, ["<string>:141:74: the rule for committed (line 141) reads assigned, "
                               "which the other rules derive",
                               "<string>:141:74: both read assigned: an input can be redirected to one of them only"])


def test_no_decoupling_moved_the_p2b_collection_as_formulated_before():
    found = collection_verdicts(paxos_text(*BEFORE))
    assert not any(applies for applies, _ in found.values())
    applies, reasons = found["asymmetric"]
    # C2 reads what the proposer derives (the command of a slot), and is neither
    # monotonic nor functional
    assert "<string>:141:74: the rule for committed (line 141) reads assigned, which the other rules derive" \
        in reasons
    assert "<string>:139:32: the rule for accepted_by (line 139) reads p2b, which is not persisted, " \
        "not even logically" in reasons
    assert "<string>:142:73: the rule for decide (line 142) negates announced" in reasons
    assert "<string>:140:22: the rule for accepts (line 140) aggregates with count<A>" in reasons


#: the variants tried on the formulation before (for the asymmetric decoupling): the p2b
#: carries the command (the paper's proxies "broadcast committed payloads") and the
#: acceptor's highest ballot
CARRIED_PAYLOAD = BEFORE + [
    ("p2b(P, A, B, S, B)@async :- p2a(A, P, B, S, _, _), promised(A, MB), B >= MB;",
     "p2b(P, A, B, S, Cl, C, B)@async :- p2a(A, P, B, S, Cl, C), promised(A, MB), B >= MB;"),
    ("p2b(P, A, B, S, MB)@async :- p2a(A, P, B, S, _, _), promised(A, MB), MB > B;",
     "p2b(P, A, B, S, Cl, C, MB)@async :- p2a(A, P, B, S, Cl, C), promised(A, MB), MB > B;"),
    ("    .persist announced\n", "")]
COLLECTED = """    accepted_by(P, B, S, A) :- p2b(P, A, B, S, B);
    accepts(P, B, S, count<A>) :- accepted_by(P, B, S, A);
    committed(P, S, Cl, C) :- accepts(P, B, S, N), quorum(P, Q), N >= Q, assigned(P, B, S, Cl, C);
    decide(R, S, Cl, C)@async :- committed(P, S, Cl, C), replica(P, R), notin announced(P, S);
    announced(P, S)@next :- committed(P, S, _, _);"""
#: ... the collection keeps the p2b (p2bs), the proposer is ousted by what it keeps, and
#: a decide leaves when a p2b completes a quorum
CARRIED = CARRIED_PAYLOAD + [
    ("ousted(P, B, MB) :- ballot(P, B), p2b(P, _, B, _, MB), MB > B;",
     "ousted(P, B, MB) :- ballot(P, B), p2bs(P, _, B, _, _, _, MB), MB > B;"),
    ("    .persist accepted_by\n", "    .persist p2bs\n"),
    (COLLECTED, """    p2bs(P, A, B, S, Cl, C, MB) :- p2b(P, A, B, S, Cl, C, MB);
    accepts(P, B, S, Cl, C, count<A>) :- p2bs(P, A, B, S, Cl, C, B);
    committed(P, S, Cl, C) :- accepts(P, B, S, Cl, C, N), quorum(P, Q), N >= Q;
    decide(R, S, Cl, C)@async :- p2b(P, _, B, S, Cl, C, B), committed(P, S, Cl, C), replica(P, R);""")]
#: ... or the proposer persists the p2b, the collection derives the preemptions, and the
#: decisions are sent at every tick (monotonic)
PERSISTED = CARRIED_PAYLOAD + [
    ("ousted(P, B, MB) :- ballot(P, B), p2b(P, _, B, _, MB), MB > B;",
     "ousted(P, B, MB) :- ballot(P, B), preempted(P, B, MB);"),
    ("    .persist accepted_by\n", "    .persist p2b\n"),
    (COLLECTED, """    preempted(P, B, MB) :- p2b(P, _, B, _, _, _, MB), MB > B;
    accepts(P, B, S, Cl, C, count<A>) :- p2b(P, A, B, S, Cl, C, B);
    committed(P, S, Cl, C) :- accepts(P, B, S, Cl, C, N), quorum(P, Q), N >= Q;
    decide(R, S, Cl, C)@async :- committed(P, S, Cl, C), replica(P, R);""")]


def test_with_the_command_in_the_p2b_only_monotonicity_is_missing():
    text = paxos_text(*CARRIED)
    found = collection_verdicts(text)
    applies, reasons = found["asymmetric"]
    assert not applies
    # independent of the proposer (the state machine test holds: its only reason is the
    # proposer reading p2bs, which the asymmetric rewrite allows); but neither monotonic
    # (p2b, its input, is read as it arrives) nor functional (a count, two IDB relations)
    assert found["state machine"] == (False, ["<string>:113:39: the rule for ousted (line 113) reads p2bs, "
                                              "which the other rules derive"])
    assert reasons == [
        "<string>:138:36: the rule for p2bs (line 138) reads p2b, which is not persisted, not even logically",
        "<string>:139:29: the rule for accepts (line 139) aggregates with count<A>",
        "<string>:141:61: the rule for decide (line 141) reads a second IDB relation, committed (after p2b)"]
    # the variant is still Paxos: the header's run, with the same commits
    trace = run(Program.parse(text), ticks=12)
    assert {(s, c) for _, s, _, c in trace.relation("committed", 12)} == {(1, "x"), (2, "y"), (3, "z")}
    assert violations(trace.at, 12) == []


def test_with_the_p2b_persisted_the_proxies_are_derived_but_resend_and_cannot_be_partitioned():
    program = Program.parse(paxos_text(*PERSISTED))
    assert collection_verdicts(paxos_text(*PERSISTED))["asymmetric"][0]
    split = tuple(i for i in component_rules(program, "proposer")
                  if program.rules[i].head.name in {"preempted", "accepts", "committed", "decide"})
    proxied, notes = asymmetric.apply(program, Target("proposer", split, "p2b_proxy_leaders"))
    assert notes == ["proposer -> p2b_proxy_leaders: asymmetric decoupling of preempted, accepts, committed, decide"]
    # every decision is sent again at every tick: p1's slots 1 and 2 from tick 5 on
    trace = run(program, ticks=12)
    sent = {(m.send_tick, m.row[1]) for m in trace.messages if m.relation == "decide" and m.src == "p1"}
    assert sent >= {(t, s) for t in range(5, 13) for s in (1, 2)}
    # and the proxies' batches, numbered in one sequence by tick, share no key with p2b
    verdict = partitioning.precondition(proxied, Target("p2b_proxy_leaders", partitions=3))
    assert not verdict.applies
    verdict = partial_partitioning.precondition(proxied, Target("p2b_proxy_leaders", partitions=3))
    assert not verdict.applies
    assert any(str(r).endswith("batch_p2b_proxy_leaders and p2b share no key (co-hashing, 4.1)")
               for r in verdict.reasons)
