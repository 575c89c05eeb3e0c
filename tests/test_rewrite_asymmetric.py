"""The asymmetric decoupling (scaling paper, A.5; mechanism A.5.1, Batch
Acknowledgement): the rules that stay read what the moved rules derive, in
the moved rules' batches; the moved rules' messages wait for the
acknowledgement of their batch. Where its precondition holds and the cheaper
decouplings' do not, the rewritten program checks and `equiv` sees no
difference over 20 random-delay seeds; forced where the moved rules are
neither monotonic nor functional, it shows a difference."""

from __future__ import annotations

import pytest
from rewrite_helpers import EXAMPLES, PAIRS, RANDOM, decouple_and_compare

from sparkdedalus import Program
from sparkdedalus.equivalence import compare
from sparkdedalus.network import Network
from sparkdedalus.reference import run
from sparkdedalus.rewrite import Target, asymmetric
from sparkdedalus.rewrite.decouple import RewriteError, decouple, select
from sparkdedalus.shell.cli import main

# What the observers see: 2PC's inquiry answers and the running example's ack
# counts depend on message timing in the original too.
LOGS = ".output commit_log\n.output end_log\n.output part_log\n"
CLIENT = ".output certificate\n.output inconsistency\n.output certReply\n"

# The p2b proxy leaders of the paper's Paxos (5.2), reduced: the proposer keeps
# the acceptors' p2b messages and tells the replicas of each accepted slot (C2,
# monotonic); it is preempted by a p2b with a higher ballot than its own, and
# then tells its client (C1, reads p2bs). By hand: the replicas log every
# (slot, ballot) sent; the client hears of ballots 7 and 9.
PROXY = """
component acceptor {
    p2b(P, A, S, B)@async :- p2a(A, P, S, B);
}
component proposer {
    .persist p2bs
    p2bs(L, A, S, B) :- p2b(L, A, S, B);
    accepted(R, L, S, B)@async :- p2b(L, A, S, B), replica(L, R);
    preempted(L, B) :- p2bs(L, _, _, B), ballot(L, B0), B > B0;
    nack(C, L, B)@async :- preempted(L, B), client(L, C);
}
component replica {
    .persist log
    log(R, S, B) :- accepted(R, L, S, B);
}
component client {
    .persist nacks
    nacks(C, B) :- nack(C, L, B);
}
ballot("prop", 5);
replica("prop", "r1");
replica("prop", "r2");
client("prop", "c");
p2a("a1", "prop", 1, 5)@1;
p2a("a2", "prop", 1, 5)@1;
p2a("a1", "prop", 2, 5)@2;
p2a("a2", "prop", 2, 7)@3;
p2a("a3", "prop", 3, 7)@3;
p2a("a3", "prop", 4, 9)@5;
"""
LOGGED = {(r, s, b) for r in ("r1", "r2") for s, b in ((1, 5), (2, 5), (2, 7), (3, 7), (4, 9))}

# (program text, component, selectors, new name, ticks); the rule sets upstream of
# what the rest reads, where only the asymmetric decoupling applies (sparkdedalus explain)
CASES = [
    ((EXAMPLES / "voting.ded").read_text(), "leader", ["votes"], "collectors", 30),
    ((EXAMPLES / "two_phase_commit.ded").read_text() + LOGS, "coordinator", ["yes"], "voters", 30),
    ((EXAMPLES / "scaling_running_example.ded").read_text() + CLIENT, "leader", ["signed"], "signers", 30),
    (PROXY, "proposer", ["p2bs", "accepted"], "proxies", 30),
]


@pytest.mark.parametrize("text, component, selectors, name, ticks", CASES, ids=[c[3] for c in CASES])
def test_asymmetric_decoupling_holds_checks_and_is_equivalent(text, component, selectors, name, ticks):
    found = decouple_and_compare(Program.parse(text), component, selectors, name, "asymmetric", ticks)
    assert found == ["asymmetric"], found  # the cheaper decouplings do not apply


def test_the_proxies_messages_wait_for_the_acknowledgement_of_their_batch():
    program = Program.parse(PROXY)
    rewritten = asymmetric.apply(program, Target("proposer", select(program, "proposer", ["p2bs", "accepted"]), "proxies"))[0]
    # the preemption check reads the proxies' p2bs, sealed at the proposer
    (rule,) = [r for r in rewritten.rules if r.head.name == "preempted"]
    assert rule.component == "proposer" and "p2bs_proxies_sealed" in {a.name for a in rule.positive_atoms}
    for seed in range(5):
        trace = run(rewritten, 30, Network.parse(f"delay=uniform(1,4),seed={seed}"))
        assert trace.at(30)["log"] == LOGGED and trace.at(30)["nacks"] == {("c", 7), ("c", 9)}
        sealed_at = {row[1]: t for t in range(1, 31) for row in trace.at(t)["can_seal_proxies"]}
        held = {}  # (replica, slot, ballot) -> the batches it was derived in (p2b from several acceptors)
        for row in trace.at(30)["accepted_proxies_held"]:
            held.setdefault((row[1], row[3], row[4]), []).append(row[5])
        assert set(held) == LOGGED
        for (r, s, b), batches in held.items():
            arrived = min(t for t in range(1, 31) if (r, "prop", s, b) in trace.at(t)["accepted"])
            # sealed at the proposer, acknowledged (one hop), released (another)
            assert arrived >= min(sealed_at[batch] for batch in batches) + 2, (arrived, batches, sealed_at)


def test_a_forced_asymmetric_decoupling_of_a_non_monotone_rule_shows_a_difference():
    program = Program.parse(PAIRS)
    split = select(program, "proposer", ["lonely"])  # lonely negates gotb; alarm (stays) reads lonely
    verdict = asymmetric.precondition(program, Target("proposer", split, "checker"))
    assert not verdict.applies and any("notin" in str(r) or "negat" in str(r) for r in verdict.reasons)
    result = compare(program, asymmetric.mechanism(program, Target("proposer", split, "checker"))[0], 25, 20, RANDOM)
    assert result.difference is not None and result.difference.relation in ("alarm", "lonely")
    assert result.difference.only_a == ()  # the original never raises an alarm


def test_the_rewrite_command_chooses_the_asymmetric_decoupling(tmp_path, capsys):
    out = tmp_path / "collectors.ded"
    path = str(EXAMPLES / "voting.ded")
    assert main(["rewrite", path, "--decouple", "leader:votes:collectors", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("// sparkdedalus rewrite: leader -> collectors: asymmetric decoupling")
    assert "votes_collectors_sealed" in text
    assert main(["equiv", path, str(out), "--ticks", "30", "--seeds", "5"]) == 0
    assert "equivalent" in capsys.readouterr().out


def test_only_the_asymmetric_rewrite_lets_the_rules_that_stay_read_what_moves():
    program = Program.parse((EXAMPLES / "voting.ded").read_text())
    split = select(program, "leader", ["votes"])  # nvotes, complete, waiting, anyno read votes
    for mechanism in ("redirect", "persist", "batch"):
        with pytest.raises(RewriteError, match="reads votes, which the moved rules derive"):
            decouple(program, "leader", split, "collectors", mechanism)
    assert "collectors" in asymmetric.apply(program, Target("leader", split, "collectors"))[0].components
