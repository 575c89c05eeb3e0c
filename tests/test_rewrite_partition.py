"""The partitioning rewrite on the paper's programs (sections 4.1-4.2 and 5.2):
the rewritten program checks, its facts spread over several partitions, and
`equiv` sees no difference over 20 random-delay seeds. A hand-made wrong
partitioning (routed by an attribute that is not the policy's key) shows a
difference; bad input is one line (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from frontend_helpers import exit_code

from sparkdedalus import Program
from sparkdedalus.equivalence import compare
from sparkdedalus.network import Network
from sparkdedalus.reference import run
from sparkdedalus.rewrite.partition import partition
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.rewrite.text import program_text
from sparkdedalus.shell.cli import main
from udfs.registry import FUNCTIONS

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RANDOM = Network.parse("delay=uniform(1,4)")
N = 4  # with 4 partitions the examples' keys (b1/b2, t1/t2, x/y) land on different ones

# (example, component, a relation the component holds, the policy's key column of that relation)
CASES = [
    # 5.2 voting: the collectors (here the whole leader) partitioned by ballot: votes(L, C, B, P, V)
    ("voting", "leader", "votes", 2),
    # 5.2 voting: the participants by ballot: ballot(P, L, C, B)
    pytest.param("voting", "participant", "ballot", 3, marks=pytest.mark.slow),
    # 5.2 2PC: the participants by transaction id: part_log(P, X, S)
    ("two_phase_commit", "participant", "part_log", 1),
    # 5.2 2PC: the coordinator by transaction id: commit_log(C, X)
    pytest.param("two_phase_commit", "coordinator", "yes", 1, marks=pytest.mark.slow),
    # Figure 6: storage by hash(V), hashset(N, H, V) by H through the dependency of hash
    ("scaling_running_example", "storage", "numCollisions", 1),
]


def _program(example: str) -> Program:
    return Program.from_files(str(EXAMPLES / f"{example}.ded"))


def _partitions(program, relation: str, ticks: int) -> set:
    """The partition suffixes at which `relation` has facts in one run."""
    trace = run(program, ticks, RANDOM)
    return {row[0].rsplit("/", 1)[1] for t in range(1, ticks + 1) for row in trace.at(t)[relation]}


@pytest.mark.parametrize("example, component, relation, column", CASES, ids=["voting-leader", "voting-participant", "2pc-participant", "2pc-coordinator", "running-example-storage"])
def test_partitioning_checks_spreads_and_is_equivalent(example, component, relation, column):
    program = _program(example)
    rewritten = partition(program, component, N)
    again = Program.parse(program_text(rewritten, source_rules(rewritten)))  # prints as dialect that checks
    assert again.homes == ("/p0", "/p1", "/p2", "/p3")
    # the keys differ between partitions: at least two of them hold facts
    assert len(_partitions(rewritten, relation, 20)) >= 2
    result = compare(program, rewritten, 20, 20, RANDOM)
    assert result.difference is None, result.difference


def test_the_dependency_of_hash_routes_by_the_hash_of_the_value():
    # Figure 6: toStorage(N, L, Id, V, Sig) is keyed by hash(V) (the key of hashset), so the
    # leader's sender applies hash to V, then the partition hash to that key
    rewritten = partition(_program("scaling_running_example"), "storage", 2)
    (rule,) = [r for r in rewritten.rules if r.head.name == "toStorage"]
    text = program_text(rewritten, source_rules(rewritten))
    assert "hash(V, H2), hash(H2, H3), P2 == (H3 % 2 + 2) % 2, tostring(P2, S2), N2 == N + \"/p\" + S2" in text
    assert rule.component == "leader"


def test_facts_move_to_their_partition_and_static_facts_to_every_one():
    rewritten = partition(_program("two_phase_commit"), "coordinator", N)
    facts = {(f.atom.name, f.atom.args[0].value, f.atom.args[1].value) for f in rewritten.facts}
    # participant is static (EDB, no tick): every partition holds it
    assert {("participant", f"coord/p{i}", "p2") for i in range(N)} <= facts
    # begin is keyed by the transaction id: one partition each, t1 and t2 on different ones
    begins = {loc for name, loc, _ in facts if name == "begin"}
    assert len(begins) == 2 and all(loc.startswith("coord/p") for loc in begins)


def test_decouple_then_partition_is_equivalent(tmp_path, capsys):
    # 5.2 voting: decouple the collectors, then partition them by ballot
    out, path = tmp_path / "v.ded", str(EXAMPLES / "voting.ded")
    assert main(["rewrite", path, "--decouple", "leader:votes,nvotes,complete,waiting,anyno,result,replied:collectors",
                 "--partition", "collectors:4", "--out", str(out)]) == 0
    text = out.read_text()
    assert "collectors on 4 partitions (co-hashing)" in text and 'L22 == L2 + "/p" + S2' in text
    assert main(["equiv", path, str(out), "--ticks", "20", "--seeds", "20"]) == 0


def test_a_wrong_partitioning_is_not_equivalent(tmp_path, capsys):
    # votes are routed by the voter P instead of the ballot B: the votes on one ballot
    # land on different partitions, none counts all three, no result is ever sent
    path = str(EXAMPLES / "voting.ded")
    right = partition(_program("voting"), "leader", N)
    text = program_text(right, source_rules(right))
    assert text.count("hash(B, H2)") == 2  # the client's request and the participant's vote
    wrong = text.replace("notin voted(P, B), hash(B, H2)", "notin voted(P, B), hash(P, H2)")
    assert wrong != text
    (tmp_path / "right.ded").write_text(text)
    (tmp_path / "wrong.ded").write_text(wrong)
    assert main(["equiv", path, str(tmp_path / "right.ded"), "--ticks", "20", "--seeds", "20"]) == 0
    assert main(["equiv", path, str(tmp_path / "wrong.ded"), "--ticks", "20", "--seeds", "20"]) == 1
    assert "different: seed" in capsys.readouterr().out


def test_a_partial_policy_gets_the_coordinated_rewrite(tmp_path, capsys):
    # p is joined on Y with q in one rule and on X (with q's X) in the other: no key of p and q
    # serves both rules, even through dependencies; replicating p works (4.3), and the
    # partial partitioning of tests/test_rewrite_partial_partition.py applies
    src = tmp_path / "partial.ded"
    src.write_text("component k {\n    a(L, X, Y) :- p(L, X, Y), q(L, Y, Z);\n"
                   "    b(L, X) :- p(L, X, Y), q(L, X, Y);\n}\n")
    assert main(["rewrite", str(src), "--partition", "k:2"]) == 0
    out = capsys.readouterr().out
    assert "k on 2 partitions (partial)" in out and "k replicates p on every partition" in out


@pytest.mark.parametrize("spec, message", [
    ("nope:2", "no component 'nope'"),
    ("leader:0", "expected COMPONENT:N with N >= 1"),
    ("leader:x", "expected COMPONENT:N with N >= 1"),
    ("leader", "expected COMPONENT:N with N >= 1"),
])
def test_bad_input_is_one_line_exit_2(spec, message, capsys):
    code = exit_code(["rewrite", str(EXAMPLES / "voting.ded"), "--partition", spec])
    err = capsys.readouterr().err
    assert (code, len(err.splitlines())) == (2, 1) and message in err, err


def test_keys_that_are_expressions_or_constants_and_relations_without_a_key():
    # v is keyed by its third column, which the senders write as B + 1 and 4: the
    # routing binds that value first; tickle has no column but its location: it goes
    # to partition 0; the fact v("k", 5, 9) moves to the partition of 9
    program = Program.parse('component k {\n n(L, B, count<X>) :- v(L, X, B);\n'
                            ' out(L, B)@async :- n(L, B, C), C > 0;\n pong(L)@async :- tickle(L);\n}\n'
                            'component s {\n v(D, X, B + 1)@async :- go(L, D, X, B);\n'
                            ' v(D, 7, 4)@async :- go(L, D, X, B);\n tickle(D)@async :- go(L, D, X, B);\n}\n'
                            'go("s", "k", 1, 2)@1; go("s", "k", 2, 3)@2; v("k", 5, 9)@1;')
    rewritten = partition(program, "k", 3)
    text = program_text(rewritten, source_rules(rewritten))
    assert "K2 == B + 1, hash(K2, H2)" in text and "K2 == 4, hash(K2, H2)" in text
    assert 'tickle(D2)@async :- go(L, D, X, B), D2 == D + "/p0";' in text
    (h,) = FUNCTIONS["hash"].python(9)
    assert [f.atom.args[0].value for f in rewritten.facts if f.atom.name == "v"] == [f"k/p{h % 3}"]
    assert compare(program, rewritten, 10, 20, RANDOM).difference is None


@pytest.mark.parametrize("text, message", [
    # v is what the partitions hold (keyed), but component s reads it too, at its own nodes
    ('component k { n(L, B, count<X>) :- v(L, X, B); }\ncomponent s { w(L, X) :- v(L, X, _); }\n',
     "component 's' reads v, which the partitions of 'k' hold"),
    # an .input relation arrives from outside at the original node: nothing routes it
    ('.input v from "v.csv"\ncomponent k { n(L, B, count<X>) :- v(L, X, B); }\n', "reads the .input relation 'v'"),
])
def test_what_the_mechanism_cannot_route_is_refused(tmp_path, text, message, capsys):
    src = tmp_path / "p.ded"
    src.write_text(text)
    assert main(["rewrite", str(src), "--partition", "k:2"]) == 1
    assert message in capsys.readouterr().err
