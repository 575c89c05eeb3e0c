"""The tick itself: one tick's pack computed from the previous one.

Per tick: the start state (static facts, facts @t, facts carried by @next,
messages arriving at t, the carried relations' final state) goes through the
strata, each stratum one SQL text (spark/tick_sql.py) cut by a lazy
checkpoint, all computed by the tick's job; a recursive stratum runs
component by component: a non-recursive one as part of that SQL text, a
recursive one in the Arrow fixpoint (spark/fixpoint.py, one job) or
semi-naive (one job per iteration materialises and counts its deltas); a lattice
keeps the best row of each group. What crosses the tick boundary (the final
state, @next facts, messages in flight, and under GC the `G` rows the GC rules
collect) is packed into one frame, `localCheckpoint`ed and counted: one Spark
job per tick for a non-recursive program, and lineage cut every tick, so that
tick 500 plans like tick 5. What it runs was decided once (spark/plan.py);
the partitions it runs in are the sizer's (spark/sizer.py).

Once the carried state is large, a tick appends to it instead of copying
it (spark/appended.py): the pack materialises the tick's new facts of the
carried relations only, and holds the earlier ones beside them.

With GC rules (analysis/gc.py) the next tick starts with a collected
relation's final state less its `G` rows. Nothing else changes: no
coordination, and a collected relation no longer counts as growing
(analysis/growth.py), so no rule reading it is evaluated on new facts only.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

from sparkdedalus.analysis.tick_stamps import stamped_by_tick
from sparkdedalus.pack.columns import GARBAGE, MESSAGE, NEXT, QUEUED, SOURCE_COLUMN, STATE
from sparkdedalus.plumbing.estimates import without_estimate
from sparkdedalus.plumbing.jobnames import JobNames
from sparkdedalus.plumbing.zipped import zipped_scan
from sparkdedalus.spark.appended import (COMPACT_EVERY, Appended, append_rows, appending, new_only_sql, state_condition,
                                         work_rows)
from sparkdedalus.spark.codegen import Codegen
from sparkdedalus.spark.compiler import JOIN_HINT, RulePlan
from sparkdedalus.spark.fixpoint import ARROW, ARROW_MODES, SETTING, ArrowFixpoint, driver_component_rows
from sparkdedalus.spark.loader import Loader
from sparkdedalus.spark.network import arrival_sql
from sparkdedalus.spark.plan import TickPlan
from sparkdedalus.spark.sizer import ROWS_PER_PARTITION, Sizer
from sparkdedalus.spark.tick_sql import TickSql
from sparkdedalus.syntax import ast

#: a recursive stratum's accumulated relation is re-checkpointed after this
#: many deltas, so that reading it does not scan an ever longer union
DELTAS_PER_COMPACTION = 8


def reads_current_tick(atom: ast.Atom, tick: int) -> bool:
    """Whether a body atom reads the tick being computed: no qualifier, `@T`
    (entanglement) or `@k` with k the current tick."""
    return not isinstance(atom.time, ast.TickTime) or atom.time.tick == tick


@dataclass
class TickStats:
    tick: int
    seconds: float
    iterations: int = 0  # semi-naive iterations (one job each)
    facts: int = 0  # rows the tick hands on: final state, @next facts, messages in flight
    incremental: int = 0  # rules evaluated on the tick's new facts only (semi-naive across ticks)
    persisted: int = 0  # rows persistence carries to the next tick (GC'd ones excluded)
    collected: int = 0  # rows GC does not carry to the next tick
    exchanges: int | None = None  # Exchange operators in the tick's physical plans (None: not counted)
    compiled: bool = False  # ran compiled code, from its start or from a large materialisation on (spark/codegen.py)
    in_driver: int = 0  # components the Arrow fixpoint solved in the driver (spark/fixpoint.py, `solve_here`)
    placement: str = "spark"  # where the tick ran: "spark", or "driver" (DuckDB, no Spark job: spark/placement.py)
    appended: bool = False  # appended its new facts to the carried state instead of copying it (spark/appended.py)
    pieces: int = 0  # pieces of earlier appended state its pack holds beside what it materialised


class Frames(dict):
    """A tick's frame of each relation ({relation: frame}), each built when
    first read (`make(relation)`): a tick reads few of a program's relations.

    >>> frames = Frames(str.upper)
    >>> frames["a"], sorted(frames), sorted(frames.updated({"b": "x"}).items())
    ('A', ['a'], [('a', 'A'), ('b', 'x')])
    """

    def __init__(self, make, frames: dict | None = None):
        super().__init__(frames or {})
        self.make = make

    def __missing__(self, name: str):
        self[name] = frame = self.make(name)
        return frame

    def updated(self, frames: dict) -> "Frames":
        """A copy with `frames` in it, building the others like this one."""
        return Frames(self.make, {**self, **frames})


@dataclass
class LoopState:
    """What the loop keeps between ticks."""

    packs: dict = field(default_factory=dict)  # tick -> checkpointed pack
    stats: list = field(default_factory=list)
    found: dict = field(default_factory=dict)  # an Arrow component's relations -> the facts it found when last counted
    appended: Appended | None = None  # the last pack's appended state, when counted (spark/appended.py)


@dataclass
class Recursion:
    """What a recursive stratum found (Executor._recursive)."""

    found: dict  # relation -> SQL of its new facts (a non-recursive component's: what its rules derive)
    iterations: int  # the general loop's iterations (one job each)
    arrow_only: bool  # the Arrow fixpoint found every fact (no distinct needed in the pack)
    in_pack: bool  # an Arrow fixpoint only the tick's pack reads: the pack's job computes it
    in_driver: int = 0  # components solved in the driver (ArrowFixpoint.solve_here)
    driver_found: dict | None = None  # relation -> facts the driver found; None: Spark found some


class Executor:
    """Runs one tick at a time (see the module)."""

    #: whether a large carried state is appended to rather than copied (spark/appended.py)
    appends_state = True

    def __init__(self, spark: SparkSession, plan: TickPlan, sql: TickSql, sizer: Sizer, loader: Loader,
                 names: JobNames):
        """`names` names its jobs (strata, iterations)."""
        self.spark = spark
        self.plan = plan
        self.program = plan.program
        self.layout = plan.layout
        self.sql = sql
        self.sizer = sizer
        self.loader = loader
        self.names = names
        self.codegen = Codegen(spark)
        self._inbox = None  # under a capacity, the tick's inbox (Queues.inbox_sql)
        self._previous = None  # the previous pack's view, in a tick
        self._previous_pack = None  # the previous pack, in a tick
        #: the relations whose state a tick may append to (spark/appended.py)
        self.appends = appending(self.program, plan.carried, plan.collected) if self.appends_state else frozenset()
        #: those of them whose new facts need comparing with the earlier state: not stamped with their tick
        self.compared = self.appends - (stamped_by_tick(self.program) - loader.given)
        self._appending: Appended | None = None  # the previous pack's state, when this tick appends to it
        self._pack_views: dict = {}  # tick -> view of its pack, for atoms read @k
        self._handed_on = 0  # rows of the last pack handed on, with the inputs kept apart (spark/codegen.py)

    def run_tick(self, tick: int, previous: DataFrame | None, state: LoopState) -> DataFrame:
        """Tick `tick`'s pack from the previous one (None at the first tick),
        materialised; its TickStats appended to `state.stats`. Compiled or
        interpreted by the size of the last pack (spark/codegen.py)."""
        with self.codegen.tick(self.sizer.input_rows, lambda: self._handed_on):
            try:
                return self._tick(tick, previous, state)
            finally:
                self.sql.end()

    def _tick(self, tick: int, previous: DataFrame | None, state: LoopState) -> DataFrame:
        started = time.perf_counter()
        self.sizer.start_tick()
        self._pack_views = {}
        self._appending = self._appending_to(previous, state)
        start, current, news = self._start(tick, previous)
        stratum_packs = []
        settled = []  # the Arrow fixpoint's facts: new, materialised or computed by the pack (_recursive)
        iterations, in_pack = 0, False  # in_pack: the pack's job computes an Arrow fixpoint
        in_driver, driver_found = 0, {}  # the components the driver solved, and what they found (Recursion)
        for stratum in self.program.strata:
            rules = self.plan.rule_order[stratum.index]
            names = sorted({r.head.name for r in rules})
            news_before = dict(news or {})
            if stratum.recursive:
                with self.names.scope("stratum", stratum.index):
                    recursion = self._recursive(rules, names, current, news, tick, state,
                                                self.plan.read_after(names, stratum))
                found = recursion.found
                iterations += recursion.iterations
                in_pack |= recursion.in_pack
                in_driver += recursion.in_driver
                driver_found = None if None in (driver_found, recursion.driver_found) \
                    else {**driver_found, **recursion.driver_found}
                parts = [self.layout.part_sql(n, STATE, self.sql.name(found[n])) for n in names]
                if recursion.arrow_only:  # the Arrow fixpoint's: no stratum checkpoint, and no distinct in the pack
                    settled.append(self.layout.home_copies_sql(self.sql.name(self.sql.union(parts))))
                    for n in names:
                        current[n] = self._grown(n, current[n], found[n])
                        if n in news_before:
                            news[n] = self._grown(n, news_before[n], found[n])
                    continue
            else:
                parts = []
                for rule in rules:
                    derived = self._derive(rule, current, news, tick, state)
                    if derived is None:
                        continue
                    name = rule.head.name
                    current[name] = self.sql.union([current[name], derived])
                    if news is not None and name in news:
                        news[name] = self.sql.union([news[name], derived])
                    parts.append(self.layout.part_sql(name, STATE, self.sql.name(derived)))
            if not parts:
                continue
            # Cut the plan here: later strata read a checkpoint leaf instead of
            # re-embedding this stratum's plan at every use. Lazy: it is computed
            # by the tick's one job, not by a job of its own.
            derived_pack = self.sql.cut(self.sql.union(parts))
            stratum_packs.append(derived_pack)
            for n in names:
                base = self._start_read(start, n) if n not in self.program.lattices else None
                fresh = self.layout.read_sql(derived_pack, n)
                current[n] = fresh if base is None else self.sql.union([base, fresh])
                if n in news_before:
                    news[n] = self.sql.union([news_before[n], fresh])
        pack, (facts, persisted, collected) = self._pack(tick, start, stratum_packs, settled, current, state,
                                                         compiled=in_pack, driver_found=driver_found)
        incremental = len(self.plan.differential) if news is not None else 0  # each is derived once a tick
        state.stats.append(TickStats(tick, time.perf_counter() - started, iterations, facts, incremental,
                                     persisted - collected, collected, self.sizer.exchanges, self.codegen.compiled,
                                     in_driver, appended=self._appending is not None,
                                     pieces=len(state.appended.earlier) if state.appended is not None else 0))
        return pack

    def _start(self, tick: int, previous: DataFrame | None) -> tuple[str | None, dict, dict | None]:
        """The tick's starting facts as one pack (static facts, facts @tick,
        facts derived by @next, messages arriving now, the carried relations'
        final state of the previous tick: five branches whatever the number of
        relations, and one per collected relation: its final state less its
        garbage), cut by a lazy checkpoint (a view); a relation's SQL reading
        it; and the carried relations' new facts (all but those of the
        previous tick; None at the first tick)."""
        self._previous = self.sql.views.of(previous) if previous is not None else None
        self._previous_pack = previous
        arriving = [p for p in (self.loader.facts_pack(tick),) if p is not None]
        self._inbox = None
        if previous is not None:
            arriving.append(self.layout.relabel_sql(self._previous, f"__kind = '{NEXT}'"))
            if self.plan.queues is None:
                arriving.append(self.layout.relabel_sql(self._previous, f"__kind = '{MESSAGE}' AND __arrival = {tick}"))
            else:  # the messages the nodes take in (spark/queues.py)
                self._inbox = self.sql.cut(self.plan.queues.inbox_sql(self._previous, tick))
                arriving.append(self.layout.relabel_sql(self._inbox, "__take"))
        static = self.loader.static_pack
        sources = ([self.sql.views.of(static)] if static is not None else []) + arriving
        if previous is not None and self.plan.carried:
            # identity @next rules are not evaluated: the carried relations'
            # final state of the previous tick is read directly
            appended = self.appends if self._appending is not None else frozenset()
            names = ", ".join(f"'{n}'" for n in sorted(self.plan.carried - self.plan.collected - appended))
            if names:
                sources.append(self.layout.relabel_sql(self._previous, f"__kind = '{STATE}' AND __rel IN ({names})"))
            sources += [self.layout.part_sql(n, STATE, self.sql.name(self._surviving(n)))
                        for n in sorted(self.plan.collected)]
        start = self.sql.cut(self.sql.union(sources)) if sources else None
        self.sizer.tick_partitions = self.sizer.partitions
        repartitioned = self.sizer.pack_partitions != self.sizer.partitions
        if previous is not None and self.plan.partitioner is not None and repartitioned:
            start = self.sql.name(self.sql.spread(start))  # the previous pack is not in this tick's partitions
        current = Frames(lambda name: self.loader.read_apart(name) if name in self.plan.apart
                         else self._start_read(start, name) or self.sql.empty(name, bucket=True))
        news = None
        if previous is not None:
            new_pack = self.sql.name(self.sql.union(arriving))
            news = {name: self.layout.read_sql(new_pack, name) for name in self.plan.carried}
        return start, current, news

    def _appending_to(self, previous: DataFrame | None, state: LoopState) -> Appended | None:
        """The previous pack's appended state when this tick appends to it
        (spark/appended.py): `_appendable`, and all in this tick's
        partitions, which are one or the partitioner's buckets (else reading
        it would shuffle it). Else None: the tick copies the carried state,
        which makes it one piece again."""
        known = state.appended
        if previous is None or known is None or known.pack is not previous or not self._appendable(known):
            return None
        partitions = self.sizer.partitions
        in_place = partitions == self.sizer.pack_partitions and (partitions == 1 or self.plan.partitioner is not None)
        return known if in_place else None

    def _appendable(self, known: Appended) -> bool:
        """Whether the next tick may append to `known`, a pack's appended
        state, wherever it runs: its rows counted with it, at least
        `append_rows` of them."""
        limit = append_rows(self.spark)
        return bool(self.appends) and 0 <= limit <= known.rows

    def _start_read(self, start: str | None, name: str) -> str | None:
        """SQL: relation `name` as the tick starts, or None when nothing holds
        it: the start's facts, and for a relation appended to, the previous
        pack's state too (spark/appended.py)."""
        own = self.layout.read_sql(start, name) if start is not None and name in self.plan.may_start else None
        if self._appending is None or name not in self.appends:
            return own
        earlier = self.layout.read_sql(self._previous, name)
        return earlier if own is None else self.sql.union([earlier, own])

    def _without_lattices(self, start: str) -> str:
        """SQL: the tick's start less the rows of lattices (checks/lattices.py):
        their strata found each one whole, the best row of every group."""
        if not self.program.lattices:
            return start
        names = ", ".join(f"'{n}'" for n in sorted(self.program.lattices))
        return self.sql.narrow(f"SELECT * FROM {self.sql.name(start)} WHERE __rel NOT IN ({names})")

    def _surviving(self, name: str) -> str:
        """SQL: collected relation `name`'s final state in the previous pack less its garbage."""
        final = self.sql.name(self.layout.read_sql(self._previous, name))
        garbage = self.sql.name(self.layout.read_sql(self._previous, name, GARBAGE))
        return self.sql.narrow(self.sql.joined(final, garbage, "LEFT ANTI", self.sql.columns(name)))

    def _reader(self, current: dict, tick: int, state: LoopState, delta: tuple | None = None):
        """read(atom, occurrence) for the rule compiler: the SQL of the relation
        the atom reads; `delta` = (occurrence, relations) makes that one atom
        occurrence read a semi-naive delta instead."""
        def read(atom: ast.Atom, occurrence):
            if delta is not None and occurrence == delta[0]:
                return delta[1][atom.name]
            if not reads_current_tick(atom, tick):
                k = atom.time.tick
                if k > tick or k not in state.packs:
                    return self.sql.empty(atom.name, bucket=True)
                if atom.name in self.plan.apart:
                    return self.loader.read_apart(atom.name)
                if k not in self._pack_views:
                    self._pack_views[k] = self.sql.views.of(state.packs[k])
                return self.layout.read_sql(self._pack_views[k], atom.name, STATE)
            return current[atom.name]
        return read

    def _evaluate(self, plan: RulePlan, read, tick: int) -> str:
        """SQL: what `plan` derives at this tick, its relations read by `read`."""
        return plan.evaluate(self.sql.statement, read, tick, self.sql.narrow)

    def _derive(self, rule, current: dict, news: dict | None, tick: int, state: LoopState) -> str | None:
        """SQL: what `rule` derives at this tick. A differential rule (see
        analysis/growth.py) after the first tick is evaluated once per positive
        atom over a carried relation, that atom reading the relation's new facts
        (`news`): None when no atom can have any."""
        plan = self.plan.plans[rule.index]
        if news is None or rule.index not in self.plan.differential:
            return self.sql.placed(rule, self._evaluate(plan, self._reader(current, tick, state), tick))
        derived = [self.sql.placed(rule,
                                   self._evaluate(plan, self._reader(current, tick, state, delta=(i, news)), tick))
                   for i, atom in enumerate(plan.positive) if atom.name in news]
        return self.sql.union(derived) if derived else None

    def _derive_all(self, rules, names: list, current: dict, news: dict | None, tick: int,
                    state: LoopState) -> dict:
        """{relation: [SQL]}: what each of `rules` derives (_derive), by head relation."""
        derived: dict = {n: [] for n in names}
        for rule in rules:
            sql = self._derive(rule, current, news, tick, state)
            if sql is not None:
                derived[rule.head.name].append(sql)
        return derived

    def _recursive(self, rules, names: list, current: dict, news: dict | None, tick: int,
                   state: LoopState, read_after: bool) -> "Recursion":
        """A recursive stratum, component by component in dependency order
        (see Recursion). A non-recursive component is evaluated like a
        non-recursive stratum (no job); a recursive one the Arrow fixpoint
        takes (spark/fixpoint.py) costs one job that counts what it found, the
        others the general loop's. A component is not counted, and costs no
        job (the first job reading it computes it), when only the tick's pack
        reads the stratum (not `read_after`), or when it and the tick's input
        were small (below ROWS_PER_PARTITION) the last time it was counted:
        the tick's sizing does not depend on it then. A component's facts are
        new facts (`news`) for the components after it. A small component
        whose inputs the driver holds is solved there instead (`_held`): no
        job, its facts a local relation."""
        current = current.updated({})
        news = dict(news) if news is not None else None
        found, iterations, arrow_only, in_pack, in_driver, driver_found = {}, 0, True, False, 0, {}
        groups = self.plan.components(rules)
        for k, group in enumerate(groups):
            group_names = sorted({r.head.name for r in group})
            arrow = self.plan.arrow_fixpoint(group, group_names) \
                if self.spark.conf.get(SETTING, ARROW) in ARROW_MODES else None
            if not self.plan.recursive & set(group_names):
                new = {n: self.sql.union(d) if d else self.sql.empty(n, bucket=True)
                       for n, d in self._derive_all(group, group_names, current, news, tick, state).items()}
                arrow_only = False
            elif arrow is not None:
                shared = read_after or k < len(groups) - 1  # read by more than the tick's pack
                new, here = self._arrow(arrow, group_names, current, news, tick, state, shared)
                if here is None:
                    in_pack |= not shared
                    driver_found = None
                else:
                    in_driver += 1
                    if driver_found is not None:
                        driver_found.update(here)
            else:
                new, rounds = self._loop(group, group_names, current, news, tick, state)
                iterations += rounds
                arrow_only = False
            for n in group_names:
                found[n] = new[n]
                current[n] = self._grown(n, current[n], new[n])
                if news is not None and n in news:
                    news[n] = self._grown(n, news[n], new[n])
        return Recursion(found, iterations, arrow_only, in_pack, in_driver, driver_found)

    def _arrow(self, arrow: ArrowFixpoint, names: list, current: dict, news: dict | None, tick: int,
               state: LoopState, shared: bool) -> tuple[dict, dict | None]:
        """A recursive component the Arrow fixpoint solves: its new facts
        ({relation: SQL}), and, when the driver solved it (`_held`), the rows
        it found per relation (else None: a Spark job solves it, counted
        unless `shared` is false or it was small, see `_recursive`)."""
        held = self._held(arrow, names, tick)
        here = None
        if held is not None:  # solved here, its rows known: no job
            frames, here = arrow.solve_here(self.spark, held)
            rows, counted = sum(here.values()), True
        else:
            reads = {n: self.sql.frame_of(current[n]) for n in arrow.reads}
            grown = {n: self.sql.frame_of(news[n]) for n in arrow.reads if n in news} \
                if news is not None and arrow.differential else None  # semi-naive across ticks
            small = max(state.found.get(tuple(names), ROWS_PER_PARTITION),
                        self.sizer.input_rows) < ROWS_PER_PARTITION
            counted = shared and not small
            buckets = arrow.buckets(self.sizer.most_partitions, grown is not None)
            with self.codegen.compiling():
                frames, rows = arrow.frames(reads, buckets, self.sizer.most_partitions, counted, shared, grown)
        if counted:
            state.found[tuple(names)] = rows
            self.sizer.sized(rows)  # the rest of the tick sized to what the recursion found,
            self.codegen.grow(rows)  # its code compiled if that is large
        elif here is None and not small and self.sizer.partitions < self.sizer.most_partitions:
            # computed by the pack's job, its size unknown: the pack in every partition, not coalesced into one task
            self.sizer.widened()
        new = {n: self.sql.views.of(f) for n, f in frames.items()}
        if self.plan.partitioner is not None:  # the facts into their buckets
            new = {n: self.sql.spread(self.plan.partitioner.place_sql(n, v)) for n, v in new.items()}
        return new, here

    def _held(self, arrow: ArrowFixpoint, names: list, tick: int) -> dict | None:
        """The tables ({relation: pa.Table}) a component reads, when the
        driver may solve it (`ArrowFixpoint.solve_here`): at a run's first tick
        (no previous pack), every relation it reads holds only facts true at
        every tick (no rule outside the component derives it now, no fact or
        input is stamped with this tick), the driver holds them all
        (`Loader.held_tables`) in at most `driver_component_rows` rows, and one
        task would solve it (`ArrowFixpoint.one_task`). Else None."""
        limit = driver_component_rows(self.spark)
        if limit <= 0 or self._previous is not None or arrow.by_pivot:  # by pivot: no input read for nothing
            return None
        stamped = self.loader.stamped_with(tick)
        if any((n in self.plan.derived_now and n not in names) or n in stamped for n in arrow.reads):
            return None
        rows = self.loader.held_rows(arrow.reads)
        if rows is None or rows > limit:
            return None
        tables = self.loader.held_tables(arrow.reads)
        return tables if arrow.one_task(tables) else None

    def _grown(self, name: str, before: str, found: str) -> str:
        """SQL: relation `name` after its recursion `found` more of it: the
        two together, or for a lattice (checks/lattices.py) what was found,
        which is the whole relation."""
        return found if name in self.program.lattices else self.sql.union([before, found])

    def _loop(self, rules, names: list, current: dict, news: dict | None, tick: int,
              state: LoopState) -> tuple[dict, int]:
        """The general semi-naive loop of a recursive stratum (or component):
        one job per iteration. Returns the new facts of each relation, and for
        a lattice (checks/lattices.py) the whole relation: the best row of each
        group among those it starts with and those the loop finds."""
        lattices = {n: self.program.lattices[n] for n in names if n in self.program.lattices}
        current = current.updated({n: self._best(lattice, current[n]) for n, lattice in lattices.items()})
        derived = self._derive_all(rules, names, current, news, tick, state)
        self.names.step("iteration", 1)
        (deltas,), count = self._materialise({n: self._new_facts(n, derived[n], current[n]) for n in names})
        found = {n: [deltas[n]] for n in names}
        accumulated = {n: [current[n], deltas[n]] for n in names}
        iterations = 1
        while count:
            full = current.updated({n: self.sql.union(accumulated[n]) for n in names})
            new: dict = {n: [] for n in names}
            for rule in rules:
                plan = self.plan.plans[rule.index]
                for occurrence, atom in enumerate(plan.positive):
                    if atom.name in names and reads_current_tick(atom, tick):
                        read = self._reader(full, tick, state, delta=(occurrence, deltas))
                        new[rule.head.name].append(self.sql.placed(rule, self._evaluate(plan, read, tick)))
            self.names.step("iteration", iterations + 1)
            (deltas,), count = self._materialise({n: self._new_facts(n, new[n], full[n]) for n in names})
            iterations += 1
            for n in names:
                found[n].append(deltas[n])
                accumulated[n].append(deltas[n])
            if len(found[names[0]]) >= DELTAS_PER_COMPACTION:
                (whole, news_so_far), _ = self._materialise(
                    {n: self.sql.union(accumulated[n]) for n in names}, {n: self.sql.union(found[n]) for n in names})
                accumulated = {n: [whole[n]] for n in names}
                found = {n: [news_so_far[n]] for n in names}
        return {n: self._best(lattices[n], self.sql.union([current[n], *found[n]])) if n in lattices
                else self.sql.union(found[n]) for n in names}, iterations

    def _new_facts(self, name: str, derived: list, known: str) -> str:
        """SQL: the distinct rows of `derived` not in `known`; for a lattice,
        the best row of each group of `derived` that improves on `known`'s."""
        candidates = self.sql.union(derived) if derived else self.sql.empty(name, bucket=True)
        lattice = self.program.lattices.get(name)
        if lattice is not None:
            return self._improved(lattice, self._best(lattice, candidates), known)
        unique = self.sql.name(f"SELECT DISTINCT * FROM {self.sql.name(candidates)}")
        return self.sql.narrow(self.sql.joined(unique, self.sql.name(known), "LEFT ANTI", self.sql.columns(name)))

    def _lattice_columns(self, lattice) -> tuple[list[str], str]:
        """A lattice frame's group columns (the partition column among them)
        and its value column."""
        columns = self.sql.columns(lattice.relation)
        value = columns[lattice.position]
        return [c for c in columns if c != value], value

    def _best(self, lattice, sql: str) -> str:
        """SQL: the best row of each group of `sql`, a lattice's rows."""
        keys, value = self._lattice_columns(lattice)
        columns = ", ".join(f"{lattice.func}(`{c}`) AS `{c}`" if c == value else f"`{c}`"
                            for c in self.sql.columns(lattice.relation))
        groups = ", ".join(f"`{k}`" for k in keys)
        return self.sql.narrow(f"SELECT {columns} FROM {self.sql.name(sql)} GROUP BY {groups}")

    def _improved(self, lattice, candidates: str, known: str) -> str:
        """SQL: the rows of `candidates` (one a group) better than every row of
        their group in `known`, or of a group `known` lacks."""
        keys, value = self._lattice_columns(lattice)
        as_good = "<=" if lattice.func == "min" else ">="
        on = " AND ".join([f"c.`{k}` = k.`{k}`" for k in keys] + [f"k.`{value}` {as_good} c.`{value}`"])
        return self.sql.narrow(f"SELECT /*+ {JOIN_HINT}(k) */ c.* FROM {self.sql.name(candidates)} c"
                            f" LEFT ANTI JOIN {self.sql.name(known)} k ON {on}")

    def _materialise(self, *groups: dict) -> tuple[list, int]:
        """Checkpoint the relations of one or two groups ({relation: SQL}) with
        one job; returns per group the SQL reading each from the checkpoint (a
        view), and the number of rows."""
        kinds = (STATE, NEXT)  # a group's rows carry its own kind in the pack
        pack, (rows,) = self.sql.materialised(self.sql.union([self.layout.part_sql(n, kind, self.sql.name(sql))
                                                              for kind, group in zip(kinds, groups)
                                                              for n, sql in group.items()]))
        self.codegen.grow(rows)  # the rest of a tick whose recursion grows large: compiled
        view = self.sql.views.of(pack)
        found = [{n: self.layout.read_sql(view, n, kind) for n in group} for kind, group in zip(kinds, groups)]
        return found, rows

    def _counted_here(self, tick: int, derived: bool, driver_found: dict | None) -> tuple | None:
        """(rows, rows of persisted relations, collected rows) of the tick's
        pack when the driver knows them, so that no job counts it: a run's
        first tick, no fact stamped with it, every fact the strata found
        found in the driver (`driver_found`: the Arrow fixpoint's `solve_here`, not `derived`
        by a SQL stratum or a later rule), no GC, and the facts true at every
        tick known as sets (`Loader.static_distinct`). The driver's facts are
        new (a lattice's: its whole relation, whose start rows the pack
        leaves out), so the counts add up. Else None."""
        distinct = self.loader.static_distinct
        if derived or self._previous is not None or self.loader.stamped_with(tick) or driver_found is None \
                or distinct is None or self.plan.gc_plans:
            return None
        rows = {n: k for n, k in distinct.items() if n not in self.program.lattices}
        for name, found in driver_found.items():
            rows[name] = rows.get(name, 0) + found
        return sum(rows.values()), sum(k for n, k in rows.items() if n in self.program.persisted), 0

    def _sent(self, name: str, messages: str, tick: int, sent: str) -> str:
        """SQL: the messages of relation `name` (its columns and `__src`)
        leaving their senders at `tick`, as MESSAGE rows: `sent` the SQL of
        their send tick column, their arrival the network's."""
        row = list(zip(self.layout.schemas[name].fieldNames(), self.program.relations[name].types))
        arrival = arrival_sql(self.plan.network, name, row, SOURCE_COLUMN, tick)
        return self.layout.part_sql(name, MESSAGE, messages, sent=sent, arrival=arrival, source=f"`{SOURCE_COLUMN}`")

    def _queued(self, derived: list, tick: int) -> list:
        """SQL parts under a capacity (spark/queues.py): the inbox's messages
        not taken in; the outbox (old QUEUED rows and those `derived` now),
        its first messages leaving as MESSAGE rows, the others staying."""
        columns = ", ".join(self.layout.pack_schema.fieldNames())
        parts, outbox = [], list(derived)
        if self._previous is not None:
            parts.append(f"SELECT {columns} FROM {self._inbox} WHERE NOT __take")
            outbox.append(f"SELECT * FROM {self._previous} WHERE __kind = '{QUEUED}'")
        if not outbox:
            return parts
        taken = self.sql.name(self.plan.queues.taken_sql(self._inbox))
        distinct = self.sql.name(f"SELECT DISTINCT * FROM {self.sql.name(self.sql.union(outbox))}")
        ranked = self.sql.name(self.sql.narrow(self.plan.queues.outbox_sql(distinct, taken)))
        parts.append(f"SELECT {columns} FROM {ranked} WHERE NOT __leave")
        for name in self.plan.queues.relations:
            leaving = self.layout.read_sql(ranked, name, QUEUED, extra=("__sent", SOURCE_COLUMN))
            parts.append(self._sent(name, self.sql.name(f"{leaving} AND __leave"), tick, "`__sent`"))
        return parts

    def _pack(self, tick: int, start: str | None, derived_parts: list, settled: list, current: dict,
              state: LoopState, compiled: bool, driver_found: dict | None) -> tuple[DataFrame, tuple]:
        """Everything that crosses the tick boundary, materialised with one job:
        the final state (S), facts for the next tick (N), messages (M), the
        facts GC collects (G); and its rows, its S rows of persisted relations
        and its G rows. `settled` parts hold facts no other part has (the Arrow
        fixpoint's): they are left out of the pack's distinct. `compiled`: the
        job runs compiled code (it computes an Arrow fixpoint); `driver_found`:
        what the driver found, when it found every fact of the strata's
        (else None: see `_counted_here`)."""
        parts = ([self._without_lattices(start)] if start is not None else []) + derived_parts
        planned = len(parts)  # the parts of the start and the strata; the others come from later rules
        moved = []  # facts leaving their bucket (messages, @next facts of non-local rules): one shuffle
        queued = []  # under a capacity, the messages derived at this tick (spark/queues.py)
        reader = self._reader(current, tick, state)
        for rule in self.program.rules:
            if rule.delivery == "now" or rule.persistence:
                continue
            plan = self.plan.plans[rule.index]
            derived = self.sql.name(self.sql.placed(rule, self._evaluate(plan, reader, tick), spread=False))
            name = rule.head.name
            local = self.plan.partitioner is not None and plan.partitioned and rule.delivery == "next"
            if rule.delivery == "next":
                (parts if local else moved).append(self.layout.part_sql(name, NEXT, derived))
            elif self.plan.queues is not None:
                queued.append(self.layout.part_sql(name, QUEUED, derived, sent=str(tick), source=f"`{SOURCE_COLUMN}`"))
            else:
                moved.append(self._sent(name, derived, tick, str(tick)))
        for plan in self.plan.gc_plans:
            name = plan.rule.head.name
            garbage = self.sql.bucketed(name, self._evaluate(plan, reader, tick))
            moved.append(self.layout.part_sql(name, GARBAGE, self.sql.name(garbage)))
        if self.plan.queues is not None:
            moved += self._queued(queued, tick)
        if moved:
            union = self.sql.union(moved)
            parts.append(self.sql.spread(union) if self.plan.partitioner is not None else union)
        if self._previous is not None and self.plan.queues is None:
            parts.append(f"SELECT * FROM {self._previous} WHERE __kind = '{MESSAGE}' AND __arrival > {tick}")
        known = self._counted_here(tick, bool(derived_parts) or len(parts) > planned, driver_found)
        if not parts:
            first = next(iter(self.layout.names))
            parts.append(self.layout.part_sql(first, STATE, self.sql.name(self.sql.empty(first, bucket=True))))
        pack = self.sql.union(parts)
        moved_partitions = self.sizer.partitions != self.sizer.tick_partitions \
            or (self._previous is not None and self.sizer.partitions != self.sizer.pack_partitions)
        if self.plan.partitioner is not None and self.sizer.partitions > 1 and moved_partitions:
            pack = self.sql.spread(pack)  # parts read in other partitions
        self.sizer.pack_partitions = self.sizer.partitions
        persisted = ", ".join(f"'{n}'" for n in sorted(self.program.persisted)) or "NULL"
        if self.appends and self.layout.bucket and self.sizer.partitions > 1 and not moved_partitions:
            pack = self.sql.spread(pack)  # in the buckets, like the pieces a later tick appends (spark/appended.py)
        pack = self.layout.distinct_sql(self.sql.name(pack), self.sizer.partitions)
        if self._appending is not None and self.compared:  # the appended relations' new facts only (spark/appended.py)
            pack = self._new_only(pack)
        if settled:  # in the loop's partitions already (_recursive)
            pack = self.sql.union([pack, *settled])
        if known is not None:  # counted here: a lazy checkpoint, computed by whoever reads it first
            pack, (rows, persisted, collected) = self.sql.checkpoint(pack), known
            state.appended = None
        else:
            appends = [state_condition(self.appends), state_condition(self.appends & self.program.persisted)] \
                if self.appends else []
            with self.codegen.compiling() if compiled else nullcontext():
                pack, (rows, persisted, collected, *appended) = self.sql.materialised(
                    pack, f"__kind = '{STATE}' AND __rel IN ({persisted})", f"__kind = '{GARBAGE}'", *appends)
            if self.appends:
                pack, rows, persisted = self._appended(pack, rows, persisted, *appended, state)
        self._size_next(rows, state.appended)
        self._handed_on = rows + self.loader.input_rows_apart
        return pack, (self._handed_on, persisted, collected)

    def _size_next(self, rows: int, appended: Appended | None) -> None:
        """The next tick sized to what it works over (`work_rows`): the
        pack's `rows` and the inputs kept apart, of which the appended state
        it will append to (`appended`, when `_appendable`) it only scans, in
        place: in at least the partitions it is in."""
        kept = appended.rows if appended is not None and self._appendable(appended) else 0
        least = self.sizer.pack_partitions if kept else 1
        self.sizer.sized(work_rows(rows + self.loader.input_rows_apart, kept), least=least)

    def _compacted(self, pieces: tuple) -> DataFrame:
        """The appended state `pieces` hold, as one piece in their partitions:
        a lazy local checkpoint of their scan, computed by the first job that
        reads it, neither shuffled nor de-duplicated (no two pieces hold the
        same fact)."""
        piece = zipped_scan(pieces).where(state_condition(self.appends)).localCheckpoint(eager=False)
        return without_estimate(piece) if self.sizer.partitions > 1 else piece

    def _new_only(self, pack: str) -> str:
        """SQL: the tick's pack `pack` less the appended relations' facts
        the previous pack holds (spark/appended.py), those stamped with their
        tick aside (analysis/tick_stamps.py: none of them is)."""
        earlier = self.sql.narrow(f"SELECT * FROM {self._previous}")
        candidates = self.sql.cut(pack)  # in the buckets the earlier pieces are in (_pack)
        return self.sql.narrow(new_only_sql(candidates, self.sql.name(earlier), self.compared,
                                            self.layout.pack_schema.fieldNames(), self.layout.bucket))

    def _appended(self, pack: DataFrame, rows: int, persisted: int, appended: int, appended_persisted: int,
                  state: LoopState) -> tuple[DataFrame, int, int]:
        """(pack, rows, rows of persisted relations) of the tick whose
        materialised pack is `pack` with `rows` rows, `persisted` of them of
        persisted relations, and `appended` (`appended_persisted`) state rows
        of relations appended to: when the tick appended, the pack with the
        earlier state beside it, and the rows counted with it.
        `state.appended` records it; COMPACT_EVERY pieces are compacted into one."""
        earlier = self._appending
        if earlier is None:
            state.appended = Appended(pack, pack, (), appended, appended_persisted)
            return pack, rows, persisted
        pieces = (earlier.fresh, *earlier.earlier)
        if len(pieces) >= COMPACT_EVERY:
            pieces = (self._compacted(pieces),)
        whole = pack.unionAll(zipped_scan(pieces).where(state_condition(self.appends)))
        state.appended = Appended(whole, pack, pieces, earlier.rows + appended, earlier.persisted + appended_persisted)
        return whole, rows + earlier.rows, persisted + earlier.persisted
