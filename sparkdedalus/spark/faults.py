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

Every step is Spark SQL text over the session's frames (`session.sql(text,
name=frame)`), so the same run has two placements, as a tick does
(spark/placement.py): on Spark, or in the driver on a DuckSession (DuckDB, no
Spark job) when the space is small: at most
`spark.sparkdedalus.fixpoint.driverRows` rows for its scenarios times the
program's facts (`fault_placement`; `spark.sparkdedalus.placement` forces
either). A run the driver cannot finish (`NotInDriver`) runs again on Spark.

    result = Engine(spark).faults(program, nodes=("a", "b", "c"), eot=4, eff=2, crashes=0)
    result.scenarios, result.counterexamples[:1]   # smallest first
    result.classes                                 # classes after each tick
    result.frame.show()                            # world (scenario index), then pre's columns
    result.placement                               # "driver" or "spark"
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from sparkdedalus.faults.space import MAX_SCENARIOS, Space
from sparkdedalus.faults.verdict import POST, PRE, Counterexample, missing, smallest_first
from sparkdedalus.faults.worlds import WORLD, WORLD_CRASH, Worlds, with_worlds
from sparkdedalus.pack.columns import MESSAGE, SOURCE_COLUMN, relation_columns
from sparkdedalus.pack.layout import Layout
from sparkdedalus.plumbing.jobnames import JobNames
from sparkdedalus.program import CRASH, Program
from sparkdedalus.spark.driver import TickDriver
from sparkdedalus.spark.duck.dialect import NotInDriver
from sparkdedalus.spark.duck.loop import DriverTickLoop
from sparkdedalus.spark.duck.session import DuckFrame, DuckSession
from sparkdedalus.spark.expressions import sql_literal
from sparkdedalus.spark.loop import TickLoop
from sparkdedalus.spark.placement import DRIVER, DRIVER_SETTINGS, SPARK, driver_limit
from sparkdedalus.spark.run import Run
from udfs.registry import spark_string, spark_string_sql

#: world ids are longs: a space this large (or larger) can only be sampled
LARGEST_SPACE = 2 ** 62
#: separates a lost message's sender and destination in a signature (SQL: the character 31)
SEPARATOR = "chr(31)"
#: the type of a crash schedule's crashes
CRASHES = "array<struct<node: string, tick: bigint>>"
#: no strings, typed
NO_STRINGS = "CAST(array() AS array<string>)"


class FaultRun:
    """The scenarios checked, the counterexamples (smallest first), the missing
    facts per scenario as a DataFrame (`frame`), the number of classes after each tick,
    where it ran (`placement`), and the batched run itself (`run`: every relation at EOT
    per class, a world column second in the world-dependent ones)."""

    def __init__(self, spark: SparkSession, space: Space, scenarios: int, missing_frame, run, worlds: Worlds,
                 members, classes: list, placement: str):
        self.space = space
        self.scenarios = scenarios
        self.run = run
        self.worlds = worlds
        self.members = members
        self.classes = classes
        self.placement = placement
        self._spark = spark
        self._missing = missing_frame
        self.counterexamples = _collect(space, missing_frame)

    @property
    def frame(self) -> DataFrame:
        """The missing facts per scenario: the column `world` (the scenario's
        index), then pre's columns; a Spark DataFrame (made from the driver's
        Arrow table when the run was the driver's)."""
        if isinstance(self._missing, DuckFrame):
            return self._spark.createDataFrame(self._missing.toArrow())
        return self._missing

    def facts(self, worlds) -> dict:
        """{scenario index: {relation: set of tuples}} at EOT for the indices
        `worlds`, every relation of the original program but the front end's
        auxiliary ones. Collects every class's facts: for tests and small looks."""
        program, dependent = self.worlds.original, self.worlds.dependent
        names = [n for n, r in program.relations.items() if not r.auxiliary]
        stored = {name: WORLD_CRASH if name == CRASH else name for name in names}
        collected = self.run.facts(relations=sorted(set(stored.values())))
        chosen = ", ".join(f"{int(w)}L" for w in worlds) or "NULL"
        class_of = {scenario: world for scenario, world in _rows(self.members.where(f"scenario IN ({chosen})"))}
        out = {w: {name: set() for name in names} for w in worlds}
        for name in names:
            for row in collected[stored[name]]:
                for w in worlds:
                    if name not in dependent or row[1] == class_of[w]:
                        out[w][name].add(row if name not in dependent else (row[0], *row[2:]))
        return out


def fault_placement(spark: SparkSession, program: Program, scenarios: int) -> str:
    """Where a fault run of `scenarios` scenarios of `program` runs: in the
    driver when `spark.sparkdedalus.placement` is `driver` or `alternate`, or
    `auto` and the scenarios times the program's facts are at most
    `spark.sparkdedalus.fixpoint.driverRows`; else on Spark."""
    limit = driver_limit(spark)
    return DRIVER if 0 < limit and scenarios * max(1, len(program.facts)) <= limit else SPARK


def run_faults(spark: SparkSession, program: Program, nodes, eot: int, eff: int, crashes: int = 0,
               sample: int | None = None, seed: int = 0, only: list | None = None) -> FaultRun:
    """Every scenario of `Space(nodes, eot, eff, crashes)` (or `sample` of
    them drawn with `seed`, or `only` those scenarios: LDFI's candidates,
    spark/ldfi.py, numbered in the part of the space they use, `Space.part`)
    of `program` in one run, where `fault_placement` says: see the module."""
    if program.inputs:
        raise ValueError("fault scenarios of a program with .input relations are not supported yet")
    space = Space(tuple(nodes), eot, eff, crashes)
    if only is not None:
        space = space.part(only)
    if space.count >= LARGEST_SPACE:
        raise ValueError(f"the space has {space.count} scenarios: too many to number with longs")
    if sample is None and only is None and space.count > MAX_SCENARIOS:
        raise ValueError(f"the space has {space.count} scenarios (more than {MAX_SCENARIOS}): give sample=N")
    chosen = None
    if sample is not None or only is not None:
        chosen = space.sample_indices(sample, seed) if only is None else sorted({space.index(s) for s in only})
    scenarios = space.count if chosen is None else len(chosen)
    if fault_placement(spark, program, scenarios) == DRIVER:
        try:
            settings = {key: spark.conf.get(key, None) for key in DRIVER_SETTINGS}
            return _batched(spark, DuckSession(settings), program, space, chosen, DRIVER)
        except NotInDriver:
            pass  # SQL with no DuckDB twin: the whole run on Spark
    return _batched(spark, spark, program, space, chosen, SPARK)


def _batched(spark: SparkSession, session, program: Program, space: Space, chosen: list | None,
             placement: str) -> FaultRun:
    """The batched run on `session` (Spark, or a DuckSession in the driver)."""
    worlds = with_worlds(program)
    if chosen is None:
        ids, scenarios = session.sql("SELECT id AS scenario FROM {ids}", ids=session.range(space.count)), space.count
    else:
        table = pa.Table.from_arrays([pa.array(chosen, pa.int64())], names=["scenario"])
        ids, scenarios = session.createDataFrame(table), len(chosen)
    failures = Failures(space, program)
    keyed = session.sql(f"SELECT scenario, 0L AS world, {failures.crash_key()} AS signature FROM {{ids}}", ids=ids)
    members, classes, count = _renumber(session, keyed)
    names = JobNames(session)
    splitter, counts = Splitter(worlds), []
    driver = TickDriver(None, worlds.program, names, keep_history=False)
    for tick in range(1, space.eot + 1):
        if driver.loop is None:  # the classes changed: a new loop with their data relations
            edb = {WORLD: session.sql("SELECT world FROM {classes}", classes=classes)}
            if failures.uniform_crashes:
                edb[WORLD_CRASH] = failures.crash_rows(session, classes)
            driver.loop = _loop(session, worlds.program, edb, names)
        pack = driver.run_tick(tick)
        if tick < space.eot and failures.may_split(tick):
            signatures = failures.signatures(session, members, splitter.sent(session, pack, tick), tick)
            members, classes, count = _renumber(session, signatures)
            driver.rewrite(lambda kept: splitter.copied(session, kept, classes, tick))
            driver.loop = None
        elif tick < space.eot and space.crashes:  # the same crashes in every scenario of a class
            driver.keep(tick, splitter.without(session, pack, failures.crashed(session, classes, tick), tick))
        counts.append(count)
    run = Run(worlds.program, driver, space.eot)
    found = missing_frame(session, driver.loop.layout, driver.packs[space.eot], program, members)
    return FaultRun(spark, space, scenarios, found, run, worlds, members, counts, placement)


def _loop(session, program: Program, edb: dict, names: JobNames):
    """The tick loop of the classes' program on `session`, its data relations `edb` (frames)."""
    if isinstance(session, DuckSession):
        rows = {name: _rows(frame) for name, frame in edb.items()}
        return DriverTickLoop({}, program, edb=rows, input_apart=False, names=names, session=session)
    return TickLoop(session, program, edb=edb, policy=False, input_apart=False, names=names)


def _rows(frame) -> list:
    """A frame's rows as tuples, collected (a Spark Row or a driver frame's dict)."""
    return [tuple(row.values()) if isinstance(row, dict) else tuple(row) for row in frame.collect()]


class Failures:
    """The failures of the scenarios, as Spark SQL over a `scenario` column
    (its index in the space) and literals."""

    def __init__(self, space: Space, program: Program):
        self.space, self.program = space, program
        channels = space.channels()
        self.width = len(channels)
        self.bits = {channel: j for j, channel in enumerate(channels)}
        schedules = [space[c << self.width].crashes for c in range(1, space.crash_choices())]
        self.choices = [(c, node, tick) for c, crashes in enumerate(schedules, 1) for node, tick in crashes]
        #: schedule c's crashes at position c (from 1), a literal: read without a join (a join costs a job)
        crash = "struct({} AS node, {}L AS tick)"
        listed = ", ".join("array(" + ", ".join(crash.format(sql_literal(node), tick) for node, tick in crashes) + ")"
                           for crashes in schedules)
        self.schedules = f"CAST(array({listed}) AS array<{CRASHES}>)"
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

    def schedule(self, scenario: str) -> str:
        """SQL: the crash schedule's number of the scenario with index `scenario` (SQL), 0 for none."""
        return f"shiftright({scenario}, {self.width})"

    def crashes(self, scenario: str) -> str:
        """SQL: the crashes (array of struct node, tick) of the scenario with
        index `scenario` (SQL): NULL without any."""
        schedule = self.schedule(scenario)
        return f"CASE WHEN {schedule} > 0 THEN element_at({self.schedules}, CAST({schedule} AS INT)) END"

    def crashed(self, session, classes, tick: int):
        """(world, src): the senders crashed at or before `tick` in each class
        (of classes with uniform crashes)."""
        return session.sql(f"SELECT world, crash.node AS src FROM (SELECT world, explode(filter("
                           f"{self.crashes('first')}, c -> c.tick <= {tick})) AS crash FROM {{classes}})",
                           classes=classes)

    def crash_key(self) -> str:
        """SQL: what the `crash` relation of a scenario depends on, as an array of
        strings (empty when the program does not read `crash`): its crash
        schedule, and the nodes outside the program's fact locations that its
        failures name (`Network.crash_rows`)."""
        if not self.uniform_crashes:
            return NO_STRINGS
        schedule = self.schedule("scenario")
        named = []
        for node in self.space.nodes:
            mask = sum(1 << j for (src, dst, _), j in self.bits.items() if node in (src, dst))
            if mask and node not in self.named:
                named.append(f"CASE WHEN (scenario & {mask}L) != 0 AND {schedule} > 0 THEN {sql_literal(node)} END")
        return f"filter(array(CAST({schedule} AS STRING){''.join(', ' + n for n in named)}), x -> x IS NOT NULL)"

    def crash_rows(self, session, classes):
        """`crash(L, N, T)` of each class (`faults.crash(L, W, N, T)`), from its
        first scenario (they all have the same): every crash of its schedule at
        every location of the class, its crashed nodes, the program's fact
        locations and the ends of its omitted channels (`Network.crash_rows`).
        Expressions over each class's row: no join, so no job of its own."""
        ends = "".join(f", CASE WHEN (shiftright(first, {j}) & 1) = 1 THEN array({sql_literal(src)}, "
                       f"{sql_literal(dst)}) ELSE {NO_STRINGS} END" for (src, dst, _), j in self.bits.items())
        named = f"CAST(array({', '.join(sql_literal(n) for n in self.named)}) AS array<string>)"
        located = f"array_distinct(concat(transform(crashes, c -> c.node), {named}{ends}))"
        return session.sql(
            "SELECT loc, world, crash.node AS node, crash.tick AS tick FROM ("
            " SELECT loc, world, explode(crashes) AS crash FROM ("
            f"  SELECT world, crashes, explode({located}) AS loc FROM ("
            f"   SELECT world, first, {self.crashes('first')} AS crashes FROM {{classes}}) WHERE crashes IS NOT NULL))",
            classes=classes)

    def lost(self, tick: int) -> str:
        """SQL: whether the scenario loses the message from `src` to `dst` sent at
        `tick` (columns `scenario`, `src`, `dst`, and `crash_tick`: the
        sender's crash tick in the scenario, NULL without)."""
        omitted = [f"(src = {sql_literal(src)} AND dst = {sql_literal(dst)} AND (shiftright(scenario, {j}) & 1) = 1)"
                   for (src, dst, t), j in self.bits.items() if t == tick]
        return " OR ".join(omitted + [f"coalesce(crash_tick <= {tick}, false)"])

    def signatures(self, session, members, sent, tick: int):
        """members (scenario, world) with `signature`: the sorted messages
        (src SEPARATOR dst) its class sent at `tick` that the scenario loses."""
        mask = sum(1 << j for (_, _, t), j in self.bits.items() if t == tick)
        crashed = sorted({c for c, _, t in self.choices if t <= tick})
        may_lose = f"(m.scenario & {mask}L) != 0"
        if crashed:
            may_lose += f" OR {self.schedule('m.scenario')} IN ({', '.join(f'{c}L' for c in crashed)})"
        sender_crash = f"filter({self.crashes('m.scenario')}, c -> c.node = s.src)"
        return session.sql(
            "WITH candidates AS ("
            f" SELECT /*+ BROADCAST(s) */ m.scenario, s.src, s.dst, try_element_at({sender_crash}, 1).tick AS crash_tick"
            f" FROM {{members}} m JOIN {{sent}} s ON m.world = s.world WHERE {may_lose}),"
            " lost AS ("
            f" SELECT scenario, sort_array(collect_list(concat_ws({SEPARATOR}, src, dst))) AS signature"
            f" FROM candidates WHERE {self.lost(tick)} GROUP BY scenario)"
            f" SELECT m.scenario, m.world, coalesce(l.signature, {NO_STRINGS}) AS signature"
            " FROM {members} m LEFT JOIN lost l ON m.scenario = l.scenario",
            members=members, sent=sent)


def _renumber(session, keyed) -> tuple:
    """Classes from (scenario, world, signature): one per distinct (world,
    signature), numbered from 0. Returns the members (scenario, world), the
    classes (parent, signature, world, first: the class's smallest scenario)
    and their number. The classes are materialised and counted with one job;
    the members are checkpointed lazily: computed by the first job that reads
    them (the next split's, or the verdict's)."""
    keyed = session.sql("SELECT scenario, world AS parent, signature FROM {keyed}",
                        keyed=keyed).localCheckpoint(eager=False)
    classes = session.sql("SELECT parent, signature, first, CAST(row_number() OVER (ORDER BY parent, signature) AS"
                          " BIGINT) - 1L AS world FROM (SELECT parent, signature, min(scenario) AS first"
                          " FROM {keyed} GROUP BY parent, signature)", keyed=keyed).localCheckpoint(eager=False)
    members = session.sql("SELECT /*+ BROADCAST(c) */ k.scenario, c.world FROM {keyed} k JOIN {classes} c"
                          " ON k.parent = c.parent AND k.signature = c.signature", keyed=keyed, classes=classes)
    return members.localCheckpoint(eager=False), classes, classes.count()


class Splitter:
    """Splits the classes by what their scenarios lose of the messages sent at
    a tick, and copies a pack's facts of each class into its children."""

    def __init__(self, worlds: Worlds):
        program = worlds.program
        self.layout = layout = Layout(program.relations)
        self.dependent = [n for n in program.relations if n in worlds.dependent or n == WORLD_CRASH]
        #: SQL: a pack row's class: the world argument of its relation's row (NULL: shared by all classes)
        self.world = f"CAST({layout.per_relation_sql({n: layout.column(n, 1) for n in self.dependent})} AS BIGINT)"
        messages = sorted({r.head.name for r in program.rules if r.delivery == "async"})
        #: SQL: a message's destination, as the failure model names nodes
        dst = layout.per_relation_sql({n: spark_string_sql(layout.column(n, 0), program.relations[n].types[0])
                                       for n in messages})
        self.dst = f"CAST({dst} AS STRING)"
        #: the pack columns holding a world argument, and the relations whose it is
        self.world_columns: dict = {}
        for n in self.dependent:
            self.world_columns.setdefault(layout.column(n, 1), []).append(n)

    def sent(self, session, pack, tick: int):
        """The distinct (world, src, dst) of the messages sent at `tick`."""
        return session.sql(f"SELECT DISTINCT {self.world} AS world, {SOURCE_COLUMN} AS src, {self.dst} AS dst"
                           f" FROM {{pack}} WHERE {self._sent_at(tick)}", pack=pack)

    @staticmethod
    def _sent_at(tick: int) -> str:
        return f"(__kind = '{MESSAGE}' AND __sent = {tick}L)"

    def without(self, session, pack, crashed, tick: int):
        """`pack` without the messages sent at `tick` by the `crashed` (world,
        src) senders, checkpointed lazily (computed by the next tick's first job)."""
        columns = ", ".join(f"p.{c}" for c in pack.columns)
        return session.sql(
            f"SELECT {columns} FROM {{pack}} p WHERE NOT {self._sent_at(tick)}"
            f" UNION ALL SELECT /*+ BROADCAST(c) */ {columns} FROM {{pack}} p LEFT ANTI JOIN {{crashed}} c"
            f" ON {self.world} = c.world AND p.{SOURCE_COLUMN} = c.src WHERE {self._sent_at(tick)}",
            pack=pack, crashed=crashed).localCheckpoint(eager=False)

    def copied(self, session, pack, children, tick: int):
        """`pack` with each class's facts copied into its children (`children`:
        parent, world, signature), a child without the messages sent at `tick` that its
        signature loses; the data relations left out (each tick has its own);
        checkpointed lazily (computed by the next tick's first job)."""
        data = f"__rel NOT IN ('{WORLD}', '{WORLD_CRASH}')"

        def copy(column: str) -> str:
            if column not in self.world_columns:
                return f"p.{column}"
            relations = ", ".join(f"'{n}'" for n in self.world_columns[column])
            return f"CASE WHEN __rel IN ({relations}) THEN c.world ELSE p.{column} END AS {column}"
        lost = f"{self._sent_at(tick)} AND array_contains(c.signature, concat_ws({SEPARATOR}, {SOURCE_COLUMN}, {self.dst}))"
        return session.sql(
            f"SELECT {', '.join(pack.columns)} FROM {{pack}} WHERE {data} AND {self.world} IS NULL"
            f" UNION ALL SELECT /*+ BROADCAST(c) */ {', '.join(copy(c) for c in pack.columns)}"
            f" FROM {{pack}} p JOIN {{children}} c ON {self.world} = c.parent WHERE {data} AND NOT ({lost})",
            pack=pack, children=children).localCheckpoint(eager=False)


def missing_frame(session, layout: Layout, pack, program: Program, members):
    """Per scenario, the `pre` facts at EOT without an equal `post` fact: the
    column `world` (the scenario's index), then pre's columns. `layout`: the
    packs' of the classes' program; `pack`: the EOT pack (every relation in it)."""
    columns = relation_columns(program.relations[PRE].arity + 1)  # the world is the second
    names = program.relations[PRE].columns
    per_class = ", ".join([f"g.c0 AS `{names[0]}`"] + [f"g.{c} AS `{n}`" for c, n in zip(columns[2:], names[1:])])
    return session.sql(
        f"WITH pre AS ({layout.read_sql('{pack}', PRE)}), post AS ({layout.read_sql('{pack}', POST)}),"
        f" gone AS (SELECT * FROM pre LEFT ANTI JOIN post USING ({', '.join(columns)}))"
        f" SELECT m.scenario AS world, {per_class} FROM gone g JOIN {{members}} m ON g.c1 = m.world",
        pack=pack, members=members)


def _collect(space: Space, frame) -> list:
    """The counterexamples, smallest first: only the scenarios with missing
    facts are collected."""
    facts: dict = {}
    for row in _rows(frame):
        facts.setdefault(row[0], []).append(tuple(row[1:]))
    return smallest_first(Counterexample(space[world], missing(rows, ())) for world, rows in facts.items())
