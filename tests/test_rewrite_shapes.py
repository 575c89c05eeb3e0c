"""`rewrite --auto` gives the scaling paper's shapes (section 5.1-5.2): the
client's rules stay as written, the leader and the coordinator are not
partitioned, the parts decoupled from them are, and the result shows the
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
    assert set(voting.components) - {"main"} == {"client", "leader", "participant", "leader_2", "leader_3"}
    assert _heads(voting, "leader_2") == {"votes", "nvotes", "nparts", "complete", "waiting", "anyno", "result",
                                          "replied"}
    assert _heads(voting, "leader_3") == {"ballot"}
    assert _heads(voting, "leader") == {"nparts", "request_leader_3"}
    partitioned = {n.split(" on ")[0] for n in notes if " on 4 partitions" in n}
    assert partitioned == {"leader_2", "leader_3", "participant"}  # all but the leader
    assert any(n.startswith("leader not partitioned: it would rewrite the rule") and "'client'" in n for n in notes)
    network = Network.parse("delay=uniform(1,2)")
    assert refine(base, voting, 14, 4, network, observe=("result",)).refines
    assert compare(base, voting, 14, 2, Network.parse("delay=fixed"), observe=("result",)).difference is None


def test_two_phase_commit_decouples_committers_and_enders_and_equals_the_base():
    base, tpc, notes = _auto("two_phase_commit.ded", ["coordinator", "participant"])
    assert _heads(tpc, "coordinator_2") >= {"yes", "nyes", "decide_commit", "commit_log", "commit", "abort", "answer"}
    assert _heads(tpc, "coordinator_3") >= {"acks", "nacks", "end_log"}
    assert any(n.startswith("coordinator_2 on 4 partitions") for n in notes)
    assert any(n.startswith("coordinator_3 on 4 partitions") for n in notes)
    assert refine(base, tpc, 12, 4, Network.parse("delay=uniform(1,2)")).refines


def test_a_decoupling_with_a_scope_relays_what_an_outside_component_sends():
    p = Program.parse('component c { q(L, X)@async :- ask(C, L, X); }\n'
                      'component k { a(L, X)@async :- q(L, X), to(L, D); b(L, X) :- r(L, X); }\n'
                      'ask("c", "k", 1)@1; r("k", 2)@1; to("k", "d");')
    q, _ = auto(p, ["k"], 2)
    assert _rules(q, "c") == _rules(p, "c")
    assert any(r.startswith("q_k_") for r in _rules(q, "k"))
