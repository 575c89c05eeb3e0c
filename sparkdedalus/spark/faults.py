"""Every failure scenario of a space in one engine run (issue 21).

The program is rewritten with a world column (`sparkdedalus.faults.worlds`);
a world's id is its scenario's index in the `Space`, and its failures are
data computed by Spark from the ids: bit j of an id omits channel j
(`Space.channels()`), the bits above number its crash schedule (a small
table). Then one `Engine.run` for EOT ticks evaluates all worlds together;
the missing facts (a `pre` fact at EOT without an equal `post` fact) are an
anti-join per world, and only the counterexamples reach the driver.

    result = Engine(spark).faults(program, nodes=("a", "b", "c"), eot=4, eff=2, crashes=0)
    result.scenarios, result.counterexamples[:1]   # smallest first
    result.frame.show()                            # world, then pre's columns
"""

from __future__ import annotations

from functools import reduce

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkdedalus.faults.space import MAX_SCENARIOS, Space
from sparkdedalus.faults.verdict import POST, PRE, Counterexample, missing, smallest_first
from sparkdedalus.faults.worlds import CRASHED, OMITTED, WORLD, WORLD_CRASH, Worlds, with_worlds
from sparkdedalus.program import CRASH, Program
from sparkdedalus.spark.columns import STATE
from udfs.registry import spark_string

#: world ids are longs: a space this large (or larger) can only be sampled
LARGEST_SPACE = 2 ** 62


class FaultRun:
    """The scenarios checked, the counterexamples (smallest first), the missing
    facts per world as a DataFrame, and the batched run itself (`run`: every
    relation at EOT, a world column second in the world-dependent ones)."""

    def __init__(self, space: Space, scenarios: int, frame: DataFrame, run, worlds: Worlds):
        self.space = space
        self.scenarios = scenarios
        self.frame = frame
        self.run = run
        self.worlds = worlds
        self.counterexamples = _collect(space, frame)

    def facts(self, worlds) -> dict:
        """{world: {relation: set of tuples}} at EOT for the scenario indices
        `worlds`, every relation of the original program but the front end's
        auxiliary ones. Collects every world's facts (one job): for tests and
        small looks."""
        program, dependent = self.worlds.original, self.worlds.dependent
        names = [n for n, r in program.relations.items() if not r.auxiliary]
        stored = {name: WORLD_CRASH if name == CRASH else name for name in names}
        collected = self.run.facts(relations=sorted(set(stored.values())))
        out = {w: {name: set() for name in names} for w in worlds}
        for name in names:
            for row in collected[stored[name]]:
                if name not in dependent:
                    for facts in out.values():
                        facts[name].add(row)
                elif row[1] in out:
                    out[row[1]][name].add((row[0], *row[2:]))
        return out


def run_faults(engine, program: Program, nodes, eot: int, eff: int, crashes: int = 0,
               sample: int | None = None, seed: int = 0) -> FaultRun:
    if program.inputs:
        raise ValueError("fault scenarios of a program with .input relations are not supported yet")
    worlds = with_worlds(program)
    space = Space(tuple(nodes), eot, eff, crashes)
    if space.count >= LARGEST_SPACE:
        raise ValueError(f"the space has {space.count} scenarios: too many to number with longs")
    if sample is None and space.count > MAX_SCENARIOS:
        raise ValueError(f"the space has {space.count} scenarios (more than {MAX_SCENARIOS}): give sample=N")
    spark = engine.spark
    if sample is None:
        ids, scenarios = spark.range(space.count).withColumnRenamed("id", "world"), space.count
    else:
        chosen = space.sample_indices(sample, seed)
        ids, scenarios = _ids(spark, chosen), len(chosen)
    edb = failure_frames(spark, space, ids, program)
    run = engine.run(worlds.program, ticks=eot, edb=edb, keep_history=False)
    return FaultRun(space, scenarios, missing_frame(run, program), run, worlds)


def _ids(spark: SparkSession, indices: list) -> DataFrame:
    table = pa.Table.from_arrays([pa.array(indices, pa.int64())], names=["world"])
    return spark.createDataFrame(table)


def failure_frames(spark: SparkSession, space: Space, ids: DataFrame, program: Program) -> dict:
    """The data relations of the worlds `ids` (a frame of scenario indices,
    column `world`): {relation: frame}, computed by Spark from the indices."""
    channels = space.channels()
    width = len(channels)
    frames = {WORLD: ids}
    if channels:
        table = spark.createDataFrame([(j, src, dst, t) for j, (src, dst, t) in enumerate(channels)],
                                      "bit long, src string, dst string, tick long")
        frames[OMITTED] = ids.crossJoin(table).where("shiftright(world, bit) & 1 = 1") \
            .select("src", "world", "dst", "tick")
    choices = [(c, node, tick) for c in range(1, space.crash_choices())
               for node, tick in space[c << width].crashes]
    if not choices:
        return frames
    schedules = spark.createDataFrame(choices, "schedule long, node string, tick long")
    crashed = ids.withColumn("schedule", F.shiftright("world", width)).join(schedules, "schedule") \
        .select("node", "world", "tick")
    frames[CRASHED] = crashed
    if CRASH in program.relations:
        frames[WORLD_CRASH] = _crash_rows(spark, program, ids, frames)
    return frames


def _crash_rows(spark: SparkSession, program: Program, ids: DataFrame, frames: dict) -> DataFrame:
    """`crash(L, N, T)` per world, as `Network.crash_rows` has it: at the
    locations of the program's facts and the nodes the world's failures name."""
    named = sorted({spark_string(fact.row[0]) for fact in program.facts})
    locations = [frames[CRASHED].select(F.col("node").alias("loc"), "world")]
    if named:
        locations.append(ids.crossJoin(spark.createDataFrame([(n,) for n in named], "loc string")))
    if OMITTED in frames:
        omitted = frames[OMITTED].join(frames[CRASHED].select("world").distinct(), "world")
        locations += [omitted.select(F.col("src").alias("loc"), "world"),
                      omitted.select(F.col("dst").alias("loc"), "world")]
    everywhere = reduce(DataFrame.unionByName, locations).distinct()
    return everywhere.join(frames[CRASHED], "world").select("loc", "world", "node", "tick")


def missing_frame(run, program: Program) -> DataFrame:
    """Per world, the `pre` facts at EOT without an equal `post` fact: the
    column `world`, then pre's columns."""
    layout, pack = run._loop.layout, run._state.packs[run.ticks]
    pre, post = (layout.extract(pack, name, STATE) for name in (PRE, POST))
    gone = pre.join(post, on=list(pre.columns), how="left_anti")
    names = program.relations[PRE].columns
    columns = gone.columns
    return gone.select(F.col(columns[1]).alias("world"), F.col(columns[0]).alias(names[0]),
                       *[F.col(c).alias(n) for c, n in zip(columns[2:], names[1:])])


def _collect(space: Space, frame: DataFrame) -> list:
    """The counterexamples, smallest first: only the worlds with missing facts
    are collected."""
    facts: dict = {}
    for row in frame.collect():
        facts.setdefault(row[0], []).append(tuple(row[1:]))
    return smallest_first(Counterexample(space[world], missing(rows, ())) for world, rows in facts.items())
