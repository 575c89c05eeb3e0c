"""Names for the Spark jobs the engine starts, as the Spark UI and listeners see them.

    names = JobNames(spark)
    with names.scope("run", "3f2a9c01"):       # tag sparkdedalus-run-3f2a9c01
        with names.scope("tick", 5):            # tag sparkdedalus-tick-5
            names.step("iteration", 2)          # tag sparkdedalus-iteration-2, until the tick's scope ends
            spark.range(3).count()              # description "sparkdedalus: run 3f2a9c01, tick 5, iteration 2"

Every job started in a scope carries its tags (`SparkSession.addTag`, on
classic sessions and on Spark Connect: the UI lists them with each job,
`spark.interruptTag` cancels them) and, on a classic session, the scopes as
its description (`SparkContext.setJobDescription`; Spark Connect has no
description API, its server describes jobs itself) and as the call site of
its RDDs and stages (what the UI names a stage by; given, Spark does not work
one out from the thread's stack for every RDD). Tags and descriptions
belong to the thread that sets them: `in_thread` carries them into a worker
thread.

>>> JobNames.tag("tick", 5), JobNames.tag("commit", "ticks 1..3")
('sparkdedalus-tick-5', 'sparkdedalus-commit-ticks-1..3')
"""

from __future__ import annotations

import re
from contextlib import contextmanager

from pyspark.sql import SparkSession

from sparkdedalus.plumbing.lazy import started

PREFIX = "sparkdedalus"
#: the local properties holding the call site Spark gives the RDDs and jobs a thread starts
CALL_SITE = ("callSite.short", "callSite.long")


class JobNames:
    def __init__(self, spark: SparkSession):
        self.spark = spark
        self._scopes: list = []  # (kind, value, tag)
        self._context = self._outside = None
        self._bound = False
        self._bind()

    def _bind(self) -> bool:
        """Whether the session is up (a LazySession, plumbing/lazy.py, may not be
        yet: its jobs are named from its start on); bound to its context the
        first time it is, the scopes open then tagging its jobs."""
        if self._bound:
            return True
        if not started(self.spark):
            return False
        self._bound = True
        try:  # a classic session's SparkContext; Spark Connect has none
            self._context = self.spark.sparkContext
            self._outside = self._context.getLocalProperty("spark.job.description")
            self._outside_site = [self._context.getLocalProperty(key) for key in CALL_SITE]
        except Exception:  # noqa: BLE001 (PySparkNotImplementedError, AttributeError)
            self._context = self._outside = None
        for _, _, tag in self._scopes:
            self.spark.addTag(tag)
        return True

    @staticmethod
    def tag(kind: str, value) -> str:
        """The job tag of a scope: no commas or spaces (Spark refuses commas)."""
        return re.sub(r"[\s,]+", "-", f"{PREFIX}-{kind}-{value}")

    def description(self) -> str | None:
        """The description of the jobs started now, from the open scopes."""
        if not self._scopes:
            return self._outside
        return f"{PREFIX}: " + ", ".join(f"{kind} {value}" for kind, value, _ in self._scopes)

    @contextmanager
    def scope(self, kind: str, value):
        """Name the jobs started inside by `kind value` (nested in the open scopes)."""
        depth = len(self._scopes)
        self._open(kind, value)
        try:
            yield
        finally:
            self._close(depth)

    def step(self, kind: str, value) -> None:
        """Open scope `kind value` until the enclosing scope ends, closing an open
        `kind` scope first (semi-naive iterations: one after the other)."""
        for depth, (open_kind, _, _) in enumerate(self._scopes):
            if open_kind == kind:
                self._close(depth)
                break
        self._open(kind, value)

    def in_thread(self, function):
        """`function` wrapped to run in another thread with the scopes open now."""
        tags, description = [t for _, _, t in self._scopes], self.description()

        def named(*args):
            self._bind()
            for tag in tags:
                self.spark.addTag(tag)
            self._describe(description)
            try:
                return function(*args)
            finally:
                for tag in tags:
                    self.spark.removeTag(tag)
                self._describe(None)
        return named

    def _open(self, kind: str, value) -> None:
        tag = self.tag(kind, value)
        self._scopes.append((kind, value, tag))
        if self._bind():
            self.spark.addTag(tag)
            self._describe(self.description())

    def _close(self, depth: int) -> None:
        bound = self._bind()
        for _, _, tag in self._scopes[depth:] if bound else ():
            self.spark.removeTag(tag)
        del self._scopes[depth:]
        if bound:
            self._describe(self.description())

    def _describe(self, text: str | None) -> None:
        if self._context is not None:
            self._context.setJobDescription(text)
            # the call site of the RDDs and jobs started now: given, Spark does
            # not walk and regex-match the thread's stack for each RDD it builds
            sites = [text] * len(CALL_SITE) if self._scopes else self._outside_site
            for key, site in zip(CALL_SITE, sites):
                self._context.setLocalProperty(key, site)
