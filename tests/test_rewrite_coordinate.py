"""The coordination rewrite (`rewrite --coordinate`, seed 004): on
examples/nonconfluent.ded it gives one result under 50 delay seeds, the
program's perfect ultimate model, where the original gives two; `equiv`
finds no difference with the hand-written examples/sealed.ded; without its
completion test, or with a wrong announcement tick, the result depends on
the delays again and the confluence analysis says so. Refusals are one line.
Reference evaluator only."""

from __future__ import annotations

from rewrite_helpers import EXAMPLES

from sparkdedalus import Program
from sparkdedalus.analysis.confluence import confluence
from sparkdedalus.equivalence import compare
from sparkdedalus.network import Network
from sparkdedalus.reference import run
from sparkdedalus.rewrite.coordinate import coordinate
from sparkdedalus.rewrite.decouple import RewriteError
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.rewrite.text import program_text
from sparkdedalus.shell.cli import main

TICKS = 12  # messages are sent at ticks 1..3 and take at most 4 ticks
SEEDS = [Network.parse(f"delay=uniform(1,4),seed={seed}") for seed in range(50)]

# The perfect ultimate model of nonconfluent.ded, by hand. Its temporal
# flattening (every @async and @next rule made same-tick) is the stratified
# Datalog program
#   statement(L, S, X) :- say(S, X), listener(S, L);
#   s_false(L, S, X)   :- retract(S, X), listener(S, L);
#   believed(L, X)     :- statement(L, S, X), notin s_false(L, S, X);
#   refuted(L, X)      :- s_false(L, S, X);
# over say = {s1:x, s1:y, s1:z, s2:w}, retract = {s1:y}, listener = {s1->l, s2->l}.
# Stratum 1: statement = {(l,s1,x), (l,s1,y), (l,s1,z), (l,s2,w)}, s_false = {(l,s1,y)}.
# Stratum 2 (s_false complete): believed = statement minus s_false, projected on (L, X)
#   = {(l,x), (l,z), (l,w)}; refuted = {(l,y)}.
# believed is persisted, so a fact it ever held is in the ultimate model: the
# perfect ultimate model holds believed = {x, z, w} at the last tick and never
# believed("l", "y") at any tick.
BELIEVED = {("l", "x"), ("l", "z"), ("l", "w")}
REFUTED = {("l", "y")}


def _nonconfluent() -> Program:
    return Program.from_files(str(EXAMPLES / "nonconfluent.ded"))


def _text(program) -> str:
    return program_text(program, source_rules(program))


def _results(program) -> set:
    """The distinct (believed at the last tick, refuted at the last tick,
    believed at any tick) over the 50 seeds."""
    found = set()
    for network in SEEDS:
        trace = run(program, TICKS, network)
        ever = set().union(*(trace.at(t)["believed"] for t in range(1, TICKS + 1)))
        found.add((frozenset(trace.at(TICKS)["believed"]), frozenset(trace.at(TICKS)["refuted"]), frozenset(ever)))
    return found


def test_coordinated_gives_the_perfect_ultimate_model_under_every_seed():
    coordinated, notes = coordinate(_nonconfluent())
    assert notes == ["s_false: counted completion, senders announce at tick 3; believed waits for s_false_incomplete"]
    assert _results(coordinated) == {(frozenset(BELIEVED), frozenset(REFUTED), frozenset(BELIEVED))}


def test_the_original_gives_two_results_over_the_same_seeds():
    results = _results(_nonconfluent())
    assert len(results) >= 2
    assert {("l", "y") in ever for _, _, ever in results} == {True, False}


def test_the_coordinated_program_checks_and_is_confluent():
    coordinated, _ = coordinate(_nonconfluent())
    again = Program.parse(_text(coordinated))  # prints as dialect that checks
    verdict = confluence(again)
    assert verdict.confluent and verdict.points_of_order == ()
    assert "s_false is counted" in verdict.reasons[0].message


def test_equiv_with_the_hand_sealed_program_finds_no_difference():
    # No .output is needed: neither program declares one, so equiv compares
    # the relations both have -- believed, refuted, statement, s_false and the
    # EDB -- which are the observations; each program's bookkeeping (the
    # counts here, seal/nrecv/complete there) is its own and not compared.
    coordinated, _ = coordinate(_nonconfluent())
    sealed = Program.from_files(str(EXAMPLES / "sealed.ded"))
    result = compare(coordinated, sealed, TICKS, 50, SEEDS[0])
    assert result.difference is None, result.difference
    assert {"believed", "refuted", "statement", "s_false"} <= set(result.observed.relations)


def test_equiv_with_the_original_finds_a_difference():
    coordinated, _ = coordinate(_nonconfluent())
    result = compare(coordinated, _nonconfluent(), TICKS, 50, SEEDS[0])
    assert result.difference is not None and result.difference.relation == "believed"
    assert result.difference.only_b == (("l", "y"),)


def test_without_the_completion_test_the_result_depends_on_the_delays_again():
    text = _text(coordinate(_nonconfluent())[0])
    assert ", notin s_false_incomplete(L);" in text
    ungated = Program.parse(text.replace(", notin s_false_incomplete(L);", ";"))
    assert len(_results(ungated)) >= 2
    assert not confluence(ungated).confluent


def test_an_announcement_before_the_last_send_is_not_trusted():
    # s1 announces at tick 1 how many falsity notices it sent: 0, before its
    # retraction at tick 2. The analysis does not recognise the pattern
    # (the announcement must come at tick 3) and the runs disagree again.
    text = _text(coordinate(_nonconfluent())[0])
    early = Program.parse(text.replace('s_false_done("s1")@3;', 's_false_done("s1")@1;'))
    assert not confluence(early).confluent
    assert len(_results(early)) >= 2


def test_a_missing_sender_is_not_trusted():
    text = _text(coordinate(_nonconfluent())[0])
    assert not confluence(Program.parse(text.replace('s_false_senders("l", "s1");', ""))).confluent


# An aggregation point: the coordinator counts votes that arrive over time.
VOTES = """.persist vote
vote(C, A, X)@async :- ballot(A, X), coord(A, C);
nvotes(C, count<A>) :- vote(C, A, X);
coord("a1", "c"); coord("a2", "c"); coord("a3", "c");
ballot("a1", "yes")@1; ballot("a2", "no")@1; ballot("a3", "yes")@2;
"""


def _counts(program) -> set:
    """The distinct sets of nvotes facts held at any tick, over the seeds."""
    traces = [run(program, TICKS, network) for network in SEEDS]
    return {frozenset().union(*(trace.at(t)["nvotes"] for t in range(1, TICKS + 1))) for trace in traces}


def test_an_aggregate_waits_for_every_vote():
    # three agents vote, so the flattened program's count is 3; the original
    # also shows partial counts (1 or 2) at the ticks before the last vote arrives
    program = Program.parse(VOTES)
    coordinated, notes = coordinate(program)
    assert notes == ["vote: counted completion, senders announce at tick 3; nvotes waits for vote_incomplete"]
    assert _counts(coordinated) == {frozenset({("c", 3)})}
    assert any(("c", 2) in seen for seen in _counts(program))


REFUSED = [
    # recursion through negation: p's sends negate q, derived from p
    (".persist p\np(M, X)@async :- e(L, X), peer(L, M), notin q(L, X);\nq(L, X) :- p(L, X);\n"
     'peer("a", "b"); e("a", 1)@1;', "recursion through negation or aggregation (p, q)"),
    # the receivers come from a rule, not from facts: the senders are unknown
    (".persist p\np(M, X)@async :- e(L, X), link(L, M);\nlink(L, M) :- peer(L, M);\n"
     'r(L, X) :- seen(L, X), notin p(L, X);\npeer("a", "b"); e("a", 1)@1; seen("b", 1);', "the senders are unknown"),
    # the sends are fed by an @next counter: they may never end
    (".persist p\np(M, X)@async :- c(L, X), peer(L, M);\nc(L, Y)@next :- c(L, X), Y == X + 1, X < 3;\n"
     'r(L, X) :- seen(L, X), notin p(L, X);\npeer("a", "b"); c("a", 0)@1; seen("b", 1);', "they may never end"),
    # q's sends read p's messages: when they end is unknown, and q is not computed from p at one tick
    (".persist p\n.persist q\np(M, X)@async :- e(L, X), peer(L, M);\nq(M, X)@async :- p(L, X), peer(L, M);\n"
     'r(L, X) :- seen(L, X), notin q(L, X);\npeer("a", "b"); peer("b", "c"); e("a", 1)@1; seen("c", 1);',
     "q is not computed from p and constant relations at the same tick"),
    # a join with a relation that changes over time: counting cannot fix it
    (".persist p\np(M, X)@async :- e(L, X), peer(L, M);\nr(L, X) :- p(L, X), now(L, X);\n"
     'peer("a", "b"); e("a", 1)@1; now("b", 1)@2;', "counting messages cannot fix a transient point"),
]


def test_refusals_say_why(tmp_path, capsys):
    for text, reason in REFUSED:
        try:
            coordinate(Program.parse(text))
        except RewriteError as exc:
            assert reason in str(exc)
        else:
            raise AssertionError(f"not refused: {reason}")
    path = tmp_path / "cycle.ded"
    path.write_text(REFUSED[0][0])
    assert main(["rewrite", str(path), "--coordinate"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot coordinate: recursion through negation" in err


def test_the_cli_prints_a_checked_coordinated_program(tmp_path, capsys):
    out = tmp_path / "coordinated.ded"
    assert main(["rewrite", str(EXAMPLES / "nonconfluent.ded"), "--coordinate", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("// sparkdedalus rewrite: s_false: counted completion")
    assert confluence(Program.parse(text)).confluent
    assert main(["check", str(out)]) == 0
    assert main(["equiv", str(out), str(EXAMPLES / "sealed.ded"), "--ticks", str(TICKS), "--seeds", "10"]) == 0


def test_the_cli_says_when_there_is_nothing_to_coordinate(capsys):
    assert main(["rewrite", str(EXAMPLES / "broadcast.ded"), "--coordinate"]) == 0
    captured = capsys.readouterr()
    assert "nothing to coordinate" in captured.err
    assert Program.parse(captured.out).rules  # the program, unchanged, still prints and checks


# Counted completion written by hand (analysis/coordination.py's pattern for
# got, one sender "a", one receiver "b"; the sends end at tick 2, so "a"
# announces at tick 3): the analysis trusts it without the rewrite.
BY_HAND = """.persist got
.persist got_send
.persist got_sent
.persist got_count_send
fresh(M, X) :- seen(M, X), notin got(M, X), notin got_incomplete(M);
got_local(L, M, X) :- e(L, X), peer(L, M);
got_send(L, S, X1)@async :- got_local(S, L, X1);
got_sent(S, L, X1) :- got_local(S, L, X1);
got_any(S, L) :- got_sent(S, L, X1);
got_count_send(L, S, count<*>)@async :- got_done(S), got_sent(S, L, X1);
got_count_send(L, S, 0)@async :- got_done(S), peer(S, L), notin got_any(S, L);
got(L, X1) :- got_send(L, S, X1);
got_count_recv(L, S, count<*>) :- got_send(L, S, X1);
got_announced(L, S) :- got_count_send(L, S, N);
got_incomplete(L) :- got_senders(L, S), notin got_announced(L, S);
got_incomplete(L) :- got_count_send(L, S, N), N > 0, notin got_count_recv(L, S, N);
e("a", 1)@2; peer("a", "b"); seen("b", 1); seen("b", 2);
got_done("a")@3; got_senders("b", "a");
"""


def test_the_analysis_trusts_counted_completion_written_by_hand():
    assert confluence(Program.parse(BY_HAND)).confluent
    # fresh negates part(M, X), computed from got and late, which grows from tick 5: waiting for got is not enough
    joined = BY_HAND.replace("notin got(M, X), notin got_incomplete(M);", "notin part(M, X), notin got_incomplete(M);\n"
                             "part(M, X) :- got(M, X), late(M, X);\n.persist late\nlate(\"b\", 1)@5;")
    assert [(p.relation, p.kind) for p in confluence(Program.parse(joined)).points_of_order] == [("part", "negation")]
    # the count is announced at tick 2, as the last fact is sent: not trusted
    assert not confluence(Program.parse(BY_HAND.replace('got_done("a")@3', 'got_done("a")@2'))).confluent
    # a receiver's count that another rule also feeds: not trusted
    extra = BY_HAND + 'got_count_recv("b", "a", 1)@1;\n'
    assert not confluence(Program.parse(extra)).confluent


# Two @async rules for one relation: s1 sends to its peers, s2 to the constant
# "hub" (its channel: hubpeer, read with a wildcard). The last fact the sends
# depend on is a("s1", 2)@3, so the senders announce at tick 4.
NOTES = """.persist note
.persist missing
note(M, X)@async :- a(L, X), peer(L, M);
note("hub", X)@async :- b(L, X), hubpeer(L, _);
missing(L, X) :- want(L, X), notin note(L, X);
peer("s1", "hub"); peer("s1", "side"); hubpeer("s2", 1);
a("s1", 1)@1; a("s1", 2)@3; b("s2", 3)@2;
want("hub", 1); want("hub", 2); want("hub", 3); want("hub", 4); want("side", 2); want("side", 9);
"""


def test_several_send_rules_and_a_constant_destination():
    # flattened: note = {hub: 1, 2 (s1), 3 (s2); side: 1, 2}; missing = want minus note
    # = {(hub, 4), (side, 9)}, and missing is persisted, so no other fact may ever hold.
    # The original holds every want at tick 1, before any note arrives.
    coordinated, notes = coordinate(Program.parse(NOTES))
    assert notes == ["note: counted completion, senders announce at tick 4; missing waits for note_incomplete"]
    assert confluence(Program.parse(_text(coordinated))).confluent
    for network in SEEDS[:20]:
        trace = run(coordinated, 14, network)
        assert set().union(*(trace.at(t)["missing"] for t in range(1, 15))) == {("hub", 4), ("side", 9)}
    assert run(Program.parse(NOTES), 14, SEEDS[0]).at(14)["missing"] >= {("hub", 1), ("side", 2)}
