"""`sparkdedalus optimize --engine spark` (spark/traffic.py: a Spark run's
traffic, the simulator the throughput measurement and search run on): the
Spark engine's traffic and measurement equal the reference evaluator's and a
hand derivation under a capacity; on Spark the search finds the reference's
plan, which beats a deliberately poor one; the command's JSON is the
reference's; bad options are one line, exit 2."""

from __future__ import annotations

import json

import pytest

from frontend_helpers import exit_code
from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.shell import cli
from sparkdedalus.shell import optimize as command
from sparkdedalus.spark.traffic import Simulator
from sparkdedalus.throughput import Step, apply_plan, client_rows, measure
from sparkdedalus.throughput.closed_loop import COMMITTED
from sparkdedalus.throughput.measure import reference
from sparkdedalus.throughput.optimize import optimize
from test_optimize import PROGRAMS

#: one server answering each request (the example of throughput/measure.py)
SERVER = ('component client { .persist committed\n'
          'request(S, K, C)@async :- client(C, S, K)@T, T == 1;\n'
          'committed(C, X) :- done(C, X);\n'
          'request(S, X + 1000, C)@async :- done(C, X), client(C, S, _); }\n'
          'component server { done(C, X)@async :- request(S, X, C); }\n'
          'client("c1", "s", 1);\n')


def test_the_traffic_and_the_measurement_are_the_reference_s_under_a_capacity(placed):
    """Capacity 1, clients c1 and c2, 10 ticks. Both requests reach s at tick 2;
    it takes one in (c2's, first in the inbox's order), derives its answer, and
    has no room left to send it: it leaves at 3, when s takes nothing in (its
    outbox holds one old message), and c1's request waits until tick 4. From
    then on s takes in or sends one message a tick: in the window 6..10 it
    takes requests in at 6, 8, 10 and sends answers at 7, 9 (load 5/5 = 1.0),
    and the clients commit at 6, 8 and 10 (throughput 3/5 = 0.6)."""
    program, network = Program.parse(SERVER), Network(capacity=1)
    simulated = []

    def recording(*args):
        simulated.append(Simulator(placed)(*args))
        return simulated[-1]

    m = measure(program, 2, network, 10, recording)
    assert (m.throughput, m.load, m.machines, m.bottleneck) == (0.6, {"s": 1.0}, 1, "s")
    (traffic,) = simulated
    assert traffic.messages[("request", "c1", "s", 1, 1, 4)] == 1  # waited in s's inbox from 2 to 4
    assert traffic.messages[("done", "s", "c2", 2, 3, 4)] == 1  # waited in s's outbox from 2 to 3
    assert traffic.messages[("done", "s", "c2", 10, None, None)] == 1  # still queued at the end
    assert traffic.sizes == {5: 1, 10: 4}
    assert traffic == reference(program, 10, network, client_rows(program, 2), COMMITTED, (5, 10))
    assert m == measure(program, 2, network, 10)


@pytest.mark.slow
def test_voting_measures_as_on_the_reference(placed):
    """The closed-loop voting program, 3 clients, capacity 2: the leader's
    queues fill (8 messages a command at 2 a tick)."""
    program, network = Program.from_files(str(PROGRAMS / "voting_closed.ded")), Network(capacity=2)
    edb = client_rows(program, 3)
    assert Simulator(placed)(program, 16, network, edb, COMMITTED, (8, 16)) == \
        reference(program, 16, network, edb, COMMITTED, (8, 16))


@pytest.mark.slow
def test_on_spark_the_plan_is_the_reference_s_and_beats_a_poor_one(placed):
    """Voting, capacity 2, up to 4 clients, 16 ticks, 7 machines: the poor plan
    partitions the participants (2 messages a command each, against the
    leader's 8)."""
    program, network = Program.from_files(str(PROGRAMS / "voting_closed.ded")), Network(capacity=2)
    simulate = Simulator(placed)
    poor, _ = apply_plan(program, (Step("partition", "participant", partitions=2),), ("leader", "participant"))
    poor_throughput = measure(poor, 4, network, 16, simulate).throughput
    result = optimize(program, budget=7, clients=4, network=network, ticks=16, simulate=simulate)
    expected = optimize(program, budget=7, clients=4, network=network, ticks=16)
    assert result.plan.throughput > poor_throughput and result.plan.machines <= 7
    assert (result.plan.steps, result.plan.measurement, result.base.measurement, result.tried) == \
        (expected.plan.steps, expected.plan.measurement, expected.base.measurement, expected.tried)


def _json(spark, capsys, *options) -> dict:
    args = cli._parser().parse_args(["optimize", *options, "--format", "json"])
    assert command.handle(args, new_session=lambda args: spark) == 0
    report = json.loads(capsys.readouterr().out)
    return {key: value for key, value in report.items() if key not in ("seconds", "engine")}


def test_the_command_on_spark_prints_the_reference_s_json(spark, tmp_path, capsys):
    """The server alone, one client, capacity 1, 6 ticks, a budget of its one
    machine: the program as written. The request leaves at 1 and is taken in
    at 2; s has no room left to send the answer until 3; c1 takes it in and
    commits at 4: one command in the window 4..6, 1/3 a tick."""
    path = tmp_path / "server.ded"
    path.write_text(SERVER)
    options = [str(path), "--budget", "1", "--clients", "1", "--capacity", "1", "--ticks", "6"]
    on_spark = _json(spark, capsys, *options, "--engine", "spark")
    assert on_spark == _json(None, capsys, *options, "--engine", "reference")
    assert (on_spark["rewrites"], on_spark["throughput"], on_spark["machines"]) == ([], 1 / 3, 1)


@pytest.mark.slow
def test_the_command_on_spark_finds_the_reference_s_plan(spark, capsys):
    options = [str(PROGRAMS / "voting_closed.ded"), "--budget", "5", "--clients", "4", "--capacity", "4",
               "--ticks", "16"]
    on_spark = _json(spark, capsys, *options, "--engine", "spark")
    assert on_spark == _json(None, capsys, *options, "--engine", "reference")
    assert on_spark["rewrites"][:1] == ["--decouple leader:votes,nvotes,complete,result,replied:vote_collectors"]


@pytest.mark.parametrize("args, message", [
    (["--budget", "0", "--engine", "spark"], "--budget: expected an integer >= 1"),
    (["--budget", "8", "--engine", "sparky"], "--engine: invalid choice"),
    (["--budget", "8", "--conf", "spark.x=1"], "--conf needs the spark engine"),
])
def test_bad_options_are_one_line_exit_2(args, message, capsys):
    assert exit_code(["optimize", str(PROGRAMS / "voting_closed.ded"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_program_without_clients_is_refused_before_a_session_starts(tmp_path, capsys):
    path = tmp_path / "plain.ded"
    path.write_text('component s { b(L, X)@async :- a(L, X); }\na("s", 1)@1;\n')
    args = cli._parser().parse_args(["optimize", str(path), "--budget", "3", "--engine", "spark"])
    with pytest.raises(cli.UsageError, match="not a closed-loop program"):
        command.handle(args, new_session=lambda args: pytest.fail("a session was made"))
