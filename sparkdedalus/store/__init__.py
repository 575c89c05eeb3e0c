"""Delta persistence of runs: a run directory per run, one Delta table per relation.

    from sparkdedalus.store import Store
    from sparkdedalus.store import read          # JVM-free readers (deltalake)

- `Store` (store.py): open/resume a run directory, commit ticks, rebuild packs
  and relations with Spark.
- `read` (read.py): relations at any tick, messages and the manifest, without Spark.
- `layout` (layout.py): where things are and the tables' bookkeeping columns;
  `changes` (changes.py): a tick's changes and packs rebuilt from them (Spark);
  `writers` (writers.py): the Spark Delta Lake and delta-rs commit paths;
  `manifest`, `lock`, `errors`.

docs/storage.md describes the layout and the guarantees. Importing this package
does not import pyspark: the names below are loaded on first use.
"""

from __future__ import annotations

from importlib import import_module

from sparkdedalus.store.errors import StoreError, StoreLockedError

__all__ = ["Store", "StoreError", "StoreLockedError", "read"]

_LAZY = {"Store": "sparkdedalus.store.store"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    if name == "read":
        return import_module("sparkdedalus.store.read")
    raise AttributeError(f"module 'sparkdedalus.store' has no attribute '{name}'")
