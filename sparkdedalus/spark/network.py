"""The network and failure model of `sparkdedalus.network`, as Spark columns.

Same recipe as `Network.arrival`: a message of `relation` with row `row` sent at
tick t by `src` arrives at t + d, where d is 1 for a fixed delay and, for
`Uniform(a, b)`, a + pmod(xxhash64(seed␟relation␟t␟row...), b - a + 1); it is
lost (arrival NULL) when (src, row[0], t) is an omission or src has crashed at
or before t.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from sparkdedalus.network import Network, Uniform

SEPARATOR = "\x1f"


def arrival_column(network: Network, relation: str, row: list[str], src: str, tick: int) -> Column:
    delay = network.delay
    if isinstance(delay, Uniform):
        text = F.concat_ws(SEPARATOR, F.lit(str(network.seed)), F.lit(relation), F.lit(str(tick)),
                           *[F.col(c).cast("string") for c in row])
        arrival = F.lit(tick + delay.low) + F.pmod(F.xxhash64(text), F.lit(delay.high - delay.low + 1))
    else:
        arrival = F.lit(tick + 1)
    lost = _lost(network, F.col(row[0]).cast("string"), F.col(src), tick)
    return F.when(lost, F.lit(None)).otherwise(arrival).cast("bigint")


def _lost(network: Network, dst: Column, src: Column, tick: int) -> Column:
    lost = F.lit(False)
    for (o_src, o_dst, o_tick) in network.omissions:
        if o_tick == tick:
            lost = lost | ((src == F.lit(str(o_src))) & (dst == F.lit(str(o_dst))))
    crashed = [str(node) for node, at in network.crashes.items() if at <= tick]
    if crashed:
        lost = lost | src.isin(crashed)
    return lost
