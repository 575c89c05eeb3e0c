"""`export hydroflow`: one `datalog!` string per component (sparkdedalus/hydroflow/export.py).
Importing an export gives the same program: the same rules, facts, outputs and
persistence for the three imported protocols, and the same runs for their hand
translations; what Hydroflow cannot say is one located line each, exit 2."""

from __future__ import annotations

import os
import re

import pytest

from frontend_helpers import exit_code
from sparkdedalus import Program
from sparkdedalus.hydroflow import HydroflowError, import_hydroflow, import_text
from sparkdedalus.hydroflow.export import export_components, export_files
from sparkdedalus.syntax.loader import load_text
from test_hydroflow_import import HYDROFLOW, PROTOCOLS, facts_of, history, roles_of


def shape(program: Program) -> tuple:
    rules = [f"persist {r.head.name}" if r.persistence else re.sub(r"_#\d+", "_", r.text()) for r in program.rules]
    return (sorted(rules), sorted(f"{f.atom} {f.tick}" for f in program.facts),
            sorted(program.outputs), sorted(program.persisted), program.components)


def reimport(path: str, out_dir, name: str, extra: str = "") -> Program:
    roles, nodes, _ = PROTOCOLS[name]
    export_files([path], str(out_dir))
    return import_hydroflow([(role, str(out_dir / f"{role}.rs")) for role in roles], nodes, extra)


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_import_of_an_export_is_the_same_program(name, tmp_path):
    roles, nodes, _ = PROTOCOLS[name]
    imported = tmp_path / "imported.ded"
    imported.write_text(import_text(roles_of(name), nodes), encoding="utf-8")
    again = reimport(str(imported), tmp_path / "out", name)
    assert shape(again) == shape(Program.from_files(str(imported)))


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_a_hand_translation_exported_and_imported_runs_the_same(name, tmp_path):
    _, _, ticks = PROTOCOLS[name]
    hand = os.path.join(HYDROFLOW, name, "hand.ded")
    again = reimport(hand, tmp_path, name, facts_of(name))
    want = Program.from_files(hand, os.path.join(HYDROFLOW, name, "facts.ded"))
    assert [{r: rows for r, rows in tick.items() if r in want.relations} for tick in history(again, ticks)] == \
        history(want, ticks)


def test_channels_inputs_and_sinks():
    files = export_components(load_text(
        "component a { out(C, X)@async :- req(L, C, X); m(M, X)@async :- req(L, M, X); .output out }\n"
        'component b { .persist s  s(L, X) :- m(L, X); n("b", 1); }'))
    a, b = files["a"], files["b"]
    assert ".input req `source_stream(req_input)`" in a
    assert ".async out `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(out_sink)` `null::<()>()`" in a
    assert ".output out" not in a  # a sink to clients says so by its .async
    assert ".async m `null::<()>()` `source_stream(m_source)" in b and ".persist s" in b
    assert ".input n `repeat_iter([(1,)])`" in b


# ---------------------------------------------------------------- what Hydroflow cannot say

def refused(text: str) -> list[str]:
    with pytest.raises(HydroflowError) as caught:
        export_components(load_text(text, "p.ded"))
    return caught.value.lines


def test_a_rule_over_two_locations():
    assert refused("component a { h(L, X) :- p(L, X), q(M, X); }") == [
        "p.ded:1:15: the rule reads more than one location (or a constant one): a Hydroflow rule runs at one node"]


def test_its_own_location_as_a_value():
    (line,) = refused("component a { h(M, L)@async :- p(L, M); }")
    assert line.startswith("p.ded:1:15: the rule uses its own location L as a value")


def test_a_string_in_a_rule():
    assert refused('component a { h(L, "x") :- p(L, X); }') == [
        "p.ded:1:20: the constant 'x': Hydroflow rules compute over non-negative integers only"]


def test_a_constant_in_a_body_atom():
    (line,) = refused("component a { h(L, X) :- p(L, X, 3); }")
    assert line.startswith("p.ded:1:34: a constant or an expression in a body atom")


def test_a_time_qualified_atom():
    assert refused("component a { h(L, X) :- p(L, X)@2; }") == ["p.ded:1:26: a time-qualified atom has no Hydroflow counterpart"]


def test_avg():
    assert refused("component a { h(L, avg<X>) :- p(L, X); }") == ["p.ded:1:20: avg<> has no Hydroflow counterpart"]


def test_facts_that_differ_between_nodes():
    (line,) = refused('component a { h(L, X) :- p(L, X); p("n1", 1); p("n2", 2); }')
    assert line.startswith("p.ded:1:35: the facts of p are not the same at every node of the component (n1, n2)")


def test_a_fact_at_a_later_tick():
    assert refused('component a { h(L, X) :- p(L, X); p("n1", 1)@3; }') == [
        "p.ded:1:35: a fact at tick 3: a Hydroflow .input holds from the first tick or at every tick"]


def test_cli_exports_and_refuses(tmp_path, capsys):
    out = tmp_path / "out"
    assert exit_code(["export", "hydroflow", os.path.join(HYDROFLOW, "voting", "hand.ded"), "--out-dir", str(out)]) == 0
    assert sorted(os.listdir(out)) == ["leader.rs", "participant.rs"]
    capsys.readouterr()
    bad = tmp_path / "bad.ded"
    bad.write_text("component a { h(L, X) :- p(L, X)@2; }\n", encoding="utf-8")
    assert exit_code(["export", "hydroflow", str(bad), "--out-dir", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err == f"{bad}:1:26: a time-qualified atom has no Hydroflow counterpart\n"


def test_a_library_function():
    (line,) = refused("component a { h(L, H) :- p(L, X), hash(X, H); }")
    assert line.startswith("p.ded:1:35: hash is a library function, which Hydroflow's dialect has not")
