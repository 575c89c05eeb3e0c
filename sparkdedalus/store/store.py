"""`Store`: a run directory, written tick by tick by one engine.

    store = Store.open(spark, "runs/r1", program, network, resume=True)
    previous = store.resume_pack()            # None, or the pack of store.last_tick
    for tick in range(store.last_tick + 1, ticks + 1):
        pack = loop.run_tick(tick, previous, state)
        if tick % k == 0 or tick == ticks:
            store.commit(tick, pack, previous)  # the staged ticks' changed tables, then the manifest
        else:
            store.stage(tick, pack, previous)   # kept (lazily) for the next commit
        previous = pack
    store.close()

A run directory holds `manifest.json` (run id, program fingerprint, network,
relations, last committed tick), `LOCK` (the single writer) and one Delta table
per relation (`sparkdedalus.store.layout`). `Engine.run(..., store=PATH)` drives
it; docs/storage.md describes the layout and the guarantees.
"""

from __future__ import annotations

import os
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from functools import reduce
from urllib.parse import urlparse

from pyspark.sql import DataFrame, SparkSession

from sparkdedalus.network import Network
from sparkdedalus.plumbing.jobnames import JobNames
from sparkdedalus.store import changes
from sparkdedalus.store import manifest as manifests
from sparkdedalus.store.errors import StoreError
from sparkdedalus.store.layout import bookkeeping_clash, table_path
from sparkdedalus.store.lock import LOCK_FILE, WriterLock
from sparkdedalus.store.manifest import Manifest
from sparkdedalus.store.writers import DeltaRsWriter, SparkDeltaWriter

WRITERS = ("auto", "spark", "delta-rs")
#: tables written at once by a commit
WRITE_THREADS = 4
_FALLBACK_NOTICE = ("sparkdedalus: this Spark session cannot load Delta Lake; the store's Parquet files are "
                    "written by Spark and committed with delta-rs")
_noticed = False


def _notice_fallback() -> None:
    global _noticed
    if not _noticed:
        _noticed = True
        print(_FALLBACK_NOTICE, file=sys.stderr, flush=True)


def _gc_phrase(rules: list) -> str:
    """How a run's GC rules read in an error.

    >>> _gc_phrase([]), _gc_phrase(["x(L, K) when y(L, K)"])
    ('without GC', "with GC rules 'x(L, K) when y(L, K)'")
    """
    return "with GC rules " + "; ".join(f"'{rule}'" for rule in rules) if rules else "without GC"


def _local_directory(path: str) -> str:
    parsed = urlparse(str(path))
    if parsed.scheme not in ("", "file") or (parsed.scheme == "" and "://" in str(path)):
        raise StoreError(f"run directory {path}: only local (or mounted) paths are supported for now")
    return os.path.abspath(parsed.path if parsed.scheme == "file" else str(path))


def _applied_tick(table: str, manifest: Manifest) -> int:
    """The last tick written to `table` by this run (its application transaction
    version), when a crashed commit wrote it beyond the commit point; else 0.
    A commit of several ticks that redoes a crashed one skips that table's rows up
    to it: Delta would skip the whole write, or, when the redo ends later (another
    --commit-every), write those ticks a second time."""
    from deltalake import DeltaTable
    version = DeltaTable(table).transaction_version(manifest.run_id) or 0
    return version if version > manifest.last_tick else 0


class Store:
    """A run directory opened for writing (see the module doc). Use `Store.open`."""

    def __init__(self, spark: SparkSession, path: str, program, manifest: Manifest, lock: WriterLock,
                 writer, native_reads: bool):
        from sparkdedalus.pack.layout import Layout
        self.spark = spark
        self.path = path
        self.program = program
        self.manifest = manifest
        self.layout = Layout(program.relations)
        self.schemas = {name: changes.table_schema(self.layout, name, info.columns)
                        for name, info in manifest.relations.items()}
        self._lock = lock
        self._writer = writer
        self._native_reads = native_reads
        #: the last committed tick when the store was opened (0: a new run)
        self.resumed_from = manifest.last_tick
        #: relations written by each commit of this process: its last tick -> names
        self.written: dict = {}
        self._staged: list = []  # (tick, changes) staged for the next commit
        #: table -> the last tick a crashed commit wrote to it beyond the commit point (see `open`)
        self._applied: dict = {}
        #: names of the Spark jobs of commits (`Engine.run` gives its own)
        self.names = JobNames(spark)

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, spark: SparkSession, path: str, program, network: Network | None = None,
             resume: bool = False, writer: str = "auto", gc: list | tuple = ()) -> "Store":
        """Create the run directory `path` for a new run of `program`, or with
        `resume=True` reopen it to continue (a directory without a run then
        starts a new one). Takes the writer lock: a second writer is refused
        with `StoreLockedError`. `writer`: "auto" (Spark's Delta Lake when the
        session can load it, else delta-rs, saying so once on stderr), "spark"
        or "delta-rs". `gc`: the texts of the GC rules the run applies, recorded
        in the manifest; resuming with other rules is refused (what the store
        holds depends on them). Never changes the session's configuration."""
        if writer not in WRITERS:
            raise StoreError(f"unknown store writer '{writer}' (expected {', '.join(WRITERS)})")
        network = network or Network()
        directory = _local_directory(path)
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create run directory {directory}: {exc.strerror or exc}") from None
        lock = WriterLock(directory)
        lock.acquire()
        try:
            return cls._open_locked(spark, directory, program, network, resume, writer, lock, list(gc))
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _open_locked(cls, spark, directory, program, network, resume, writer, lock, gc) -> "Store":
        from sparkdedalus.plumbing.session import session_has_delta

        for relation in program.relations.values():
            if not relation.columns:
                raise StoreError(f"relation '{relation.name}' has no columns and cannot be stored")
            clash = bookkeeping_clash(relation.columns)
            if clash:
                raise StoreError(f"relation '{relation.name}': column name '{clash}' is reserved by the store")
        existing = manifests.load(directory)
        fingerprint = manifests.program_fingerprint(program)
        if existing is not None and not resume:
            raise StoreError(f"run directory {directory} already holds a run (committed through tick "
                             f"{existing.last_tick}); resume it or choose another directory")
        if existing is None:
            strays = sorted(n for n in os.listdir(directory) if n != LOCK_FILE and not n.startswith(".manifest-"))
            if strays:
                raise StoreError(f"run directory {directory} is not empty and holds no run manifest "
                                 f"(found {', '.join(strays[:3])})")
            manifest = Manifest(f"sparkdedalus-{uuid.uuid4().hex}", fingerprint, network.spec(),
                                manifests.relations_info(program), 0, manifests.now(), gc=gc)
            manifests.save(directory, manifest)
        else:
            manifest = existing
            if manifest.program != fingerprint:
                raise StoreError(f"run directory {directory} holds a run of another program "
                                 f"(fingerprint {manifest.program[:19]}..., this one {fingerprint[:19]}...)")
            if Network.parse(manifest.network) != network:
                raise StoreError(f"run directory {directory} was run with network '{manifest.network}', "
                                 f"not '{network.spec()}'")
            if manifest.gc != gc:
                raise StoreError(f"run directory {directory} was run {_gc_phrase(manifest.gc)}, not "
                                 f"{_gc_phrase(gc)}: resume it with the same --gc")

        has_delta = session_has_delta(spark)
        if writer == "spark" and not has_delta:
            raise StoreError("writer 'spark' needs a Spark session with Delta Lake")
        if has_delta and writer != "delta-rs":
            chosen = SparkDeltaWriter(spark, manifest.run_id)
        else:
            if writer == "auto":
                _notice_fallback()
            chosen = DeltaRsWriter(spark, manifest.run_id)
        store = cls(spark, directory, program, manifest, lock, chosen, has_delta)
        for name in manifest.relations:  # a crash may have stopped the creation half-way
            table = store.table_path(name)
            if not os.path.exists(os.path.join(table, "_delta_log", f"{0:020d}.json")):
                chosen.create(table, store.schemas[name])
            elif existing is not None:
                store._applied[name] = _applied_tick(table, manifest)
        return store

    # ------------------------------------------------------------------ state
    def table_path(self, name: str) -> str:
        return table_path(self.path, name)

    @property
    def last_tick(self) -> int:
        """The last committed tick (0 before the first commit): the read horizon."""
        return self.manifest.last_tick

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def writer(self) -> str:
        """"spark-delta" or "delta-rs"."""
        return self._writer.kind

    # ------------------------------------------------------------------ writing
    def stage(self, tick: int, pack: DataFrame, previous: DataFrame | None = None) -> bool:
        """Keep tick `tick`'s changes for the next commit: `pack` is the engine's
        pack of the tick, `previous` the pack of tick-1 (None at tick 1). The
        changes are a lazy checkpoint (planned now, computed by the commit's
        first job). Ticks are staged in order; staging a committed tick does
        nothing and returns False."""
        if not self._lock.held:
            raise StoreError(f"run directory {self.path} is closed")
        if tick <= self.manifest.last_tick:
            return False
        expected = (self._staged[-1][0] if self._staged else self.manifest.last_tick) + 1
        if tick != expected:
            raise StoreError(f"ticks are committed in order: expected tick {expected}, got {tick}")
        if previous is None and tick > 1:
            raise StoreError(f"committing tick {tick} needs the pack of tick {tick - 1}")
        self._staged.append((tick, changes.tick_diff(pack, previous, tick, self.layout).localCheckpoint(eager=False)))
        return True

    def commit(self, tick: int, pack: DataFrame, previous: DataFrame | None = None) -> bool:
        """Stage tick `tick` (see `stage`) and commit every staged tick: their
        changes are computed once (one job, which also finds the relations that
        changed), each changed relation's table gets one idempotent Delta commit
        holding the rows of all of them (one job each; its application transaction
        version is the last tick), then the manifest advances to `tick`: that is
        the commit point. Committing a tick that is already committed does nothing
        and returns False."""
        if not self.stage(tick, pack, previous):
            return False
        staged, self._staged = self._staged, []
        first = staged[0][0]
        diff = reduce(DataFrame.unionAll, [d for _, d in staged])

        def write(name: str) -> None:
            done = self._applied.get(name, 0)  # ticks a crashed commit already wrote to this table
            if done >= tick:
                return
            columns = self.manifest.relations[name].columns
            self._writer.commit(self.table_path(name), tick, changes.relation_changes(
                diff, name, self.layout, columns, after=done if done >= first else 0))

        with self.names.scope("commit", f"{first}..{tick}" if first < tick else tick):
            names = changes.changed_relations(diff)
            # the tables are independent: their writes and Delta commits overlap
            with ThreadPoolExecutor(max_workers=max(1, min(len(names), WRITE_THREADS))) as pool:
                list(pool.map(self.names.in_thread(write), names))
        self.manifest.last_tick = tick
        manifests.save(self.path, self.manifest)
        self.written[tick] = names
        return True

    def close(self) -> None:
        """Release the writer lock (the data is already durable; reading goes on)."""
        self._lock.release()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ reading (Spark)
    def table(self, name: str, version: int | None = None) -> DataFrame:
        """Relation `name`'s Delta table as a DataFrame (every row committed to it;
        rows of ticks after `last_tick` may exist until a resumed run redoes them)."""
        path = self.table_path(name)
        if self._native_reads:
            reader = self.spark.read.format("delta")
            if version is not None:
                reader = reader.option("versionAsOf", version)
            return reader.load(path)
        from deltalake import DeltaTable
        files = (DeltaTable(path) if version is None else DeltaTable(path, version=version)).file_uris()
        if not files:
            return self.spark.createDataFrame([], self.schemas[name])
        return self.spark.read.schema(self.schemas[name]).parquet(*files)

    def _check_tick(self, tick: int | None) -> int:
        tick = self.last_tick if tick is None else tick
        if not 1 <= tick <= self.last_tick:
            raise StoreError(f"tick {tick} is not committed in {self.path} (ticks 1..{self.last_tick})")
        return tick

    def _check_name(self, name: str) -> None:
        if name not in self.manifest.relations:
            raise StoreError(f"unknown relation '{name}'")

    def pack_at(self, tick: int, checkpoint: bool = True) -> DataFrame:
        """The engine's pack of committed tick `tick`, rebuilt from the tables
        (state, @next facts, messages in flight). With `checkpoint` it is
        materialised with `localCheckpoint` (one Spark job)."""
        tick = self._check_tick(tick)
        parts = []
        for name, info in self.manifest.relations.items():
            parts += changes.pack_parts(self.table(name), name, info.columns, tick, self.layout)
        pack = self.layout.union(parts)
        return pack.localCheckpoint(eager=True) if checkpoint else pack

    def resume_pack(self, checkpoint: bool = True) -> DataFrame | None:
        """The `previous` pack for the first tick to run: the pack of `last_tick`,
        or None for a new run."""
        return self.pack_at(self.last_tick, checkpoint) if self.last_tick else None

    def relation(self, name: str, tick: int | None = None) -> DataFrame:
        """Relation `name` at the end of `tick` (default: the last committed), with
        its declared column names."""
        self._check_name(name)
        return changes.relation_at(self.table(name), self.manifest.relations[name].columns, self._check_tick(tick))

    def messages(self, name: str, tick: int | None = None) -> DataFrame:
        """Messages of relation `name` sent at `tick` (default: at every committed tick)."""
        self._check_name(name)
        return changes.messages(self.table(name), name, self.manifest.relations[name].columns, self.last_tick,
                                None if tick is None else self._check_tick(tick))
