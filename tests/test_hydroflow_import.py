"""`import hydroflow`: Hydroflow `datalog!` files, one per role, read into one program
(sparkdedalus/hydroflow/). The example protocols and microbenchmarks (examples/hydroflow/) import,
check and run on the reference evaluator exactly as their hand translations do with the
same facts; every construct of the dialect has its translation asserted; what cannot be
translated is one located line (FILE.rs:line:col), exit 2 from the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from frontend_helpers import EXAMPLES, exit_code
from sparkdedalus import Program
from sparkdedalus.hydroflow import HydroflowError, import_hydroflow, import_text
from sparkdedalus.hydroflow.rust_source import find_datalog
from sparkdedalus.hydroflow.translate import translate
from sparkdedalus.output import facts_json
from sparkdedalus.reference.evaluator import run

HYDROFLOW = os.path.join(EXAMPLES, "hydroflow")
#: example: (roles in order, --nodes, ticks)
PROTOCOLS = {
    "voting": (("leader", "participant"), {}, 6),
    "two_phase_commit": (("coordinator", "participant"), {"participant": ["p1", "p2", "p3"]}, 9),
    "paxos": (("proposer", "acceptor"), {}, 8),
    "monotonic": (("leader", "replica"), {}, 10),
    "dependencies": (("leader", "replica"), {}, 9),
    "state_machine": (("leader", "replica"), {}, 10),
    "functional": (("leader", "replica"), {"replica": ["r1", "r2", "r3"]}, 7),
    "cohashing": (("leader", "replica"), {}, 8),
    "monotonic_quorum": (("leader", "replica"), {}, 10),
    "dependencies_buckets": (("leader", "replica"), {}, 10),
    "functional_digest": (("leader", "replica"), {}, 8),
    "state_machine_register": (("leader", "replica"), {}, 9),
    "partial_rates": (("leader", "replica"), {}, 9),
}
#: the relation each answers its client with
REPLY = {"voting": "clientOut", "two_phase_commit": "clientOut", "paxos": "clientOut", "monotonic": "response",
         "dependencies": "reply", "state_machine": "clientOut", "functional": "clientOut", "cohashing": "clientOut",
         "monotonic_quorum": "done", "dependencies_buckets": "reply", "functional_digest": "clientOut",
         "state_machine_register": "clientOut", "partial_rates": "clientOut"}


def roles_of(name: str) -> list:
    roles, _, _ = PROTOCOLS[name]
    return [(role, os.path.join(HYDROFLOW, name, f"{role}.rs")) for role in roles]


def facts_of(name: str) -> str:
    with open(os.path.join(HYDROFLOW, name, "facts.ded"), encoding="utf-8") as handle:
        return handle.read()


def history(program: Program, ticks: int) -> list:
    trace = run(program, ticks)
    return [{name: trace.relation(name, tick) for name in program.relations} for tick in range(1, ticks + 1)]


def rules_of(text: str) -> list[str]:
    return [line.split("  //")[0].strip() for line in text.splitlines() if ":-" in line]


def datalog(text: str, file: str = "r.rs") -> list:
    """(role "r", Embedded) of a datalog! text starting on line 3 of a Rust file."""
    return [("r", find_datalog(f"fn main() {{\n    let df = datalog!(\n        r#\"{text}\"#);\n}}\n", file))]


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_a_protocol_runs_as_its_hand_translation(name):
    _, nodes, ticks = PROTOCOLS[name]
    imported = import_hydroflow(roles_of(name), nodes, facts_of(name))
    hand = Program.from_files(os.path.join(HYDROFLOW, name, "hand.ded"), os.path.join(HYDROFLOW, name, "facts.ded"))
    assert imported.components == hand.components
    assert set(imported.relations) == set(hand.relations)
    assert set(imported.outputs) == set(hand.outputs) and sorted(imported.persisted) == sorted(hand.persisted)
    got, want = history(imported, ticks), history(hand, ticks)
    assert got == want
    assert any(tick.get(REPLY[name]) for tick in got), "the protocol answers its client"


def test_each_construct_has_its_translation():
    text = translate(datalog(
        ".input n `repeat_iter([(2, \"a\"),])`\n"
        ".input once `source_iter([(true,),])`\n"
        ".persist s\n.static t\n.output o `for_each(|v| println!(\"{:?}\", v))`\n"
        "s(x) :- a(x, _), !b(x), (x + 1 > 2 * x % 3)\n"
        "t(x) :+ a(x, y), (x != y)\n"
        "o@(x - 1)(x, y) :~ a(x, y)\n"
        "c(count(x), sum(x), min(x), max(x), count(*)) :- a(x, _)\n"
        "d(y, choose(x)) :- a(x, y)."))
    assert ".persist s" in text and ".persist t" in text and ".output o" in text
    assert rules_of(text) == [
        "s(loc, x) :- a(loc, x, _), notin b(loc, x), x + 1 > 2 * x % 3;",
        "t(loc, x)@next :- a(loc, x, y), x != y;",
        "o(x - 1, x, y)@async :- a(loc, x, y);",
        "c(loc, count<x>, sum<x>, min<x>, max<x>, count<*>) :- a(loc, x, _);",
        "d(loc, y, x) :- a(loc, x, y), choose((loc, y), (x));",
    ]
    assert 'n("r", 2, "a");' in text and 'once("r", true)@1;' in text


def test_a_variable_named_loc_keeps_its_name():
    (rule,) = rules_of(translate(datalog("h(loc) :- a(loc)")))
    assert rule == "h(loc1, loc) :- a(loc1, loc);"


def test_channels_between_roles_are_one_relation_and_client_sinks_are_outputs():
    text = import_text(roles_of("voting"))
    assert "voteToReplica(addr, client, id, v)@async :- clientIn(loc, client, id, v), replicas(loc, addr);" in text
    assert "    .output clientOut" in text and ".output voteToReplica" not in text
    assert "//   clientIn (leader, received from outside): `source_stream(client_recv)" in text
    assert "//   replicas (leader, .input): `repeat_iter(peers.clone()) -> map(|p| (p,))`" in text
    assert 'numReplicas("leader", 3);' in text


def test_constant_inputs_are_at_every_node_of_their_role():
    text = import_text(roles_of("two_phase_commit"), {"participant": ["p1", "p2"]})
    assert 'willing("p1", 1);' in text and 'willing("p2", 1);' in text and 'willing("participant", 1);' not in text


def test_positions_map_back_to_the_rust_file():
    found = find_datalog("// x\nlet df = datalog!(r#\"a(x) :- b(x)\n  c(y) :- d(y)\"#);\n", "f.rs")
    assert (found.line, found.col) == (2, 22) and found.position(1, 1) == (2, 22) and found.position(2, 3) == (3, 3)


# ---------------------------------------------------------------- located errors, one kind each

def refused(text: str) -> list[str]:
    with pytest.raises(HydroflowError) as caught:
        translate(datalog(text))
    return caught.value.lines


def test_a_syntax_error_is_located_in_the_rust_file():
    assert refused("a(x) :- b(x)\n        c(x) :- ") == ["r.rs:4:17: syntax error in the datalog! text: unexpected end of input"]


def test_no_datalog_macro():
    with pytest.raises(HydroflowError, match=r"^r.rs:1:1: no datalog! macro call"):
        find_datalog("fn main() {}\n", "r.rs")


def test_an_unclosed_raw_string():
    with pytest.raises(HydroflowError, match=r"^r.rs:2:1: the datalog! raw string is never closed"):
        find_datalog('\ndatalog!(r#"a(x) :- b(x)\n', "r.rs")


def test_a_closure_used_as_a_value():
    assert refused(".input f `repeat_iter([(|x| x + 1,),])`") == [
        "r.rs:3:21: .input f: a Rust closure used as a value has no Datalog counterpart"]


def test_an_input_that_needs_host_code():
    (line,) = refused("a(x) :- b(x)\n.input f `source_iter(ids) -> filter(|x| *x > 3)`")
    assert line.startswith("r.rs:4:10: .input f needs host code: `filter(|x| *x > 3)`")


def test_a_value_of_the_host_is_a_relation_to_fill():
    text = translate(datalog(".input n `repeat_iter([(num_replicas,), (2,)])`"))
    assert "//   n (r, .input): `repeat_iter([(num_replicas,), (2,)])`" in text and 'n("r"' not in text


def test_index_has_no_counterpart():
    assert refused("h(x, index()) :- a(x)") == ["r.rs:3:17: index() numbers rows in arrival order and has no Dedalus counterpart"]


def test_a_location_on_a_local_rule():
    assert refused("h@x(y) :- a(x, y)") == ["r.rs:3:14: a location on the head of a `:-` rule: only `:~` rules send to another node"]


def test_every_problem_is_reported_in_order():
    lines = refused("h(x, index()) :- a(x)\n.input n `foo()`\nh@x(y) :+ a(x, y)")
    assert [line.split(": ")[0] for line in lines] == ["r.rs:3:17", "r.rs:4:10", "r.rs:5:3"]


# ---------------------------------------------------------------- the CLI

def test_cli_imports_and_the_program_checks(tmp_path, capsys):
    out = str(tmp_path / "voting.ded")
    argv = ["import", "hydroflow"] + [f"{role}={path}" for role, path in roles_of("voting")] + ["--out", out]
    assert exit_code(argv) == 0
    assert capsys.readouterr().out == f"wrote {out} (2 component(s))\n"
    assert exit_code(["check", out, os.path.join(HYDROFLOW, "voting", "facts.ded")]) == 0


def test_cli_refuses_in_one_located_line(tmp_path, capsys):
    rust = tmp_path / "bad.rs"
    rust.write_text('datalog!(r#"\n.input f `repeat_iter([(|x| x,),])`\n"#)\n', encoding="utf-8")
    out = tmp_path / "out.ded"
    assert exit_code(["import", "hydroflow", f"bad={rust}", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"{rust}:2:10: .input f: a Rust closure used as a value has no Datalog counterpart\n"
    assert not out.exists()


def test_cli_refuses_a_role_without_a_file(capsys):
    assert exit_code(["import", "hydroflow", "leader", "--out", "x.ded"]) == 2
    assert "expected KEY=VALUE, got 'leader'" in capsys.readouterr().err


#: a relation each protocol keeps, to compare at the last tick
KEPT = {"voting": "storage", "two_phase_commit": "log", "paxos": "log", "monotonic": "committed",
        "dependencies": "storage", "state_machine": "storage", "functional": "storage", "cohashing": "storage",
        "monotonic_quorum": "durable", "dependencies_buckets": "seen", "functional_digest": "requests",
        "state_machine_register": "applied", "partial_rates": "orders"}


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_the_spark_engine_runs_an_import_as_the_hand_translation(name, tmp_path):
    _, nodes, ticks = PROTOCOLS[name]
    imported = tmp_path / f"{name}.ded"
    imported.write_text(import_text(roles_of(name), nodes), encoding="utf-8")
    facts = os.path.join(HYDROFLOW, name, "facts.ded")
    command = os.path.join(os.path.dirname(sys.executable), "sparkdedalus")
    done = subprocess.run([command, "run", str(imported), facts, "--ticks", str(ticks), "--relations", KEPT[name],
                           "--format", "json", "--quiet"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    hand = Program.from_files(os.path.join(HYDROFLOW, name, "hand.ded"), facts)
    want = facts_json(ticks, {KEPT[name]: run(hand, ticks).relation(KEPT[name], ticks)})
    printed = json.loads(done.stdout)
    assert printed.pop("placement") == ["driver"] * ticks  # a small program's ticks run in the driver
    assert printed == want and want["relations"][KEPT[name]]


def test_cli_refuses_nodes_of_a_role_not_imported(capsys):
    argv = ["import", "hydroflow"] + [f"{role}={path}" for role, path in roles_of("voting")]
    assert exit_code(argv + ["--out", "x.ded", "--nodes", "replica=r1"]) == 2
    assert capsys.readouterr().err == "sparkdedalus: error: --nodes names a role that is not imported: replica\n"


def test_a_variable_named_true_stays_a_variable():
    (rule,) = rules_of(translate(datalog("h(true, false_) :- a(true, false_, false)")))
    assert rule == "h(loc, true_, false_) :- a(loc, true_, false_, false_1);"


def test_a_channel_a_role_sends_itself_is_no_output():
    sink, source = "`dest_sink(out)`", "`source_stream(back) -> map(|x| x.unwrap())`"
    text = translate(datalog(f".async r {sink} {source}\n.async s {sink} `null::<(u32,)>()`\n"
                             "r@x(x) :~ a(x)\ns@x(x) :~ r(x)"))
    assert ".output r" not in text and "    .output s" in text


def test_what_does_not_check_is_located_at_the_rust_rule():
    sources = datalog("n(x) :- a(x)\nn(x, y) :+ a(x), a(y)\nh(z) :- a(x)")
    with pytest.raises(HydroflowError) as caught:
        import_hydroflow_text(sources)
    assert [line.split(": ")[0] for line in caught.value.lines] == ["r.rs:4:1", "r.rs:5:1"]
    assert caught.value.lines[0] == "r.rs:4:1: relation 'n' has 3 argument(s) here but 2 at r.rs:3:12"
    assert "'z'" in caught.value.lines[1]


def import_hydroflow_text(sources):
    from sparkdedalus.hydroflow import checked
    return checked(translate(sources), "imported.ded")


def test_cli_refuses_what_does_not_check_at_the_rust_rule(tmp_path, capsys):
    rust = tmp_path / "bad.rs"
    rust.write_text('datalog!(r#"\nh(z) :- a(x)\n"#)\n', encoding="utf-8")
    assert exit_code(["import", "hydroflow", f"bad={rust}", "--out", str(tmp_path / "out.ded")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"{rust}:2:1: ") and "'z'" in line
    assert not (tmp_path / "out.ded").exists()


def test_a_relation_two_roles_have_is_two_relations():
    text = import_text(roles_of("state_machine"))
    assert "leader.ballots(loc, b) :- startBallot(loc, b);" in text
    assert "replica.ballots(loc, b) :- ballotToReplica(loc, b);" in text and " ballots(" not in text
