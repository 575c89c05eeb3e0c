"""The run manifest: what a run directory holds and how far it is committed.

`RUN/manifest.json` is rewritten atomically (a temporary file, fsync, rename,
fsync of the directory) after every committed tick. Its `last_tick` is the
commit point and the read horizon: readers never look at rows of later ticks,
so a tick whose tables were written (all or some) but whose manifest update
did not land is invisible; a resumed run redoes that tick, and Delta's
application transactions skip the tables it had already written.

This module imports neither pyspark nor deltalake: `sparkdedalus show` reads the
manifest without starting a JVM.

>>> from sparkdedalus import Program
>>> info = relations_info(Program.parse('log(N, P)@next :- log(N, P); log("a", "hi")@1;'))
>>> info["log"].columns, info["log"].types
(('loc', 'c1'), ('string', 'string'))
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field

from sparkdedalus.store.errors import StoreError

FORMAT = "sparkdedalus-store/2"
MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True)
class RelationInfo:
    """A relation's table: `RUN/<name>/` (see `sparkdedalus.store.layout`)."""

    name: str
    columns: tuple  # declared column names (the first is the location)
    types: tuple  # dialect types


@dataclass
class Manifest:
    run_id: str  # also the Delta application id of every commit (txnAppId)
    program: str  # program_fingerprint()
    network: str  # Network.spec()
    relations: dict  # name -> RelationInfo, in the program's order
    last_tick: int = 0
    created: str = ""
    updated: str = ""
    format: str = FORMAT
    extra: dict = field(default_factory=dict)
    gc: list = field(default_factory=list)  # the GC rules the run applies (GcRule.text()), none: []

    def to_json(self) -> dict:
        out = asdict(self)
        out["relations"] = [asdict(r) for r in self.relations.values()]
        return out

    @staticmethod
    def from_json(data: dict) -> "Manifest":
        if data.get("format") != FORMAT:
            raise StoreError(f"unsupported store format {data.get('format')!r} (expected {FORMAT})")
        relations = {}
        for r in data["relations"]:
            info = RelationInfo(r["name"], tuple(r["columns"]), tuple(r["types"]))
            relations[info.name] = info
        return Manifest(data["run_id"], data["program"], data["network"], relations,
                        int(data["last_tick"]), data.get("created", ""), data.get("updated", ""),
                        data["format"], dict(data.get("extra", {})), list(data.get("gc", [])))


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def manifest_path(directory: str) -> str:
    return os.path.join(directory, MANIFEST_FILE)


def load(directory: str) -> Manifest | None:
    """The manifest of run directory `directory`, or None when there is none."""
    path = manifest_path(directory)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StoreError(f"cannot read the run manifest {path}: {exc}") from None
    try:
        return Manifest.from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"malformed run manifest {path}: {exc!r}") from None


def save(directory: str, manifest: Manifest) -> None:
    """Replace the manifest atomically: readers see the old one or the new one."""
    manifest.updated = now()
    data = json.dumps(manifest.to_json(), indent=1, sort_keys=True).encode()
    fd, tmp = tempfile.mkstemp(prefix=".manifest-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, manifest_path(directory))
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def program_fingerprint(program) -> str:
    """A hash of what decides a run's results: relations, rules, facts, inputs
    and outputs (formatting and comments do not count)."""
    description = {
        "relations": [[r.name, list(r.columns), list(r.types)] for r in program.relations.values()],
        "rules": [rule.text() for rule in program.rules],
        "facts": sorted([f.atom.name, repr(f.row), f.tick] for f in program.facts),
        "inputs": [[d.name, d.path, d.format] for d in program.inputs],
        "outputs": list(program.outputs),
    }
    text = json.dumps(description, sort_keys=True, default=repr)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def relations_info(program) -> dict:
    """name -> RelationInfo for every relation of `program`, in the program's order."""
    return {relation.name: RelationInfo(relation.name, tuple(relation.columns), tuple(relation.types))
            for relation in program.relations.values()}
