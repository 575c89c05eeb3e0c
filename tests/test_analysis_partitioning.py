"""Distribution policies (analysis/partitioning.py), checked by hand against the
scaling paper's sections 4.1-4.3, B.1-B.3 and 5.2. A key `via(column)` is written
as `keys()` shows it: `"c2"`, `"hash(val)"`."""

import json

import pytest

from sparkdedalus import Program
from sparkdedalus.analysis.partitioning import distribution_policy

RUNNING = "examples/scaling_running_example.ded"

# The storage component of the paper's Listing 2, as its text describes it
# (sections 2.2-2.4): hashset holds (hash, value); line 3 is quoted verbatim:
# collisions(val1, val2) :- toStorage(val1, leaderSig), hash(val1, hash), hashset(hash, val2).
PAPER_STORAGE = """
.decl toStorage(loc: string, val: string, leaderSig: string)
.decl hashset(loc: string, hash: long, val: string)
.decl collisions(loc: string, val1: string, val2: string)
.decl numCollisions(loc: string, val: string, n: int)
component storage {
  .persist hashset
  hashset(L, H, V) :- toStorage(L, V, LSig), sign(V, S), LSig == S, hash(V, H);
  collisions(L, V1, V2) :- toStorage(L, V1, LSig), hash(V1, H), hashset(L, H, V2);
  numCollisions(L, V, count<V2>) :- collisions(L, V, V2);
  fromStorage(Ld, L, V, Cnt, Sig)@async :- numCollisions(L, V, Cnt), toStorage(L, V, LSig), sign(V, Sig), leader(L, Ld);
}
leader("s1", "l");
toStorage("s1", "x", "sig")@1;
"""


def rules_where(program, test):
    return [r.index for r in program.rules if not r.persistence and test(r)]


def reads(*names):
    return lambda r: any(a.name in names for a in r.positive_atoms + r.negated_atoms)


def test_paper_storage_partitions_by_the_hash_through_its_co_partition_dependency():
    # 4.2: "Listing 2 cannot be partitioned with co-hashing because toStorage does not
    # share keys with hashset in Line 3"; with the FD val -> hash of hash(V, H), every
    # relation is partitioned "by the attributes corresponding the repeated variable
    # hashed" (Figure 6): hashset by its hash, the others by hash(their value).
    program = Program.parse(PAPER_STORAGE, "storage.ded")
    policy = distribution_policy(program, "storage")
    assert policy.method == "dependencies" and policy.partitioned
    assert policy.keys() == {"hashset": "hash", "toStorage": "hash(val)", "collisions": "hash(val1)",
                             "numCollisions": "hash(val)"}
    assert str(policy.reasons[0]) == "storage.ded:9:3: hashset and toStorage share no key (co-hashing, 4.1)"
    assert policy.static == ("leader",)  # EDB: every partition has it
    assert policy.replicate == ()
    to_storage = next(rp for rp in policy.relations if rp.relation == "toStorage")
    assert (to_storage.column, to_storage.name, to_storage.via) == (1, "val", ("hash",))


def test_running_example_storage_keys_collisions_by_id_so_only_partial_partitioning_fits():
    # This repository's storage keys collisions and numCollisions by the message Id,
    # not by the value (lines 68-69): collisions(N, Id, Id2) :- valid(N, _, Id, V),
    # hash(V, H), hashset(N, H, Id2). valid and hashset share no key (4.1); through
    # hash they meet on H, but neither Id nor Id2 is a function of H (nothing makes Id
    # determine V), so the head collisions cannot be keyed with them (4.2). Replicating
    # toStorage alone or valid (with toStorage) still leaves rule 68 / rule 69 in
    # conflict (hashset must be keyed by H for valid and by Id2 for collisions, which
    # rule 69 keys by Id); replicating hashset, which needs valid and toStorage
    # (its sources), leaves collisions and numCollisions, keyed by Id (4.3).
    program = Program.from_files(RUNNING)
    policy = distribution_policy(program, "storage")
    assert [str(r) for r in policy.reasons[:2]] == [
        f"{RUNNING}:68:3: hashset and valid share no key (co-hashing, 4.1)",
        f"{RUNNING}:68:3: collisions, hashset, valid share no key even through dependencies"]
    assert policy.method == "partial"
    assert policy.replicate == ("hashset", "toStorage", "valid")
    assert policy.broadcast == ("toStorage",)  # the input feeding them goes to every partition
    assert policy.keys() == {"collisions": "c1", "numCollisions": "c1"}
    assert policy.static == ("preloaded",)


def test_running_example_leader_partitions_by_id():
    # 4.1: acks are "always joined with other IDB relations using the same attribute";
    # here that is the request Id (acks' column 2): numAcks groups by Id, inconsistent
    # self-joins acks on Id, certified joins numAcks, acks, inconsistent on Id.
    # numStorage counts the static storageNode: known on every partition.
    program = Program.from_files(RUNNING)
    policy = distribution_policy(program, "leader")
    assert policy.method == "co-hashing"
    keys = policy.keys()
    assert keys["acks"] == "c2" and keys["fromStorage"] == "c2" and keys["request"] == "id"
    assert {keys[r] for r in ("numAcks", "inconsistent", "certified", "origin", "reported", "signed")} == {"c1"}
    assert policy.static == ("numStorage", "storageNode")


def test_voting_broadcasters_and_collectors_partition_by_ballot():
    # 5.2 (ScalableVoting): broadcasters and collectors are "partitioned with co-hashing",
    # each handling a subset of the requests. Broadcaster: line 45, request(L, C, B) keyed
    # by B (C is the client's address, a poor key). Collectors (the leader's other rules):
    # vote(L, P, B, V) and every relation they derive are keyed by the ballot B; nparts
    # counts the static participant relation.
    program = Program.from_files("examples/voting.ded")
    broadcaster = distribution_policy(program, "broadcaster", rules_where(program, lambda r: r.head.name == "ballot"))
    assert broadcaster.method == "co-hashing" and broadcaster.keys() == {"request": "c2"}
    collector = distribution_policy(program, "collector", rules_where(
        program, lambda r: r.component == "main" and r.head.name not in ("request", "ballot", "vote", "voted")))
    assert collector.method == "co-hashing"
    assert collector.keys() == {"request": "c2", "vote": "c2", **{r: "c1" for r in (
        "requester", "open", "votes", "replied", "nvotes", "complete", "waiting", "anyno")}}
    assert collector.static == ("nparts", "participant")


def test_voting_participants_replicate_ready():
    # The example's participants (lines 48-49) read ready(P), which has no attribute
    # besides its location: it shares no key with ballot, so no policy keys it. It is
    # derived by nothing but its persistence: replicating it (and broadcasting its
    # input) leaves ballot and voted keyed by the ballot (4.3). The paper's voting
    # participants have no such flag and partition by co-hashing.
    program = Program.from_files("examples/voting.ded")
    policy = distribution_policy(program, "participant", rules_where(program, reads("ballot")))
    assert policy.method == "partial"
    assert str(policy.reasons[0]) == \
        "examples/voting.ded:36:10: ready has no attribute besides its location to partition by"
    assert policy.replicate == ("ready",) and policy.broadcast == ("ready",)
    assert policy.keys() == {"ballot": "c2", "voted": "c1"}


def test_two_phase_commit_components_partition_by_transaction():
    # 5.2 (Scalable2PC): vote requesters, committers, enders, and each participant's
    # voters and ackers "can be partitioned with co-hashing": every relation by its
    # transaction id X (in prepare/vote/commit/abort/ack it follows two addresses).
    program = Program.from_files("examples/two_phase_commit.ded")
    parts = {
        "vote requester": (lambda r: r.head.name == "prepare", {"begin": "c1"}),
        "committer": (lambda r: r.head.name in ("yes", "nyes", "decide_commit", "commit", "sent_commit")
                      or r.head.name == "coord_log" and r.head.args[2].value == "commit",
                      {"vote": "c2", "yes": "c1", "nyes": "c1", "decide_commit": "c1", "coord_log": "c1",
                       "sent_commit": "c1"}),
        "ender": (lambda r: r.head.name in ("acks", "nacks") or r.head.name == "coord_log" and
                  r.head.args[2].value == "end", {"ack": "c2", "acks": "c1", "nacks": "c1", "coord_log": "c1"}),
        "voter": (reads("prepare"), {"prepare": "c2", "part_log": "c1"}),
        "acker": (reads("commit", "abort"), {"commit": "c2", "abort": "c2", "part_log": "c1"}),
    }
    for name, (test, keys) in parts.items():
        policy = distribution_policy(program, name, rules_where(program, test))
        assert (name, policy.method, policy.keys()) == (name, "co-hashing", keys)


def test_negation_needs_the_key_negative():
    # 4.1 (c): an antijoin shares keys; notin ban(L, _) binds no key of ban, so ban
    # shares none with req nor with the head ok (the pair named first, alphabetically).
    # ban is rarely written: replicating it lets req and ok partition.
    program = Program.parse("component c {\n  ok(L, X) :- req(L, X), notin ban(L, _);\n"
                            "  out(L, X)@async :- ok(L, X); }", "neg.ded")
    policy = distribution_policy(program, "c")
    assert str(policy.reasons[0]) == "neg.ded:2:3: ban and ok share no key (co-hashing, 4.1)"
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
    program = Program.parse(PAPER_STORAGE, "storage.ded")
    data = json.loads(json.dumps(distribution_policy(program, "storage").to_json()))
    assert data["method"] == "dependencies" and data["partitioned"] is True
    assert {k: (v["column"], v["name"], v["via"]) for k, v in data["relations"].items()} == {
        "toStorage": (1, "val", ["hash"]), "hashset": (1, "hash", []), "collisions": (1, "val1", ["hash"]),
        "numCollisions": (1, "val", ["hash"])}
    assert data["reasons"][0] == {"message": "hashset and toStorage share no key (co-hashing, 4.1)",
                                  "where": "storage.ded:9:3"}
    assert data["replicate"] == [] and data["static"] == ["leader"]
