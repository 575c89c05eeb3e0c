"""The decoupling analyses of the scaling paper (sections 2.4, 3.1-3.3 and
appendix A): component roles, independence, monotonicity, functional and
state-machine rule sets, asymmetric decoupling, decoupling candidates.
Expected verdicts are derived by hand from the paper and the shipped examples
(which follow the paper's programs: Listings leader and storage, section 5.2);
example rules are named by their head relation, reasons' positions by the
line and the column of the construct in the source text."""

from pathlib import Path

import pytest

from sparkdedalus import Program
from sparkdedalus.analysis.asymmetric import asymmetric
from sparkdedalus.analysis.decoupling import REWRITES, decoupling, decouplings
from sparkdedalus.analysis.functional import functional
from sparkdedalus.analysis.independence import independence, mutual_independence
from sparkdedalus.analysis.monotonicity import monotonicity
from sparkdedalus.analysis.roles import component_roles
from sparkdedalus.analysis.state_machine import state_machine

RUNNING = "examples/scaling_running_example.ded"
VOTING = "examples/voting.ded"
TWO_PC = "examples/two_phase_commit.ded"


def at(program, *lines):
    """Indices of the (non-persistence) rules written on `lines`."""
    return [r.index for r in program.rules if r.pos.line in lines and not r.persistence]


def rules_for(program, *heads):
    """Indices of the (non-persistence) rules deriving `heads`."""
    return [r.index for r in program.rules if r.head.name in heads and not r.persistence]


def where(path, fragment, text):
    """`file:line:col` of the first `text` on the one line of `path` holding `fragment`."""
    (line,) = [n for n, s in enumerate(Path(path).read_text().splitlines(), 1) if fragment in s]
    source = Path(path).read_text().splitlines()[line - 1]
    return f"{path}:{line}:{source.index(text, source.index(fragment)) + 1}"


def wheres(verdict):
    return {r.where for r in verdict.reasons}


@pytest.fixture(scope="module")
def running():
    return Program.from_files(RUNNING)


# The leader's rules, named as the paper's Listing leader (3.1-3.3): Lines 1-2 sign and send,
# Lines 3-7 the acks and the certificate, Line 8 the inconsistency check.
SIGN_SEND = ("signed", "toStorage")
CERTIFICATES = ("acks", "numAcks", "certified", "certReply", "reported")
INCONSISTENCY = "inconsistentReply(C, L, Id)@async"


# ---------------------------------------------------------------- components (2.4)

def test_leader_references_inputs_outputs(running):
    # The leader's rules read request, signed, storageNode, fromStorage, acks, numAcks,
    # numStorage, certified, client, reported. storageNode and client hold untimed facts and
    # numStorage is counted from storageNode: constant, so no references (like the paper's
    # EDB). Inputs (referenced, not derived): request (the paper's `in`), fromStorage.
    # Outputs (derived, not read): toStorage, certReply, inconsistentReply (outCert,
    # outInconsistent).
    leader = {r.name: r for r in component_roles(running)}["leader"]
    assert leader.references == {"request", "signed", "fromStorage", "acks", "numAcks", "certified", "reported"}
    assert leader.referenced_inputs == {"request", "fromStorage"}
    assert leader.outputs == {"toStorage", "certReply", "inconsistentReply"}
    assert leader.rules == tuple(r.index for r in running.rules if r.component == "leader" and not r.persistence)


def test_storage_references_as_in_the_paper(running):
    # Paper 2.4: storage references toStorage, hashset, collisions, numCollisions (ours also
    # valid, its signature check); toStorage is an input, fromStorage an output. collider
    # (untimed facts) is constant.
    storage = {r.name: r for r in component_roles(running)}["storage"]
    assert storage.references == {"toStorage", "valid", "hashset", "collisions", "numCollisions"}
    assert storage.referenced_inputs == {"toStorage"}
    assert storage.outputs == {"fromStorage"}


# ---------------------------------------------------------------- independence (3.1)

def test_sign_and_send_mutually_independent_of_the_rest_of_the_leader(running):
    # Paper 3.1: "no dataflow between the relations in Lines 1 and 2 and the relations in
    # the remainder of the rules": signing and sending read request and signed; the rest
    # (certificates and the inconsistency check) reads fromStorage, acks, numAcks,
    # certified, reported. Disjoint references, and neither reads what the other derives.
    sign_send = rules_for(running, *SIGN_SEND)
    certificates = rules_for(running, *CERTIFICATES)
    rest = certificates + rules_for(running, "inconsistentReply")
    assert mutual_independence(running, sign_send, certificates).independent
    assert mutual_independence(running, rest, sign_send).independent
    assert "mutually independent" in decoupling(running, "leader", sign_send).applicable


def test_shared_input_breaks_mutual_but_not_one_way_independence(running):
    # numAcks and the inconsistency check both read acks, which neither derives: a
    # redirection can send it to one node only (3.1). One way, each is independent of the
    # other (the staying side may forward acks).
    counting, check = rules_for(running, "numAcks"), rules_for(running, "inconsistentReply")
    verdict = mutual_independence(running, counting, check)
    assert not verdict.independent
    assert wheres(verdict) == {where(RUNNING, INCONSISTENCY, "acks")}
    assert "both read acks" in verdict.reasons[0].message
    assert independence(running, counting, check).independent
    assert independence(running, check, counting).independent


def test_reading_what_the_other_derives_is_dependence(running):
    # toStorage (Line 2) reads signed, derived by Line 1.
    send, sign = rules_for(running, "toStorage"), rules_for(running, "signed")
    verdict = independence(running, send, sign)
    assert not verdict.independent
    assert wheres(verdict) == {where(RUNNING, "toStorage(N, L, Id, V, Sig)@async", "signed")}
    assert verdict.to_json()["independent"] is False
    assert independence(running, sign, send).independent


# ---------------------------------------------------------------- monotonicity (3.2, A.2.1)

def test_inconsistency_rule_is_monotone(running):
    # Paper 3.2: "Since ACKs are persisted, once a pair is inconsistent, they will always be
    # inconsistent; Line 8 is monotonic": acks is persisted, the rule has no negation or
    # aggregation (!= is a comparison): monotone by the strict test.
    verdict = monotonicity(running, rules_for(running, "inconsistentReply"))
    assert (verdict.monotone, verdict.test) == (True, "strict")
    assert verdict.to_json()["monotone"] is True


def test_inconsistency_rule_decouples_monotonically(running):
    # Paper 3.2, Figure 3: the rest of the leader reads nothing the inconsistency check
    # derives (it is an output), and the check is monotonic: monotonic decoupling applies.
    # It is not mutually independent: it reads acks, which the certificate rules derive.
    candidate = decoupling(running, "leader", rules_for(running, "inconsistentReply"))
    assert "monotonic" in candidate.applicable
    mutual = candidate.preconditions[0]
    assert not mutual.applies
    assert wheres(mutual) == {where(RUNNING, INCONSISTENCY, "acks(L, _, Id, _, C1"),
                              where(RUNNING, INCONSISTENCY, "acks(L, _, Id, _, C2")}


def test_certificate_count_equals_the_number_of_storage_nodes_only_as_a_threshold(running):
    # The certificate compares count<N> of the acks with the number of storage nodes by
    # equality. N is the storage node that sent fromStorage, and toStorage goes only to
    # storageNode(L, N): the 3 nodes s1, s2, s3. So the count never exceeds numStorage (3),
    # and equals it exactly when it reaches it, as `K >= 3` would (issue 49).
    verdict = monotonicity(running, rules_for(running, "numAcks", "certified"))
    assert (verdict.monotone, verdict.test) == (True, "relaxed")
    # the reply that goes with it is still not monotone: it negates reported
    verdict = monotonicity(running, rules_for(running, "numAcks", "certified", "certReply", "reported"))
    assert not verdict.monotone
    assert [r.message for r in verdict.reasons] == ["the rule for certReply (line 63) negates reported"]


def test_an_equality_with_a_count_that_may_exceed_it_is_no_threshold(tmp_path):
    # toStorage also goes to a fourth node: 4 nodes may ack while numStorage is 3, so the count
    # may pass 3 without ever equalling it (two acks in one tick): the equality is no threshold
    text = Path(RUNNING).read_text().replace("signed(L, Id, V, Sig), storageNode(L, N);",
                                             "signed(L, Id, V, Sig), peer(L, N);")
    path = tmp_path / "four.ded"
    path.write_text(text + "".join(f'peer("leader", "s{i}");\n' for i in range(1, 5)))
    p = Program.from_files(str(path))
    verdict = monotonicity(p, rules_for(p, "numAcks", "certified"))
    assert not verdict.monotone
    assert wheres(verdict) == {where(str(path), "certified(L, Id, V, Cnt) :-", "numAcks(")}


def test_negation_aggregation_and_unpersisted_inputs_are_named():
    text = ('.persist seen\nseen(L, X) :- in(L, X);\n'
            'fresh(L, X) :- in(L, X), notin seen(L, X);\n'
            'n(L, count<X>) :- seen(L, X);\n'
            'pick(L, X) :- seen(L, X), choose((L), (X));\n'
            'old(L, X) :- seen(L, X)@2;\n'
            'in("l", 1)@1;\n')
    p = Program.parse(text, file="neg.ded")
    # line 3: reads in (one-tick facts, not persisted even logically), negates seen
    v = monotonicity(p, at(p, 3))
    assert not v.monotone and v.test is None
    assert wheres(v) == {"neg.ded:3:16", "neg.ded:3:26"}
    assert any("negates seen" in r.message for r in v.reasons)
    # line 4: count<X> is an output (nobody reads it): no threshold test
    assert wheres(monotonicity(p, at(p, 4))) == {"neg.ded:4:6"}
    # line 5: choose; line 6: a read at tick 2
    assert wheres(monotonicity(p, at(p, 5))) == {"neg.ded:5:27"}
    assert wheres(monotonicity(p, at(p, 6))) == {"neg.ded:6:14"}


def test_relaxed_tests_logically_persisted_inputs_and_thresholds():
    # A.2.1: all is derived without negation from persisted acks, so it is logically
    # persisted though not persisted; count<N> read only as K >= 2 is a threshold.
    text = ('.persist acks\nacks(L, N) :- ack(L, N);\nall(L, N) :- acks(L, N);\n'
            'n(L, count<N>) :- all(L, N);\nquorum(L)@async :- n(L, K), K >= 2;\nack("l", "a")@1;\n')
    v = monotonicity(Program.parse(text, file="q.ded"), [2, 3])
    assert (v.monotone, v.test) == (True, "relaxed")
    # K == 2 is no threshold: the count may pass 2 and the fact vanish
    exact = text + 'exact(L)@async :- n(L, K), K == 2;\n'
    p = Program.parse(exact, file="q.ded")
    v = monotonicity(p, at(p, 4, 5, 7))
    assert not v.monotone
    assert wheres(v) == {"q.ded:7:19"}
    assert "threshold" in v.reasons[0].message
    # without the rule on line 7 in the set, its read of the raw count leaks out
    v = monotonicity(p, at(p, 4, 5))
    assert not v.monotone and wheres(v) == {"q.ded:4:6"}
    assert "not among the rules" in v.reasons[0].message


# ---------------------------------------------------------------- functional (3.3)

def test_signing_is_functional(running):
    # Paper 3.3: signing (Line 1) reads one IDB relation (request) and the function sign;
    # sending (Line 2) reads signed and storageNode (constant EDB). No negation, no aggregation.
    assert functional(running, rules_for(running, "signed")).functional
    assert functional(running, rules_for(running, *SIGN_SEND)).functional


def test_not_functional_with_two_idb_relations_or_aggregation(running):
    # Line 8 joins acks with acks; numAcks aggregates count<N>.
    v = functional(running, rules_for(running, "inconsistentReply"))
    assert not v.functional and wheres(v) == {where(RUNNING, INCONSISTENCY, "acks(L, _, Id, _, C2")}
    v = functional(running, rules_for(running, "numAcks"))
    assert wheres(v) == {where(RUNNING, "numAcks(L, Id, Cnt, count<N>)", "count<N>")}
    assert v.to_json()["functional"] is False


# ---------------------------------------------------------------- state machine (A.4), asymmetric (A.5)

def test_state_machine_and_its_failure():
    # seen is persisted and changes only with input in: no-change dependency; new (output)
    # is sent at a tick with input: existence dependency. late@next is an output derived for
    # the next tick: no existence dependency. tick(L, X)@next :- tick(...) + 1 is not the
    # persistence rule: neither dependency.
    text = ('.persist seen\nseen(L, X) :- in(L, X);\nnew(L, X)@async :- in(L, X), notin seen(L, X);\n'
            'late(L, X)@next :- in(L, X);\nclock(L, X)@next :- clock(L, Y), X == Y + 1;\n'
            'ticked(L)@async :- clock(L, X), in(L, _);\nin("l", 1)@1; clock("l", 0)@1;\n')
    p = Program.parse(text, file="sm.ded")
    assert state_machine(p, at(p, 2, 3)).state_machine
    v = state_machine(p, at(p, 4))
    assert not v.state_machine and wheres(v) == {"sm.ded:4:1"}
    v = state_machine(p, at(p, 5, 6))
    assert wheres(v) == {"sm.ded:5:1"}
    assert v.to_json()["state_machine"] is False


def test_asymmetric_precondition():
    # acks (line 2) feeds ok (line 3): split off acks, which reads only the input ack, is
    # independent of ok, functional and a state machine (acks persisted, changed only on
    # input): asymmetric applies. The other way round, ok reads acks: not independent.
    text = '.persist acks\nacks(L, N) :- ack(L, N);\nok(L)@async :- acks(L, "a");\nack("l", "a")@1;\n'
    p = Program.parse(text, file="as.ded")
    assert asymmetric(p, at(p, 3), at(p, 2)).applies
    v = asymmetric(p, at(p, 2), at(p, 3))
    assert not v.applies and wheres(v) == {"as.ded:3:16"}
    assert v.to_json()["applies"] is False


# ---------------------------------------------------------------- decoupling candidates

def test_leader_candidates(running):
    cands = {c.rules: c for c in decouplings(running, "leader")}
    # signing and sending: an independent part (3.1), functional (3.3), not monotone
    # (request is a message, not persisted).
    c = cands[tuple(rules_for(running, *SIGN_SEND))]
    assert c.found_by == "independent part"
    assert {"mutually independent", "functional"} <= set(c.applicable) and "monotonic" not in c.applicable
    # sending alone (paper 3.3: Line 2 on its own node): functional
    assert "functional" in cands[tuple(rules_for(running, "toStorage"))].applicable
    assert [p.rewrite for p in c.preconditions] == list(REWRITES)
    # the inconsistency check (3.2): found downstream of its head, monotonic
    c = cands[tuple(rules_for(running, "inconsistentReply"))]
    assert c.found_by == "downstream of inconsistentReply" and "monotonic" in c.applicable


def test_unknown_component_or_foreign_rules(running):
    with pytest.raises(ValueError, match="no component 'nope'"):
        decouplings(running, "nope")
    with pytest.raises(ValueError, match="not rules of component"):
        decoupling(running, "leader", rules_for(running, "fromStorage"))


def test_candidate_json(running):
    send = rules_for(running, "toStorage")
    (c,) = [c for c in decouplings(running, "leader") if c.rules == tuple(send)]
    data = c.to_json()
    assert data["rules"] == [{"index": send[0], "head": "toStorage",
                              "where": where(RUNNING, "toStorage(N, L, Id, V, Sig)@async", "toStorage")}]
    functional = data["preconditions"][2]
    assert (functional["rewrite"], functional["applies"]) == ("functional", True)
    assert all(r["where"] is None for r in functional["reasons"])
    assert data["preconditions"][0]["applies"] is False


# ---------------------------------------------------------------- voting and 2PC (5.2)

@pytest.fixture(scope="module")
def voting():
    return Program.from_files(VOTING)


COLLECTORS = ("votes", "nvotes", "complete", "waiting", "anyno", "result", "replied")


def test_voting_broadcasters_decouple_functionally(voting):
    # Paper 5.2: broadcasters (ballot: reads request and the constant participant) are
    # decoupled from the leader by functional decoupling; nothing in the leader reads ballot.
    # They share no relation with the collectors either: an independent part.
    broadcasters = rules_for(voting, "ballot")
    c = decoupling(voting, "leader", broadcasters)
    assert {"functional", "mutually independent"} <= set(c.applicable)
    assert any(d.found_by == "independent part" and d.rules == c.rules for d in decouplings(voting, "leader"))


def test_voting_collectors_decouple_by_mutual_independence(voting):
    # Paper 5.2: collectors (votes, nvotes, complete, waiting, anyno, result, replied: they
    # read vote and what they derive; the client comes back with the votes) are decoupled
    # "through mutually independent decoupling": the remaining leader (ballot) reads only
    # request. nparts counts the constant participant relation: on both sides.
    collectors = rules_for(voting, *COLLECTORS)
    assert mutual_independence(voting, collectors, rules_for(voting, "ballot")).independent
    c = decoupling(voting, "leader", collectors)
    assert "mutually independent" in c.applicable
    # not monotone: result negates anyno and replied, complete tests count<P> by equality
    assert "monotonic" not in c.applicable


@pytest.fixture(scope="module")
def two_pc():
    return Program.from_files(TWO_PC)


VOTE_REQUESTERS = ("prepare",)
COMMITTERS = ("yes", "nyes", "decide_commit", "commit_log", "commit", "sent_commit", "abort", "answer")
ENDERS = ("acks", "nacks", "end_log")


def test_two_pc_vote_requesters_decouple_functionally(two_pc):
    # Paper 5.2: vote requesters (prepare: reads begin and participant) are functionally
    # decoupled from the coordinator; nothing else reads begin, so they are even mutually
    # independent (found as an independent part).
    c = decoupling(two_pc, "coordinator", rules_for(two_pc, *VOTE_REQUESTERS))
    assert {"functional", "mutually independent"} <= set(c.applicable)
    assert any(d.found_by == "independent part" and d.rules == c.rules for d in decouplings(two_pc, "coordinator"))


def test_two_pc_committers_and_enders(two_pc):
    # Paper 5.2: "Committers and Enders are decoupled from coordinators through mutually
    # independent decoupling". Committers read vote, query (inquiries, ours) and what they
    # derive; enders read ack, acks, nacks; nparts is counted from the constant participant.
    # Each keeps its own log (commit_log, end_log), so neither reads what the other derives.
    committers, enders = rules_for(two_pc, *COMMITTERS), rules_for(two_pc, *ENDERS)
    assert mutual_independence(two_pc, committers, enders).independent
    for part in (committers, enders):
        assert "mutually independent" in decoupling(two_pc, "coordinator", part).applicable
    parts = {d.rules for d in decouplings(two_pc, "coordinator") if d.found_by == "independent part"}
    assert parts == {tuple(rules_for(two_pc, *names)) for names in (VOTE_REQUESTERS, COMMITTERS, ENDERS)}


def test_two_pc_participants_split_into_voters_and_ackers(two_pc):
    # Paper 5.2: "Each participant is mutually independently decoupled into Voters and
    # Ackers": voters read prepare (and the constant refuse), ackers read commit and abort.
    voters = [r.index for r in two_pc.rules if r.component == "participant" and not r.persistence
              and any(a.name == "prepare" for a in r.positive_atoms)]
    ackers = [r.index for r in two_pc.rules if r.component == "participant" and not r.persistence
              and any(a.name in ("commit", "abort") for a in r.positive_atoms)]
    assert len(voters) == 4 and len(ackers) == 3
    assert mutual_independence(two_pc, voters, ackers).independent
    assert "mutually independent" in decoupling(two_pc, "participant", ackers).applicable
