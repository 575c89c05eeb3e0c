"""Every failure scenario of a space in one engine run (issue 21), evaluated
once per distinct execution.

The program is rewritten with a world column (`sparkdedalus.faults.worlds`).
A world is a *class*: scenarios that have not diverged yet, so hold the same
facts. A table `members` (scenario, world) maps the scenarios, by their index
in the `Space`, to their class; it stays a DataFrame, never collected. The
run starts with one class, or one per distinct `crash` relation when the
program reads `crash`. Each tick evaluates every class at once, on the
engine's tick driver (spark/driver.py); the messages it sends are not yet
dropped. Then the classes split: a scenario's *signature* is the set of the messages its class
sent at this tick on a channel the scenario loses (the channel-tick omitted,
or the sender crashed at or before the tick; bit j of an index omits channel
j of `Space.channels()`, the bits above number its crash schedule). The
scenarios of a class with the same signature form a new class, which gets a
copy of its parent's facts, minus the messages it loses. A class splits only
where a message was actually sent on a channel-tick some of its scenarios
lose, so the work grows with the distinct executions, not the scenarios.
When the classes start split by crash schedule, a class's crashed senders
lose their messages in all its scenarios alike: at a tick without omissible
channels those messages are dropped without a split.

At EOT the missing facts (a `pre` fact without an equal `post` fact) are an
anti-join per class, joined back to the classes' scenarios; only the
counterexamples reach the driver.

    result = Engine(spark).faults(program, nodes=("a", "b", "c"), eot=4, eff=2, crashes=0)
    result.scenarios, result.counterexamples[:1]   # smallest first
    result.classes                                 # classes after each tick
    result.frame.show()                            # world (scenario index), then pre's columns
"""

from __future__ import annotations

from functools import reduce

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from sparkdedalus.faults.space import MAX_SCENARIOS, Space
from sparkdedalus.faults.verdict import POST, PRE, Counterexample, missing, smallest_first
from sparkdedalus.faults.worlds import WORLD, WORLD_CRASH, Worlds, with_worlds
from sparkdedalus.pack.columns import MESSAGE, SOURCE_COLUMN
from sparkdedalus.pack.layout import Layout
from sparkdedalus.plumbing.jobnames import JobNames
from sparkdedalus.program import CRASH, Program
from sparkdedalus.spark.driver import TickDriver
from sparkdedalus.spark.loop import TickLoop
from sparkdedalus.spark.run import Run
from udfs.registry import spark_string, spark_string_sql

#: world ids are longs: a space this large (or larger) can only be sampled
LARGEST_SPACE = 2 ** 62
#: separates a lost message's sender and destination in a signature
SEPARATOR = "\x1f"
#: the type of a crash schedule's crashes
CRASHES = "array<struct<node: string, tick: bigint>>"


class FaultRun:
    """The scenarios checked, the counterexamples (smallest first), the missing
    facts per scenario as a DataFrame, the number of classes after each tick,
    and the batched run itself (`run`: every relation at EOT per class, a
    world column second in the world-dependent ones)."""

    def __init__(self, space: Space, scenarios: int, frame: DataFrame, run, worlds: Worlds,
                 members: DataFrame, classes: list):
        self.space = space
        self.scenarios = scenarios
        self.frame = frame
        self.run = run
        self.worlds = worlds
        self.members = members
        self.classes = classes
        self.counterexamples = _collect(space, frame)

    def facts(self, worlds) -> dict:
        """{scenario index: {relation: set of tuples}} at EOT for the indices
        `worlds`, every relation of the original program but the front end's
        auxiliary ones. Collects every class's facts: for tests and small looks."""
        program, dependent = self.worlds.original, self.worlds.dependent
        names = [n for n, r in program.relations.items() if not r.auxiliary]
        stored = {name: WORLD_CRASH if name == CRASH else name for name in names}
        collected = self.run.facts(relations=sorted(set(stored.values())))
        class_of = {row[0]: row[1] for row in self.members.where(F.col("scenario").isin(list(worlds))).collect()}
        out = {w: {name: set() for name in names} for w in worlds}
        for name in names:
            for row in collected[stored[name]]:
                for w in worlds:
                    if name not in dependent or row[1] == class_of[w]:
                        out[w][name].add(row if name not in dependent else (row[0], *row[2:]))
        return out


def run_faults(spark: SparkSession, program: Program, nodes, eot: int, eff: int, crashes: int = 0,
               sample: int | None = None, seed: int = 0, only: list | None = None) -> FaultRun:
    """Every scenario of `Space(nodes, eot, eff, crashes)` (or `sample` of
    them drawn with `seed`, or `only` those scenarios: LDFI's candidates,
    spark/ldfi.py, numbered in the part of the space they use, `Space.part`)
    of `program` in one run: see the module."""
    if program.inputs:
        raise ValueError("fault scenarios of a program with .input relations are not supported yet")
    worlds = with_worlds(program)
    space = Space(tuple(nodes), eot, eff, crashes)
    if only is not None:
        space = space.part(only)
    if space.count >= LARGEST_SPACE:
        raise ValueError(f"the space has {space.count} scenarios: too many to number with longs")
    if sample is None and only is None and space.count > MAX_SCENARIOS:
        raise ValueError(f"the space has {space.count} scenarios (more than {MAX_SCENARIOS}): give sample=N")
    if sample is None and only is None:
        ids, scenarios = spark.range(space.count).withColumnRenamed("id", "scenario"), space.count
    else:
        chosen = space.sample_indices(sample, seed) if only is None else sorted({space.index(s) for s in only})
        ids, scenarios = _ids(spark, chosen), len(chosen)
    failures = Failures(space, program)
    keyed = ids.select("scenario", F.lit(0).cast("long").alias("world"), failures.crash_key().alias("signature"))
    members, classes, count = _renumber(keyed)
    names = JobNames(spark)
    splitter, counts = Splitter(worlds), []
    driver = TickDriver(None, worlds.program, names, keep_history=False)
    for tick in range(1, eot + 1):
        if driver.loop is None:  # the classes changed: a new loop with their data relations
            edb = {WORLD: classes.select("world")}
            if failures.uniform_crashes:
                edb[WORLD_CRASH] = failures.crash_rows(classes)
            # packs rewritten by Splitter, every relation in them
            driver.loop = TickLoop(spark, worlds.program, edb=edb, policy=False, input_apart=False, names=names)
        pack = driver.run_tick(tick)
        if tick < eot and failures.may_split(tick):
            members, classes, count = _renumber(failures.signatures(members, splitter.sent(pack, tick), tick))
            driver.rewrite(lambda kept: splitter.copied(kept, classes, tick))
            driver.loop = None
        elif tick < eot and failures.space.crashes:  # the same crashes in every scenario of a class
            driver.keep(tick, splitter.without(pack, failures.crashed(classes, tick), tick))
        counts.append(count)
    run = Run(worlds.program, driver, eot)
    return FaultRun(space, scenarios, missing_frame(run, program, members), run, worlds, members, counts)


def _ids(spark: SparkSession, indices: list) -> DataFrame:
    table = pa.Table.from_arrays([pa.array(indices, pa.int64())], names=["scenario"])
    return spark.createDataFrame(table)


class Failures:
    """The failures of the scenarios, as Spark expressions over a `scenario`
    column (its index in the space) and literals."""

    def __init__(self, space: Space, program: Program):
        self.space, self.program = space, program
        channels = space.channels()
        self.width = len(channels)
        self.bits = {channel: j for j, channel in enumerate(channels)}
        schedules = [space[c << self.width].crashes for c in range(1, space.crash_choices())]
        self.choices = [(c, node, tick) for c, crashes in enumerate(schedules, 1) for node, tick in crashes]
        #: schedule c's crashes at position c (from 1), a literal: read without a join (a join costs a job)
        self.schedules = F.array(*[F.array(*[F.struct(F.lit(node).alias("node"), F.lit(tick).cast("long").alias("tick"))
                                             for node, tick in crashes]) for crashes in schedules]) \
            .cast(f"array<{CRASHES}>")
        #: the locations of the program's facts, where `crash` holds in every scenario with a crash
        self.named = sorted({spark_string(fact.row[0]) for fact in program.facts})

    @property
    def uniform_crashes(self) -> bool:
        """Whether the scenarios of a class have the same crashes: when the
        program reads `crash`, the classes start split by crash schedule."""
        return CRASH in self.program.relations and self.space.crashes > 0

    def may_split(self, tick: int) -> bool:
        """Whether the scenarios of a class may lose different messages sent at
        `tick`: the tick has omissible channels, or crashes differ within a class."""
        return any(t == tick for _, _, t in self.bits) or (self.space.crashes > 0 and not self.uniform_crashes)

    def crashes(self, scenario: Column) -> Column:
        """The crashes (array of struct node, tick) of the scenario with index
        `scenario`: NULL without any."""
        schedule = F.shiftright(scenario, self.width)
        return F.when(schedule > 0, F.element_at(self.schedules, schedule.cast("int")))

    def crashed(self, classes: DataFrame, tick: int) -> DataFrame:
        """(world, src): the senders crashed at or before `tick` in each class
        (of classes with uniform crashes)."""
        crashed = F.filter(self.crashes(F.col("first")), lambda c: c["tick"] <= tick)
        return classes.select("world", F.explode(crashed).alias("crash")).select("world", F.col("crash.node").alias("src"))

    def crash_key(self) -> Column:
        """What the `crash` relation of a scenario depends on, as an array of
        strings (empty when the program does not read `crash`): its crash
        schedule, and the nodes outside the program's fact locations that its
        failures name (`Network.crash_rows`)."""
        if not self.uniform_crashes:
            return F.array().cast("array<string>")
        schedule = F.shiftright("scenario", self.width)
        named = []
        for node in self.space.nodes:
            mask = sum(1 << j for (src, dst, _), j in self.bits.items() if node in (src, dst))
            if mask and node not in self.named:
                named.append(F.when((F.col("scenario").bitwiseAND(F.lit(mask)) != 0) & (schedule > 0), F.lit(node)))
        return F.filter(F.array(schedule.cast("string"), *named), lambda x: x.isNotNull())

    def crash_rows(self, classes: DataFrame) -> DataFrame:
        """`crash(L, N, T)` of each class (`faults.crash(L, W, N, T)`), from its
        first scenario (they all have the same): every crash of its schedule at
        every location of the class, its crashed nodes, the program's fact
        locations and the ends of its omitted channels (`Network.crash_rows`).
        Expressions over each class's row: no join, so no job of its own."""
        crashes = self.crashes(F.col("first"))
        none = F.array().cast("array<string>")
        ends = [F.when(F.shiftright("first", j).bitwiseAND(1) == 1, F.array(F.lit(src), F.lit(dst))).otherwise(none)
                for (src, dst, _), j in self.bits.items()]
        located = F.array_distinct(F.concat(F.transform(crashes, lambda c: c["node"]),
                                            F.array(*[F.lit(n) for n in self.named]).cast("array<string>"), *ends))
        return classes.where(crashes.isNotNull()) \
            .select("world", crashes.alias("crashes"), F.explode(located).alias("loc")) \
            .select("loc", "world", F.inline("crashes")).select("loc", "world", "node", "tick")

    def lost(self, tick: int) -> Column:
        """Whether the scenario loses the message from `src` to `dst` sent at
        `tick` (columns `scenario`, `src`, `dst`, and `crash_tick`: the
        sender's crash tick in the scenario, NULL without)."""
        omitted = [(F.col("src") == src) & (F.col("dst") == dst) & (F.shiftright("scenario", j).bitwiseAND(1) == 1)
                   for (src, dst, t), j in self.bits.items() if t == tick]
        crashed = F.coalesce(F.col("crash_tick") <= tick, F.lit(False))
        return reduce(Column.__or__, omitted, crashed)

    def signatures(self, members: DataFrame, sent: DataFrame, tick: int) -> DataFrame:
        """members (scenario, world) with `signature`: the sorted messages
        (src SEPARATOR dst) its class sent at `tick` that the scenario loses."""
        mask = sum(1 << j for (_, _, t), j in self.bits.items() if t == tick)
        crashed = sorted({c for c, _, t in self.choices if t <= tick})
        may_lose = F.col("scenario").bitwiseAND(F.lit(mask)) != 0
        if crashed:
            may_lose = may_lose | F.shiftright("scenario", self.width).isin(crashed)
        sender_crash = F.filter(self.crashes(F.col("scenario")), lambda c: c["node"] == F.col("src"))
        candidates = members.where(may_lose).join(F.broadcast(sent), "world") \
            .withColumn("crash_tick", F.try_element_at(sender_crash, F.lit(1))["tick"])
        lost = candidates.where(self.lost(tick)).groupBy("scenario").agg(
            F.sort_array(F.collect_list(F.concat_ws(SEPARATOR, "src", "dst"))).alias("signature"))
        return members.join(lost, "scenario", "left") \
            .select("scenario", "world", F.coalesce("signature", F.array().cast("array<string>")).alias("signature"))


def _renumber(keyed: DataFrame) -> tuple[DataFrame, DataFrame, int]:
    """Classes from (scenario, world, signature): one per distinct (world,
    signature), numbered from 0. Returns the members (scenario, world), the
    classes (parent, signature, world, first: the class's smallest scenario)
    and their number. The classes are materialised and counted with one job;
    the members are checkpointed lazily: computed by the first job that reads
    them (the next split's, or the verdict's)."""
    keyed = keyed.withColumnRenamed("world", "parent").localCheckpoint(eager=False)
    order = Window.orderBy("parent", "signature")
    classes = keyed.groupBy("parent", "signature").agg(F.min("scenario").alias("first")) \
        .withColumn("world", F.row_number().over(order).cast("long") - 1).localCheckpoint(eager=False)
    members = keyed.join(F.broadcast(classes.drop("first")), ["parent", "signature"]).select("scenario", "world")
    return members.localCheckpoint(eager=False), classes, classes.count()


class Splitter:
    """Splits the classes by what their scenarios lose of the messages sent at
    a tick, and copies a pack's facts of each class into its children."""

    def __init__(self, worlds: Worlds):
        program = worlds.program
        self.layout = layout = Layout(program.relations)
        self.dependent = [n for n in program.relations if n in worlds.dependent or n == WORLD_CRASH]
        #: a pack row's class: the world argument of its relation's row (NULL: shared by all classes)
        world = layout.per_relation_sql({n: layout.column(n, 1) for n in self.dependent})
        self.world = F.expr(f"CAST({world} AS BIGINT)")
        messages = sorted({r.head.name for r in program.rules if r.delivery == "async"})
        #: a message's destination, as the failure model names nodes
        dst = layout.per_relation_sql({n: spark_string_sql(layout.column(n, 0), program.relations[n].types[0])
                                       for n in messages})
        self.dst = F.expr(f"CAST({dst} AS STRING)")
        #: the pack columns holding a world argument, and the relations whose it is
        self.world_columns: dict = {}
        for n in self.dependent:
            self.world_columns.setdefault(layout.column(n, 1), []).append(n)

    def sent(self, pack: DataFrame, tick: int) -> DataFrame:
        """The distinct (world, src, dst) of the messages sent at `tick`."""
        return pack.where(self._sent_at(tick)).select(self.world.alias("world"), F.col(SOURCE_COLUMN).alias("src"),
                                                      self.dst.alias("dst")).distinct()

    @staticmethod
    def _sent_at(tick: int) -> Column:
        return (F.col("__kind") == MESSAGE) & (F.col("__sent") == tick)

    def without(self, pack: DataFrame, crashed: DataFrame, tick: int) -> DataFrame:
        """`pack` without the messages sent at `tick` by the `crashed` (world,
        src) senders, checkpointed lazily (computed by the next tick's first job)."""
        sent = pack.where(self._sent_at(tick)).withColumn("__world", self.world)
        crashed = crashed.select(F.col("world").alias("__world"), F.col("src").alias(SOURCE_COLUMN))
        kept = sent.join(F.broadcast(crashed), ["__world", SOURCE_COLUMN], "left_anti").select(*pack.columns)
        return pack.where(~self._sent_at(tick)).unionAll(kept).localCheckpoint(eager=False)

    def copied(self, pack: DataFrame, children: DataFrame, tick: int) -> DataFrame:
        """`pack` with each class's facts copied into its children (`children`:
        parent, world, signature), a child without the messages sent at `tick` that its
        signature loses; the data relations left out (each tick has its own);
        checkpointed lazily (computed by the next tick's first job)."""
        data = pack.where(~F.col("__rel").isin(WORLD, WORLD_CRASH))
        shared = data.where(self.world.isNull())
        children = F.broadcast(children.select("parent", "world", "signature"))
        copied = data.where(self.world.isNotNull()).join(children, self.world == F.col("parent"))
        lost = self._sent_at(tick) & F.array_contains("signature", F.concat_ws(SEPARATOR, SOURCE_COLUMN, self.dst))
        copied = copied.where(~lost).select(
            "__rel", "__kind", "__sent", "__arrival", SOURCE_COLUMN,
            *[F.when(F.col("__rel").isin(*self.world_columns[c]), F.col("world")).otherwise(F.col(c)).alias(c)
              if c in self.world_columns else F.col(c) for c in self.layout.value_columns])
        return shared.unionAll(copied).localCheckpoint(eager=False)


def missing_frame(run: Run, program: Program, members: DataFrame) -> DataFrame:
    """Per scenario, the `pre` facts at EOT without an equal `post` fact: the
    column `world` (the scenario's index), then pre's columns."""
    columns = [f"c{i}" for i in range(run.program.relations[PRE].arity)]
    pre, post = (run.relation(name).toDF(*columns) for name in (PRE, POST))
    gone = pre.join(post, on=columns, how="left_anti")
    names = program.relations[PRE].columns
    per_class = gone.select(F.col(columns[1]).alias("class"), F.col(columns[0]).alias(names[0]),
                            *[F.col(c).alias(n) for c, n in zip(columns[2:], names[1:])])
    return per_class.join(members.withColumnRenamed("world", "class"), "class") \
        .select(F.col("scenario").alias("world"), *names)


def _collect(space: Space, frame: DataFrame) -> list:
    """The counterexamples, smallest first: only the scenarios with missing
    facts are collected."""
    facts: dict = {}
    for row in frame.collect():
        facts.setdefault(row[0], []).append(tuple(row[1:]))
    return smallest_first(Counterexample(space[world], missing(rows, ())) for world, rows in facts.items())
