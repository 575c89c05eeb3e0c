"""Simulated throughput of closed-loop protocols (docs/protocols.md): clients
that send their next command when the previous one is answered
(`closed_loop`), rewrite plans applied with the clients outside the scope
(`plan`), the commands a run completes per tick and the node that works most
(`measure`), and a greedy search for the plan that completes most (`optimize`).
It runs the reference evaluator, so it sits on the reference side of the layers.

>>> from sparkdedalus import Program
>>> p = Program.parse('component client { .persist committed\\n'
...     'request(S, K, C)@async :- client(C, S, K)@T, T == 1;\\n'
...     'committed(C, X) :- done(C, X);\\n'
...     'request(S, X + 1000, C)@async :- done(C, X), client(C, S, _); }\\n'
...     'component server { done(C, X)@async :- request(S, X, C); }\\n'
...     'client("c1", "s", 1);')
>>> m = measure(p, clients=2, ticks=12)  # a round trip of 2 ticks, 2 clients: 1 command a tick
>>> m.throughput, m.bottleneck, m.machines
(1.0, 's', 1)
"""

from sparkdedalus.throughput.closed_loop import client_rows
from sparkdedalus.throughput.measure import Measurement, measure, saturate
from sparkdedalus.throughput.plan import Step, apply_plan

__all__ = ["Measurement", "Step", "apply_plan", "client_rows", "measure", "saturate"]
