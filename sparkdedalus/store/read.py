"""Reading a run directory without Spark (delta-rs only: no JVM, no pyarrow).

    from sparkdedalus.store import read
    read.last_tick("runs/r1")                      # the read horizon
    read.relations("runs/r1")                      # ['bcast', 'log', 'node']
    read.relation("runs/r1", "log", tick=3)        # an Arrow table with the declared columns
    read.relation_rows("runs/r1", "log", tick=3)   # {('a', 'hi'), ...}
    read.relation_history("runs/r1", "log", 1, 3)  # {1: {...}, 2: {...}, 3: {...}}
    read.facts("runs/r1", tick=3)                  # {relation: set of tuples}
    read.messages("runs/r1")                       # [Message(relation, row, src, send_tick, arrival)]
    read.locations("runs/r1")                      # {'a', 'b', ...}: every location of a fact

Every reader stops at the manifest's `last_tick`: rows of a later tick (tables
written just before a crash, before the manifest advanced) are not part of the
run yet. Queries run on delta-rs' own engine, which skips the files whose
`_tick` statistics rule them out. Values come back as the reference evaluator
has them (int, float, str, bool), so `read.facts(path, k) == {n: set(rows) for
n, rows in trace.at(k).items()}` for a run of the same program.
"""

from __future__ import annotations

import os

from sparkdedalus.store.errors import StoreError
from sparkdedalus.pack.columns import MESSAGE, STATE
from sparkdedalus.store.layout import ARRIVAL, KIND, OP, SRC, TICK, table_path
from sparkdedalus.store.manifest import Manifest
from sparkdedalus.store.manifest import load as _load_manifest


def manifest(path: str) -> Manifest:
    """The run manifest of run directory `path`."""
    found = _load_manifest(os.path.abspath(path))
    if found is None:
        raise StoreError(f"{path} is not a sparkdedalus run directory (no manifest.json)")
    return found


def last_tick(path: str) -> int:
    """The last committed tick of the run in `path`."""
    return manifest(path).last_tick


def relations(path: str) -> list[str]:
    """The relations of the run, sorted by name."""
    return sorted(manifest(path).relations)


def delta_table(path: str, name: str, version: int | None = None):
    """Relation `name`'s table as a `deltalake.DeltaTable` (at `version`, default the latest)."""
    from deltalake import DeltaTable
    location = table_path(os.path.abspath(path), name)
    try:
        return DeltaTable(location) if version is None else DeltaTable(location, version=version)
    except Exception as exc:
        raise StoreError(f"cannot read the Delta table {location}: {str(exc).splitlines()[0]}") from None


def _tick(found: Manifest, tick: int | None) -> int:
    tick = found.last_tick if tick is None else tick
    if not isinstance(tick, int) or not 1 <= tick <= found.last_tick:
        if found.last_tick == 0:
            raise StoreError("no tick is committed yet")
        raise StoreError(f"tick {tick!r} is not committed (ticks 1..{found.last_tick})")
    return tick


def _check(found: Manifest, name: str) -> None:
    if name not in found.relations:
        raise StoreError(f"unknown relation '{name}' (relations: {', '.join(sorted(found.relations))})")


def _query(path: str, name: str, sql: str):
    """Run `sql` (over the table `t`) on relation `name`'s table with delta-rs'
    query engine (DataFusion: files whose `_tick` statistics rule them out are
    skipped); an Arrow table (arro3)."""
    from deltalake import QueryBuilder
    try:
        return QueryBuilder().register("t", delta_table(path, name)).execute(sql).read_all()
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"cannot read relation '{name}' of {path}: {str(exc).splitlines()[0]}") from None


def _quoted(columns) -> str:
    return ", ".join('"' + c.replace('"', '""') + '"' for c in columns)


def _present(path: str, found: Manifest, name: str, upto: int):
    """Relation `name`'s rows whose changes up to tick `upto` sum to 1 (present)."""
    columns = _quoted(found.relations[name].columns)
    return _query(path, name, f"SELECT {columns} FROM t WHERE {KIND} = '{STATE}' AND {TICK} <= {upto} "
                              f"GROUP BY {columns} HAVING sum({OP}) > 0")


def relation(path: str, name: str, tick: int | None = None):
    """Relation `name` at the end of `tick` (default: the last committed) as an
    Arrow table with the relation's declared column names (arro3; `pyarrow.table(t)`
    converts it)."""
    found = manifest(path)
    _check(found, name)
    return _present(path, found, name, _tick(found, tick))


def relation_rows(path: str, name: str, tick: int | None = None) -> set:
    """Relation `name` at `tick` as a set of tuples."""
    return _tuples(relation(path, name, tick))


def relation_history(path: str, name: str, first: int, last: int) -> dict:
    """{tick: set of tuples} of relation `name` at the end of each tick
    `first`..`last`, from one query over its changes (not one per tick)."""
    found = manifest(path)
    _check(found, name)
    first, last = _tick(found, first), _tick(found, last)
    columns = found.relations[name].columns
    changes = _row_list(_query(path, name, f"SELECT {_quoted(columns)}, {TICK}, {OP} FROM t "
                                          f"WHERE {KIND} = '{STATE}' AND {TICK} <= {last}"))
    changes.sort(key=lambda change: change[-2])
    count: dict = {}
    history = {}
    position = 0
    for tick in range(1, last + 1):
        while position < len(changes) and changes[position][-2] == tick:
            *row, _, op = changes[position]
            count[tuple(row)] = count.get(tuple(row), 0) + op
            position += 1
        if tick >= first:
            history[tick] = {row for row, n in count.items() if n > 0}
    return history


def facts(path: str, tick: int | None = None, relations=None) -> dict:
    """{relation: set of tuples} at the end of `tick` for `relations` (default: all)."""
    found = manifest(path)
    names = list(found.relations) if relations is None else list(relations)
    for name in names:
        _check(found, name)
    upto = _tick(found, tick)
    return {name: _tuples(_present(path, found, name, upto)) for name in names}


def locations(path: str) -> set:
    """Every location (first column) of a fact of any relation at any committed tick."""
    found = manifest(path)
    out = set()
    for name, info in found.relations.items():
        column = _quoted(info.columns[:1])
        table = _query(path, name, f"SELECT DISTINCT {column} FROM t "
                                   f"WHERE {KIND} = '{STATE}' AND {TICK} <= {found.last_tick}")
        out.update(table.column(0).to_pylist())
    return out


def _tuples(table) -> set:
    return set(_row_list(table))


def _row_list(table) -> list:
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return list(zip(*columns))


def messages(path: str, sent: int | None = None) -> list:
    """Messages sent up to the last committed tick (only those sent at `sent`
    when given), as `sparkdedalus.network.Message(relation, row, src,
    send_tick, arrival)` with arrival None for a lost message; the destination
    is `row[0]`. Sorted by send tick, relation, row, sender."""
    from sparkdedalus.output import sort_key
    from sparkdedalus.network import Message
    found = manifest(path)
    upto = found.last_tick if sent is None else _tick(found, sent)
    out = []
    for name, info in found.relations.items():
        when = f"{TICK} = {sent}" if sent is not None else f"{TICK} <= {upto}"
        table = _query(path, name, f"SELECT {_quoted(info.columns)}, {TICK}, {ARRIVAL}, {SRC} FROM t "
                                   f"WHERE {KIND} = '{MESSAGE}' AND {when}")
        width = len(info.columns)
        for *row, at, arrival, src in _row_list(table):
            out.append(Message(name, tuple(row[:width]), src, at, arrival))
    out.sort(key=lambda m: (m.send_tick, m.relation, sort_key(m.row), str(m.src)))
    return out
