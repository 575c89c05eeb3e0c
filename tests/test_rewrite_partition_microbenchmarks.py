"""The scaling paper's partitioning microbenchmarks (section 5.4, the artifact's
partitioning_cohashing and partitioning_dependencies), written as programs of the
dialect in examples/microbenchmarks/: `rewrite --auto replica` partitions the replica
and routes the leader's send by the key, as the artifact's auto_ versions do (the
leader is outside the scope, but routing a sender is what partitioning does); the
client's rule never changes, so a component that gets the client's requests is not
partitioned; every output is `equiv`-equal to its base over 20 seeds."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkdedalus import Program
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
    assert [n for n in notes if n.startswith("replica on 2 partitions (co-hashing): voteToReplica by id")], notes
    (send,) = [r for r in _rules(text) if r.startswith("voteToReplica(")]
    assert "hash(Id, H2), P2 == (H2 % 2 + 2) % 2" in send and CLIENT_RULE in _rules(text)
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
