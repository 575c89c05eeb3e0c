"""`sparkdedalus optimize` (sparkdedalus/throughput/optimize.py, shell/optimize.py)
on the closed-loop voting and two-phase commit programs under a capacity: the
plan found is at least as fast (simulated) as a deliberately poor plan of the
same budget, partitioning the participants, which are not the bottleneck (the
leader handles 2n + 2 = 8 messages a command, a participant 2); it keeps the
budget; its JSON has the documented keys; `--out` writes a program that
simulates at the throughput printed; bad options are one line, exit 2; the
machines of a plan, a partially partitioned component's coordinator
included, are the nodes its run uses. No Spark."""

from __future__ import annotations

import json

import pytest

from frontend_helpers import exit_code
from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.shell.cli import main
from sparkdedalus.throughput import Step, apply_plan, measure
from sparkdedalus.throughput.optimize import machine_counts, optimize
from test_benchmarks_smoke import REPO

PROGRAMS = REPO / "benchmarks" / "programs"
#: small enough for a test: capacity 4, 16 clients, 60 ticks (throughput over ticks 31..60)
NETWORK, CLIENTS, TICKS = Network.parse("capacity=4"), 16, 60
#: protocol file -> (its scope, the poor plan: the participants on 2 partitions, 3 more machines)
CASES = {"voting_closed.ded": ("leader", "participant"), "two_phase_commit_closed.ded": ("coordinator", "participant")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_plan_beats_partitioning_a_component_that_is_not_the_bottleneck(name):
    program = Program.from_files(str(PROGRAMS / name))
    poor, _ = apply_plan(program, (Step("partition", "participant", partitions=2),), CASES[name])
    poor_throughput = measure(poor, CLIENTS, NETWORK, TICKS).throughput
    result = optimize(program, budget=7, clients=CLIENTS, network=NETWORK, ticks=TICKS)
    assert result.plan.machines <= 7 and result.base.machines == 4
    assert result.plan.throughput >= poor_throughput
    assert result.plan.throughput > 1.5 * result.base.throughput  # a decoupling off the server at least
    assert result.plan.steps and result.plan.steps[0].kind == "decouple"


def test_a_budget_of_the_program_as_written_keeps_it():
    program = Program.from_files(str(PROGRAMS / "voting_closed.ded"))
    result = optimize(program, budget=4, clients=8, network=NETWORK, ticks=40)
    assert result.plan.steps == () and result.plan.throughput == result.base.throughput


def test_the_command_prints_json_and_writes_the_program(tmp_path, capsys):
    out = tmp_path / "best.ded"
    code = main(["optimize", str(PROGRAMS / "voting_closed.ded"), "--budget", "6", "--clients", str(CLIENTS),
                 "--capacity", "4", "--ticks", str(TICKS), "--format", "json", "--out", str(out)])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert {"rewrites", "throughput", "base_throughput", "machines"} <= set(report)
    assert all(r.startswith(("--decouple ", "--partition ")) for r in report["rewrites"]) and report["rewrites"]
    assert report["machines"] <= 6 and report["throughput"] > report["base_throughput"]
    written = Program.from_files(str(out))
    assert measure(written, CLIENTS, NETWORK, TICKS).throughput == report["throughput"]


def test_the_command_prints_the_plan_as_text(capsys):
    assert main(["optimize", str(PROGRAMS / "voting_closed.ded"), "--budget", "5", "--clients", "8",
                 "--capacity", "4", "--ticks", "40"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("plan: sparkdedalus rewrite ") and "--decouple leader:" in text
    assert "machines: 5 (base 4)" in text and "searched: greedy on the bottleneck" in text


@pytest.mark.parametrize("args, message", [
    (["--budget", "0"], "--budget: expected an integer >= 1"),
    (["--budget", "3"], "already runs on 4 machines, over the budget of 3"),
    (["--budget", "8", "--capacity", "0"], "--capacity: expected an integer >= 1"),
    (["--budget", "8", "--clients", "x"], "--clients: expected an integer"),
])
def test_bad_options_are_one_line_exit_2(args, message, capsys):
    assert exit_code(["optimize", str(PROGRAMS / "voting_closed.ded"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_program_without_clients_is_refused(tmp_path, capsys):
    path = tmp_path / "plain.ded"
    path.write_text('component s { b(L, X)@async :- a(L, X); }\na("s", 1)@1;\n')
    assert exit_code(["optimize", str(path), "--budget", "3"]) == 2
    assert "not a closed-loop program" in capsys.readouterr().err


def test_on_paxos_it_finds_the_p2b_proxy_leader():
    """The proposer handles 10 messages a command (1 request, 3 p2a, 3 p2b, 3 decides).
    Moving the p2a sends to a proxy (functional decoupling, the paper's p2a proxy
    leaders) leaves it 8: C/10 -> C/8; moving the p2b collection (mutually independent,
    the paper's p2b proxy leaders) leaves it 4 (1 request, 3 p2a) and the proxy 6 (3 p2b,
    3 decides): C/10 -> C/6, the better move, and the budget (8) allows one."""
    program = Program.from_files(str(PROGRAMS / "paxos_closed.ded"))
    result = optimize(program, budget=8, clients=CLIENTS, network=NETWORK, ticks=TICKS)
    assert [s.option() for s in result.plan.steps] == [
        "--decouple proposer:accepted_by,accepts,chosen,decide,announced:p2b_collectors"]
    assert result.plan.throughput == pytest.approx(4 / 6) and result.plan.machines == 8


#: a front relaying the clients' requests to a backend w, and sending it a limit at tick 1;
#: the backend keeps the limit (conf, on every partition) and answers the jobs above it
#: (keyed by command): its distribution policy is partial, the limit ordered by a coordinator
FRONT = """component client { .persist committed
  request(S, K, C)@async :- client(C, S, K)@T, T == K + 4;
  committed(C, X) :- done(C, X);
  request(S, X + 1000, C)@async :- done(C, X), client(C, S, _); }
component front { job(W, X, S, C)@async :- request(S, X, C), backend(S, W);
  done(C, X)@async :- finished(S, X, C);
  limit(W, 0)@async :- backend(S, W)@T, T == 1; }
component backend { .persist conf
  conf(W, V) :- limit(W, V);
  ok(W, X, S, C) :- job(W, X, S, C), conf(W, V), X > V;
  finished(S, X, C)@async :- ok(W, X, S, C); }
client("c1", "s", 1); backend("s", "w");
"""


@pytest.mark.parametrize("k", [2, 3])
def test_a_partially_partitioned_component_counts_its_coordinator(k):
    """On K partitions the backend runs on w/p0 .. w/pK-1 and its coordinator
    w/coord, which takes the limit in and sends it to every partition: K + 1
    nodes, K + 2 machines with the front s, the nodes the run uses."""
    program = Program.parse(FRONT)
    base = measure(program, 2, NETWORK, 16)
    assert base.components == {"s": "front", "w": "backend"}
    steps = (Step("partition", "backend", partitions=k),)
    rewritten, notes = apply_plan(program, steps, ("front", "backend"))
    assert "ordered by a coordinator" in notes[-1]
    m = measure(rewritten, 2, NETWORK, 16)
    assert sorted(m.load) == sorted(["s", "w/coord", *(f"w/p{i}" for i in range(k))])
    assert m.throughput == base.throughput  # nothing lost: the clients start once the limit is applied
    counts = machine_counts({"front": 1, "backend": 1}, steps, rewritten)
    assert counts == {"front": 1, "backend": k, "backend_coord": 1} and sum(counts.values()) == m.machines == k + 2


def test_a_partitioning_without_coordination_counts_no_coordinator():
    """Voting's participants partition by ballot (co-hashing): 3 participants on
    2 partitions are 6 machines, and the leader: 7, no coordinator."""
    program = Program.from_files(str(PROGRAMS / "voting_closed.ded"))
    steps = (Step("partition", "participant", partitions=2),)
    rewritten, _ = apply_plan(program, steps, CASES["voting_closed.ded"])
    counts = machine_counts({"leader": 1, "participant": 3}, steps, rewritten)
    assert counts == {"leader": 1, "participant": 6} and measure(rewritten, 2, NETWORK, 16).machines == 7
