"""Translations kept across processes: each Spark SQL template (dialect.py,
`_parameterised`) with its DuckDB text, in files under the user's cache
directory, so that a program run again translates nothing (and never imports
sqlglot): a CLI run's first ticks cost DuckDB's work only.

A file is named by the SHA-1 of its template and holds the DuckDB text; the
directory is named by a digest of the translating code (dialect.py and
sqlglot's version), so a changed translation never reads an old one. Writes go
to a temporary file renamed into place: a crash leaves no half-written entry.
`SPARKDEDALUS_CACHE_DIR` chooses the directory (default `~/.cache/sparkdedalus`);
an unwritable one is left alone (the translation is then made per process).

>>> import tempfile
>>> cache = Translations(tempfile.mkdtemp(), "v1")
>>> cache.get("SELECT 1") is None, cache.put("SELECT 1", "SELECT 1"), cache.get("SELECT 1")
(True, None, 'SELECT 1')
"""

from __future__ import annotations

import hashlib
import os
import tempfile


class Translations:
    """See the module."""

    def __init__(self, root: str, version: str):
        self.directory = os.path.join(root, f"duckdb-sql-{version}")

    def _path(self, template: str) -> str:
        return os.path.join(self.directory, hashlib.sha1(template.encode("utf-8")).hexdigest())

    def get(self, template: str) -> str | None:
        try:
            with open(self._path(template), encoding="utf-8") as handle:
                return handle.read()
        except OSError:
            return None

    def put(self, template: str, text: str) -> None:
        try:
            os.makedirs(self.directory, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.directory)
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, self._path(template))
        except OSError:
            pass
