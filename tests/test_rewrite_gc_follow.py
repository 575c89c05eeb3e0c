"""A GC condition follows the relation it collects through a decoupling, or the rewrite
is refused (issue 49, item 2), and `equiv --state` compares the persisted state a
rewrite keeps under `--gc on` with the base's. The programs are
examples/microbenchmarks/monotonic.ded, written with GC'd persistence or (ANNOTATED) with
`.persist` and `// @gc`; the state sizes are counted by hand: at tick 40 every run has
settled: 3 answers, 3 committed values, and, for "d" (which r3 refuses), 1 request and
2 votes kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sparkdedalus import Program
from sparkdedalus.equivalence import compare
from sparkdedalus.equivalence.state import state_sizes
from sparkdedalus.network import Network
from sparkdedalus.rewrite import RewriteError, Target, decouple_first, monotonic, state_machine
from sparkdedalus.rewrite.decouple import decouple, select
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.rewrite.text import gc_comment, program_text
from sparkdedalus.shell.cli import main
from sparkdedalus.syntax.printer import format_rule

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "examples/microbenchmarks/monotonic.ded"
IDIOM = (ROOT / EXAMPLE).read_text()
ANNOTATED = IDIOM.replace(
    "    pending(L, C, V)@next :- pending(L, C, V), notin committed(L, V);",
    "    .persist pending\n    // @gc pending(L, C, V) when committed(L, V)").replace(
    "    allVotes(L, V, R)@next :- allVotes(L, V, R), notin committed(L, V);",
    "    .persist allVotes\n    // @gc allVotes(L, V, R) when committed(L, V)")
COLLECTOR = ("numVotes", "committed", "response")
NETWORK = Network.parse("delay=uniform(1,4)")
BASE_STATE = {"allVotes": 2, "answer": 3, "committed": 3, "pending": 1}


def collector(text: str):
    p = Program.parse(text, EXAMPLE)
    return p, decouple_first(p, Target("leader", select(p, "leader", COLLECTOR), "collector"))[0]


def rules(program, component: str) -> list:
    return [format_rule(s.rule) for s in source_rules(program) if s.component == component]


def test_an_annotation_follows_the_relation_to_its_copy():
    p, q = collector(ANNOTATED)
    # the condition (committed) moves to the collector: the copies get the annotations, and
    # the leader, which reads neither relation, no longer persists them
    assert [gc_comment(a) for a in q.gc_annotations] == ["// @gc pending_collector(L, C, V) when committed(L, V)",
                                                         "// @gc allVotes_collector(L, V, R) when committed(L, V)"]
    assert q.persisted == {"answer", "committed", "pending_collector", "allVotes_collector"}
    assert not [r for r in q.rules if r.persistence and r.component == "leader"]
    sizes = state_sizes(p, q, 40, 5, NETWORK)
    assert (sizes.a, sizes.b, sizes.grows) == (
        BASE_STATE, {"allVotes_collector": 2, "answer": 3, "committed": 3, "pending_collector": 1}, False)
    assert compare(p, q, 40, 20, NETWORK).difference is None


def test_the_state_check_says_no_to_the_rewrite_that_lost_its_gc():
    # what the rewrite printed before the fix: the annotations on the leader's relations,
    # whose condition the leader no longer derives, and the copies persisted without any
    p, fixed = collector(ANNOTATED)
    text = program_text(fixed, source_rules(fixed)).replace(
        "// @gc pending_collector(L, C, V) when committed(L, V)\n"
        "// @gc allVotes_collector(L, V, R) when committed(L, V)",
        "// @gc pending(L, C, V) when committed(L, V)\n// @gc allVotes(L, V, R) when committed(L, V)").replace(
        "component leader {\n", "component leader {\n    .persist pending\n    .persist allVotes\n")
    lost = Program.parse(text)
    assert compare(p, lost, 40, 5, NETWORK).difference is None  # equiv alone does not see it
    sizes = state_sizes(p, lost, 40, 5, NETWORK)
    # every request (4) and vote (3 + 3 + 3 + 2) kept twice: at the leader and the collector
    assert sizes.grows and (sizes.seed, sizes.total_a, sizes.total_b) == (0, 9, 36)
    assert sizes.b == {"allVotes": 11, "allVotes_collector": 11, "answer": 3, "committed": 3, "pending": 4,
                       "pending_collector": 4}


def test_equiv_state_passes_the_rewrite_and_fails_it_with_the_gc_dropped(tmp_path, capsys):
    p, q = collector(IDIOM)
    good = program_text(q, source_rules(q))
    dropped = good.replace("pending_collector(L2, C, V)@next :- pending_collector(L2, C, V), notin committed(L2, V);",
                           ".persist pending_collector")
    assert dropped != good
    paths = {}
    for name, text in (("good", good), ("dropped", dropped)):
        paths[name] = tmp_path / f"{name}.ded"
        paths[name].write_text(text)
    base = str(ROOT / EXAMPLE)
    assert main(["equiv", base, str(paths["good"]), "--ticks", "40", "--seeds", "3", "--state"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("equivalent: no difference in 3 seed(s) over 40 tick(s)")
    assert out[1].startswith("persisted state at tick 40 with --gc on, seed 0 (of 3; ")
    assert out[1].endswith(f"{paths['good']} keeps no more than {base}")
    assert out[2:] == [f"  {base}: 9 fact(s): allVotes 2, answer 3, committed 3, pending 1",
                       f"  {paths['good']}: 9 fact(s): allVotes_collector 2, answer 3, committed 3, "
                       f"pending_collector 1"]
    # without its guard the collector keeps every request: a, b, c and d
    assert main(["equiv", base, str(paths["dropped"]), "--ticks", "40", "--seeds", "3", "--state"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("equivalent:")  # the answers are the same: only the state tells
    assert out[1].endswith(f"{paths['dropped']} keeps more facts than {base}")
    assert out[3] == (f"  {paths['dropped']}: 12 fact(s): allVotes_collector 2, answer 3, committed 3, "
                      f"pending_collector 4")
    assert main(["equiv", base, str(paths["dropped"]), "--ticks", "40", "--seeds", "3", "--state",
                 "--format", "json"]) == 1
    state = json.loads(capsys.readouterr().out)["state"]
    assert (state["grows"], state["gc"], state["a"]["facts"], state["b"]["facts"]) == (True, "on", 9, 12)
    assert main(["equiv", base, str(paths["dropped"]), "--ticks", "40", "--seeds", "3"]) == 0  # not asked


def test_a_guard_that_stays_gives_the_copy_a_guard_of_its_own():
    # the leader reads pending (busy), so pending's guarded persistence stays there; the
    # responder reads a copy, which it keeps until its copy of committed holds
    text = IDIOM.replace("    toReplica(R, L, V)@async",
                         "    busy(L, V) :- pending(L, _, V);\n    toReplica(R, L, V)@async")
    p = Program.parse(text, EXAMPLE)
    q, _ = decouple_first(p, Target("leader", select(p, "leader", ["response"]), "responder"))
    assert rules(q, "responder") == [
        "response(C, V)@async :- committed_responder(L2, V), pending_responder(L2, C, V);",
        "pending_responder(L, C, V)@next :- pending_responder(L, C, V), notin committed_responder(L, V);"]
    assert "pending(L, C, V)@next :- pending(L, C, V), notin committed(L, V);" in rules(q, "leader")
    assert "pending_responder" not in q.persisted and "committed_responder" in q.persisted
    sizes = state_sizes(p, q, 40, 3, NETWORK)
    # the one request kept twice (d, never committed), and the copy of the 3 committed values
    assert sizes.b == {"allVotes": 2, "answer": 3, "committed": 3, "committed_responder": 3, "pending": 1,
                       "pending_responder": 1}
    assert compare(p, q, 40, 20, NETWORK).difference is None


def test_a_condition_that_moves_away_from_a_relation_that_stays_is_refused():
    reader = "    voters(L, R) :- allVotes(L, _, R);\n    toReplica(R, L, V)@async"
    # annotated: the leader reads allVotes, so it keeps it, and committed moves away
    p = Program.parse(ANNOTATED.replace("    toReplica(R, L, V)@async", reader), EXAMPLE)
    target = Target("leader", select(p, "leader", COLLECTOR), "collector")
    verdict = monotonic.precondition(p, target)
    assert not verdict.applies
    assert [str(r) for r in verdict.reasons] == [
        f"{EXAMPLE}:54:12: the GC condition of allVotes reads committed, which moves to collector: allVotes "
        f"would never be collected at leader"]
    # with GC'd persistence: the guard stays and reads what moves; --force does not get round it
    p = Program.parse(IDIOM.replace("    toReplica(R, L, V)@async", reader), EXAMPLE)
    with pytest.raises(RewriteError, match=f"{EXAMPLE}:52:5: the GC'd persistence of allVotes "
                                           r"\(allVotes\(L, V, R\) until committed\(L, V\)\) reads committed, which "
                                           "moves to collector: allVotes would never be collected at leader"):
        decouple_first(p, Target("leader", select(p, "leader", COLLECTOR), "collector"), force=True)


def test_a_relation_that_moves_takes_its_condition_or_is_refused():
    text = '''component k { .persist s .persist done
      // @gc s(L, X) when done(L, X)
      s(L, X) :- a(L, X); t(L, X) :- s(L, X), b(L, X); done(L, X) :- c(L, X); e(L, X) :- f(L, X); }
    component src { a(D, X)@async :- ga(L, D, X); b(D, X)@async :- gb(L, D, X); c(D, X)@async :- gc(L, D, X);
                    f(D, X)@async :- gf(L, D, X); }
    ga("src", "k", 1)@1;'''
    p = Program.parse(text)
    # s and t move; done, the condition, stays: the new node would never collect s
    with pytest.raises(RewriteError, match="the GC condition of s reads done, which kb does not hold: s would "
                                           "never be collected there"):
        decouple(p, "k", select(p, "k", ["s", "t"]), "kb")
    # with done they move together, and so does the annotation, as it is
    q = decouple(p, "k", select(p, "k", ["s", "t", "done"]), "kb")
    assert [gc_comment(a) for a in q.gc_annotations] == ["// @gc s(L, X) when done(L, X)"]
    assert {r.head.name: r.component for r in q.rules if r.persistence} == {"s": "kb", "done": "kb"}


def test_the_batch_mechanisms_carry_no_condition():
    p = Program.parse(ANNOTATED, EXAMPLE)
    verdict = state_machine.precondition(p, Target("leader", select(p, "leader", ["committed", "response"])))
    assert [str(r) for r in verdict.reasons] == [
        "the batch mechanism carries no GC condition: allVotes's (committed) would not follow it"]
