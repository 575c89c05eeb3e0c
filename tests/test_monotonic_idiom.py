"""The monotonic decoupling as the scaling paper writes it (issue 49, item 1): votes kept
by a persistence rule guarded by `notin committed` (GC'd persistence, appendix A.2.1) and a
commit on `count<R> == numReplicas`. examples/microbenchmarks/monotonic.ded has that shape;
the expected rules, verdicts and runs are derived by hand from its text."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkdedalus import Program
from sparkdedalus.analysis.bounded import count_bound, drawn_from, floor
from sparkdedalus.analysis.decoupling import decoupling, decouplings
from sparkdedalus.analysis.guarded import guarded_persistence
from sparkdedalus.analysis.monotonicity import monotonicity
from sparkdedalus.equivalence import compare
from sparkdedalus.network import Network
from sparkdedalus.reference import run
from sparkdedalus.equivalence.state import state_sizes
from sparkdedalus.rewrite import RewriteError, Target, decouple_first
from sparkdedalus.rewrite.auto import auto
from sparkdedalus.rewrite.decouple import select
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.shell.cli import main
from sparkdedalus.syntax.printer import format_rule

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "examples/microbenchmarks/monotonic.ded"
COLLECTOR = ("numVotes", "committed", "response")


def example() -> Program:
    return Program.from_files(str(ROOT / EXAMPLE))


def line(program, text: str) -> int:
    """The index of the rule written as `text`."""
    (found,) = [s.index for s in source_rules(program) if format_rule(s.rule) == text]
    return found


def test_the_run_is_the_one_the_header_describes():
    trace = run(example(), 12)

    def rows(name, tick):
        return sorted(tuple(r) for r in trace.at(tick)[name])
    assert rows("allVotes", 4) == [("leader", "a", r) for r in ("r1", "r2", "r3")]
    assert rows("committed", 4) == [("leader", "a")]
    assert rows("pending", 4) == [("leader", "client", "a"), ("leader", "client", "b")]
    assert rows("allVotes", 5) == [("leader", "b", r) for r in ("r1", "r2", "r3")]
    assert rows("pending", 5) == [("leader", "client", "b"), ("leader", "client", "c")]
    assert rows("answer", 5) == [("client", "a")] and rows("answer", 6) == [("client", "a"), ("client", "b")]
    assert rows("answer", 8) == [("client", v) for v in "abc"]
    for tick in (9, 12):
        assert rows("allVotes", tick) == [("leader", "d", "r1"), ("leader", "d", "r2")]
        assert rows("numVotes", tick) == [("leader", "d", 2)]
        assert rows("pending", tick) == [("leader", "client", "d")]
        assert rows("answer", tick) == [("client", v) for v in "abc"]
    assert rows("committed", 12) == [("leader", v) for v in "abc"]


def test_a_persistence_rule_guarded_by_a_persisted_relation_is_gcd_persistence():
    p = example()
    found = guarded_persistence(p)
    assert {name: g.text() for name, g in found.items()} == {
        "pending": "pending(L, C, V) until committed(L, V)",
        "allVotes": "allVotes(L, V, R) until committed(L, V)"}
    assert found["allVotes"].rule == line(p, "allVotes(L, V, R)@next :- allVotes(L, V, R), notin committed(L, V);")


def test_guards_that_are_not_gcd_persistence():
    def guarded(text):
        return sorted(guarded_persistence(Program.parse(text)))
    keep = "k(L, X) :- in(L, X); "
    # the condition is not persisted: it may stop holding, the facts would come back
    assert guarded(keep + "k(L, X)@next :- k(L, X), notin done(L, X); done(L, X) :- in(L, X);") == []
    # another positive atom, a variable the head does not have, a relation already persisted
    assert guarded(".persist d\n" + keep + "k(L, X)@next :- k(L, X), go(L), notin d(L, X);") == []
    assert guarded(".persist d\n" + keep + "k(L, X)@next :- k(L, X), X > 1, notin d(L, X);") == []
    assert guarded(".persist d .persist k\n" + keep + "k(L, X)@next :- k(L, X), notin d(L, X);") == []
    # a condition that is itself collected by an annotation is not stable
    assert guarded(".persist d\n// @gc d(L, X) when in(L, X)\n" + keep +
                   "k(L, X)@next :- k(L, X), notin d(L, X);") == []
    assert guarded(".persist d\n" + keep + "k(L, X)@next :- k(L, X), notin d(L, _);") == ["k"]


def test_the_count_of_replicas_is_bounded_by_the_number_of_replicas():
    p = example()
    numvotes = p.rules[line(p, "numVotes(L, V, count<R>) :- allVotes(L, V, R);")]
    # R is the replica that sent fromReplica, which answers toReplica, sent to replica(L, R) only
    assert drawn_from(p, "allVotes", 2) == {("replica", 1)}
    assert count_bound(p, numvotes, numvotes.head.args[2]) == 3
    assert floor(p, "numReplicas", 1) == 3
    # the value, not the replica: drawn from no fixed set
    assert drawn_from(p, "allVotes", 1) == set()


def test_the_collector_is_monotone_with_its_gcd_persistence():
    p = example()
    split = decoupling(p, "leader", select(p, "leader", COLLECTOR)).rules
    guards = {line(p, "pending(L, C, V)@next :- pending(L, C, V), notin committed(L, V);"),
              line(p, "allVotes(L, V, R)@next :- allVotes(L, V, R), notin committed(L, V);")}
    assert guards <= set(split)  # the guarded persistence rules follow the copies the leader forwards
    verdict = monotonicity(p, split)
    assert (verdict.monotone, verdict.test) == (True, "relaxed")
    messages = [r.message for r in verdict.reasons]
    assert "the rule for numVotes (line 52): count<> read only in threshold tests" in messages
    assert "the rule for allVotes (line 51): GC'd persistence, allVotes(L, V, R) until committed(L, V) (A.2.1), " \
           "not a negation" in messages


def test_without_the_idiom_it_is_not_monotone():
    # committed not persisted: the guard is a negation; a count compared with a number it may
    # pass (3 replicas, numReplicas given as 2) is no threshold
    text = (ROOT / EXAMPLE).read_text()
    p = Program.parse(text.replace("    .persist committed\n", "\n"), EXAMPLE)
    verdict = monotonicity(p, select(p, "leader", ("allVotes",) + COLLECTOR))
    assert "the rule for allVotes (line 51) negates committed" in [r.message for r in verdict.reasons]
    p = Program.parse(text.replace("numReplicas(L, count<R>) :- replica(L, R);", 'numReplicas("leader", 2);'),
                      EXAMPLE)
    verdict = monotonicity(p, decoupling(p, "leader", select(p, "leader", COLLECTOR)).rules)
    assert [str(r) for r in verdict.reasons] == [
        f"{EXAMPLE}:53:24: the rule for committed (line 53) uses count<> of numVotes other than in a threshold "
        f"test (>= or >)"]


def test_the_guards_go_with_the_rules_selected():
    p = example()
    # every rule but the two guards (lines 48, 51), by line: the guards would follow, nothing stays
    with pytest.raises(RewriteError, match="the rules selected are all the rules of component 'leader'"):
        select(p, "leader", ["47", "49", "50", "52", "53", "54"])


def test_explain_offers_the_monotonic_decoupling(capsys, monkeypatch):
    p = example()
    (candidate,) = [c for c in decouplings(p, "leader") if c.found_by == "downstream of numVotes"]
    assert candidate.applicable == ("monotonic",)
    monkeypatch.chdir(ROOT)
    assert main(["explain", EXAMPLE, "--component", "leader"]) == 0
    out = capsys.readouterr().out
    assert "      {pending, allVotes, numVotes, committed, response} (downstream of numVotes): monotonic\n" in out


def test_rewrite_decouples_the_collector_and_its_gcd_persistence_follows(tmp_path, monkeypatch):
    p = example()
    q, notes = decouple_first(p, Target("leader", select(p, "leader", COLLECTOR), "collector"))
    assert notes == ["leader -> collector: monotonic decoupling of numVotes, committed, response"]
    monkeypatch.chdir(ROOT)
    out = tmp_path / "collector.ded"
    assert main(["rewrite", EXAMPLE, "--decouple", "leader:numVotes,committed,response:collector",
                 "--out", str(out)]) == 0
    printed = Program.from_files(str(out))
    assert [format_rule(s.rule) for s in source_rules(printed)] == [format_rule(s.rule) for s in source_rules(q)]

    def rules(component):
        return [format_rule(s.rule) for s in source_rules(q) if s.component == component]
    # the leader keeps neither the requests nor the votes: it forwards them as they come
    assert rules("leader") == [
        "pending(L, C, V) :- request(L, C, V);",
        "toReplica(R, L, V)@async :- request(L, _, V), replica(L, R);",
        "allVotes(L, V, R) :- fromReplica(L, R, V);",
        'allVotes_collector(L2, X1, X2)@async :- allVotes(L, X1, X2), L2 == L + "/collector";',
        'pending_collector(L2, X1, X2)@async :- pending(L, X1, X2), L2 == L + "/collector";']
    # the collector keeps the copies until committed, as the leader kept the originals
    assert rules("collector") == [
        "pending_collector(L2, C, V)@next :- pending_collector(L2, C, V), notin committed(L2, V);",
        "allVotes_collector(L2, V, R)@next :- allVotes_collector(L2, V, R), notin committed(L2, V);",
        "numVotes(L2, V, count<R>) :- allVotes_collector(L2, V, R);",
        "committed(L2, V) :- numVotes(L2, V, N), numReplicas(L2, M), N == M;",
        "response(C, V)@async :- committed(L2, V), pending_collector(L2, C, V);",
        "numReplicas(L2, count<R>) :- replica(L2, R);"]
    assert q.persisted == {"answer", "committed"}
    assert compare(p, q, 40, 20, Network.parse("delay=uniform(1,4)")).difference is None


def test_auto_takes_the_monotonic_decoupling_and_keeps_no_more_state():
    p = example()
    q, notes = auto(p, ["leader"], 4)
    assert notes[0] == ("leader -> allVotes_collectors: monotonic decoupling of pending, allVotes, numVotes, committed, "
                        "response (downstream of numVotes)")
    network = Network.parse("delay=uniform(1,4)")
    assert compare(p, q, 40, 5, network).difference is None
    sizes = state_sizes(p, q, 40, 5, network)
    assert (sizes.total_a, sizes.total_b, sizes.grows) == (9, 9, False)
