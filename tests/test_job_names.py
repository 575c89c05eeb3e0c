"""Every Spark job of a run is named by what it is: read back from the classic
session's status store (what the Spark UI shows), each job of a short stored
run of a recursive program carries the run's tag and a description naming its
tick, stratum and semi-naive iteration, or its commit; jobs started after the
run carry none of them."""

from __future__ import annotations

import os
import re

import pytest

from sparkdedalus import Program
from sparkdedalus.spark.engine import Engine
from sparkdedalus.spark.fixpoint import LOOP, SETTING
from sparkdedalus.plumbing.jobnames import JobNames
from store_helpers import EXAMPLES

pytestmark = pytest.mark.spark


def jobs_since(spark, first_job: int) -> list[tuple[int, str, set]]:
    """(job id, description, tags) of the jobs numbered first_job or more, from
    the status store (classic sessions; the UI's own source)."""
    found = []
    for job in all_jobs(spark):
        if job.jobId() < first_job:
            continue
        description = job.description().get() if job.description().isDefined() else ""
        tags = set(filter(None, job.jobTags().mkString("\n").split("\n")))
        found.append((job.jobId(), description, tags))
    return sorted(found)


def named(tags: set, tag: str) -> bool:
    """A session tag reaches the job as `spark-session-<uuid>-<tag>`."""
    return any(t == tag or t.endswith("-" + tag) for t in tags)


def all_jobs(spark) -> list:
    """The status store's jobs (Scala JobData objects)."""
    jobs = spark.sparkContext._jsc.sc().statusStore().jobsList(None)
    return [jobs.apply(i) for i in range(jobs.size())]


def next_job_id(spark) -> int:
    return max([j.jobId() for j in all_jobs(spark)], default=-1) + 1


def test_jobs_of_a_run_are_named_by_tick_stratum_iteration_and_commit(spark, tmp_path):
    program = Program.from_files(os.path.join(EXAMPLES, "transitive_closure.ded"))
    # the general semi-naive loop: a job per iteration (the Arrow fixpoint runs none)
    spark.conf.set(SETTING, LOOP)
    first = next_job_id(spark)
    try:
        # an EDB frame: its rows are not known before a job counts them ("setup inputs")
        extra = spark.createDataFrame([("g", "e", "f")], "g string, x string, y string")
        run = Engine(spark).run(program, 2, store=str(tmp_path / "run"), commit_every=2, edb={"edge": extra})
    finally:
        spark.conf.unset(SETTING)
    spark.range(5).count()  # after the run: not one of its jobs
    jobs = jobs_since(spark, first)
    *ours, (_, after_description, after_tags) = jobs
    prefix = f"sparkdedalus: run {run.job_id}"
    assert not any(t for t in after_tags if "sparkdedalus" in t) and not after_description.startswith("sparkdedalus")
    unnamed = [(job, description) for job, description, tags in ours
               if not (named(tags, f"sparkdedalus-run-{run.job_id}") and prefix in description)]
    assert ours and not unnamed, unnamed

    kinds = {}
    for _, description, tags in ours:
        # Delta Lake describes its own jobs as "Delta: <the description>: <what it does>"
        scopes = re.search(re.escape(prefix) + r"(?:, ([^:]*))?", description).group(1) or ""
        for kind, value in re.findall(r"(\w+) ([\w.]+)", scopes):
            assert named(tags, JobNames.tag(kind, value)), (description, tags)
        kinds.setdefault(re.sub(r"\d+", "N", scopes), set()).add(scopes)
    assert set(kinds) >= {"setup inputs", "tick N", "tick N, stratum N, iteration N", "commit N..N"}, kinds
    assert kinds["commit N..N"] == {"commit 1..2"}
    assert {"tick 1", "tick 2"} <= kinds["tick N"]
    iterations = {int(s.rsplit(" ", 1)[1]) for s in kinds["tick N, stratum N, iteration N"] if s.startswith("tick 1,")}
    assert iterations == set(range(1, max(iterations) + 1)) and max(iterations) >= 3  # a..e: paths of 4 edges


def test_scopes_nest_and_steps_replace_each_other(spark):
    names = JobNames(spark)
    with names.scope("run", "r1"):
        with names.scope("tick", 3):
            names.step("iteration", 1)
            names.step("iteration", 2)
            assert names.description() == "sparkdedalus: run r1, tick 3, iteration 2"
            assert {t for t in spark.getTags() if t.startswith("sparkdedalus")} == {
                "sparkdedalus-run-r1", "sparkdedalus-tick-3", "sparkdedalus-iteration-2"}
        assert names.description() == "sparkdedalus: run r1"
        assert spark.sparkContext.getLocalProperty("spark.job.description") == "sparkdedalus: run r1"
    assert not [t for t in spark.getTags() if t.startswith("sparkdedalus")]
    assert spark.sparkContext.getLocalProperty("spark.job.description") is None


def test_jobs_in_a_scope_take_its_description_as_their_call_site(spark):
    """Given a call site, Spark does not work one out from the thread's stack for
    every RDD it builds (Utils.getCallSite: a stack walk and a regular expression
    per frame); outside the scopes it works it out again."""
    spark.sparkContext.setLocalProperty("callSite.long", "the user's")
    try:
        names = JobNames(spark)
        first = next_job_id(spark)
        with names.scope("run", "r2"):
            with names.scope("tick", 1):
                spark.range(3).count()
            assert spark.sparkContext.getLocalProperty("callSite.long") == "sparkdedalus: run r2"
        assert spark.sparkContext.getLocalProperty("callSite.short") is None  # the caller's, back
        assert spark.sparkContext.getLocalProperty("callSite.long") == "the user's"
    finally:  # the session is shared: no call site left behind
        spark.sparkContext.setLocalProperty("callSite.long", None)
    spark.range(4).count()
    tracker = spark.sparkContext.statusTracker()
    stages = [{tracker.getStageInfo(s).name for s in tracker.getJobInfo(job).stageIds}
              for job, _, _ in jobs_since(spark, first)]
    assert stages[0] == {"sparkdedalus: run r2, tick 1"}
    assert len(stages) == 2 and not any(name.startswith("sparkdedalus") for name in stages[1])
