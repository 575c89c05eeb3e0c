"""Appended state: the facts a carried relation had at earlier ticks stay
where they are, and a tick adds only its new ones.

A *carried* relation (analysis/growth.py: persisted, or all its sources grow)
holds at tick t every fact it held at t-1, so its state only grows. Once the
carried state of a run is large (`APPEND_ROWS_SETTING` rows), a tick stops
copying it into its pack: the relations that append (carried, neither
collected by GC nor lattices) are left out of the tick's start, the tick's
candidate facts of them are compared with the earlier state (`new_only_sql`:
the candidates, hashed; the earlier state scanned once against them, never
sorted nor shuffled) and the pack materialises the new ones only. The pack a
reader sees is that materialisation with the earlier state beside it
(`DataFrame.unionAll`, nothing copied): every reader of a pack (the next
tick, `r(..)@k`, the store, provenance, `Run.relation`) reads every fact of
the tick as before. A tick copies the state instead, which makes it one
piece again, when it has `COMPACT_EVERY` pieces (a copy every `COMPACT_EVERY`
ticks: a pack is never a union of more pieces), and when the tick does not
run in the partitions the pieces are in (one, or the partitioner's buckets).

>>> sorted(appending({"log", "seen", "best", "kept"}, collected={"kept"}, lattices={"best"}))
['log', 'seen']
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame

from sparkdedalus.pack.columns import STATE

#: the session setting: the rows of carried state from which a tick appends
#: to it instead of copying it (0: always; a negative number: never)
APPEND_ROWS_SETTING = "spark.sparkdedalus.appendRows"
#: its default: below it a tick runs in one partition, where a copy is cheap (spark/sizer.py)
APPEND_ROWS = 200_000
#: the most pieces a pack's appended state is a union of: the tick after copies it into one
COMPACT_EVERY = 8


def append_rows(spark) -> int:
    """The carried rows from which a tick appends (`APPEND_ROWS_SETTING`)."""
    return int(spark.conf.get(APPEND_ROWS_SETTING, str(APPEND_ROWS)))


def appending(carried, collected, lattices) -> frozenset:
    """The relations whose state a tick may append to: carried, not
    collected by a GC rule (their state shrinks), not lattices (a group's
    best row replaces the one before)."""
    return frozenset(set(carried) - set(collected) - set(lattices))


@dataclass(frozen=True)
class Appended:
    """A pack (`pack`) and its appended relations' state: `rows` rows, of
    which `persisted` of persisted relations, in `pieces` pieces."""

    pack: DataFrame
    rows: int
    persisted: int
    pieces: int


def state_condition(names) -> str:
    """SQL: a pack row is a state row of one of `names`.

    >>> state_condition({"b", "a"}), state_condition(set())
    ("__kind = 'S' AND __rel IN ('a', 'b')", 'false')
    """
    if not names:
        return "false"
    return f"__kind = '{STATE}' AND __rel IN ({', '.join(repr(n) for n in sorted(names))})"


def new_only_sql(candidates: str, earlier: str, names, columns: list[str], bucket: list[str]) -> str:
    """SQL: the rows of the pack `candidates` (a view, each row once) but the
    state rows of `names` that the pack `earlier` already has. The earlier
    state is scanned once against the candidates' state rows of `names`,
    hashed, and the few it has are taken out of the candidates: the earlier
    state is neither sorted nor hashed, and not shuffled when both are in one
    partition or in the buckets of the partition column `bucket` (compared
    with `=`, which the buckets' hash partitioning satisfies; the value
    columns, NULL where a relation has no value, with `<=>`).

    >>> print(new_only_sql("c", "e", {"r"}, ["__rel", "__p"], ["__p"]))
    SELECT /*+ SHUFFLE_HASH(k) */ d.* FROM c d LEFT ANTI JOIN (SELECT /*+ SHUFFLE_HASH(n) */ o.* FROM e o LEFT SEMI JOIN (SELECT * FROM c WHERE __kind = 'S' AND __rel IN ('r')) n ON o.`__rel` <=> n.`__rel` AND o.`__p` = n.`__p` WHERE __kind = 'S' AND __rel IN ('r')) k ON d.`__rel` <=> k.`__rel` AND d.`__p` = k.`__p`
    """
    state = state_condition(names)

    def on(left: str, right: str) -> str:
        return " AND ".join(f"{left}.`{c}` {'=' if c in bucket else '<=>'} {right}.`{c}`" for c in columns)

    known = (f"SELECT /*+ SHUFFLE_HASH(n) */ o.* FROM {earlier} o LEFT SEMI JOIN (SELECT * FROM {candidates} WHERE {state}) n"
             f" ON {on('o', 'n')} WHERE {state}")
    return f"SELECT /*+ SHUFFLE_HASH(k) */ d.* FROM {candidates} d LEFT ANTI JOIN ({known}) k ON {on('d', 'k')}"
