"""The per-node capacity of the network model (`capacity=C`, sparkdedalus/network.py)
on the reference evaluator. Every expected value is derived by hand from the
model (docs/semantics.md, "Capacity"); the hashes that order queues are
computed here from keys written out by hand, with `xxhash64_string` only."""

from __future__ import annotations

import json
import os

import pytest

from frontend_helpers import exit_code
from reference_helpers import EXAMPLES, example, rows, run_text
from sparkdedalus.faults.space import Scenario
from sparkdedalus.network import Network, Uniform
from sparkdedalus.reference import run
from sparkdedalus.reference.faults import faults
from udfs.registry import xxhash64_string

SEP = "\x1f"


def h(seed: int, relation: str, tick: int, *printed: str) -> int:
    """The hash of a message key written out by hand: seed␟relation␟tick␟row..."""
    return xxhash64_string(SEP.join([str(seed), relation, str(tick), *printed]))


# ---------------------------------------------------------------- the option

def test_capacity_parses_validates_and_round_trips():
    assert Network.parse("capacity=3").capacity == 3
    assert Network.parse("delay=uniform(1,2), capacity=2, crash=b@3") == Network(Uniform(1, 2), crashes={"b": 3},
                                                                                   capacity=2)
    net = Network(Uniform(1, 3), seed=4, omissions={("a", "b", 2)}, capacity=5)
    assert Network.parse(net.spec()) == net
    assert Network().spec() == "delay=fixed,seed=0"  # no capacity: the spec is unchanged
    assert Network(capacity=2) != Network()
    for bad in ("capacity=0", "capacity=-1", "capacity=x", "capacity=1.5"):
        with pytest.raises(ValueError, match="^capacity must be an integer >= 1$"):
            Network.parse(bad)
    for bad in (0, True, 2.0, "2"):
        with pytest.raises(ValueError, match="^capacity must be an integer >= 1$"):
            Network(capacity=bad)
    with pytest.raises(ValueError, match="'capacity' given twice"):
        Network.parse("capacity=1,capacity=2")


# ---------------------------------------------------------------- (b), (e) a queue of three

#: three nodes send one message each to b at tick 1
THREE_SENDERS = """
m(B, X)@async :- go(A, B, X);
go("a", "b", 1)@1; go("c", "b", 2)@1; go("d", "b", 3)@1;
"""


def test_three_messages_to_one_node_are_taken_in_one_a_tick_in_hash_order():
    # C=1. Each sender has one message: it leaves at 1 (no inbox, room 1) and
    # arrives at 2. b has no outbox: it takes in min(ready, 1) a tick, in inbox
    # order (arrival 2, derive tick 1, h, ...): h decides. So ticks 2, 3, 4.
    order = sorted((1, 2, 3), key=lambda x: h(0, "m", 1, "b", str(x)))
    trace = run_text(THREE_SENDERS, ticks=5, network=Network(capacity=1))
    assert [rows(trace, "m", t) for t in (1, 2, 3, 4, 5)] == [set(), {("b", order[0])}, {("b", order[1])},
                                                             {("b", order[2])}, set()]
    assert sorted((m.row[1], m.send_tick, m.left, m.arrival) for m in trace.messages) == \
        [(x, 1, 1, 2 + order.index(x)) for x in (1, 2, 3)]
    # C=2: two at tick 2, the last at 3; C=3: all at 2, as without capacity
    trace = run_text(THREE_SENDERS, ticks=5, network=Network(capacity=2))
    assert rows(trace, "m", 2) == {("b", order[0]), ("b", order[1])} and rows(trace, "m", 3) == {("b", order[2])}
    trace = run_text(THREE_SENDERS, ticks=5, network=Network(capacity=3))
    assert rows(trace, "m", 2) == {("b", x) for x in (1, 2, 3)}


#: a derives three messages to b at tick 1
ONE_SENDER = """
m(B, X)@async :- go(A, B, X);
go("a", "b", 1)@1; go("a", "b", 2)@1; go("a", "b", 3)@1;
"""


def test_one_sender_sends_one_a_tick_in_outbox_order():
    # C=1. a's outbox at the end of tick 1: three messages derived at 1, in
    # order (1, h, ...); a took nothing in, so one leaves at 1, one at 2 (a has
    # no inbox), one at 3; each arrives the next tick and b, with no outbox,
    # takes it in then: delivered at 2, 3, 4 in outbox order.
    for seed in (0, 5):
        order = sorted((1, 2, 3), key=lambda x: h(seed, "m", 1, "b", str(x)))
        trace = run_text(ONE_SENDER, ticks=5, network=Network(seed=seed, capacity=1))
        assert [rows(trace, "m", t) for t in (2, 3, 4)] == [{("b", x)} for x in order]
        assert sorted((m.left, m.arrival) for m in trace.messages) == [(1, 2), (2, 3), (3, 4)]


def test_a_busy_node_takes_in_less():
    # C=2. a derives three messages at 1: two leave at 1, one waits. b sends a
    # message to a at 1, arriving at 2. At 2, a has 1 old message: it takes in
    # min(1, 2 - 1) = 1 (b's) and then sends 2 - 1 = 1 (the old one). With C=1,
    # a has no room at 2 (1 old message): b's waits to 3, when a's outbox is empty.
    text = ONE_SENDER + 'n(A, Y)@async :- back(B, A, Y); back("b", "a", 9)@1;'
    trace = run_text(text, ticks=4, network=Network(capacity=2))
    assert [rows(trace, "n", t) for t in (2, 3)] == [{("a", 9)}, set()]
    assert sorted(m.left for m in trace.messages if m.relation == "m") == [1, 1, 2]
    trace = run_text(text, ticks=5, network=Network(capacity=1))
    # a: leaves at 1, 2, 3 (old messages first); at 2 and 3 a has old messages
    # (2, then 1): no room; at 4 its outbox is empty: it takes b's in
    assert [rows(trace, "n", t) for t in (2, 3, 4)] == [set(), set(), {("a", 9)}]


# ---------------------------------------------------------------- (a) a leader's throughput

def leader_program(participants: int, clients: int) -> str:
    """Closed-loop clients (one request outstanding each) of a leader "l" that
    asks every participant for a vote and replies once all voted."""
    return "".join([
        ".persist got\n.persist replied\n",
        "req(L, C, R)@async :- start(C, R), leader(C, L);\n",
        "start(C, R + 1) :- reply(C, R);\n",
        "prep(P, L, C, R)@async :- req(L, C, R), participant(L, P);\n",
        "vote(L, P, C, R)@async :- prep(P, L, C, R);\n",
        "got(L, P, C, R) :- vote(L, P, C, R);\n",
        "votes(L, C, R, count<P>) :- got(L, P, C, R);\n",
        "reply(C, R)@async :- votes(L, C, R, N), size(L, N), notin replied(L, C, R);\n",
        "replied(L, C, R)@next :- votes(L, C, R, N), size(L, N);\n",
        f'size("l", {participants});\n',
        *(f'participant("l", "p{i}");\n' for i in range(1, participants + 1)),
        *(f'leader("c{i}", "l"); start("c{i}", 1)@1;\n' for i in range(1, clients + 1)),
    ])


@pytest.mark.parametrize("participants, clients, capacity, ticks", [(2, 4, 3, 60), (2, 4, 6, 60), (3, 6, 4, 80)])
def test_a_leader_completes_at_most_capacity_over_messages_per_request(participants, clients, capacity, ticks):
    """Per request the leader takes in 1 request and n votes and sends n
    prepares and 1 reply: k = 2n + 2 messages, all at the leader. So:
    - every tick the leader handles at most C messages (taken in + left);
    - by tick T at most floor(C * T / k) replies have left it;
    - in a tick where its inbox holds enough ready messages the leader takes in
      C - min(old, C) and sends all min(old, C) old ones: C exactly. Over a window of
      W ticks where it handles C every tick (checked on the trace), the C * W units
      went to requests whose reply left in the window (at most k each, so
      C * W <= k * done + the units of requests still open at its end: at most
      `clients` of them, a client having one request outstanding, k - 1 units
      each), and those `done` requests spent k * done units, all in the window
      but those of requests open at its start (at most `clients`, k - 1 units
      each): |k * done - C * W| <= clients * (k - 1), i.e. the long-run rate C / k."""
    k = 2 * participants + 2
    trace = run(_parsed(leader_program(participants, clients)), ticks, network=Network(capacity=capacity))
    at_leader = [m for m in trace.messages if m.row[0] == "l"]
    from_leader = [m for m in trace.messages if m.src == "l"]
    units = {t: sum(m.arrival == t for m in at_leader) + sum(m.left == t for m in from_leader)
             for t in range(1, ticks + 1)}
    assert max(units.values()) <= capacity
    replies = [m.left for m in from_leader if m.relation == "reply" and m.left is not None]
    for t in range(1, ticks + 1):
        assert sum(left <= t for left in replies) <= capacity * t // k
    window = range(ticks // 2 + 1, ticks + 1)
    assert all(units[t] == capacity for t in window)  # saturated: the leader is the bottleneck
    done = sum(left in window for left in replies)
    assert abs(k * done - capacity * len(window)) <= clients * (k - 1)
    assert done > 0


def _parsed(text: str):
    from sparkdedalus import Program
    return Program.parse(text)


# ---------------------------------------------------------------- (c) a capacity that never binds

@pytest.mark.parametrize("name, ticks", [("broadcast.ded", 5), ("two_phase_commit.ded", 8),
                                         ("reliable_broadcast.ded", 6), ("lamport_clocks.ded", 6),
                                         ("voting.ded", 6), ("nonconfluent.ded", 5)])
def test_a_large_capacity_changes_nothing(name, ticks):
    program = example(name)
    for base in (Network(), Network(Uniform(1, 3), seed=7)):
        plain = run(program, ticks, network=base)
        capped = run(program, ticks, network=Network(base.delay, base.seed, capacity=10_000))
        assert [capped.at(t) for t in range(1, ticks + 1)] == [plain.at(t) for t in range(1, ticks + 1)]
        # the same messages; each left when derived, and was taken in at its arrival
        # unless that is after the run (then it is still queued: None)
        assert sorted(m[:4] for m in capped.messages) == sorted(m[:4] for m in plain.messages)
        assert {m.left for m in capped.messages} <= set(range(1, ticks + 1))
        assert all(m.left == m.send_tick for m in capped.messages)
        expected = sorted((m[:4], m.arrival if m.arrival is not None and m.arrival <= ticks else None)
                          for m in plain.messages)
        assert sorted((m[:4], m.arrival) for m in capped.messages) == expected


def test_a_capacity_that_binds_changes_broadcast():
    # broadcast.ded: a sends "hi" to b, c, d at tick 1; with C=1 one leaves at
    # 1, 2, 3 (a derives nothing at 2; at 3 it also derives its "bye" messages,
    # which queue behind). So at tick 2 exactly one of b, c, d logs "hi".
    trace = run(example("broadcast.ded"), 5, network=Network(capacity=1))
    assert len({n for n, p in rows(trace, "log", 2) if p == "hi"} - {"a"}) == 1


# ---------------------------------------------------------------- (d) composition

#: a derives two messages to b at tick 1
TWO = 'm(B, X)@async :- go(A, B, X); go("a", "b", 1)@1; go("a", "b", 2)@1;'


def test_capacity_with_uniform_delay_uses_the_leave_tick():
    # C=1: the first in outbox order (hash at derive tick 1) leaves at 1, the other
    # at 2; the delay of each is 1 + h % 3 with h hashed at its leave tick.
    seed = 3
    first, second = sorted((1, 2), key=lambda x: h(seed, "m", 1, "b", str(x)))
    arrive_first = 1 + 1 + h(seed, "m", 1, "b", str(first)) % 3
    arrive_second = 2 + 1 + h(seed, "m", 2, "b", str(second)) % 3
    trace = run_text(TWO, ticks=8, network=Network(Uniform(1, 3), seed=seed, capacity=1))
    got = {m.row[1]: (m.left, m.arrival) for m in trace.messages}
    # b has no outbox and takes in one a tick: if both arrive together, in
    # inbox order (arrival, derive tick (1 for both), h at 1, ...): `first` goes first
    if arrive_first == arrive_second:
        arrive_second += 1
    assert got == {first: (1, arrive_first), second: (2, arrive_second)}


def test_capacity_with_an_omission_at_the_leave_tick():
    # C=1: the second message leaves at 2, when a>b is omitted: lost. Without
    # capacity both leave at 1 and the omission at 2 changes nothing.
    first, second = sorted((1, 2), key=lambda x: h(0, "m", 1, "b", str(x)))
    trace = run_text(TWO, ticks=4, network=Network.parse("omit=a>b@2,capacity=1"))
    assert [rows(trace, "m", t) for t in (2, 3)] == [{("b", first)}, set()]
    assert {m.row[1]: (m.left, m.arrival) for m in trace.messages} == {first: (1, 2), second: (2, None)}
    trace = run_text(TWO, ticks=4, network=Network.parse("omit=a>b@2"))
    assert rows(trace, "m", 2) == {("b", 1), ("b", 2)}


def test_capacity_with_a_crash():
    # crash=a@2, C=1: the message leaving at 2 is lost. a still takes in: b's
    # message to a arrives at 2, but a has 1 old message (no room, C - 1 = 0);
    # the old one leaves (lost) at 2; at 3 a's outbox is empty: it takes b's in.
    first, second = sorted((1, 2), key=lambda x: h(0, "m", 1, "b", str(x)))
    text = TWO + 'n(A, Y)@async :- back(B, A, Y); back("b", "a", 9)@1;'
    trace = run_text(text, ticks=4, network=Network.parse("crash=a@2,capacity=1"))
    assert {m.row[1]: (m.left, m.arrival) for m in trace.messages if m.relation == "m"} == \
        {first: (1, 2), second: (2, None)}
    assert [rows(trace, "n", t) for t in (2, 3)] == [set(), {("a", 9)}]


# ---------------------------------------------------------------- duplicates

def test_duplicate_messages_are_one_per_sender_and_derive_tick():
    # The same row derived twice at one tick by one sender (two rules): one
    # message. By two senders: two messages, each costing its sender and b one
    # unit: with C=1 b takes them in at 2 and 3 (the same fact, twice), a's
    # first (inbox order: same arrival, derive tick, h, relation and row; the
    # printed sender decides). The same row derived again at tick 2 by a: a
    # third message, arriving at 3, after c's (arrival 2): taken in at 4.
    text = """
        m(B, X)@async :- go(A, B, X);
        m(B, X)@async :- go(A, B, X), X > 0;
        go("a", "b", 1)@1; go("c", "b", 1)@1; go("a", "b", 1)@2;
    """
    trace = run_text(text, ticks=5, network=Network(capacity=1))
    assert sorted((m.src, m.send_tick, m.left, m.arrival) for m in trace.messages) == \
        [("a", 1, 1, 2), ("a", 2, 2, 4), ("c", 1, 1, 3)]
    assert [rows(trace, "m", t) for t in (2, 3, 4, 5)] == [{("b", 1)}] * 3 + [set()]


# ---------------------------------------------------------------- faults, CLI

FAULTY = """
.persist log
log(M, P)@async :- log(N, P), node(N, M);
pre(M, P) :- node(N, M), bcast(N, P)@1;
post(M, P) :- log(M, P);
log("a", "hi")@1; node("a", "b"); node("a", "c"); bcast("a", "hi")@1; node("b", "a"); node("c", "a");
"""


def test_fault_scenarios_keep_the_base_capacity():
    # Without capacity, a re-sends its log to b and c every tick: no single
    # omission at tick 1 loses a fact by EOT 3. With C=1 a sends one message a
    # tick: at 1 the first of its two (outbox order), at 2 the second (derived at
    # 1, old), at 3 one derived at 2 (arriving at 4, after EOT). So omitting the
    # channel of the one sent at 1 loses its receiver's post at EOT 3.
    program = _parsed(FAULTY)
    assert faults(program, ("a", "b", "c"), eot=3, eff=2).counterexamples == []
    first = min(("b", "c"), key=lambda n: h(0, "log", 1, n, "hi"))
    checked = faults(program, ("a", "b", "c"), eot=3, eff=2, network=Network(capacity=1))
    assert checked.counterexamples[0].to_json() == {"omissions": [["a", first, 1]], "crashes": [],
                                                    "missing": [[first, "hi"]]}
    # LDFI's lineage takes a message to arrive at the next tick: refused with a
    # capacity, and "auto" enumerates (this space is small enough either way)
    with pytest.raises(ValueError, match="--search ldfi needs the fixed delay and no capacity"):
        faults(program, ("a", "b", "c"), eot=3, eff=2, network=Network(capacity=1), search="ldfi")
    assert faults(program, ("a", "b", "c"), eot=3, eff=2, network=Network(capacity=1)).search == "all"
    assert Scenario((("a", "b", 1),)).network(Network(capacity=1)).capacity == 1


def test_the_cli_commands_take_a_capacity(tmp_path, capsys):
    path = tmp_path / "three.ded"
    path.write_text(THREE_SENDERS)
    order = sorted((1, 2, 3), key=lambda x: h(0, "m", 1, "b", str(x)))
    assert exit_code(["run", str(path), "--engine", "reference", "--ticks", "3", "--relations", "m",
                      "--network", "capacity=1"]) == 0
    assert json.loads(capsys.readouterr().out) == {"tick": 3, "relations": {"m": [["b", order[1]]]}}
    assert exit_code(["why", str(path), "--ticks", "4", f'm("b", {order[2]})@4', "--network", "capacity=1",
                      "--format", "json"]) == 0
    why = json.loads(capsys.readouterr().out)
    assert why["holds"] and why["facts"][0]["derivations"][0]["message"] == {
        "sender": {1: "a", 2: "c", 3: "d"}[order[2]], "send_tick": 1, "receiver": "b", "arrival": 4}
    assert exit_code(["equiv", str(path), str(path), "--ticks", "3", "--network", "capacity=1"]) == 0
    capsys.readouterr()
    assert exit_code(["run", str(path), "--engine", "reference", "--ticks", "3", "--network", "capacity=0"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "sparkdedalus run: error: argument --network: capacity must be an integer >= 1 (see --help)"]


def test_the_faults_cli_takes_a_network_on_the_reference_engine_only(tmp_path, capsys):
    path = tmp_path / "faulty.ded"
    path.write_text(FAULTY)
    base = ["faults", str(path), "--nodes", "a,b,c", "--eot", "3", "--eff", "2", "--quiet", "--format", "json"]
    assert exit_code([*base, "--engine", "reference"]) == 0
    capsys.readouterr()
    assert exit_code([*base, "--engine", "reference", "--network", "capacity=1"]) == 1
    assert json.loads(capsys.readouterr().out)["counterexamples"]
    assert exit_code([*base, "--engine", "reference", "--network", "capacity=1", "--search", "ldfi"]) == 2
    assert "--search ldfi needs the fixed delay and no capacity" in capsys.readouterr().err
    assert exit_code([*base, "--network", "capacity=1"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == \
        "sparkdedalus: error: --network runs on the reference engine only for now: add --engine reference"
