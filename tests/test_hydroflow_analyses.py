"""An imported Hydroflow program goes through the analyses and rewrites as its hand
translation does: `explain` says the same of both (up to file positions and the order
relations first appear in), `rewrite --auto` takes the same decisions, and the rewritten
programs answer the client at the same ticks on the reference evaluator."""

from __future__ import annotations

import os
import re

import pytest

from frontend_helpers import exit_code
from sparkdedalus import Program
from sparkdedalus.hydroflow import import_text
from sparkdedalus.reference.evaluator import run
from test_hydroflow_import import HYDROFLOW, PROTOCOLS, REPLY, roles_of

_POSITION = re.compile(r"\S+\.ded:\d+(:\d+)?:?|\(line \d+\)|line \d+")
_ARGUMENTS = re.compile(r"\(([^()]*)\)")


def normalised(text: str) -> list[str]:
    """Lines without file positions or variable names (an atom's arguments are
    their number, other names lower case), the parts of each list sorted."""
    lines = []
    for line in text.splitlines():
        line = _ARGUMENTS.sub(lambda m: f"/{m.group(1).count(',') + 1}", _POSITION.sub("", line))
        lines.append(" ".join(sorted(part.strip() for part in re.split(r"[,:]", line.lower()))))
    return sorted(lines)


def pair(name: str, tmp_path) -> tuple[str, str, str]:
    """The imported program's path, the hand translation's, and the facts'."""
    _, nodes, _ = PROTOCOLS[name]
    imported = tmp_path / f"{name}.ded"
    imported.write_text(import_text(roles_of(name), nodes), encoding="utf-8")
    return str(imported), os.path.join(HYDROFLOW, name, "hand.ded"), os.path.join(HYDROFLOW, name, "facts.ded")


def cli(capsys, argv: list) -> tuple[str, str]:
    assert exit_code(argv) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_explain_says_the_same(name, tmp_path, capsys):
    imported, hand, facts = pair(name, tmp_path)
    got, _ = cli(capsys, ["explain", imported, facts])
    want, _ = cli(capsys, ["explain", hand, facts])
    assert "decoupling candidates:" in got
    assert normalised(got) == normalised(want)


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_rewrite_auto_decides_the_same_and_answers_the_same(name, tmp_path, capsys):
    roles, _, ticks = PROTOCOLS[name]
    imported, hand, facts = pair(name, tmp_path)
    outputs = []
    for source in (imported, hand):
        out = str(tmp_path / f"auto_{os.path.basename(source)}")
        _, decisions = cli(capsys, ["rewrite", source, facts, "--auto", ",".join(roles), "--out", out])
        trace = run(Program.from_files(out), ticks + 3)
        outputs.append((normalised(decisions), [trace.relation(REPLY[name], t) for t in range(1, ticks + 4)]))
    assert outputs[0] == outputs[1]
    assert any(outputs[0][1])


#: a rewrite explain offers on each import, as on its hand translation
OFFERED = {"voting": "mutually independent", "two_phase_commit": "partitioning (co-hashing)",
           "paxos": "partitioning (partial)", "monotonic": "(downstream of numVotes): monotonic",
           "dependencies": "partitioning (dependencies): voteToReplica by c3 % 10, storage by c2, hashed by c2",
           "state_machine": "replicate: ballotToReplica, replica.ballots, replica.maxBallot",
           "functional": "{signed, voteToReplica} (independent part): mutually independent, functional",
           "cohashing": "partitioning (co-hashing): voteToReplica by c2, storage by c1, versions by c1",
           "monotonic_quorum": "(downstream of numAcks): monotonic",
           "dependencies_buckets": "partitioning (dependencies): toReplica by c3 / 10, seen by c2, bucketed by c2",
           "functional_digest": "{digest, fromReplica} (downstream of digest): functional",
           "state_machine_register": "{lastSeq, register, ackFromReplica} (downstream of lastSeq): state machine",
           "partial_rates": "partitioning (partial): orderToReplica by c2, orders by c2"}


@pytest.mark.parametrize("name", sorted(OFFERED))
def test_explain_offers_the_rewrite_of_its_kind(name, tmp_path, capsys):
    imported, _, facts = pair(name, tmp_path)
    text, _ = cli(capsys, ["explain", imported, facts])
    assert OFFERED[name] in text


@pytest.mark.parametrize("name, key", [("dependencies", "v % 10"), ("dependencies_buckets", "k / 10")])
def test_the_dependencies_replica_partitions_by_its_arithmetic_hash_as_the_base(name, key, tmp_path, capsys):
    # Hydroflow has no hash function: the replica's `v % 10` is the paper's strlen, the
    # partitioning key through its dependency; partitioned, the import answers as before
    imported, _, facts = pair(name, tmp_path)
    base, out = tmp_path / "base.ded", tmp_path / "partitioned.ded"
    base.write_text(open(imported, encoding="utf-8").read() + open(facts, encoding="utf-8").read())
    cli(capsys, ["rewrite", str(base), "--partition", "replica:4", "--out", str(out)])
    assert f"K2 == {key}, hash(K2, H2), P2 == (H2 % 4 + 4) % 4" in out.read_text()
    cli(capsys, ["equiv", str(base), str(out), "--ticks", "30", "--seeds", "20"])
