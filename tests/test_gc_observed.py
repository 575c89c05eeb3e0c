"""GC keeps what a user observes (issue 31, point 5): the default `--gc auto`
collects only relations outside the declared outputs, and nothing in a
program that declares no `.output`; `--gc on` applies every GC rule the
analysis finds; a printed relation that GC collects is named (one line on
stderr, `"gc_collected"` in JSON). No Spark: the reference engine, and `show`
on a manifest and rows given in place of a store.

The token-passing program is the issue's, from Molly's corpus: `begin("a", 1)`
at tick 1 makes `wait("a", 1)` hold from tick 2 on (persisted), the token
sent at tick 3 makes `win("a", 1)` hold from tick 3 on. The GC rule
`wait(H, T) when win(H, T)` (held) drops `wait("a", 1)` at the end of tick 3,
so with it `wait` is empty at tick 10, though in Dedalus `wait("a", 1)` holds."""

from __future__ import annotations

import json
import textwrap

import pytest

from frontend_helpers import exit_code
from sparkdedalus import Program
from sparkdedalus.analysis.gc import gc_rules, rules_for
from test_analysis_gc import ANNOTATED

TOKEN = """\
wait(H, T)@next :- begin(H, T);
wait(H, T)@next :- wait(H, T);
win(H, T) :- wait(H, T), send_token(H, _, T);
win(H, T)@next :- win(H, T);
begin("a", 1)@1;
send_token("a", "b", 1)@3;
"""
NOTE = "garbage-collected: "


def run(capsys, tmp_path, text: str, *argv) -> tuple:
    source = tmp_path / "token.ded"
    source.write_text(text)
    status = exit_code(["run", str(source), "--engine", "reference", "--ticks", "10", *argv])
    out = capsys.readouterr()
    assert status == 0, out.err
    return out.out, out.err


def test_token_passing_keeps_wait_by_default_and_says_so_with_gc_on(capsys, tmp_path):
    out, err = run(capsys, tmp_path, TOKEN)  # no .output: auto collects nothing
    assert json.loads(out) == {"tick": 10, "relations": {"begin": [], "send_token": [], "wait": [["a", 1]],
                                                         "win": [["a", 1]]}}
    assert NOTE not in err
    out, err = run(capsys, tmp_path, TOKEN, "--gc", "on")
    assert json.loads(out)["relations"]["wait"] == []
    assert json.loads(out)["gc_collected"] == ["wait"]
    assert [line for line in err.splitlines() if NOTE in line] == [
        "sparkdedalus: garbage-collected: wait (facts GC removed are not shown, though they hold; "
        "--gc off keeps every fact, docs/gc.md)"]
    out, err = run(capsys, tmp_path, TOKEN, "--gc", "off")
    assert json.loads(out)["relations"]["wait"] == [["a", 1]] and "gc_collected" not in json.loads(out)
    assert NOTE not in err


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_the_line_is_there_in_every_format(capsys, tmp_path, fmt):
    out, err = run(capsys, tmp_path, TOKEN, "--gc", "on", "--format", fmt)
    assert "garbage-collected: wait " in err and "gc_collected" not in out


def test_auto_collects_outside_the_declared_outputs_and_names_what_it_prints(capsys, tmp_path):
    declared = ".output win\n" + TOKEN
    out, err = run(capsys, tmp_path, declared)  # prints win only: nothing collected is shown
    assert json.loads(out) == {"tick": 10, "relations": {"win": [["a", 1]]}}
    assert NOTE not in err
    out, err = run(capsys, tmp_path, declared, "--relations", "wait,win", "--stats", str(tmp_path / "s.json"))
    assert json.loads(out) == {"tick": 10, "relations": {"wait": [], "win": [["a", 1]]}, "gc_collected": ["wait"]}
    assert "garbage-collected: wait " in err
    assert json.loads((tmp_path / "s.json").read_text())["gc_rules"] == ["wait(H, T) when win(H, T)"]


def test_rules_for_each_mode():
    token = Program.parse(TOKEN)
    assert [r.text() for r in rules_for(token, "on")] == ["wait(H, T) when win(H, T)"]
    assert rules_for(token, "auto") == rules_for(token, "off") == []
    # an annotation may name a declared output: on applies it, auto does not
    annotated = Program.parse(textwrap.dedent(ANNOTATED) + "// @gc chosen(L, S) when vote(L, S, _)\n")
    assert sorted(r.relation for r in gc_rules(annotated)) == ["chosen", "vote"]
    assert sorted(r.relation for r in rules_for(annotated, "on")) == ["chosen", "vote"]
    assert [r.relation for r in rules_for(annotated, "auto")] == ["vote"]
    with pytest.raises(ValueError, match="gc mode must be one of auto, on, off"):
        rules_for(token, "maybe")


def test_gc_option_choices(capsys, tmp_path):
    source = tmp_path / "token.ded"
    source.write_text(TOKEN)
    assert exit_code(["run", str(source), "--engine", "reference", "--ticks", "3", "--gc", "maybe"]) == 2
    err = capsys.readouterr().err
    assert "argument --gc: invalid choice: 'maybe' (choose from 'auto', 'on', 'off')" in err
    assert "Traceback" not in err


def test_show_names_a_collected_relation(capsys, monkeypatch):
    """`show` of a stored relation the run collected (the manifest's GC rules):
    the line on stderr, `"gc_collected"` in JSON, a mark in the listing; none
    for a relation no rule collects."""
    from sparkdedalus.store import read
    from sparkdedalus.store.manifest import Manifest, RelationInfo
    relations = {name: RelationInfo(name, ("loc", "c1"), ("string", "int")) for name in ("wait", "win")}
    stored = Manifest("r", "p", "n", relations, 10, gc=["wait(H, T) when win(H, T)"])
    monkeypatch.setattr(read, "manifest", lambda store: stored)
    monkeypatch.setattr(read, "relation_rows", lambda store, name, at: {("a", 1)} if name == "win" else set())
    assert exit_code(["show", "runs/x", "wait", "--format", "json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == {"tick": 10, "relations": {"wait": []}, "gc_collected": ["wait"]}
    assert "garbage-collected: wait " in out.err
    assert exit_code(["show", "runs/x", "win", "--format", "json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == {"tick": 10, "relations": {"win": [["a", 1]]}} and NOTE not in out.err
    assert exit_code(["show", "runs/x"]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert [line for line in listing if "garbage-collected" in line] == [
        "  wait(loc: string, c1: int)  (garbage-collected: not every fact that holds is stored)"]


def test_the_engines_take_the_modes_too():
    """`reference.run(..., gc=MODE)` (and `Engine.run`, through the same
    `analysis.gc.applied`): the modes of `--gc`; the library's default is no GC."""
    from sparkdedalus.reference import run as reference_run
    token = Program.parse(TOKEN)
    assert reference_run(token, 10, gc="on").relation("wait", 10) == set()
    for gc in ("auto", "off", False):
        assert reference_run(token, 10, gc=gc).relation("wait", 10) == {("a", 1)}
    assert reference_run(token, 10).relation("wait", 10) == {("a", 1)}
    with pytest.raises(ValueError, match="gc mode must be one of"):
        reference_run(token, 2, gc="maybe")
