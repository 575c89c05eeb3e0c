"""The scaling paper's partitioning microbenchmarks (section 5.4, the artifact's
partitioning_cohashing and partitioning_dependencies), written as programs of the
dialect in examples/microbenchmarks/: `rewrite --auto replica` partitions the replica
and routes the leader's send by the key, as the artifact's auto_ versions do (the
leader is outside the scope, but routing a sender is what partitioning does); the
client's rule never changes, so a component that gets the client's requests is not
partitioned. `--partition replica:N:KEY` keys the co-hashing replica by the request
id, as the artifact does, or by its payload, the policy's own choice; `explain` lists
both (and the addresses); the dependencies replica has one key, the hash of the
payload, and any other is refused (one line, exit 2): routed by the id by hand, the
program answers differently. Every output is `equiv`-equal to its base over 20 seeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from frontend_helpers import exit_code

from sparkdedalus import Program
from sparkdedalus.analysis.partition_keys import valid_keys
from sparkdedalus.rewrite.scope import clients
from sparkdedalus.shell.cli import main

MICRO = Path(__file__).resolve().parent.parent / "examples" / "microbenchmarks"
COHASHING, DEPENDENCIES = str(MICRO / "partitioning_cohashing.ded"), str(MICRO / "partitioning_dependencies.ded")
# the leader's send as the artifact's auto_partitioning_dependencies routes it,
# `voteToReplica@(start + (vid % n))` with vid the hash of the payload: here strlen is
# the hash (so that "ab" and "cd" collide), then the partition is pmod(hash(key), 2)
ROUTED_BY_HASH = ('voteToReplica(R2, L, C, Id, V)@async :- request(L, C, Id, V), replicas(L, R), strlen(V, K2), '
                  'hash(K2, H2), P2 == (H2 % 2 + 2) % 2, tostring(P2, S2), R2 == R + "/p" + S2;')
CLIENT_RULE = "request(L, C, Id, V)@async :- send(C, L, Id, V);"


def _notes(text: str) -> list:
    return [line.split("sparkdedalus rewrite: ", 1)[1] for line in text.splitlines() if "sparkdedalus rewrite: " in line]


def _rules(text: str) -> list:
    return [line.strip() for line in text.splitlines() if ":-" in line and not line.startswith("//")]


def _auto(path: str, components: str, tmp_path, capsys) -> str:
    out = str(tmp_path / "auto.ded")
    assert main(["rewrite", path, "--auto", components, "--partitions", "2", "--out", out]) == 0
    capsys.readouterr()
    return Path(out).read_text()


def test_auto_partitions_the_dependencies_replica_and_routes_the_leader_by_the_hash(tmp_path, capsys):
    text = _auto(DEPENDENCIES, "replica", tmp_path, capsys)
    # the replica stays whole (nothing reads the client's requests) and is partitioned by
    # the hash: the request by strlen(payload), storage and collisions by their hash column
    assert _notes(text) == ["replica on 2 partitions (dependencies): voteToReplica by strlen(payload), "
                            "storage by hash, collisions by hash"]
    assert ROUTED_BY_HASH in _rules(text) and CLIENT_RULE in _rules(text)
    assert Program.parse(text).homes == ("/p0", "/p1")
    assert main(["equiv", DEPENDENCIES, str(tmp_path / "auto.ded"), "--ticks", "30", "--seeds", "20",
                 "--observe", "reply,storage,collisions"]) == 0


def test_auto_partitions_the_cohashing_replica_and_routes_the_leader(tmp_path, capsys):
    text = _auto(COHASHING, "replica", tmp_path, capsys)
    notes = _notes(text)
    assert not [n for n in notes if "not partitioned" in n], notes
    assert [n for n in notes if n.startswith("replica on 2 partitions (co-hashing): voteToReplica by ")], notes
    (send,) = [r for r in _rules(text) if r.startswith("voteToReplica(")]
    assert "P2 == (H2 % 2 + 2) % 2" in send and CLIENT_RULE in _rules(text)
    assert main(["equiv", COHASHING, str(tmp_path / "auto.ded"), "--ticks", "30", "--seeds", "20"]) == 0


def test_a_component_that_gets_the_clients_requests_is_not_partitioned(tmp_path, capsys):
    # the client sends its requests from events (send, given at ticks 1, 2, 4): the
    # paper leaves it outside every rewrite, so the leader cannot be partitioned
    assert clients(Program.from_files(COHASHING)) == {"client"}
    text = _auto(COHASHING, "leader", tmp_path, capsys)
    (refused,) = [n for n in _notes(text) if n.startswith("leader not partitioned")]
    assert refused.startswith(f"leader not partitioned: it would rewrite the rule '{CLIENT_RULE}' of the client "
                              f"'client', outside the scope (leader"), refused
    assert CLIENT_RULE in _rules(text)


@pytest.mark.parametrize("source, expected", [
    # events read by a send: a client; a closed-loop client reads its own facts at a time @T
    ('component c { q(L, X)@async :- go(C, L, X); }\ngo("c", "k", 1)@1;', {"c"}),
    ('component c { q(L, K)@async :- client(C, L, K)@T, T == 1; }\nclient("c", "k", 1);', {"c"}),
    # a send of what it received, or of constant facts only (a heartbeat): no client
    ('component k { a(D, X)@async :- q(L, X), to(L, D); }\ncomponent h { hb(P, L)@async :- peer(L, P); }\n'
     'peer("h", "k");', set()),
])
def test_clients_are_the_components_that_send_requests_of_their_own(source, expected):
    assert clients(Program.parse(source)) == expected


def test_the_valid_keys_are_listed_by_hand():
    # co-hashing: the replica joins nothing; storage(R, V), read by nothing, stays where its
    # request is: every attribute of the request keys it, the payload first (the policy's
    # own: keyed like the storage it derives), the addresses last. Dependencies: the
    # request meets the stored payloads on strlen(payload) = their hash column, only
    cohashing, dependencies = Program.from_files(COHASHING), Program.from_files(DEPENDENCIES)
    assert [str(k) for k in valid_keys(cohashing, "replica")] == [
        "voteToReplica(payload)", "voteToReplica(id)", "voteToReplica(leader)", "voteToReplica(client)"]
    assert [str(k) for k in valid_keys(dependencies, "replica")] == ["voteToReplica(strlen(payload))"]


def test_explain_lists_the_valid_keys(capsys):
    assert main(["explain", COHASHING, "--component", "replica"]) == 0
    assert ("      valid keys (--partition replica:N:KEY): voteToReplica(payload), voteToReplica(id), "
            "voteToReplica(leader), voteToReplica(client)") in capsys.readouterr().out.splitlines()
    assert main(["explain", DEPENDENCIES, "--component", "replica", "--format", "json"]) == 0
    (component,) = json.loads(capsys.readouterr().out)["components"]
    assert component["partition_keys"] == [{"relation": "voteToReplica", "column": 4, "name": "payload",
                                            "via": ["strlen"], "key": "voteToReplica(strlen(payload))"}]


@pytest.mark.parametrize("key, hashed", [("voteToReplica(id)", "Id"), ("voteToReplica(payload)", "V")])
def test_partition_by_a_chosen_key_is_equivalent(key, hashed, tmp_path, capsys):
    # the artifact's auto_partitioning_cohashing sends to `start + (id % n)`: by the id
    out = str(tmp_path / "keyed.ded")
    assert main(["rewrite", COHASHING, "--partition", f"replica:4:{key}", "--out", out]) == 0
    text = Path(out).read_text()
    assert _notes(text) == [f"replica on 4 partitions (co-hashing): voteToReplica by {key[14:-1]}, storage by payload"]
    (send,) = [r for r in _rules(text) if r.startswith("voteToReplica(")]
    assert f"hash({hashed}, H2), P2 == (H2 % 4 + 4) % 4" in send
    capsys.readouterr()
    assert main(["equiv", COHASHING, out, "--ticks", "30", "--seeds", "20", "--observe", "reply,storage"]) == 0


def test_a_key_that_splits_a_collision_is_refused_and_would_answer_otherwise(tmp_path, capsys):
    # "ab" (id 1) and "cd" (id 3) collide; on 4 partitions the ids go to partitions 0 and 2,
    # their hash (strlen 2) to 1: keyed by the id, the replica holding "cd" has not stored
    # "ab" and acknowledges request 3 with "cd" where the base answers "ab"
    code = exit_code(["rewrite", DEPENDENCIES, "--partition", "replica:4:voteToReplica(id)"])
    err = capsys.readouterr().err
    assert (code, len(err.splitlines())) == (2, 1), err
    assert "voteToReplica(id) cannot key replica: " in err and \
        "here voteToReplica and storage share no key equal to voteToReplica(id) even through dependencies" in err
    good, bad = tmp_path / "good.ded", tmp_path / "bad.ded"
    assert main(["rewrite", DEPENDENCIES, "--partition", "replica:4", "--out", str(good)]) == 0
    text = good.read_text()
    assert "strlen(V, K2), hash(K2, H2), P2 == (H2 % 4 + 4) % 4" in text
    bad.write_text(text.replace("strlen(V, K2), hash(K2, H2), P2", "hash(Id, H2), P2"))
    capsys.readouterr()
    assert main(["equiv", DEPENDENCIES, str(good), "--ticks", "30", "--seeds", "20"]) == 0
    assert main(["equiv", DEPENDENCIES, str(bad), "--ticks", "30", "--seeds", "20"]) == 1
    assert '"cd"' in capsys.readouterr().out


@pytest.mark.parametrize("key, message", [
    ("storage(payload)", "storage(payload) cannot key replica: "),  # the storage meets requests on the hash
    ("myID(c1)", "myID(c1) cannot key replica: myID is known at every partition: it needs no key"),
    ("request(id)", "request(id) cannot key replica: component 'replica' does not hold request"),
    ("voteToReplica(client, id)", "the partitioning hashes one attribute, not 2"),
    ("voteToReplica(loc)", "the location is never a key"),
    ("voteToReplica(nope)", "voteToReplica has no attribute 'nope' (its attributes: leader, client, id, payload)"),
    ("voteToReplica(hash(payload))", "no rule joins on hash(X) of an attribute even through dependencies"),
    ("voteToReplica", "a key is RELATION(ATTRIBUTE), like request(id), not 'voteToReplica'"),
])
def test_an_invalid_key_is_one_line_exit_2(key, message, capsys):
    code = exit_code(["rewrite", DEPENDENCIES, "--partition", f"replica:2:{key}"])
    err = capsys.readouterr().err
    assert (code, len(err.splitlines())) == (2, 1) and f"--partition replica:2:{key}: " in err, err
    assert message in err, err
