"""Why-provenance on the reference evaluator: `run(..., provenance=True)`,
`reference.why.why` and `sparkdedalus why`. Every expected lineage is derived by
hand from the programs (the examples' header comments and docs/semantics.md),
never copied from the code's output."""

from __future__ import annotations

import glob
import json
import os
import shlex

import pytest

from reference_helpers import EXAMPLES, run_example, run_text
from sparkdedalus.network import Message, Network
from sparkdedalus.reference.provenance import Absent, FactAt
from sparkdedalus.reference.why import why
from frontend_helpers import exit_code

BROADCAST = os.path.join(EXAMPLES, "broadcast.ded")
# examples/broadcast.ded: the rules' lines, and the facts' lines
PERSIST_LOG, ASYNC_LOG = f"{BROADCAST}:26", f"{BROADCAST}:27"
BCAST_A_HI, NODE_A_C = f"{BROADCAST}:36", f"{BROADCAST}:31"


def only(steps):
    (step,) = steps
    return step


def assert_program_fact(node, relation, row, tick, pos):
    assert node.fact == FactAt(relation, row, tick)
    assert [(s.derivation.kind, s.derivation.pos, s.body) for s in node.steps] == [("fact", pos, ())]


def assert_message_lineage(node):
    """log("c","hi")@2: the message "a" sent at 1 (bcast("a","hi")@1 and
    node("a","c")@1 by the @async rule) arriving at "c" at 2."""
    assert node.holds and node.fact == FactAt("log", ("c", "hi"), 2)
    step = only(node.steps)
    d = step.derivation
    assert (d.kind, d.pos, d.message) == ("message", ASYNC_LOG, Message("log", ("c", "hi"), "a", 1, 2))
    assert d.body == (FactAt("bcast", ("a", "hi"), 1), FactAt("node", ("a", "c"), 1))
    assert_program_fact(step.body[0], "bcast", ("a", "hi"), 1, BCAST_A_HI)
    assert_program_fact(step.body[1], "node", ("a", "c"), 1, NODE_A_C)


@pytest.fixture(scope="module")
def broadcast():
    return run_example("broadcast.ded", ticks=5, provenance=True)


def test_a_message_shows_its_sender_send_tick_receiver_and_arrival(broadcast):
    assert_message_lineage(why(broadcast, "log", ("c", "hi"), 2))


def test_a_persisted_fact_comes_from_its_fact_of_the_previous_tick(broadcast):
    answer = why(broadcast, "log", ("c", "hi"), 3)
    step = only(answer.steps)
    assert (step.derivation.kind, step.derivation.pos) == ("next", PERSIST_LOG)
    assert step.derivation.body == (FactAt("log", ("c", "hi"), 2),)
    assert_message_lineage(step.body[0])


def test_two_alternative_derivations_are_both_given():
    # tick 1: log("a","x"); a sends log("b","x") at 1 (arrives 2) and again at 2
    # (from log("a","x")@2, persisted): log("b","x")@3 is persisted from tick 2
    # and is also the message sent at 2.
    trace = run_text('''
        log(N, P)@next :- log(N, P);
        log(M, P)@async :- log(N, P), node(N, M);
        node("a", "b");
        log("a", "x")@1;''', ticks=3, provenance=True)
    answer = why(trace, "log", ("b", "x"), 3)
    persisted, message = answer.steps
    assert persisted.derivation.kind == "next"
    assert persisted.derivation.body == (FactAt("log", ("b", "x"), 2),)
    assert message.derivation.message == Message("log", ("b", "x"), "a", 2, 3)
    assert message.derivation.body == (FactAt("log", ("a", "x"), 2), FactAt("node", ("a", "b"), 2))
    # log("b","x")@2 has one derivation only: the message sent at 1
    assert only(persisted.body[0].steps).derivation.message == Message("log", ("b", "x"), "a", 1, 2)
    text = answer.text()
    assert "derivation 1 of 2: persisted from tick 2" in text
    assert 'derivation 2 of 2: message from "a" sent at tick 2, received by "b" at tick 3' in text


def test_two_rules_for_one_fact():
    trace = run_text('p("a", 1); q("a", 1);\nr(L, X) :- p(L, X);\nr(L, X) :- q(L, X);', ticks=1, provenance=True)
    steps = why(trace, "r", ("a", 1), 1).steps
    assert [(s.derivation.rule, s.derivation.body) for s in steps] == [
        (0, (FactAt("p", ("a", 1), 1),)), (1, (FactAt("q", ("a", 1), 1),))]


def paths(node, seen=()):
    """Every root-to-leaf list of facts of a tree."""
    if not any(step.body for step in node.steps):
        yield (*seen, node.fact)
    for step in node.steps:
        for child in step.body:
            yield from paths(child, (*seen, node.fact))


def test_recursion_gives_finite_trees_without_cycles():
    trace = run_example("transitive_closure.ded", ticks=1, provenance=True)
    # path(a,a): path(a,a) :- edge(a,b), path(b,a); path(b,a) :- edge(b,c), path(c,a);
    # path(c,a) :- edge(c,a). Its other derivation, edge(c,a), path(a,a), uses
    # path(a,a) itself, and path(d,a) does not hold: a single chain.
    node = why(trace, "path", ("g", "a", "a"), 1)
    chain = []
    while node.fact.relation == "path":
        step = only(node.steps)
        chain.append((node.fact.row, step.derivation.rule, [f.row for f in step.derivation.body]))
        node = step.body[-1]
    assert chain == [(("g", "a", "a"), 1, [("g", "a", "b"), ("g", "b", "a")]),
                     (("g", "b", "a"), 1, [("g", "b", "c"), ("g", "c", "a")]),
                     (("g", "c", "a"), 0, [("g", "c", "a")])]
    for row in trace.relation("path", 1):  # no fact is used for its own derivation
        for branch in paths(why(trace, "path", row, 1)):
            assert len(set(branch)) == len(branch), branch


def test_negation_is_shown_as_absent():
    trace = run_text('lonely(L) :- node(L), notin edge(L, _);\nnode("a"); node("b"); edge("a", "b");',
                     ticks=1, provenance=True)
    d = only(why(trace, "lonely", ("b",), 1).steps).derivation
    assert d.body == (FactAt("node", ("b",), 1),)
    assert d.absent == (Absent("edge", ("b", None), 1),)
    assert 'edge("b", _) was absent at 1' in why(trace, "lonely", ("b",), 1).text()
    not_lonely = why(trace, "lonely", ("a",), 1)
    assert not not_lonely.holds
    assert not_lonely.closest.matched == (FactAt("node", ("a",), 1),)
    assert not_lonely.closest.present == ('edge("a", _)@1',)


def test_a_fact_that_does_not_hold_gives_the_closest_rule(broadcast):
    # log("d","yo") never holds (the header). The @async rule, sending at tick 2,
    # matches bcast("b","yo")@2 but "b" has no neighbour "d": 1 of 2 atoms, more
    # than the persistence rule (log("d","yo")@2: 0 of 1) and the local rule
    # (bcast("d","yo")@3: 0 of 1).
    answer = why(broadcast, "log", ("d", "yo"), 3)
    assert not answer.holds and answer.messages == ()
    c = answer.closest
    assert (c.pos, c.tick) == (ASYNC_LOG, 2)
    assert c.matched == (FactAt("bcast", ("b", "yo"), 2),)
    assert c.missing == ('node("b", "d")@2',)
    assert answer.text().splitlines()[0] == 'log("d", "yo")@3 does not hold'


def test_a_lost_message_is_reported():
    trace = run_example("broadcast.ded", ticks=3, network=Network.parse("omit=a>c@1"), provenance=True)
    answer = why(trace, "log", ("c", "hi"), 2)
    assert not answer.holds
    assert answer.messages == (Message("log", ("c", "hi"), "a", 1, None),)
    assert (answer.closest.pos, answer.closest.tick, answer.closest.missing) == (ASYNC_LOG, 1, ())


def test_why_needs_provenance_and_a_fitting_row():
    trace = run_example("broadcast.ded", ticks=2)
    with pytest.raises(ValueError, match="provenance=True"):
        why(trace, "log", ("c", "hi"), 2)
    trace = run_example("broadcast.ded", ticks=2, provenance=True)
    with pytest.raises(ValueError, match="'log' has 2 columns, not 1"):
        why(trace, "log", ("c",), 2)


# ------------------------------------------------------------ the command line

def why_cli(capsys, *argv):
    status = exit_code(["why", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_text(capsys):
    status, out, err = why_cli(capsys, BROADCAST, "--ticks", "3", 'log("c", "hi")@3')
    assert status == 0, err
    assert out.splitlines() == [
        'log("c", "hi")@3',
        f'  persisted from tick 2 by rule {PERSIST_LOG}: log(N, P)@next :- log(N, P);',
        '    log("c", "hi")@2',
        f'      message from "a" sent at tick 1, received by "c" at tick 2, by rule {ASYNC_LOG}: '
        'log(M, P)@async :- bcast(N, P), node(N, M);',
        '        bcast("a", "hi")@1',
        f'          fact of the program ({BCAST_A_HI})',
        '        node("a", "c")@1',
        f'          fact of the program ({NODE_A_C})']


def test_cli_json(capsys):
    status, out, err = why_cli(capsys, BROADCAST, "--ticks", "2", 'log("c", "hi")@2', "--format", "json")
    assert status == 0, err
    answer = json.loads(out)
    facts = {f["id"]: f for f in answer["facts"]}
    root = facts[answer["fact"]]
    assert (root["relation"], root["row"], root["tick"]) == ("log", ["c", "hi"], 2)
    (d,) = root["derivations"]
    assert (d["kind"], d["pos"]) == ("message", ASYNC_LOG)
    assert d["message"] == {"sender": "a", "send_tick": 1, "receiver": "c", "arrival": 2}
    assert [(facts[i]["relation"], facts[i]["row"], facts[i]["derivations"][0]["kind"]) for i in d["body"]] == [
        ("bcast", ["a", "hi"], "fact"), ("node", ["a", "c"], "fact")]


def test_cli_does_not_hold_exits_1(capsys):
    status, out, err = why_cli(capsys, BROADCAST, "--ticks", "3", 'log("d", "yo")@3', "--format", "json")
    assert status == 1 and err == ""
    answer = json.loads(out)
    assert answer["holds"] is False
    assert (answer["closest"]["missing"], answer["closest"]["tick"]) == (['node("b", "d")@2'], 2)


@pytest.mark.parametrize("argv,message", [
    (["--ticks", "3", 'log("c", X)@3'], "fact pattern 'log(\"c\", X)@3': fact 'log' has variable 'X'"),
    (["--ticks", "3", 'log("c", "hi")'], "fact pattern 'log(\"c\", \"hi\")': expected one fact with its tick"),
    (["--ticks", "3", 'log("c", "hi"@3'], "fact pattern 'log(\"c\", \"hi\"@3': syntax error"),
    (["--ticks", "3", 'nope("c")@3'], "fact pattern 'nope(\"c\")@3': unknown relation 'nope'"),
    (["--ticks", "3", 'log("c")@3'], "fact pattern 'log(\"c\")@3': 'log' has 2 columns, not 1"),
    (["--ticks", "3", 'log("c", "hi")@4'], "fact pattern 'log(\"c\", \"hi\")@4': tick 4 is outside the run"),
    (["--ticks", "3", 'log("c", "hi")@3', "--engine", "duckdb"],
     "why: error: argument --engine: invalid choice: 'duckdb' (choose from 'reference', 'spark')"),
    (["--ticks", "3", 'log("c", "hi")@3', "--format", "svg"],
     "why: error: argument --format: invalid choice: 'svg' (choose from 'text', 'json', 'html')"),
    (["--ticks", "x", 'log("c", "hi")@3'], "why: error: argument --ticks: expected an integer, got 'x'"),
])
def test_cli_usage_errors_exit_2_with_one_line(capsys, argv, message):
    status, out, err = why_cli(capsys, BROADCAST, *argv)
    assert status == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"sparkdedalus{'' if message.startswith('why: ') else ': error:'} {message}"), line


def test_cli_a_bad_program_gives_diagnostics(tmp_path, capsys):
    path = tmp_path / "bad.ded"
    path.write_text('p(L, X) :- q(L);\nq("a");\n')
    status, out, err = why_cli(capsys, str(path), "--ticks", "1", 'q("a")@1')
    assert status == 1 and out == ""
    assert f"{path}:1:6: error: variable 'X' in the head is not bound" in err
    assert "Traceback" not in err


# ------------------------------------------------------------ it costs nothing when off

def observed(trace):
    return ([trace.at(t) for t in range(1, trace.ticks + 1)], trace.messages,
            [{k: v for k, v in s.items() if k != "seconds"} for s in trace.stats])


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(EXAMPLES, "**", "*.ded"), recursive=True)),
                         ids=os.path.basename)
def test_provenance_leaves_the_run_unchanged(path):
    name, network = os.path.relpath(path, EXAMPLES), Network.parse("delay=uniform(1,3),seed=5")
    off = run_example(name, ticks=6, network=network, gc=True)
    on = run_example(name, ticks=6, network=network, gc=True, provenance=True)
    assert off.provenance is None and on.provenance is not None
    assert observed(on) == observed(off)


# ------------------------------------------------------------ docs/provenance.md

def doc_sessions():
    """(argv, output) of every "$ sparkdedalus why ..." block of docs/provenance.md."""
    text = open(os.path.join(EXAMPLES, os.pardir, "docs", "provenance.md"), encoding="utf-8").read()
    for block in text.split("```")[1::2]:
        lines = block.strip("\n").splitlines()
        if lines and lines[0].startswith("$ sparkdedalus why "):
            yield shlex.split(lines[0][len("$ sparkdedalus "):]), lines[1:]


@pytest.mark.parametrize("argv,output", [pytest.param(*s, id=" ".join(s[0][3:])) for s in doc_sessions()])
def test_the_documented_outputs_are_true(capsys, monkeypatch, tmp_path, argv, output):
    monkeypatch.chdir(os.path.join(EXAMPLES, os.pardir))
    written = {}
    if "--out" in argv:  # the file goes to a temporary directory; the output names it as the doc does
        i = argv.index("--out") + 1
        written = {str(tmp_path / argv[i]): argv[i]}
        argv = argv[:i] + list(written) + argv[i + 1:]
    exit_code(argv)
    out = capsys.readouterr().out
    for path, name in written.items():
        assert os.path.exists(path)
        out = out.replace(path, name)
    assert out.splitlines() == output
