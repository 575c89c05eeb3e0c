"""Where a tick's wall time goes: the Spark stages that ran during it, read back from
the session's status store (classic sessions; the UI need not be on).

Per tick: wall seconds, the seconds during which some stage ran (`stage_busy`), the
rest (`driver_only`: planning, py4j, Python), the task seconds over the busy seconds
(`parallelism`: 2 means both task slots of local[2] busy), the share of task time on a
CPU (`task_cpu_share`) and in the JVM's garbage collector (`task_gc_share`), and the
bytes the tick's stages read (cached blocks and files: `input_bytes`), shuffled and
spilled.

    >>> busy_seconds([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)])
    4.0
    >>> summary([{"start": 1.0, "end": 3.0, "tasks": 2, "run": 3.0, "cpu": 1.5, "input_bytes": 10,
    ...           "shuffle_read_bytes": 0, "shuffle_write_bytes": 0, "spilled_bytes": 0}], 0.0, 4.0)["parallelism"]
    1.5
"""

from __future__ import annotations


def stage_rows(spark) -> list[dict]:
    """Every completed stage of the session: its start and end (epoch seconds), tasks,
    task run, CPU and garbage-collection seconds, bytes read, shuffled and spilled."""
    rows = []
    # AppStatusStore.stageList(statuses, details, withSummaries, quantiles, taskStatuses)
    context = spark.sparkContext
    no_quantiles = context._gateway.new_array(context._jvm.double, 0)
    found = context._jsc.sc().statusStore().stageList(None, False, False, no_quantiles, None)
    for stage in (found.apply(i) for i in range(found.size())):
        if not (stage.submissionTime().isDefined() and stage.completionTime().isDefined()):
            continue
        rows.append({"start": stage.submissionTime().get().getTime() / 1000,
                     "end": stage.completionTime().get().getTime() / 1000,
                     "tasks": stage.numTasks(), "run": stage.executorRunTime() / 1000,
                     "cpu": stage.executorCpuTime() / 1e9, "gc": stage.jvmGcTime() / 1000,
                     "input_bytes": stage.inputBytes(),
                     "shuffle_read_bytes": stage.shuffleReadBytes(),
                     "shuffle_write_bytes": stage.shuffleWriteBytes(),
                     "spilled_bytes": stage.memoryBytesSpilled() + stage.diskBytesSpilled()})
    return rows


def busy_seconds(intervals: list) -> float:
    """The length of the union of (start, end) intervals."""
    busy, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            busy, end = busy + b - a, b
        elif b > end:
            busy, end = busy + b - end, b
    return busy


def summary(stages: list[dict], start: float, end: float) -> dict:
    """The stages submitted between `start` and `end` (epoch seconds), summed up."""
    mine = [s for s in stages if start <= s["start"] < end]
    busy = busy_seconds([(s["start"], s["end"]) for s in mine])
    run = sum(s["run"] for s in mine)
    return {"wall": round(end - start, 3), "stages": len(mine), "tasks": sum(s["tasks"] for s in mine),
            "stage_busy": round(busy, 3), "driver_only": round(end - start - busy, 3),
            "parallelism": round(run / busy, 2) if busy else None,
            "task_cpu_share": round(sum(s["cpu"] for s in mine) / run, 2) if run else None,
            "task_cpu_seconds": round(sum(s["cpu"] for s in mine), 3),
            "task_gc_share": round(sum(s.get("gc", 0.0) for s in mine) / run, 2) if run else None,
            "input_bytes": sum(s["input_bytes"] for s in mine),
            "largest_stage_input_bytes": max((s["input_bytes"] for s in mine), default=0),
            "shuffle_bytes": sum(s["shuffle_read_bytes"] + s["shuffle_write_bytes"] for s in mine),
            "spilled_bytes": sum(s["spilled_bytes"] for s in mine)}


def per_tick(spark, marks: list[float]) -> list[dict]:
    """summary() of each tick, `marks` being the epoch seconds at the run's start and at
    the end of every tick."""
    stages = stage_rows(spark)
    return [summary(stages, a, b) for a, b in zip(marks, marks[1:])]
