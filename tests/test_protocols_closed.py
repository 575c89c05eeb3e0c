"""The closed-loop benchmark programs (benchmarks/programs/*_closed.ded,
docs/protocols.md) on the reference evaluator, default network: every
expected figure is derived by hand from the rules' @async hops (the files'
headers). Voting: request, ballot, vote, result: 4 hops, so client 1's
commands are committed at ticks 5, 9, 13, ... Two-phase commit: request,
prepare, vote, commit, ack, done: 6 hops, committed at 7, 13, 19, ... Client
K starts at tick K (K <= 32), so its commitments are client 1's shifted by
K - 1; N clients run side by side, so N commands complete per round trip. No
Spark."""

from __future__ import annotations

import pytest

from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.reference import run
from sparkdedalus.throughput import client_rows, measure
from test_benchmarks_smoke import REPO

PROGRAMS = REPO / "benchmarks" / "programs"
#: protocol file -> the round trip in ticks (the @async hops a command takes)
ROUND_TRIP = {"voting_closed.ded": 4, "two_phase_commit_closed.ded": 6}
#: Paxos: request, p2a, p2b, decide, reply, once p1 leads (tick 3; paxos_closed.ded's header)
PAXOS = {"paxos_closed.ded": 5}


def load(name: str) -> Program:
    return Program.from_files(str(PROGRAMS / name))


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_one_client_commits_a_command_every_round_trip(name):
    k = ROUND_TRIP[name]
    trace = run(load(name), 3 * k + 1)
    first = {t for t in range(1, 3 * k + 2) if ("c1", 1) in trace.relation("committed", t)}
    second = {t for t in range(1, 3 * k + 2) if ("c1", 1001) in trace.relation("committed", t)}
    # the first command is sent at tick 1 and answered k ticks later; the next leaves then
    assert min(first) == k + 1 and min(second) == 2 * k + 1
    assert trace.relation("committed", 3 * k + 1) == {("c1", 1), ("c1", 1001), ("c1", 2001)}


def test_one_paxos_client_commits_a_command_every_five_ticks_once_p1_leads():
    trace = run(load("paxos_closed.ded"), 17)
    # request 1 reaches p1 at tick 2, before it leads (tick 3): p2a at 3, p2b 4, decide 5,
    # reply 6, committed at 7; then 5 ticks a command
    firsts = [min(t for t in range(1, 18) if ("c1", x) in trace.relation("committed", t)) for x in (1, 1001, 2001)]
    assert firsts == [7, 12, 17]


@pytest.mark.parametrize("name", {**ROUND_TRIP, **PAXOS})
@pytest.mark.parametrize("clients", [1, 3, 8])
def test_n_clients_commit_n_commands_per_round_trip(name, clients):
    k = {**ROUND_TRIP, **PAXOS}[name]
    rounds = -(-clients // k) + 1  # every client has started before the window (ticks a+1 .. 2a)
    m = measure(load(name), clients, ticks=2 * k * rounds)  # a = k * rounds: `rounds` commands each
    assert m.window == (k * rounds, 2 * k * rounds)
    assert m.throughput == clients / k
    assert m.machines == (7 if name in PAXOS else 4)  # the server and 3 participants; p1, 3 acceptors, 3 replicas


def test_the_clients_are_numbered_and_share_the_server():
    rows = client_rows(load("two_phase_commit_closed.ded"), 2)
    assert rows == {"client": [("c1", "coord", 1), ("c2", "coord", 2)]}
    trace = run(load("two_phase_commit_closed.ded"), 8, edb=rows)
    assert trace.relation("committed", 7) == {("c1", 1)}  # c2 starts one tick later
    assert trace.relation("committed", 8) == {("c1", 1), ("c2", 2)}  # ids K, K + 1000, ...


def test_a_program_without_clients_is_refused():
    with pytest.raises(ValueError, match="no fact client"):
        client_rows(Program.parse('committed(C, X) :- done(C, X);'), 2)
    with pytest.raises(ValueError, match="no relation committed"):
        client_rows(Program.parse('client("c1", "s", 1);'), 2)


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_the_garbage_collection_changes_no_message(name):
    """`measure` runs with the files' `// @gc` annotations: they drop the server's
    state of answered commands, and must change neither a message nor a commitment
    (checked against the run without them, with random delays)."""
    program, edb = load(name), client_rows(load(name), 6)
    network = Network.parse("delay=uniform(1,3)")
    on, off = (run(program, 30, network=network, edb=edb, gc=gc) for gc in (True, False))
    assert sorted(map(repr, on.messages)) == sorted(map(repr, off.messages))
    assert all(on.relation("committed", t) == off.relation("committed", t) for t in range(1, 31))
    assert sum(s["collected_rows"] for s in on.stats) > 0  # it collected something
