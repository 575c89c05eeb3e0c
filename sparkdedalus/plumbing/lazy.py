"""A SparkSession started when first used.

The command line hands the engine a `LazySession`: a run whose ticks all run in
the driver (spark/placement.py) never starts a JVM. Its settings (`conf.get`)
are answered before the start from those the session will be started with;
anything else (`sql`, `createDataFrame`, `sparkContext`, ...) starts it.

>>> started = []
>>> spark = LazySession(lambda: started.append(1) or "session", {"spark.sql.shuffle.partitions": "2"})
>>> spark.conf.get("spark.sql.shuffle.partitions"), spark.conf.get("x", "default"), spark.started
('2', 'default', False)
"""

from __future__ import annotations


def started(spark) -> bool:
    """Whether `spark` is a session up and running (any session but a `LazySession` not started yet)."""
    return getattr(spark, "started", True)


class _LazyConf:
    """`spark.conf` of a LazySession: its settings until it starts, then the session's own."""

    def __init__(self, owner: "LazySession", settings: dict):
        self._owner = owner
        self._settings = {k: str(v) for k, v in settings.items()}
        self._set: dict = {}  # set before the start: applied to the session when it starts

    def get(self, key: str, default=None):
        if self._owner.started:
            return self._owner.session.conf.get(key, default)
        return self._settings.get(key, default)

    def set(self, key: str, value) -> None:
        if self._owner.started:
            self._owner.session.conf.set(key, value)
        else:
            self._settings[key] = self._set[key] = str(value)

    def unset(self, key: str) -> None:
        if self._owner.started:
            self._owner.session.conf.unset(key)
        else:
            self._settings.pop(key, None)
            self._set[key] = None


class LazySession:
    """A session made by `start()` when first used (see the module); `settings`:
    those it will start with."""

    def __init__(self, start, settings: dict):
        self._start = start
        self._session = None
        self.conf = _LazyConf(self, settings)

    @property
    def started(self) -> bool:
        return self._session is not None

    @property
    def session(self):
        """The session itself, started now if it was not."""
        if self._session is None:
            self._session = self._start()
            for key, value in self.conf._set.items():
                if value is None:
                    self._session.conf.unset(key)
                else:
                    self._session.conf.set(key, value)
        return self._session

    def __getattr__(self, name: str):
        return getattr(self.session, name)
