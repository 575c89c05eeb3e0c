"""Distribution policies (analysis/partitioning.py), checked by hand against the
scaling paper's sections 4.1-4.3, B.1-B.3 and 5.2. A key `via(column)` is written
as `keys()` shows it: `"c2"`, `"hash(val)"`."""

import json

import pytest

from sparkdedalus import Program
from sparkdedalus.analysis.partitioning import distribution_policy
from sparkdedalus.shell.cli import main
from test_rewrite_partial_partition import PAXOS

RUNNING = "examples/scaling_running_example.ded"
VOTING = "examples/voting.ded"
TWO_PC = "examples/two_phase_commit.ded"


def rules_where(program, test):
    return [r.index for r in program.rules if not r.persistence and test(r)]


def heads(*names):
    return lambda r: r.head.name in names


def reads(*names):
    return lambda r: any(a.name in names for a in r.positive_atoms + r.negated_atoms)


def test_running_example_storage_partitions_by_the_hash_through_its_co_partition_dependency():
    # 4.2: the storage component "cannot be partitioned with co-hashing because toStorage
    # does not share keys with hashset in Line 3" (here valid, the signature-checked
    # toStorage, in the collisions rule: valid(N, _, _, V), hash(V, H), hashset(N, H, V2));
    # with the FD val -> hash of hash(V, H), every relation is partitioned "by the
    # attributes corresponding the repeated variable hashed" (Figure 6): hashset by its
    # hash, toStorage, valid, collisions and numCollisions by hash(their value). collider
    # (untimed facts) is static: every partition has it.
    program = Program.from_files(RUNNING)
    policy = distribution_policy(program, "storage")
    assert policy.method == "dependencies" and policy.partitioned
    assert policy.keys() == {"hashset": "hash", "toStorage": "hash(v)", "valid": "hash(c3)",
                             "collisions": "hash(val1)", "numCollisions": "hash(val)"}
    collisions_rule = next(r for r in program.rules if r.head.name == "collisions")
    assert f"{collisions_rule.pos}: hashset and valid share no key (co-hashing, 4.1)" in map(str, policy.reasons)
    assert policy.static == ("collider",)
    assert policy.replicate == () and policy.broadcast == ()
    to_storage = next(rp for rp in policy.relations if rp.relation == "toStorage")
    assert (to_storage.column, to_storage.name, to_storage.via) == (3, "v", ("hash",))


def test_running_example_leader_partitions_by_id():
    # 4.1: acks are "always joined with other IDB relations using the same attribute";
    # here that is the request Id (acks' column 2): numAcks groups by Id (and count),
    # the inconsistency check self-joins acks on Id, certified joins numAcks and acks on
    # Id, certReply negates reported on Id; signed and request carry the Id too.
    # numStorage counts the static storageNode; client is static too.
    program = Program.from_files(RUNNING)
    policy = distribution_policy(program, "leader")
    assert policy.method == "co-hashing"
    assert policy.keys() == {"request": "id", "acks": "c2", "fromStorage": "c2",
                             **{r: "c1" for r in ("signed", "numAcks", "certified", "reported")}}
    assert policy.static == ("client", "numStorage", "storageNode")


def test_voting_broadcasters_and_collectors_partition_by_ballot():
    # 5.2 (ScalableVoting): broadcasters and collectors are "partitioned with co-hashing",
    # each handling a subset of the requests. Broadcaster: ballot's rule, request(L, C, B)
    # keyed by B (C is the client's address, a poor key). Collectors (the leader's other
    # rules): vote(L, P, C, B, V) and every relation they derive are keyed by the ballot B;
    # nparts counts the static participant relation.
    program = Program.from_files(VOTING)
    broadcaster = distribution_policy(program, "broadcaster", rules_where(program, heads("ballot")))
    assert broadcaster.method == "co-hashing" and broadcaster.keys() == {"request": "c2"}
    collector = distribution_policy(program, "collector", rules_where(
        program, lambda r: r.component == "leader" and r.head.name != "ballot"))
    assert collector.method == "co-hashing"
    assert collector.keys() == {"vote": "c3", "votes": "c2", "complete": "c2", **{r: "c1" for r in (
        "nvotes", "waiting", "anyno", "replied")}}
    assert collector.static == ("nparts", "participant")
    # the whole leader partitions by the ballot as well (the paper keeps one leader only
    # because the client would have to know the partitions)
    assert distribution_policy(program, "leader").keys() == {"request": "c2", **collector.keys()}


def test_voting_participants_partition_by_ballot():
    # 5.2: "All components except the leader are partitioned with co-hashing": the
    # participant's ballot(P, L, C, B), opinion(P, B, V) and voted(P, B) meet on B.
    program = Program.from_files(VOTING)
    policy = distribution_policy(program, "participant")
    assert policy.method == "co-hashing"
    assert policy.keys() == {"ballot": "c3", "opinion": "c1", "voted": "c1"}


def test_two_phase_commit_components_partition_by_transaction():
    # 5.2 (Scalable2PC): vote requesters, committers, enders, and each participant's
    # voters and ackers "can be partitioned with co-hashing": every relation by its
    # transaction id X (in prepare/vote/commit/abort/ack/query it follows two addresses).
    # The committers here also answer inquiries: query(C, P, X) joins commit_log on X.
    program = Program.from_files(TWO_PC)
    parts = {
        "vote requester": (heads("prepare"), {"begin": "c1"}),
        "committer": (heads("yes", "nyes", "decide_commit", "commit_log", "commit", "sent_commit", "abort",
                            "answer"),
                      {"vote": "c2", "query": "c2", **{r: "c1" for r in (
                          "yes", "nyes", "decide_commit", "commit_log", "sent_commit")}}),
        "ender": (heads("acks", "nacks", "end_log"), {"ack": "c2", "acks": "c1", "nacks": "c1", "end_log": "c1"}),
        "voter": (reads("prepare"), {"prepare": "c2", "part_log": "c1"}),
        "acker": (reads("commit", "abort"), {"commit": "c2", "abort": "c2", "part_log": "c1"}),
    }
    for name, (test, keys) in parts.items():
        policy = distribution_policy(program, name, rules_where(program, test))
        assert (name, policy.method, policy.keys()) == (name, "co-hashing", keys)


def test_an_address_a_rule_computes_is_the_last_choice_of_key():
    # what the rewrites write: a relay sends to `D == C + "/part"`, a reply goes to the home
    # of a partition's address: C and C2 hold nodes, so q and t are keyed by the value X, Y
    program = Program.parse('component k { r(D, X)@async :- q(L, C, X), D == C + "/part";\n'
                            '  s(E, Y)@async :- t(L, C2, Y), home(C2, E); }')
    assert distribution_policy(program, "k").keys() == {"q": "c2", "t": "c2"}


def test_negation_needs_the_key_negative():
    # 4.1 (c): an antijoin shares keys; notin ban(L, _) binds no key of ban, so ban
    # shares none with req (the head ok, read alone, stays where it is derived: no
    # constraint). ban is rarely written: replicating it lets req and ok partition.
    program = Program.parse("component c {\n  ok(L, X) :- req(L, X), notin ban(L, _);\n"
                            "  out(L, X)@async :- ok(L, X); }", "neg.ded")
    policy = distribution_policy(program, "c")
    assert str(policy.reasons[0]) == "neg.ded:2:3: ban and req share no key (co-hashing, 4.1)"
    assert policy.method == "partial" and policy.replicate == ("ban",) and policy.broadcast == ("ban",)
    assert policy.keys() == {"ok": "c1", "req": "c1"}


def test_grouping_needs_the_key_and_partial_partitioning_applies():
    # 4.1 (b): hit groups by X, but seen meets probe on Y: no key serves both (and no
    # function relates X and Y); the first pair sharing no key is hit (X) and probe (Y).
    # Replicating the input probe (4.3) leaves seen and hit keyed by X; replicating
    # `in` instead would not help (rule 3 still conflicts).
    program = Program.parse("component c {\n  seen(L, X, Y) :- in(L, X, Y);\n"
                            "  hit(L, X, count<Y>) :- seen(L, X, Y), probe(L, Y);\n"
                            "  report(L, X, N)@async :- hit(L, X, N); }", "grp.ded")
    policy = distribution_policy(program, "c")
    assert str(policy.reasons[0]) == "grp.ded:3:3: hit and probe share no key (co-hashing, 4.1)"
    assert str(policy.reasons[1]) == "grp.ded:3:3: hit and probe share no key even through dependencies"
    assert policy.method == "partial" and policy.replicate == ("probe",)
    assert policy.keys() == {"seen": "c1", "hit": "c1", "in": "c1"}
    assert str(policy.reasons[3]) == ("inputs probe must reach every partition through a coordinator "
                                      "that orders them (B.3)")


def test_two_rules_needing_different_keys_negative():
    # 4.1: "a relation might share keys with another relation on attributes in one rule
    # and ... in another": a joins b on its first attribute (line 2) and c on its second
    # (line 3). Each rule alone is fine; together they conflict.
    program = Program.parse("component k {\n  x(L, V)@async :- a(L, V, W), b(L, V);\n"
                            "  y(L, W)@async :- a(L, V, W), c(L, W); }", "two.ded")
    policy = distribution_policy(program, "k")
    assert [str(r) for r in policy.reasons[:2]] == [
        "two.ded:2:3: these rules need different keys of a (co-hashing, 4.1)",
        "two.ded:3:3: these rules need different keys of a (co-hashing, 4.1)"]
    assert policy.method == "partial" and len(policy.replicate) == 1


def test_unknown_component():
    with pytest.raises(ValueError, match="no component 'nope'"):
        distribution_policy(Program.from_files(RUNNING), "nope")


def test_no_policy_at_all_negative():
    # A self-join on different attributes: in(L, X, Y), in(L, Y, Z). Keying in by its
    # first attribute puts the two occurrences on X and Y, by its second on Y and Z:
    # no key, and replicating in would leave nothing to partition.
    program = Program.parse("component z {\n  o(L, X, Z)@async :- in(L, X, Y), in(L, Y, Z); }", "self.ded")
    policy = distribution_policy(program, "z")
    assert policy.method == "none" and not policy.partitioned
    assert str(policy.reasons[0]) == ("self.ded:2:3: no attribute of in is bound to a variable in every rule "
                                      "that joins it (co-hashing, 4.1)")
    assert str(policy.reasons[-1]) == "no set of replicated relations leaves the rest partitionable"
    data = json.loads(json.dumps(policy.to_json()))
    assert data["partitioned"] is False and data["relations"] == {"in": None}


def test_json_of_a_policy():
    program = Program.from_files(RUNNING)
    data = json.loads(json.dumps(distribution_policy(program, "storage").to_json()))
    assert data["method"] == "dependencies" and data["partitioned"] is True
    assert {k: (v["column"], v["name"], v["via"]) for k, v in data["relations"].items()} == {
        "toStorage": (3, "v", ["hash"]), "valid": (3, "c3", ["hash"]), "hashset": (1, "hash", []),
        "collisions": (1, "val1", ["hash"]), "numCollisions": (1, "val", ["hash"])}
    collisions_rule = next(r for r in program.rules if r.head.name == "collisions")
    assert {"message": "hashset and valid share no key (co-hashing, 4.1)",
            "where": str(collisions_rule.pos)} in data["reasons"]
    assert data["replicate"] == [] and data["static"] == ["collider"]


# A.4 in partial partitioning (4.3: "Precondition: C1 is independent of C2 and both behave
# like state machines"). The acceptor of ScalablePaxos (5.2; PAXOS: lines 9-17): the highest
# ballot replicated, the log partitioned by slot. Its ballots are persisted and only the p1a
# input adds to them (A.4.1, no-change: "explicit persist" and "change only on inputs");
# maxBallot reads only them (implicit persist); p1b and p2b are sent at the tick their input
# arrives (existence).
A4 = "both parts, the rules deriving the replicated relations and the others, behave like state machines (A.4)"


def test_partial_partitioning_of_the_paxos_acceptor_checks_the_state_machines():
    policy = distribution_policy(Program.parse(PAXOS, "acc.ded"), "acceptor")
    assert policy.method == "partial" and policy.replicate == ("ballots", "maxBallot", "p1a")
    assert str(policy.verdict[-1]) == A4 and str(policy.reasons[-1]) == A4


def test_a_ballot_carried_by_a_next_rule_is_no_state_machine_negative():
    # the highest ballot kept by `held(A, B)@next :- ballots(A, B)` instead of .persist (as
    # examples/protocols/paxos.ded once kept promised_before): A.4.1 (1) allows no inductive rule
    # but the persistence rule, so held has neither dependency, nor ballots, which reads it;
    # no other set of replicated relations partitions the rest: no policy (the reason names
    # the first rule for ballots, line 11 once the .persist line 10 is gone)
    text = PAXOS.replace("    .persist ballots\n", "").replace(
        "    ballots(A, B) :- p1a(A, P, B);\n",
        "    ballots(A, B) :- p1a(A, P, B);\n    ballots(A, B) :- held(A, B);\n    held(A, B)@next :- ballots(A, B);\n")
    policy = distribution_policy(Program.parse(text, "held.ded"), "acceptor")
    assert policy.method == "none"
    assert [str(r) for r in policy.verdict][0] == (
        "held.ded:11:5: replicating ballots, held, maxBallot, p1a: the replicated part is not a state machine "
        "(A.4): ballots is derived by the rule for ballots (line 11) with neither an existence nor a no-change "
        "dependency on the inputs")


def test_a_partitioned_part_deriving_for_the_next_tick_is_no_state_machine_negative(capsys, tmp_path):
    # the acceptor remembers the slots it saw for the next tick (line 17): an output derived
    # for the next tick has no existence dependency (A.4.1 (1) "does not contain t' = t + 1"),
    # so the partitioned part is no state machine; explain shows the reason (not cut after
    # three), rewrite refuses
    text = PAXOS.replace("    p2b(P, A, S, B, M)@async :- p2a(A, P, S, B, V), maxBallot(A, M);\n",
                         "    p2b(P, A, S, B, M)@async :- p2a(A, P, S, B, V), maxBallot(A, M);\n"
                         "    seen(A, S)@next :- p2a(A, P, S, B, V);\n")
    policy = distribution_policy(Program.parse(text, "late.ded"), "acceptor")
    why = ("late.ded:17:5: replicating ballots, maxBallot, p1a: the partitioned part is not a state machine (A.4): "
           "output seen is derived for the next tick by the rule for seen (line 17)")
    assert policy.method == "none" and str(policy.verdict[0]) == why
    path = tmp_path / "late.ded"
    path.write_text(text)
    assert main(["explain", str(path)]) == 0
    assert why.replace("late.ded", str(path)) in capsys.readouterr().out
    assert main(["rewrite", str(path), "--partition", "acceptor:2"]) == 1
    assert "the partitioned part is not a state machine (A.4)" in capsys.readouterr().err
