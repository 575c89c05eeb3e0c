"""The network and failure model of `sparkdedalus.network`, as Spark columns.

Same recipe as `Network.arrival`: a message of `relation` with row `row` sent at
tick t by `src` arrives at t + d, where d is 1 for a fixed delay and, for
`Uniform(a, b)`, a + pmod(xxhash64(seed␟relation␟t␟row...), b - a + 1), the
values printed by `spark_string_sql`; it is lost (arrival NULL) when
(src, row[0], t) is an omission or src has crashed at or before t.
"""

from __future__ import annotations

from sparkdedalus.network import Network, Uniform
from sparkdedalus.spark.expressions import sql_literal
from udfs.registry import spark_string_sql

SEPARATOR = "\x1f"


def arrival_sql(network: Network, relation: str, row: list[tuple[str, str]], src: str, tick: int) -> str:
    """SQL for the arrival tick of messages sent at `tick` (NULL when lost);
    `row` holds the message's (column, dialect type) pairs, destination first,
    `src` names the sender's column (its text)."""
    delay = network.delay
    texts = [spark_string_sql(f"`{column}`", typ) for column, typ in row]
    if isinstance(delay, Uniform):
        parts = [sql_literal(str(network.seed)), sql_literal(relation), sql_literal(str(tick))] + texts
        text = f"concat_ws({sql_literal(SEPARATOR)}, {', '.join(parts)})"
        arrival = f"({tick + delay.low} + pmod(xxhash64({text}), {delay.high - delay.low + 1}))"
    else:
        arrival = str(tick + 1)
    lost = _lost_sql(network, texts[0], f"`{src}`", tick)
    return f"CASE WHEN {lost} THEN NULL ELSE {arrival} END"


def _lost_sql(network: Network, dst: str, src: str, tick: int) -> str:
    conditions = [f"({src} = {sql_literal(o_src)} AND {dst} = {sql_literal(o_dst)})"
                  for (o_src, o_dst, o_tick) in sorted(network.omissions) if o_tick == tick]
    crashed = sorted(node for node, at in network.crashes.items() if at <= tick)
    if crashed:
        conditions.append(f"{src} IN ({', '.join(sql_literal(n) for n in crashed)})")
    return " OR ".join(conditions) or "false"
