"""Garbage collection in the reference evaluator (`run(..., gc=True)`): the
relations GC does not collect are identical with and without it at every tick,
collected relations only lose facts, and the persisted state stays bounded on
voting and two-phase commit with many requests. Expected facts are derived by
hand in the comments; a wrong `// @gc` annotation makes the outputs differ."""

from __future__ import annotations

import glob
import json
import importlib.util
import os
import re
import textwrap

import pytest

from frontend_helpers import exit_code
from reference_helpers import EXAMPLES, REPO, history
from sparkdedalus import Program
from sparkdedalus.analysis.gc import gc_rules
from sparkdedalus.reference import run
from test_analysis_gc import ANNOTATED, DR_PLUS, HELD, PUNCTUATION

_spec = importlib.util.spec_from_file_location("gc_workloads", os.path.join(REPO, "benchmarks", "gc_workloads.py"))
gc_workloads = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gc_workloads)


def both(text: str, ticks: int):
    program = Program.parse(textwrap.dedent(text).lstrip("\n"), "t.ded")
    return program, run(program, ticks, gc=True), run(program, ticks)


def test_dr_plus_drops_the_blocked_fact_once_y_holds():
    _, on, off = both(DR_PLUS, 4)
    # y("a", 1) holds from tick 2 (mark), so x("a", 1) is not carried to tick 3
    assert history(on, "x") == {1: {("a", 1), ("a", 2)}, 2: {("a", 1), ("a", 2)}, 3: {("a", 2)}, 4: {("a", 2)}}
    assert history(off, "x")[4] == {("a", 1), ("a", 2)}
    assert history(on, "z") == history(off, "z") == {1: {("a", 1), ("a", 2)}, 2: {("a", 2)}, 3: {("a", 2)},
                                                     4: {("a", 2)}}
    # carried rows: x then y; tick 2 drops x("a", 1)
    assert [s["persisted_rows"] for s in on.stats] == [2, 2, 2, 2]
    assert [s["collected_rows"] for s in on.stats] == [0, 1, 0, 0]
    assert [s["persisted_rows"] for s in off.stats] == [2, 3, 3, 3]


def test_punctuation_drops_the_order_once_closed():
    _, on, off = both(PUNCTUATION, 5)
    # closed("a", "o1") from tick 3; item i2 (tick 4) is blocked by it
    assert history(on, "order") == {1: {("a", "o1", 10)}, 2: {("a", "o1", 10)}, 3: {("a", "o1", 10)}, 4: set(),
                                    5: set()}
    assert history(off, "order")[5] == {("a", "o1", 10)}
    expected = {1: set(), 2: {("a", "o1", "i1", 10)}, 3: set(), 4: set(), 5: set()}
    assert history(on, "line") == history(off, "line") == expected


def test_held_drops_what_the_log_holds():
    _, on, off = both(HELD, 5)
    # log gets m1 at tick 2 and m2 at tick 4; seen loses each at the end of those ticks
    assert history(on, "seen") == {1: {("a", "m1")}, 2: {("a", "m1")}, 3: {("a", "m2")}, 4: {("a", "m2")},
                                   5: set()}
    assert history(off, "seen")[5] == {("a", "m1"), ("a", "m2")}
    assert history(on, "log") == history(off, "log") == {
        1: set(), 2: {("a", "m1")}, 3: {("a", "m1")}, 4: {("a", "m1"), ("a", "m2")}, 5: {("a", "m1"), ("a", "m2")}}


def test_annotation_keeps_the_declared_output():
    _, on, off = both(ANNOTATED, 5)
    # slot 1 chosen at tick 2 (2 votes), slot 2 at tick 4; slot 1's votes go after tick 2
    assert history(on, "chosen") == history(off, "chosen") == {
        1: set(), 2: {("a", 1)}, 3: {("a", 1)}, 4: {("a", 1), ("a", 2)}, 5: {("a", 1), ("a", 2)}}
    assert history(on, "vote")[3] == {("a", 2, "x")}
    # the count is no output: with GC slot 1 has no count any more
    assert ("a", 1, 2) in history(off, "nvotes")[3] and ("a", 1, 2) not in history(on, "nvotes")[3]


def test_a_wrong_annotation_changes_the_outputs():
    """Votes go as soon as the slot has one, so slot 1 never reaches two
    votes: chosen("a", 1) holds from tick 2 without GC and never with it."""
    wrong = ANNOTATED.replace("when chosen(L, S)", "when started(L, S)") + \
        ".persist started\nstarted(L, S) :- vote(L, S, _);\n"
    program, on, off = both(wrong, 5)
    assert [rule.pattern for rule in gc_rules(program)] == ["annotation"]
    assert history(off, "chosen")[2] == {("a", 1)}
    assert history(on, "chosen")[2] == set()
    assert differences(program, on, off, program.outputs)


def differences(program, on, off, relations) -> list:
    return [(t, r) for t in range(1, on.ticks + 1) for r in relations if on.relation(r, t) != off.relation(r, t)]


def _ticks(path: str) -> int:
    match = re.search(r"^// ticks: (\d+)", open(path).read(), re.MULTILINE)
    return int(match.group(1)) if match else 10


EXAMPLE_FILES = sorted(glob.glob(os.path.join(EXAMPLES, "*.ded")) + glob.glob(os.path.join(EXAMPLES, "protocols", "*.ded")))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: os.path.relpath(p, EXAMPLES))
def test_examples_are_the_same_with_and_without_gc(path):
    program = Program.from_files(path)
    ticks = _ticks(path) + 5
    on, off = run(program, ticks, gc=True), run(program, ticks)
    collected = {rule.relation for rule in gc_rules(program)}
    assert differences(program, on, off, [r for r in program.relations if r not in collected]) == []
    for name in collected:
        for t in range(1, ticks + 1):
            assert on.relation(name, t) <= off.relation(name, t)


@pytest.mark.parametrize("name, relations", [
    ("voting.ded", {"ballot", "opinion"}), ("nonconfluent.ded", {"statement"}), ("sealed.ded", {"statement"})])
def test_gc_does_collect_on_some_examples(name, relations):
    program = Program.from_files(os.path.join(EXAMPLES, name))
    assert {rule.relation for rule in gc_rules(program)} == relations
    assert sum(s["collected_rows"] for s in run(program, _ticks(os.path.join(EXAMPLES, name)) + 5, gc=True).stats) > 0


def check_workload(name: str, requests: int, ticks: int) -> None:
    """Outputs equal at every tick; the program's own state (persisted rows
    outside its declared outputs) flat with GC and growing linearly without."""
    program = Program.parse(getattr(gc_workloads, name)(requests, ticks), f"{name}.ded")
    on, off = run(program, ticks, gc=True), run(program, ticks)
    assert differences(program, on, off, program.outputs) == []

    def state(trace):
        return [sum(n for rel, n in s["persisted"].items() if rel not in program.outputs) for s in trace.stats]

    early = slice(ticks // 10, ticks // 5)
    late = slice(ticks * 7 // 10, ticks - 10)
    with_gc, without = state(on), state(off)
    assert max(with_gc[late]) <= max(with_gc[early]) + 6  # bounded: no more than a few requests' worth
    assert min(without[late]) >= 3 * max(without[early])  # linear: 0.7 T against 0.2 T
    assert on.stats[-1]["persisted_rows"] < off.stats[-1]["persisted_rows"]  # the outputs grow in both


@pytest.mark.parametrize("name", ["voting", "two_phase_commit"])
def test_workloads_small(name):
    check_workload(name, 100, 60)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["voting", "two_phase_commit"])
def test_workloads_1000_requests_500_ticks(name):
    check_workload(name, 1000, 500)


# ---------------------------------------------------------------- the CLI

def cli(capsys, *argv):
    status = exit_code(["run", *argv])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_run_gc_and_stats(capsys, tmp_path):
    voting = os.path.join(EXAMPLES, "voting.ded")
    stats = {}
    for mode in ("on", "off"):
        path = tmp_path / f"{mode}.json"
        status, out, _ = cli(capsys, voting, "--ticks", "8", "--engine", "reference", "--gc", mode,
                             "--relations", "ballot", "--stats", str(path))
        assert status == 0
        stats[mode] = json.loads(path.read_text())
        # every ballot is voted on by tick 5: GC has dropped them all by tick 8
        assert (json.loads(out)["relations"]["ballot"] == []) == (mode == "on")
    assert stats["on"]["gc"] and stats["on"]["gc_rules"] == ["ballot(P, L, C, B) when voted(P, B)",
                                                             "opinion(P, B, V) when voted(P, B)"]
    assert not stats["off"]["gc"] and stats["off"]["gc_rules"] == []
    assert len(stats["on"]["persisted_rows_per_tick"]) == 8
    assert stats["on"]["persisted_rows_per_tick"][-1] < stats["off"]["persisted_rows_per_tick"][-1]
    # the default (auto) collects nothing in a program that declares no .output, as voting.ded
    path = tmp_path / "default.json"
    cli(capsys, voting, "--ticks", "8", "--engine", "reference", "--stats", str(path))
    assert json.loads(path.read_text())["persisted_rows_per_tick"] == stats["off"]["persisted_rows_per_tick"]
    assert json.loads(path.read_text())["gc_rules"] == []


@pytest.mark.parametrize("argv, message", [
    (["--engine", "reference", "--gc", "maybe"], "argument --gc: invalid choice: 'maybe' (choose from 'auto', 'on', 'off')"),
    (["--gc", "on", "--engine", "spark", "--relations", "nope"], "--relations: unknown relation 'nope'"),
])
def test_run_gc_usage_errors(capsys, argv, message):
    status, _, err = cli(capsys, os.path.join(EXAMPLES, "voting.ded"), "--ticks", "3", *argv)
    assert status == 2 and message in err and "Traceback" not in err
