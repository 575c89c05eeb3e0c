"""Where a run directory keeps what (no pyspark, no deltalake: `show` imports it).

    RUN/manifest.json    the run manifest (manifest.py); last_tick is the commit point
    RUN/LOCK             the single writer (lock.py)
    RUN/<relation>/      one Delta table per relation

A relation's table has the relation's columns (named as declared by `.decl`,
c0, c1, ... otherwise; the first is the location) and five bookkeeping columns:

    _tick     bigint   the tick of the change (a message: its send tick)
    _kind     string   the row kinds of the engine's pack (sparkdedalus.pack.columns):
                       S the tick's final state; N derived by @next for tick+1;
                       M a message sent at _tick; G a fact of the final state that
                       garbage collection drops after _tick
    _op       tinyint  +1 the row appears at _tick, -1 it disappears (messages: +1)
    _arrival  bigint   messages: the arrival tick, NULL when the network lost it
    _src      string   messages: the sender's location

>>> bookkeeping_clash(("loc", "_tick"))
'_tick'
"""

from __future__ import annotations

import os

TICK, KIND, OP, ARRIVAL, SRC = "_tick", "_kind", "_op", "_arrival", "_src"
BOOKKEEPING = (TICK, KIND, OP, ARRIVAL, SRC)


def table_path(run_directory: str, relation: str) -> str:
    """The Delta table of `relation` in a run directory."""
    return os.path.join(run_directory, relation)


def bookkeeping_clash(columns) -> str | None:
    """A declared column name that is also a bookkeeping column, if any."""
    return next((c for c in columns if c in BOOKKEEPING), None)
