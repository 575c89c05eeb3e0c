"""Simulated throughput of closed-loop protocols (docs/protocols.md): clients
that send their next command when the previous one is answered
(`closed_loop`), rewrite plans (`rewrite.plan`) applied with the clients
outside the scope, the commands a run completes per tick and the node that
works most (`measure`), a greedy search for the plan that completes most (`optimize`),
and a node's cost per command fitted on the paper's base measurements
(`calibrated`).
It runs the reference evaluator, or another simulator given (`sparkdedalus.traffic`:
the Spark engine's is `spark.traffic.Simulator`, which this package never
imports), so it sits on the reference side of the layers.

>>> Step("decouple", "leader", ("ballot",), "broadcasters").option()  # as `rewrite` names it
'--decouple leader:ballot:broadcasters'
"""

from sparkdedalus.rewrite.plan import Step, apply_plan
from sparkdedalus.throughput.closed_loop import client_rows
from sparkdedalus.throughput.measure import Measurement, measure, saturate

__all__ = ["Measurement", "Step", "apply_plan", "client_rows", "measure", "saturate"]
