"""Store commits of synthetic packs: round trips, idempotence, ordering, the
single writer, and the tables as Delta readers see them (Spark and delta-rs)."""

from __future__ import annotations

import os
import textwrap

import pytest

from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.pack.layout import MESSAGE, NEXT, STATE, Layout
from sparkdedalus.store import Store, StoreError, StoreLockedError, read

pytestmark = pytest.mark.spark

WRITERS = ["spark", "delta-rs"]

PROGRAM = Program.parse(textwrap.dedent("""
    .decl p(loc: string, peer: string)
    .decl q(loc: string, y: string, w: double)
    .persist p
    q(M, Y, W)@async :- q(L, Y, W), p(L, M);
"""))


def pack(spark, layout, states=(), nexts=(), messages=()):
    """A pack from rows: states/nexts are (relation, row); messages are
    (relation, row, sent, arrival or None, src)."""
    parts = []
    for kind, rows in ((STATE, states), (NEXT, nexts)):
        for name, row in rows:
            parts.append(layout.part(name, kind, spark.createDataFrame([row], layout.schemas[name])))
    for name, row, sent, arrival, src in messages:
        frame = spark.createDataFrame([row], layout.schemas[name])
        parts.append(layout.part(name, MESSAGE, frame, sent=str(sent),
                                 arrival="NULL" if arrival is None else str(arrival), source=f"'{src}'"))
    return layout.union(parts).localCheckpoint(eager=True)


@pytest.fixture(scope="module")
def layout():
    return Layout(PROGRAM.relations)


def packs(spark, layout):
    """Three ticks: p grows and is carried (N rows), q changes and sends."""
    p1, p2 = ("a", "b"), ("b", "c")
    q1, q2 = ("a", "x", 0.5), ("b", "x", 0.5)
    return {
        1: pack(spark, layout, states=[("p", p1), ("q", q1)], nexts=[("p", p1)],
                messages=[("q", ("b", "x", 0.5), 1, 3, "a"), ("q", ("c", "x", 0.5), 1, None, "a")]),
        2: pack(spark, layout, states=[("p", p1), ("p", p2)], nexts=[("p", p1), ("p", p2)],
                messages=[("q", ("b", "x", 0.5), 1, 3, "a")]),
        3: pack(spark, layout, states=[("p", p1), ("p", p2), ("q", q2)], nexts=[("p", p1), ("p", p2)],
                messages=[("q", ("a", "x", 0.5), 3, 4, "b")]),
    }


def commit_all(store, by_tick):
    previous = None
    for tick in sorted(by_tick):
        assert store.commit(tick, by_tick[tick], previous)
        previous = by_tick[tick]


def same_rows(a, b) -> bool:
    return sorted(map(repr, a.collect())) == sorted(map(repr, b.collect()))


@pytest.fixture(scope="module", params=WRITERS)
def stored(request, spark, tmp_path_factory):
    """(writer, run directory, packs, store): three ticks committed, the store closed."""
    layout = Layout(PROGRAM.relations)
    by_tick = packs(spark, layout)
    path = str(tmp_path_factory.mktemp("stored") / "run")
    with Store.open(spark, path, PROGRAM, writer=request.param) as store:
        commit_all(store, by_tick)
    return request.param, path, by_tick, store


def table_rows(path: str, name: str) -> list[dict]:
    import pyarrow as pa
    return pa.table(read.delta_table(path, name).to_pyarrow_table()).to_pylist()


def test_round_trip_changes_only(stored):
    writer, path, by_tick, store = stored
    assert store.writer == {"spark": "spark-delta", "delta-rs": "delta-rs"}[writer]
    assert store.last_tick == 3
    assert store.written == {1: ["p", "q"], 2: ["p", "q"], 3: ["q"]}  # p did not change at tick 3
    assert same_rows(store.pack_at(2), by_tick[2])
    assert {tuple(r) for r in store.relation("p", 2).collect()} == {("a", "b"), ("b", "c")}
    assert store.relation("q", 3).columns == ["loc", "y", "w"]
    assert store.messages("q", 1).count() == 2
    assert sorted(os.listdir(path)) == ["LOCK", "manifest.json", "p", "q"]
    assert read.relation_rows(path, "q", 1) == {("a", "x", 0.5)}
    assert read.relation_rows(path, "q", 2) == set()
    assert read.facts(path, 3) == {"p": {("a", "b"), ("b", "c")}, "q": {("b", "x", 0.5)}}
    lost = [m for m in read.messages(path) if m.arrival is None]
    assert [(m.relation, m.row, m.src, m.send_tick) for m in lost] == [("q", ("c", "x", 0.5), "a", 1)]
    # storage holds changes, not snapshots: p("a", "b") is written once per kind, at tick 1
    assert sorted((r["_tick"], r["_kind"], r["_op"], r["loc"]) for r in table_rows(path, "p")) == [
        (1, "N", 1, "a"), (1, "S", 1, "a"), (2, "N", 1, "b"), (2, "S", 1, "b")]
    assert sorted((r["_tick"], r["_op"]) for r in table_rows(path, "q") if r["_kind"] == "S") == \
        [(1, 1), (2, -1), (3, 1)]


def test_recommit_is_a_noop_and_ticks_go_in_order(spark, stored):
    writer, path, by_tick, _ = stored
    version = read.delta_table(path, "q").version()
    with Store.open(spark, path, PROGRAM, writer=writer, resume=True) as store:
        assert store.commit(3, by_tick[3], by_tick[2]) is False
        with pytest.raises(StoreError, match="expected tick 4, got 5"):
            store.commit(5, by_tick[3], by_tick[2])
        with pytest.raises(StoreError, match="needs the pack of tick 3"):
            store.commit(4, by_tick[3])
        # Delta's own idempotence: the same (app id, tick) written again is skipped
        store._writer.commit(store.table_path("q"), 1, store.table("q").limit(1))
    assert read.delta_table(path, "q").version() == version


def test_tables_open_with_deltalake_and_spark_time_travel(spark, stored):
    import deltalake
    _, path, _, _ = stored
    table_dir = os.path.join(path, "q")
    table = deltalake.DeltaTable(table_dir)
    assert table.version() == 3  # version 0 creates the table, then one commit per tick q changed
    assert deltalake.DeltaTable(table_dir, version=0).to_pyarrow_table().num_rows == 0
    assert table.transaction_version(read.manifest(path).run_id) == 3
    assert deltalake.DeltaTable(os.path.join(path, "p")).version() == 2  # no commit at tick 3
    v0 = spark.read.format("delta").option("versionAsOf", 0).load(table_dir)
    assert v0.count() == 0 and v0.columns == ["loc", "y", "w", "_tick", "_kind", "_op", "_arrival", "_src"]
    # version k holds the changes of ticks 1..k
    assert spark.read.format("delta").option("versionAsOf", 2).load(table_dir).agg({"_tick": "max"}).first()[0] == 2
    assert sorted(commit_tick(h) for h in table.history()) == [0, 1, 2, 3]


def commit_tick(entry: dict) -> int:
    """The tick a commit carries: Spark's `userMetadata`, or delta-rs' custom commit info."""
    import json
    if "userMetadata" in entry:
        return json.loads(entry["userMetadata"])["sparkdedalus.tick"]
    return int(entry["sparkdedalus.tick"])


def test_second_writer_refused_and_existing_run_not_overwritten(spark, tmp_path, layout):
    path = str(tmp_path / "run")
    store = Store.open(spark, path, PROGRAM)
    try:
        with pytest.raises(StoreLockedError, match="another process"):
            Store.open(spark, path, PROGRAM, resume=True)
    finally:
        store.close()
    with pytest.raises(StoreError, match="already holds a run"):
        Store.open(spark, path, PROGRAM)
    other = Program.parse("r(N)@next :- r(N);")
    with pytest.raises(StoreError, match="another program"):
        Store.open(spark, path, other, resume=True)
    with pytest.raises(StoreError, match="network"):
        Store.open(spark, path, PROGRAM, Network(seed=3), resume=True)
    Store.open(spark, path, PROGRAM, resume=True).close()  # and the lock was released each time


@pytest.mark.parametrize("writer", ["spark", pytest.param("delta-rs", marks=pytest.mark.slow)])
def test_a_tick_half_written_is_invisible_and_redone(spark, tmp_path, layout, writer):
    """A crash after some tables of tick 3 were written, before the manifest
    advanced: readers stop at tick 2; the resumed run redoes tick 3 and Delta's
    application transactions skip the table already written."""
    by_tick = packs(spark, layout)
    path = str(tmp_path / "run")
    with Store.open(spark, path, PROGRAM, writer=writer) as store:
        commit_all(store, {t: by_tick[t] for t in (1, 2)})
        from sparkdedalus.store import changes
        diff = changes.tick_diff(by_tick[3], by_tick[2], 3, store.layout)
        store._writer.commit(store.table_path("q"), 3, changes.relation_changes(diff, "q", store.layout,
                                                                                 ("loc", "y", "w")))
    version = read.delta_table(path, "q").version()
    assert read.last_tick(path) == 2 and read.facts(path, 2)["q"] == set()  # the horizon hides tick 3
    with Store.open(spark, path, PROGRAM, resume=True, writer=writer) as store:
        assert store.last_tick == 2
        assert same_rows(store.resume_pack(), by_tick[2])
        assert store.commit(3, by_tick[3], store.resume_pack())
    assert read.delta_table(path, "q").version() == version  # not written twice
    assert read.facts(path, 3) == {"p": {("a", "b"), ("b", "c")}, "q": {("b", "x", 0.5)}}


def test_fallback_says_so_once(spark, tmp_path, monkeypatch, capsys):
    import sparkdedalus.plumbing.session as session
    import sparkdedalus.store.store as store_module
    monkeypatch.setattr(session, "session_has_delta", lambda spark: False)
    monkeypatch.setattr(store_module, "_noticed", False)
    for i in range(2):
        with Store.open(spark, str(tmp_path / f"run{i}"), PROGRAM) as store:
            assert store.writer == "delta-rs"
    lines = [line for line in capsys.readouterr().err.splitlines() if "delta-rs" in line]
    assert len(lines) == 1 and "cannot load Delta Lake" in lines[0]
    assert spark.conf.get("spark.sql.extensions") == "io.delta.sql.DeltaSparkSessionExtension"


def test_resume_across_writers(spark, tmp_path, layout):
    by_tick = packs(spark, layout)
    path = str(tmp_path / "run")
    with Store.open(spark, path, PROGRAM, writer="spark") as store:
        store.commit(1, by_tick[1])
    with Store.open(spark, path, PROGRAM, resume=True, writer="delta-rs") as store:
        store.commit(2, by_tick[2], store.resume_pack())
    with Store.open(spark, path, PROGRAM, resume=True, writer="spark") as store:
        store.commit(3, by_tick[3], store.resume_pack())
        assert same_rows(store.pack_at(3), by_tick[3])
