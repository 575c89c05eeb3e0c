"""Appended state: the facts a carried relation had at earlier ticks stay
where they are, and a tick adds only its new ones.

A *carried* relation (analysis/growth.py: persisted, or all its sources grow)
holds at tick t every fact it held at t-1, so its state only grows. Once the
carried state of a run is large (`APPEND_ROWS_SETTING` rows), a tick stops
copying it into its pack: the relations that append (`appending`: carried,
neither collected by GC nor lattices, read by no rule at the tick) are left
out of the tick's start, the tick's
candidate facts of them are compared with the earlier state (`new_only_sql`:
the candidates, hashed; the earlier state scanned once against them, never
sorted nor shuffled) and the pack materialises the new ones only. The pack a
reader sees is that materialisation with the earlier state beside it
(`DataFrame.unionAll` with one scan of the earlier pieces,
plumbing/zipped.py: nothing copied): every reader of a pack (the next
tick, `r(..)@k`, the store, provenance, `Run.relation`) reads every fact of
the tick as before. `COMPACT_EVERY` pieces are compacted into one, a lazy
checkpoint of their scan that the first job reading them computes (no shuffle, no
de-duplication: a pack is never a union of more pieces). A tick copies the
state instead, which makes it one piece again, when it does not run in the
partitions the pieces are in (one, or the partitioner's buckets); the loop's
partitions do not shrink while it appends, and its ticks are sized to what
they work over (`work_rows`: the state appended to is only scanned).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame

from sparkdedalus.pack.columns import STATE
from sparkdedalus.syntax.ast import TickTime

#: the session setting: the rows of carried state from which a tick appends
#: to it instead of copying it (0: always; a negative number: never)
APPEND_ROWS_SETTING = "spark.sparkdedalus.appendRows"
#: its default: half the rows from which a tick compiles its code (spark/codegen.py), so
#: that a run appends before its carried state alone would make its ticks compile
APPEND_ROWS = 100_000
#: a row of appended state that a tick scans weighs 1/SCANNED_SHARE of a row it
#: copies (`work_rows`). Measured on benchmarks/large_ticks.py's growth (one
#: partition, interpreted): about 1.5 microseconds a row scanned, 3-6 copied; a
#: quarter left ticks of 100,000 new facts over 300,000 carried interpreted in one
#: partition (2.5-4.6 s a tick), half sends them to two, compiled (2.0-2.2 s)
SCANNED_SHARE = 2
#: the most pieces a pack's appended state is a union of: they are then compacted into one
COMPACT_EVERY = 8


def append_rows(spark) -> int:
    """The carried rows from which a tick appends (`APPEND_ROWS_SETTING`)."""
    return int(spark.conf.get(APPEND_ROWS_SETTING, str(APPEND_ROWS)))


def appending(program, carried, collected) -> frozenset:
    """The relations whose state a tick may append to: carried, not
    collected by a GC rule (their state shrinks), not lattices (a group's
    best row replaces the one before), and read by no rule at the tick it
    runs (a log, a history, an output; `r(..)@k` may read them): a rule that
    reads a relation reads all of its state every tick, from the tick's
    start in one scan, where appended pieces cost a scan each and the
    comparison of the tick's facts with them more (measured: voting at
    100,000 ballots, whose rules read their persisted relations every tick,
    took 17-19 s a tick appending against 9-12 s copying).

    >>> from sparkdedalus.program import Program
    >>> p = Program.parse('.persist log\\n.persist hist\\nlog(L, X) :- in(L, X);\\nhist(L, X) :- in(L, X);\\n'
    ...                   'use(L, X) :- log(L, X);\\nearly(L, X) :- hist(L, X)@2;')
    >>> sorted(appending(p, {"log", "hist"}, collected=set()))  # a rule reads log now, hist only at tick 2
    ['hist']
    """
    read = {atom.name for rule in program.rules if not rule.persistence
            for atom in (*rule.positive_atoms, *rule.negated_atoms) if not isinstance(atom.time, TickTime)}
    return frozenset(set(carried) - set(collected) - set(program.lattices) - read)


@dataclass(frozen=True)
class Appended:
    """A pack (`pack`): what its tick materialised (`fresh`) beside the
    appended relations' state rows of the earlier ticks' `fresh` since the
    last copy (`earlier`, newest first); and the appended relations' state
    rows in all, `rows`, of which `persisted` of persisted relations."""

    pack: DataFrame
    fresh: DataFrame
    earlier: tuple
    rows: int
    persisted: int


def work_rows(rows: int, kept: int) -> int:
    """The rows a tick works over, sizing its partitions and its code
    (spark/sizer.py, spark/codegen.py), when its start holds `rows` rows of
    which it appends to `kept` instead of copying them: those it scans weigh
    1/SCANNED_SHARE.

    >>> work_rows(1_000_000, 0), work_rows(1_000_000, 800_000)
    (1000000, 600000)
    """
    return rows - kept + kept // SCANNED_SHARE


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
