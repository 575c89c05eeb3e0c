"""A closed-loop run's traffic, the same for both engines: what the throughput
measurement (`sparkdedalus.throughput.measure`) reads of a simulated run.

`Traffic.messages` counts the run's messages by relation, sender and
destination (printed, `spark_string`), the tick each was derived, the tick it
left its sender (its derive tick without a capacity; None: still in the
outbox at the last tick) and the tick its destination took it in (None: lost,
or not taken in by the last tick). `Traffic.sizes` holds the number of facts
of one relation at some ticks (the clients' `committed`).

A *simulator* is a callable `simulate(program, ticks, network, edb, relation,
at) -> Traffic`: it runs `program` for ticks 1..`ticks` under `network` with
the rows `edb` added at every tick and the collection of `analysis.gc`
applied, and counts `relation`'s facts at each tick of `at`. The reference
evaluator's is `throughput.measure.reference`, the Spark engine's
`spark.traffic.Simulator`.

>>> t = Traffic({("m", "a", "b", 1, 1, 2): 3}, {2: 0})
>>> t.messages[("m", "a", "b", 1, 1, 2)], t.sizes[2]
(3, 0)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Traffic:
    #: (relation, sender, destination, derived, left, taken) -> the messages that share them
    messages: dict
    #: tick -> the facts of the counted relation at that tick
    sizes: dict
