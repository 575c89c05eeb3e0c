"""The decoupling analyses of the scaling paper (sections 2.4, 3.1-3.3 and
appendix A): component roles, independence, monotonicity, functional and
state-machine rule sets, asymmetric decoupling, decoupling candidates.
Expected verdicts are derived by hand from the paper and the example
programs; rules are named by their line in the source, reasons' positions by
the line and the column of the construct in the source text."""

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


def where(path, line, text, source=None):
    """`file:line:col` of the first `text` on `line` of the source file (or of `source`)."""
    source = Path(path).read_text() if source is None else source
    return f"{path}:{line}:{source.splitlines()[line - 1].index(text) + 1}"


def wheres(verdict):
    return {r.where for r in verdict.reasons}


def componentized(path, sections):
    """The example with its `// leader`-style sections wrapped in components:
    voting.ded and two_phase_commit.ded run every node kind in one component,
    the paper decouples a leader (coordinator) or participant component. The
    component line replaces the comment and the closing brace the blank line
    after the section, so line numbers stay those of the file."""
    out, inside = [], False
    for line in Path(path).read_text().splitlines():
        if line.strip() in sections:
            line, inside = f"component {sections[line.strip()]} {{", True
        elif inside and not line.strip():
            line, inside = "}", False
        out.append(line)
    return Program.parse("\n".join(out) + "\n", file=path)


@pytest.fixture(scope="module")
def running():
    return Program.from_files(RUNNING)


# ---------------------------------------------------------------- components (2.4)

def test_leader_references_inputs_outputs(running):
    # The leader's rules (lines 49-60) read request, signed, storageNode, fromStorage, acks,
    # numAcks, numStorage, inconsistent, certified, origin, reported. storageNode holds untimed
    # facts and numStorage is counted from it: constant, so no references (like the paper's EDB).
    # Inputs (referenced, not derived): request (from the client), fromStorage (from storage).
    # Outputs (derived, not read): toStorage, certReply, inconsistentReply.
    leader = {r.name: r for r in component_roles(running)}["leader"]
    assert leader.references == {"request", "signed", "fromStorage", "acks", "numAcks", "inconsistent",
                                  "certified", "origin", "reported"}
    assert leader.referenced_inputs == {"request", "fromStorage"}
    assert leader.outputs == {"toStorage", "certReply", "inconsistentReply"}
    assert leader.rules == tuple(at(running, *range(49, 61)))


def test_storage_references_as_in_the_paper(running):
    # Paper 2.4: storage references toStorage, hashset, collisions, numCollisions (ours also
    # valid, its signature check); toStorage is an input, fromStorage an output. preloaded
    # (untimed facts) is constant.
    storage = {r.name: r for r in component_roles(running)}["storage"]
    assert storage.references == {"toStorage", "valid", "hashset", "collisions", "numCollisions"}
    assert storage.referenced_inputs == {"toStorage"}
    assert storage.outputs == {"fromStorage"}


# ---------------------------------------------------------------- independence (3.1)

def test_sign_and_send_mutually_independent_of_certificates(running):
    # Paper 3.1: no dataflow between signing/sending (lines 50-51: read request, signed) and
    # the certificate rules (52 acks, 53 numAcks, 56 certified, 57 certReply, 59 reported:
    # read fromStorage, acks, numAcks, inconsistent, certified, origin, reported). Disjoint
    # references, and neither reads what the other derives.
    sign_send = at(running, 50, 51)
    certificates = at(running, 52, 53, 56, 57, 59)
    assert mutual_independence(running, sign_send, certificates).independent
    assert mutual_independence(running, certificates, sign_send).independent


def test_shared_input_breaks_mutual_but_not_one_way_independence(running):
    # origin (line 49) and signed (line 50) both read request, which neither derives: a
    # redirection can send it to one node only (3.1). One way, each is independent of the
    # other (the staying side may forward request).
    origin, signed = at(running, 49), at(running, 50)
    verdict = mutual_independence(running, origin, signed)
    assert not verdict.independent
    assert wheres(verdict) == {where(RUNNING, 50, "request")}
    assert "both read request" in verdict.reasons[0].message
    assert independence(running, origin, signed).independent


def test_reading_what_the_other_derives_is_dependence(running):
    # toStorage (line 51) reads signed, derived on line 50.
    verdict = independence(running, at(running, 51), at(running, 50))
    assert not verdict.independent
    assert wheres(verdict) == {where(RUNNING, 51, "signed")}
    assert verdict.to_json()["independent"] is False
    assert independence(running, at(running, 50), at(running, 51)).independent


# ---------------------------------------------------------------- monotonicity (3.2, A.2.1)

def test_inconsistency_rule_is_monotone(running):
    # Paper 3.2: acks are persisted (line 47), the rule (line 55) has no negation or
    # aggregation (!= is a comparison): monotone by the strict test.
    verdict = monotonicity(running, at(running, 55))
    assert (verdict.monotone, verdict.test) == (True, "strict")
    assert verdict.to_json()["monotone"] is True


def test_inconsistency_rule_decoupling_blocked_by_readers_of_inconsistent(running):
    # Unlike the paper's leader (where Line 8 only reports to the client), this example's
    # certified (line 56) negates inconsistent, and inconsistentReply (58) and reported (60)
    # read it: the staying rules are not independent of the rule split off, so monotonic
    # decoupling of line 55 alone does not apply (certified could certify before hearing back).
    candidate = decoupling(running, "leader", at(running, 55))
    (mono,) = [p for p in candidate.preconditions if p.rewrite == "monotonic"]
    assert not mono.applies
    assert wheres(mono) == {where(RUNNING, 56, "notin inconsistent"), where(RUNNING, 58, "inconsistent("),
                            where(RUNNING, 60, "inconsistent(")}


PAPER_LEADER = """\
component leader {
  .persist acks
  signed(L, Id, V, Sig) :- request(L, C, Id, V), sign(V, Sig);
  toStorage(N, L, Id, V, Sig)@async :- signed(L, Id, V, Sig), storageNode(L, N);
  acks(L, N, Id, V, Cnt) :- fromStorage(L, N, Id, V, Cnt);
  numAcks(L, Id, Cnt, count<N>) :- acks(L, N, Id, _, Cnt);
  certReply(C, L, Id, Cnt)@async :- numAcks(L, Id, Cnt, K), numStorage(L, K), client(L, C);
  inconsistentReply(C, L, Id)@async :- acks(L, _, Id, _, C1), acks(L, _, Id, _, C2), C1 != C2, client(L, C);
  numStorage(L, count<N>) :- storageNode(L, N);
}
storageNode("leader", "s1");
client("leader", "c");
request("leader", "c", 1, "x")@1;
fromStorage("leader", "s1", 1, "x", 1)@3;
"""


def test_inconsistency_rule_decouples_monotonically_in_the_papers_leader():
    # The paper's leader (Listing leader, lines 1-8; certificates grouped by count): nothing
    # reads the inconsistency rule's output, the rest reads nothing it derives, and it reads
    # only acks (persisted): monotonic decoupling applies (3.2, Figure 3).
    p = Program.parse(PAPER_LEADER, file="paper.ded")
    candidate = decoupling(p, "leader", at(p, 8))
    assert "monotonic" in candidate.applicable
    # the certificate rule compares count<N> by equality (= numStorage): not monotone
    verdict = monotonicity(p, at(p, 6, 7))
    assert not verdict.monotone
    assert wheres(verdict) == {where("paper.ded", 7, "numAcks(", PAPER_LEADER)}


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
    # Paper 3.3: signing (line 50) reads one IDB relation (request) and the function sign;
    # sending (line 51) reads signed and storageNode (constant EDB). No negation, no aggregation.
    assert functional(running, at(running, 50)).functional
    assert functional(running, at(running, 50, 51)).functional


def test_not_functional_with_two_idb_relations_or_aggregation(running):
    # line 55 joins acks with acks; line 53 aggregates count<N>.
    v = functional(running, at(running, 55))
    assert not v.functional and wheres(v) == {where(RUNNING, 55, "acks(L, _, Id, _, C2")}
    v = functional(running, at(running, 53))
    assert wheres(v) == {where(RUNNING, 53, "count<N>")}
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
    # signing and sending: downstream of signed; functional (3.3), not monotone (request is a
    # message), not mutually independent (origin reads request too).
    c = cands[tuple(at(running, 50, 51))]
    assert c.found_by == "downstream of signed"
    assert "functional" in c.applicable and "monotonic" not in c.applicable
    assert "mutually independent" not in c.applicable
    # sending alone (paper 3.3: line 2 on its own node): functional
    assert "functional" in cands[tuple(at(running, 51))].applicable
    assert [p.rewrite for p in c.preconditions] == list(REWRITES)


def test_unknown_component_or_foreign_rules(running):
    with pytest.raises(ValueError, match="no component 'nope'"):
        decouplings(running, "nope")
    with pytest.raises(ValueError, match="not rules of component"):
        decoupling(running, "leader", at(running, 65))


def test_candidate_json(running):
    (c,) = [c for c in decouplings(running, "leader") if c.rules == tuple(at(running, 51))]
    data = c.to_json()
    assert data["rules"] == [{"index": at(running, 51)[0], "head": "toStorage", "where": f"{RUNNING}:51:3"}]
    functional = data["preconditions"][2]
    assert (functional["rewrite"], functional["applies"]) == ("functional", True)
    assert all(r["where"] is None for r in functional["reasons"])
    assert data["preconditions"][0]["applies"] is False


@pytest.fixture(scope="module")
def voting():
    return componentized(VOTING, {"// client": "client", "// leader": "leader", "// participants": "participant"})


def test_voting_broadcasters_decouple_functionally(voting):
    # Paper 5.2: broadcasters (ballot, line 49: reads request and participant) are decoupled
    # from the leader by functional decoupling; nothing in the leader reads ballot.
    c = decoupling(voting, "leader", at(voting, 49))
    assert "functional" in c.applicable
    assert "downstream of ballot" in [d.found_by for d in decouplings(voting, "leader") if d.rules == c.rules]


def test_voting_collectors(voting):
    # Paper 5.2: collectors (votes, nvotes, complete, anyno, result, replied: lines 50, 51, 53,
    # 55-58; waiting, line 54, reads votes so goes with them) are mutually independent of the
    # broadcasters. Here, unlike in the paper, result (56, 57) joins requester and waiting (54)
    # reads open, both derived by the leader from request: they are not mutually independent
    # of the rest of the leader, and the reasons say so.
    collectors = at(voting, 50, 51, 53, 54, 55, 56, 57, 58)
    assert mutual_independence(voting, collectors, at(voting, 49)).independent
    c = decoupling(voting, "leader", collectors)
    assert "mutually independent" not in c.applicable
    mutual = c.preconditions[0]
    assert wheres(mutual) == {where(VOTING, 54, "open"), where(VOTING, 56, "requester"),
                              where(VOTING, 57, "requester")}


@pytest.fixture(scope="module")
def two_pc():
    return componentized(TWO_PC, {"// coordinator": "coordinator", "// participants": "participant"})


def test_two_pc_vote_requesters_decouple_functionally(two_pc):
    # Paper 5.2: vote requesters (prepare, line 39: reads begin and participant) are
    # functionally decoupled from the coordinator; nothing else reads begin, so here they are
    # even mutually independent (found as an independent part).
    c = decoupling(two_pc, "coordinator", at(two_pc, 39))
    assert {"functional", "mutually independent"} <= set(c.applicable)
    assert any(d.found_by == "independent part" and d.rules == c.rules for d in decouplings(two_pc, "coordinator"))


def test_two_pc_committers_and_enders(two_pc):
    # Paper 5.2: committers (yes, nyes, decide_commit, coord_log commit, commit, sent_commit,
    # abort: lines 40, 41, 43-47) and enders (acks, nacks, coord_log end: 48-50) are mutually
    # independent (nparts, line 42, is counted from the participant facts: constant).
    committers, enders = at(two_pc, 40, 41, 43, 44, 45, 46, 47), at(two_pc, 48, 49, 50)
    assert mutual_independence(two_pc, committers, enders).independent
    # The example adds inquiries: answer (lines 51, 52) reads coord_log, which enders and
    # committers derive, so neither splits off the coordinator by mutual independence.
    c = decoupling(two_pc, "coordinator", enders)
    assert "mutually independent" not in c.applicable
    assert wheres(c.preconditions[0]) == {where(TWO_PC, 51, "coord_log"), where(TWO_PC, 52, "notin coord_log")}


def test_two_pc_participants_split_into_voters_and_ackers(two_pc):
    # Paper 5.2: each participant is mutually independently decoupled into voters (lines
    # 55-58, read prepare) and ackers (59-60, read commit).
    ackers = at(two_pc, 59, 60)
    assert mutual_independence(two_pc, at(two_pc, 55, 56, 57, 58), ackers).independent
    assert "mutually independent" in decoupling(two_pc, "participant", ackers).applicable
