"""What a closed-loop program completes per tick, and where the work piles up.

`measure` runs a program with its garbage collection (docs/gc.md: the
collected state must change no message) and N clients
(`closed_loop.client_rows`) for T ticks, on a simulator (`sparkdedalus.traffic`:
`reference`, the reference evaluator, by default; the Spark engine's is
`spark.traffic.Simulator`), and reads from its traffic, over the steady window
(T/2, T]: the throughput, answered commands per tick (the growth of
`committed` over the window, divided by its length); each node's load, the
messages it sends and takes in per tick in the window, the clients excepted
(by the tick a message left its sender, its send tick without a capacity,
and by its arrival: under `capacity=C` at most C a tick); the bottleneck,
the node with the highest load (ties: the first by name); the machines, the
nodes other than the clients that send or receive a message in the run, and
the component of each (the one whose `@async` rules send what the node
sends). `saturate` measures growing client counts until the throughput
stops growing.

>>> from sparkdedalus import Program
>>> p = Program.parse('component client { .persist committed\\n'
...     'request(S, K, C)@async :- client(C, S, K)@T, T == 1;\\n'
...     'committed(C, X) :- done(C, X);\\n'
...     'request(S, X + 1000, C)@async :- done(C, X), client(C, S, _); }\\n'
...     'component server { done(C, X)@async :- request(S, X, C); }\\n'
...     'client("c1", "s", 1);')
>>> m = measure(p, clients=1, ticks=10)  # committed at ticks 3, 5, 7, 9: 2 of them in 6..10
>>> m.window, m.throughput, m.load  # s: requests in at 6, 8, 10, answers out at 6, 8, 10
((5, 10), 0.4, {'s': 1.2})
>>> [x.clients for x in saturate(p, (1, 2, 4, 8), ticks=10)]  # 2 clients: 1 a tick, then no gain
[1, 2, 4, 8]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from sparkdedalus.network import Network
from sparkdedalus.throughput.closed_loop import COMMITTED, client_rows
from sparkdedalus.traffic import Traffic
from udfs.registry import spark_string

#: a larger client count must raise the throughput by more than this share to count as growth
GROWTH = 0.02


@dataclass(frozen=True)
class Measurement:
    clients: int
    ticks: int
    window: tuple  # (start, end): the ticks start+1 .. end
    throughput: float  # answered commands per tick in the window
    load: dict  # node -> messages sent and taken in per tick in the window
    bottleneck: str | None
    machines: int
    components: dict  # node -> the component whose rules send its messages

    def to_json(self) -> dict:
        return {"clients": self.clients, "throughput": self.throughput, "bottleneck": self.bottleneck,
                "bottleneck_component": self.components.get(self.bottleneck),
                "bottleneck_load": self.load.get(self.bottleneck, 0.0), "machines": self.machines}


def reference(program, ticks: int, network: Network | None, edb: dict, relation: str, at) -> Traffic:
    """The simulator of the reference evaluator (`sparkdedalus.traffic`)."""
    from sparkdedalus.reference import run
    trace = run(program, ticks, network=network, edb=edb, gc=True)
    queued = trace.network.capacity is not None
    messages = Counter()
    for m in trace.messages:
        taken = m.arrival if m.arrival is not None and m.arrival <= ticks else None
        hop = (m.relation, spark_string(m.src), spark_string(m.row[0]), m.send_tick, m.left if queued else m.send_tick,
               taken)
        messages[hop] += 1
    return Traffic(dict(messages), {t: len(trace.relation(relation, t)) for t in at})


def client_nodes(program, edb: dict) -> set:
    """The nodes of the clients: the first column of the `edb` rows that
    `client_rows` gives, and of the program's own facts of those relations."""
    nodes = {spark_string(row[0]) for rows in edb.values() for row in rows}
    return nodes | {spark_string(f.row[0]) for f in program.facts if f.atom.name in edb}


def measure(program, clients: int, network: Network | None = None, ticks: int = 100,
            simulate=reference) -> Measurement:
    """Run `program` with `clients` closed-loop clients under `network` for
    `ticks` ticks on `simulate` (a simulator, `sparkdedalus.traffic`)."""
    if not (isinstance(ticks, int) and ticks >= 2):
        raise ValueError(f"ticks must be an integer >= 2, not {ticks!r}")
    edb = client_rows(program, clients)
    start = ticks // 2
    traffic = simulate(program, ticks, network, edb, COMMITTED, (start, ticks))
    outside = client_nodes(program, edb)
    senders = {r.head.name: r.component for r in program.rules_of("async")}
    count, nodes, components = Counter(), set(), {}
    # in the order derived: a node's component is that of the first message it sends
    for (relation, src, dst, _, left, taken), n in sorted(traffic.messages.items(), key=lambda m: (m[0][3], m[0][0])):
        nodes |= {src, dst}
        components.setdefault(src, senders[relation])
        if left is not None and start < left <= ticks:
            count[src] += n
        if taken is not None and start < taken <= ticks:
            count[dst] += n
    width = ticks - start
    load = {node: count[node] / width for node in sorted(nodes - outside)}
    bottleneck = max(load, key=load.get, default=None)  # load is in name order: ties go to the first
    done = traffic.sizes[ticks] - traffic.sizes[start]
    return Measurement(clients, ticks, (start, ticks), done / width, load, bottleneck, len(nodes - outside),
                       {node: components.get(node) for node in load})


def saturate(program, counts, network: Network | None = None, ticks: int = 100, simulate=reference) -> list:
    """`measure` at each of the increasing client `counts`, until two in a row
    raise the best throughput so far by no more than `GROWTH`."""
    curve, best, flat = [], 0.0, 0
    for n in counts:
        m = measure(program, n, network, ticks, simulate)
        curve.append(m)
        flat = flat + 1 if m.throughput <= best * (1 + GROWTH) else 0
        best = max(best, m.throughput)
        if flat == 2:
            break
    return curve
