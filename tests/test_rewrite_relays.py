"""No emptied relays (issue 49, item 3): a decoupling that leaves a component
forwarding only what other components send is refused, so that `rewrite --auto`
leaves those rules where they are, and two `--decouple`s that together empty a
component are refused as one that selects all its rules is. A component that
relays what a client or events give it stays (the paper's voting leader "only
relays commands to broadcasters"). The --auto outputs stay `equiv`-equal to
their bases."""

from __future__ import annotations

from pathlib import Path

import pytest
from frontend_helpers import exit_code

from sparkdedalus import Program
from sparkdedalus.analysis.roles import constant_relations
from sparkdedalus.rewrite.relays import works
from sparkdedalus.shell.cli import main

ROOT = Path(__file__).resolve().parent.parent / "examples"
MICRO, PROTOCOLS = ROOT / "microbenchmarks", ROOT / "protocols"
COHASHING = str(MICRO / "partitioning_cohashing.ded")

# (program, --auto, the components made only of forwarding rules, what each reads), by
# hand from the outputs: voting's and the microbenchmarks' leaders relay the client's
# `request` to the broadcasters; 2PC's coordinator relays the `begin` events to the vote
# requesters and its participant the `inquire` events to their handler. No component
# forwards what another component sends (those send to the new nodes themselves).
CASES = [
    (PROTOCOLS / "voting.ded", "leader,participant", {"leader": {"request"}}),
    (PROTOCOLS / "two_phase_commit.ded", "coordinator,participant",
     {"coordinator": {"begin"}, "participant": {"inquire"}}),
    (MICRO / "partitioning_cohashing.ded", "leader,replica", {"leader": {"request"}}),
    (MICRO / "partitioning_dependencies.ded", "leader,replica", {"leader": {"request"}}),
    (MICRO / "monotonic.ded", "leader,replica", {}),
]
# what the client observes; the dependencies replica keeps the first payload of a hash,
# so the leader's relay hop changes which one arrives first under a seed: every outcome
# of the output is one of the base's (100 seeds find them all), not seed by seed
EQUIV = {"partitioning_dependencies.ded": ["--mode", "refinement", "--seeds", "100"],
         "voting.ded": ["--observe", "result"],
         "two_phase_commit.ded": ["--observe", "commit_log,end_log,part_log,answer", "--mode", "refinement"]}


def _auto(path, components: str, tmp_path, capsys) -> Path:
    out = tmp_path / "auto.ded"
    assert main(["rewrite", str(path), "--auto", components, "--partitions", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    return out


@pytest.mark.parametrize("path, components, relays", CASES, ids=[c[0].stem for c in CASES])
def test_auto_leaves_no_component_forwarding_what_others_send(path, components, relays, tmp_path, capsys):
    out = _auto(path, components, tmp_path, capsys)
    q = Program.from_files(str(out))
    constant = constant_relations(q)
    changing = {r.component for r in q.rules if not all(a.name in constant for a in r.positive_atoms)}
    assert {c for c in changing if not works(q, c)} == set(relays)
    for component, reads in relays.items():
        assert {a.name for r in q.rules if r.component == component and not r.persistence
                for a in r.positive_atoms} - constant - {"hash", "tostring", "home", "strlen"} == reads
    options = EQUIV.get(path.name, ["--seeds", "20"])
    assert main(["equiv", str(path), str(out), "--ticks", "30", *options]) == 0, options


def test_auto_on_paxos_leaves_only_the_proposer_relaying_the_client_and_its_start(tmp_path, capsys):
    # the p1b and p2b collectors leave the proposer, which relays the client's requests and
    # the `start` events to the p1b collectors. (Not run through equiv here: the output
    # assigns other slots than the base, reply("c1", "r1", 4, "x") for 1, as before issue 49.)
    q = Program.from_files(str(_auto(PROTOCOLS / "paxos.ded", "proposer,acceptor", tmp_path, capsys)))
    constant = constant_relations(q)
    changing = {r.component for r in q.rules if not all(a.name in constant for a in r.positive_atoms)}
    assert {c for c in changing if not works(q, c)} == {"proposer"}
    assert {a.name for r in q.rules if r.component == "proposer" and not r.persistence
            for a in r.positive_atoms} - constant == {"request", "start"}


def test_auto_keeps_the_cohashing_replica_answering(tmp_path, capsys):
    # before: storage, then the vote, left the replica for two parts, the replica forwarding
    # voteToReplica to both (a hop on the path to the vote); now the vote's rule stays
    out = _auto(COHASHING, "leader,replica", tmp_path, capsys)
    text = out.read_text()
    assert "replica -> voteToReplica_handlers: functional decoupling of storage" in text
    assert "decoupling of voteFromReplica" not in text
    replica = text.split("component replica {")[1].split("}")[0]
    assert "voteFromReplica(L" in replica and "myID(R" in replica


def test_two_decouplings_that_empty_a_component_are_refused(capsys):
    # one alone is taken; the second would leave the replica forwarding the leader's
    # voteToReplica to both parts, which the leader could send to them itself
    assert exit_code(["rewrite", COHASHING, "--decouple", "replica:storage"]) == 0
    capsys.readouterr()
    assert exit_code(["rewrite", COHASHING, "--decouple", "replica:storage",
                      "--decouple", "replica:voteFromReplica"]) == 1
    err = capsys.readouterr().err
    assert "cannot decouple voteFromReplica from replica" in err
    assert ("functional: component 'replica' would only forward voteToReplica, which its senders could send "
            "to the new nodes themselves: nothing stays") in err
    # as one decoupling of both, refused before any rewrite
    assert exit_code(["rewrite", COHASHING, "--decouple", "replica:storage,voteFromReplica:x"]) == 2
    assert "nothing stays" in capsys.readouterr().err


def test_a_relay_of_a_clients_requests_is_taken():
    # k's rules read what the client c sends: moving them leaves k relaying it, as the
    # paper's leader does (c cannot be changed); s is no client (it derives what it sends)
    from sparkdedalus.rewrite import Target, mutually_independent
    p = Program.parse('component c { q(S, X)@async :- ask(C, S, X); }\n'
                      'component k { a(L, X)@async :- q(L, X), to(L, D); }\n'
                      'ask("c", "k", 1)@1; to("k", "d");')
    q, notes = mutually_independent.apply(p, Target("k", (1,), "part", scope=("k", "part")))
    assert notes == ["k -> part: mutually independent decoupling of a"]
    assert not works(q, "k")
