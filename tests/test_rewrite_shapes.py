"""`rewrite --auto` gives the scaling paper's shapes (section 5.1-5.2): the
client's rules and events stay as written, the leader and the coordinator are
not partitioned, the parts decoupled from them are, named by their role, and the result shows the
client what the base program shows it (`equiv`, reference engine)."""

from __future__ import annotations

from pathlib import Path

from sparkdedalus import Program
from sparkdedalus.equivalence import compare, refine
from sparkdedalus.network import Network
from sparkdedalus.rewrite.auto import auto
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.syntax.printer import format_rule

PROTOCOLS = Path(__file__).resolve().parent.parent / "examples" / "protocols"


def _auto(name: str, components: list) -> tuple:
    base = Program.parse((PROTOCOLS / name).read_text())
    return base, *auto(base, components, 4)


def _rules(program, component: str) -> list:
    return [format_rule(s.rule) for s in source_rules(program) if s.component == component]


def _heads(program, component: str) -> set:
    return {s.rule.head.name for s in source_rules(program) if s.component == component}


def test_voting_leader_relays_to_broadcasters_and_collectors_that_are_partitioned():
    base, voting, notes = _auto("voting.ded", ["leader", "participant"])
    assert _rules(voting, "client") == _rules(base, "client")  # out of scope: byte-identical
    # the paper: collectors (votes .. replied) and broadcasters (ballot) leave the leader,
    # which only relays the client's requests to the broadcasters
    assert set(voting.components) - {"main"} == {"client", "leader", "participant", "vote_collectors",
                                                 "ballot_broadcasters"}
    assert _heads(voting, "vote_collectors") == {"votes", "nvotes", "nparts", "complete", "waiting", "anyno",
                                                 "result", "replied"}
    assert _heads(voting, "ballot_broadcasters") == {"ballot"}
    assert _heads(voting, "leader") == {"nparts", "request_ballot_broadcasters"}
    partitioned = {n.split(" on ")[0] for n in notes if " on 4 partitions" in n}
    assert partitioned == {"vote_collectors", "ballot_broadcasters", "participant"}  # all but the leader
    assert any(n.startswith("leader not partitioned: it would rewrite the rule") and "'client'" in n for n in notes)
    network = Network.parse("delay=uniform(1,2)")
    assert refine(base, voting, 14, 4, network, observe=("result",)).refines
    assert compare(base, voting, 14, 2, Network.parse("delay=fixed"), observe=("result",)).difference is None


def _events(program) -> list:
    return sorted((f.atom.name, f.row, f.tick) for f in program.facts if f.tick is not None)


def test_two_phase_commit_coordinator_relays_to_requesters_committers_enders():
    base, tpc, notes = _auto("two_phase_commit.ded", ["coordinator", "participant"])
    # section 5.2: "Vote Requesters [...] broadcast voteReq to participants" (prepare);
    # "Committers collect votes, log and flush commits, then broadcast commit" (here with the
    # abort and the answers to inquiries, which read the commit log); "Enders collect acks,
    # log"; "The remaining 'coordinator' component relays commands to vote requesters".
    # nparts counts the constant participant list: every part that reads it computes it.
    assert _heads(tpc, "prepare_broadcasters") == {"prepare"}
    assert _heads(tpc, "vote_collectors") == {"yes", "nyes", "nparts", "decide_commit", "commit_log", "commit",
                                              "sent_commit", "abort", "answer"}
    assert _heads(tpc, "ack_collectors") == {"acks", "nacks", "nparts", "end_log"}
    assert _rules(tpc, "coordinator") == [
        "nparts(C, count<P>) :- participant(C, P);",
        'begin_prepare_broadcasters(L22, X1)@async :- begin(L, X1), L2 == L + "/prepare_broadcasters", '
        'hash(X1, H2), P2 == (H2 % 4 + 4) % 4, tostring(P2, S2), L22 == L2 + "/p" + S2;']
    # "Each participant is mutually independently decoupled into Voters and Ackers": the voters
    # handle prepare, the ackers commit; the abort (logged, never acked: presumed abort) and the
    # inquiries are parts of their own; the participant relays the inquiries p3 is given
    assert _heads(tpc, "prepare_handlers") == {"part_log", "vote"}
    assert _heads(tpc, "commit_handlers") == {"part_log", "ack"}
    assert _heads(tpc, "abort_handlers") == {"part_log"}
    assert _heads(tpc, "inquire_handlers") == {"query"}
    assert _heads(tpc, "participant") == {"inquire_inquire_handlers"}
    # "All components (except the coordinator) can be partitioned"; here the participant, which
    # relays the inquiries given to p3, is not partitioned either: that would move the events
    partitioned = {n.split(" on ")[0] for n in notes if " on 4 partitions" in n}
    assert partitioned == set(tpc.components) - {"main", "coordinator", "participant"}
    assert _events(tpc) == _events(base)  # the client's input: as given
    observed = ("commit_log", "end_log", "part_log", "answer")
    assert refine(base, tpc, 20, 6, Network.parse("delay=uniform(1,3)"), observe=observed).refines
    assert compare(base, tpc, 20, 2, Network.parse("delay=fixed"), observe=("commit_log", "end_log", "part_log")
                   ).difference is None


def test_a_decoupling_with_a_scope_relays_what_an_outside_component_sends():
    p = Program.parse('component c { q(L, X)@async :- ask(C, L, X); }\n'
                      'component k { a(L, X)@async :- q(L, X), to(L, D); b(L, X) :- r(L, X); }\n'
                      'ask("c", "k", 1)@1; r("k", 2)@1; to("k", "d");')
    q, _ = auto(p, ["k"], 2)
    assert _rules(q, "c") == _rules(p, "c")
    assert any(r.startswith("q_q_handlers(") for r in _rules(q, "k"))  # the part handling q, relayed
