"""benchmarks/protocols.py on a tiny configuration (reference evaluator, no Spark):
the JSON lines carry the documented keys, and base voting gives the throughput
derived by hand from the capacity model.

Base voting, capacity C = 4, n = 3 participants: per command the leader takes in
1 request and n votes and sends n ballots and 1 result, 2n + 2 = 8 messages, so
it completes at most C / 8 = 0.5 commands a tick. One client: a command every 4
ticks (4 hops, the leader handling 1 + 3 = 4 messages at the tick a request
arrives and 3 + 1 at the tick the votes do, within C), 0.25 a tick. Two clients,
the second starting one tick later: the leader's ticks alternate between the two
clients' requests and votes, 4 messages each, every tick: 0.5 a tick, the leader
at its capacity (load 4.0). Four clients cannot do better: 0.5 again."""

from __future__ import annotations

import json

from test_benchmarks_smoke import benchmark_module

protocols = benchmark_module("protocols")
KEYS = {"protocol", "variant", "partitions", "peak_throughput", "ratio", "bottleneck", "curve", "machines",
        "network", "participants", "ticks", "window", "peak_clients", "bottleneck_load", "plan"}


def test_the_tiny_configuration_gives_the_hand_derived_throughput(tmp_path):
    out, png = tmp_path / "protocols.jsonl", tmp_path / "protocols.png"
    assert protocols.main(["--protocols", "voting", "--partitions", "1", "--clients", "1,2,4", "--capacity", "4",
                           "--ticks", "40", "--out", str(out), "--plot", str(png)]) == 0
    base, scalable = [json.loads(line) for line in out.read_text().splitlines()]
    assert KEYS <= set(base) and KEYS <= set(scalable)
    assert [(p["clients"], p["throughput"]) for p in base["curve"]] == [(1, 0.25), (2, 0.5), (4, 0.5)]
    assert base["curve"][1]["bottleneck"] == "leader" and base["curve"][1]["bottleneck_load"] == 4.0
    assert (base["variant"], base["partitions"], base["peak_throughput"], base["ratio"]) == ("base", None, 0.5, 1.0)
    assert base["peak_clients"] == 2 and base["machines"] == 4 and base["network"].endswith("capacity=4")
    # scalable, 1 partition: leader, broadcasters, collectors, 3 participants; one hop more
    assert scalable["variant"] == "scalable" and scalable["partitions"] == 1 and scalable["machines"] == 6
    assert scalable["curve"][0]["throughput"] == 0.2  # 5 hops: ticks 21..40 hold 4 of client 1's
    assert scalable["plan"][0] == "--decouple leader:ballot:broadcasters"
    assert scalable["ratio"] == round(scalable["peak_throughput"] / 0.5, 3)
    assert png.stat().st_size > 0


def test_every_load_is_within_the_capacity():
    """No node handles more than C messages a tick, so none more than C per tick on average."""
    for row in protocols.run_all(["2pc"], [1], [2, 8], protocols.Network.parse("capacity=4"), 40):
        assert all(p["bottleneck_load"] <= 4 for p in row["curve"])
        assert row["bottleneck"] in ("coord", "coord/committers/p0")


def test_bad_options_are_refused(capsys):
    for argv in (["--protocols", "raft"], ["--clients", "4,2"], ["--capacity", "-1"]):
        try:
            protocols.main(argv)
        except SystemExit as exc:
            assert exc.code == 2
        else:
            raise AssertionError(f"{argv} was accepted")
    assert "unknown protocol 'raft'" in capsys.readouterr().err


def test_scalable_paxos_takes_the_p2a_and_the_p2b_off_the_proposer():
    """ScalablePaxos (the p2a and p2b proxy leaders, 2 partitions each), capacity 4, 16
    clients: the base proposer handles 10 messages a command (a request and 3 p2b in, 3
    p2a and 3 decides out), C / 10 = 0.4 a tick. With both proxies it takes the request
    and hands the command to a p2a proxy: 2 messages, C / 2 = 2 a tick at most (the
    replicas' decide and reply bound it there too); the p2b proxies' 6 messages a command
    (3 p2b, 3 decides), spread over 2 partitions by the slot's hash, now bound it, above
    the C / 8 = 0.5 of the p2a proxies alone. The acceptors' partial partitioning adds
    their coordinator, a component the rewrite creates, so inside the plan's scope
    (rewrite/scope.py)."""
    from sparkdedalus.network import Network
    from sparkdedalus.throughput import apply_plan, measure

    program = protocols.base("paxos")
    scalable, _ = apply_plan(program, protocols.paxos_plan(program, 2), protocols.SHAPES["paxos"][1])
    assert {"p2a_proxy_leaders", "p2b_proxy_leaders", "acceptor_coord"} <= set(scalable.components)
    network = Network.parse("capacity=4")
    assert measure(program, 16, network, 80).throughput == 0.4
    found = measure(scalable, 16, network, 80)
    assert 0.5 < found.throughput <= 2 and found.bottleneck.startswith("p1/p2b_proxy_leaders/")
