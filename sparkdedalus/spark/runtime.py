"""The tick loop: every location of a tick evaluated together, as data.

Per tick: the start state (EDB, facts @t, facts carried by @next, messages
arriving at t, crash facts) goes through the strata, each stratum one SQL
text (spark/statement.py) cut by a lazy checkpoint, all computed by the tick's
job; a recursive stratum runs semi-naive (one job per iteration materialises and
counts its deltas). What crosses the tick boundary — the final state, @next
facts and messages in flight — is packed into one frame, `localCheckpoint`ed
and counted: one Spark job per tick for a non-recursive program, and lineage
cut every tick, so that tick 500 plans like tick 5. A tick below
ROWS_PER_PARTITION rows runs in one partition: one task, no shuffle. A larger
one runs in the session's partitions, every frame hash-partitioned by its
facts' buckets (spark/partitioner.py: the analyses' distribution policies), so
that only facts changing bucket are shuffled; `policy=False` leaves the
partitioning of joins to Spark instead (one shuffle per join).

With GC rules (analysis/gc.py) the pack also holds, as `G` rows, the facts of
the final state that the rules collect; the next tick starts with a collected
relation's final state less those rows. Nothing else changes: no coordination,
and a collected relation no longer counts as growing (analysis/growth.py), so
no rule reading it is evaluated on new facts only.
"""

from __future__ import annotations

import itertools
import re
import time
from dataclasses import dataclass, field
from functools import reduce

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, DoubleType, LongType, StructField, StructType

from sparkdedalus.checks.dependencies import dependency_graph, strongly_connected
from sparkdedalus.analysis.growth import carried_relations, differential_rules, growing_relations
from sparkdedalus.errors import InputError
from sparkdedalus.network import Network
from sparkdedalus.program import CRASH, Program
from sparkdedalus.inputs import TICK
from sparkdedalus.spark.codegen import Codegen
from sparkdedalus.pack.columns import GARBAGE, MESSAGE, NEXT, PARTITION_COLUMN, QUEUED, SOURCE_COLUMN, STATE
from sparkdedalus.spark.compiler import JOIN_HINT, RulePlan
from sparkdedalus.spark.expressions import sql_literal
from sparkdedalus.spark.fixpoint import ARROW, SETTING, ArrowFixpoint
from sparkdedalus.plumbing.jobnames import JobNames
from sparkdedalus.spark.network import arrival_sql
from sparkdedalus.pack.layout import Layout
from sparkdedalus.spark.partitioner import Partitioner
from sparkdedalus.spark.queues import Queues
from sparkdedalus.spark.statement import Statement, Views
from sparkdedalus.syntax import ast
from udfs.registry import spark_string_sql

#: a recursive stratum's accumulated relation is re-checkpointed after this
#: many deltas, so that reading it does not scan an ever longer union
COMPACT_EVERY = 8


#: a limit no frame of a one-partition tick reaches (see TickLoop._narrow)
SIZE_BOUND = 2**31 - 1
#: rows per partition when the loop sizes its partitions to the data
ROWS_PER_PARTITION = 200_000
#: A relation's facts written in the program's text (those at every tick, or
#: all those stamped with a tick) up to this many are inlined in the plan as a
#: literal array; more are loaded as a DataFrame from Arrow, once. An inline
#: array costs no job of its own but grows the plan with every fact (built,
#: analysed and optimised wherever the plan uses it); measured on the 2-core
#: machine (docs/performance.md), whole runs cost the same to within the noise
#: up to 128 facts a relation, and loading won 1.3x at 256 and 2.4x at 512.
INLINE_ROWS = 128
_ARROW_TYPES = {LongType: pa.int64(), DoubleType: pa.float64(), BooleanType: pa.bool_()}


def max_partitions(spark: SparkSession) -> int:
    """The most partitions the loop uses: the session's shuffle partitions, at
    most 64 (a session left at Spark's 200 would pay 200 tasks per shuffle)."""
    return max(1, min(int(spark.conf.get("spark.sql.shuffle.partitions", "4")), 64))


def partitions_for(rows: int, most: int) -> int:
    """Partitions for a working set of `rows` rows: one below ROWS_PER_PARTITION
    (a tick is then one task: no shuffle, no broadcast), more as it grows.

    >>> partitions_for(500, 8), partitions_for(450_000, 8), partitions_for(10**9, 8)
    (1, 3, 8)
    """
    return max(1, min(most, -(-rows // ROWS_PER_PARTITION)))


def exchanges(frame: DataFrame) -> int | None:
    """Exchange operators (shuffles, broadcasts) in `frame`'s physical plan, an
    exchange the plan reuses once; None where the plan cannot be seen (Spark
    Connect)."""
    jdf = getattr(frame, "_jdf", None)
    if jdf is None:
        return None
    plan = jdf.queryExecution().executedPlan().toString()
    return len(re.findall(r"^[\s:+|-]*(?:Broadcast)?Exchange\b", plan, re.MULTILINE))


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


class TickLoop:
    def __init__(self, spark: SparkSession, program: Program, network: Network | None = None,
                 edb: dict | None = None, partitions: int | None = None, stamped: dict | None = None,
                 gc: list | None = None, policy: bool = True, input_apart: bool = True):
        """`edb`: {relation: frame or rows} holding at every tick; `stamped`:
        {relation: (frame with a `tick` column, set of its ticks)}, rows holding
        at their tick only (`.input` rows with a tick, see spark/inputs.py);
        `gc`: the `GcRule`s to apply (analysis/gc.py); `policy`: partition by
        the distribution policies (see the module); `input_apart`: keep the
        relations no rule derives out of the packs (`full` adds them back)."""
        self.spark = spark
        self.names = JobNames(spark)  # names its jobs (strata, iterations); Engine.run gives its own
        self.stamped = dict(stamped or {})
        self.fixed_partitions = partitions
        self.most_partitions = partitions or max_partitions(spark)
        self.partitions = partitions or 1  # resized to the data after every materialisation
        self.program = program
        self.network = network or Network()
        self.gc_plans = [RulePlan(g.as_rule(-1 - k), program, self.network.seed) for k, g in enumerate(gc or ())]
        self.collected = frozenset(plan.rule.head.name for plan in self.gc_plans)
        growing = growing_relations(program, frozenset(self.stamped), self.collected)
        self.carried = carried_relations(program, growing)
        self.differential = differential_rules(program, growing, self.collected)
        self.rule_order = self._rule_order()
        self._fixpoints: dict = {}  # stratum relations -> ArrowFixpoint or None
        self.partitioner = Partitioner(program, self.most_partitions, self._pivot_columns()) if policy else None
        self.layout = Layout(program.relations, self.partitioner)
        #: the message queues under a network capacity (spark/queues.py), else None
        self.queues = Queues(self.layout, self.network, program) \
            if self.network.capacity is not None and program.rules_of("async") else None
        self._inbox = None  # under a capacity, the tick's inbox (Queues.inbox_sql)
        self._subqueries = itertools.count(1)  # subquery names, unique to the run
        self.statement = Statement(self._subqueries)  # the subqueries of the tick being planned
        self.views = Views(spark)  # the tick's checkpoints as temporary views
        self._previous = None  # the previous pack's view, in a tick
        self._pack_views: dict = {}  # tick -> view of its pack, for atoms read @k
        #: count the Exchange operators of each tick's plans (TickStats.exchanges);
        #: off by default: it plans every materialised frame a second time
        self.count_exchanges = False
        self._exchanges: int | None = 0  # of the tick being run
        self._pack_partitions = None  # the partitions the previous pack was built in
        self._tick_partitions = None  # the partitions the tick being run started in
        self.codegen = Codegen(spark)
        self.input_rows = 0  # rows of the last materialised pack: a tick's size before it runs
        self.plans = {r.index: RulePlan(r, program, self.network.seed,
                                        self.partitioner is not None and self.partitioner.local(r))
                      for r in program.rules}
        self.facts_at = self._text_facts()
        frames = self._static_frames(edb or {})
        varying = {r.head.name for r in program.rules} | set(program.lattices)
        varying |= set(self.stamped) | {n for by in self.facts_at.values() for n in by}  # rows at some ticks only
        #: relations true at every tick that no rule derives and no fact or
        #: input adds to at some tick: materialised once, read from there,
        #: never copied into a tick's pack (see `full`)
        self.apart = {n for n in frames if n not in varying} if input_apart else set()
        self.input_pack, self.input_rows_apart = self._static_pack({n: f for n, f in frames.items() if n in self.apart})
        self.static_pack, static_rows = self._static_pack({n: f for n, f in frames.items() if n not in self.apart})
        self.static_names = set(frames)
        self._sized(self.input_rows_apart + static_rows)
        self.may_start = self._may_start()

    # ---------------------------------------------------------------- set-up
    def _frame(self, name: str, rows: list) -> DataFrame:
        """Rows as a frame: up to INLINE_ROWS an inline array in one partition
        (one SQL expression), more loaded from Arrow (`_loaded`). Neither uses
        an RDD: both work on Spark Connect."""
        if len(rows) > INLINE_ROWS:
            return self._loaded(self.layout.schemas[name], rows)
        return self.spark.sql(self._rows_sql(name, rows))

    def _rows_sql(self, name: str, rows: list) -> str:
        """SQL: up to INLINE_ROWS rows of `name` (columns c0..)."""
        return self._inline_sql(self.layout.schemas[name], rows) if rows else self._empty(name)

    @staticmethod
    def _inline_sql(schema: StructType, rows: list) -> str:
        """SQL: rows as a literal array in one partition."""
        structs = ", ".join(
            "struct(" + ", ".join(f"CAST({sql_literal(v)} AS {f.dataType.simpleString()}) AS {f.name}"
                                  for v, f in zip(row, schema.fields)) + ")" for row in rows)
        return f"SELECT inline(array({structs})) FROM range(0, 1, 1, 1)"

    def _loaded(self, schema: StructType, rows: list) -> DataFrame:
        """Rows as a frame built from an Arrow table: its size does not grow the
        plan's expressions."""
        columns = list(zip(*rows))
        arrays = [pa.array(values, _ARROW_TYPES.get(type(f.dataType), pa.string()))
                  for values, f in zip(columns, schema.fields)]
        return self.spark.createDataFrame(pa.Table.from_arrays(arrays, names=schema.fieldNames()), schema)

    def _empty(self, name: str, bucket: bool = False) -> str:
        """SQL: no rows of `name`, as the optimiser recognises and prunes; with
        `bucket`, with the partition column if the loop has one."""
        columns = [f"CAST(NULL AS {f.dataType.simpleString()}) AS {f.name}" for f in self.layout.schemas[name].fields]
        columns += [f"CAST(NULL AS INT) AS {c}" for c in (self.layout.bucket if bucket else [])]
        return f"SELECT {', '.join(columns)} FROM range(0, 1, 1, 1) WHERE false"

    def _text_facts(self) -> dict:
        """The program's facts stamped with a tick, {tick: {relation: rows}};
        a relation with more than INLINE_ROWS of them is loaded once into
        `self.stamped` instead (a frame with a `tick` column, like a stamped
        `.input`) and left out."""
        by_relation: dict = {}
        for fact in self.program.facts:
            if fact.tick is not None:
                by_relation.setdefault(fact.atom.name, set()).add((*fact.row, fact.tick))
        facts_at: dict = {}
        for name, rows in by_relation.items():
            if len(rows) > INLINE_ROWS:
                schema = StructType(self.layout.schemas[name].fields + [StructField(TICK, LongType(), False)])
                frame = self._loaded(schema, sorted(rows)).localCheckpoint(eager=False)
                ticks = {row[-1] for row in rows}
                if name in self.stamped:
                    frame = self.stamped[name][0].unionAll(frame)
                    ticks |= self.stamped[name][1]
                self.stamped[name] = (frame, ticks)
                continue
            for *row, tick in rows:
                facts_at.setdefault(tick, {}).setdefault(name, []).append(tuple(row))
        return facts_at

    def _static_frames(self, edb: dict) -> dict:
        rows: dict = {}
        for fact in self.program.facts:
            if fact.tick is None:
                rows.setdefault(fact.atom.name, []).append(fact.row)
        frames = {name: self._frame(name, sorted(set(r))) for name, r in rows.items()}
        for name, frame in edb.items():
            if name not in self.program.relations:
                raise InputError(f"EDB given for unknown relation '{name}'")
            typed = frame.toDF(*self.layout.schemas[name].fieldNames()) if not isinstance(frame, list) \
                else self._frame(name, [tuple(r) for r in frame])
            typed = typed.select(*[F.col(f.name).cast(f.dataType) for f in self.layout.schemas[name].fields])
            frames[name] = frames[name].unionAll(typed) if name in frames else typed
        if CRASH in self.program.relations and self.network.crashes:
            frames[CRASH] = self._crash_frame(frames)
        return frames

    def _crash_frame(self, frames: dict) -> DataFrame:
        """`crash(L, N, T)` at every location L of the run (`Network.crash_rows`):
        those of the program's facts and of the failure model in Python, those
        of the EDB and stamped input rows by Spark, never collected."""
        known = self._frame(CRASH, sorted(self.network.crash_rows(self.program, ())))
        located_frames = [*frames.items(), *((name, stamped) for name, (stamped, _) in self.stamped.items())]
        inputs = [f.selectExpr(f"{spark_string_sql('c0', self.program.relations[name].types[0])} AS c0")
                  for name, f in located_frames if name != CRASH]
        if not inputs:
            return known
        fields = self.layout.schemas[CRASH].fields[1:]
        crashes = self.spark.sql(self._inline_sql(StructType(fields), sorted(self.network.crashes.items())))
        located = reduce(DataFrame.unionAll, inputs).distinct().crossJoin(crashes)
        return known.unionAll(located).distinct()

    def _static_pack(self, frames: dict) -> tuple[DataFrame | None, int]:
        """Facts true at every tick, packed and materialised once (one job), and
        their rows (a replicated relation's counted once). As a tick's start,
        they may hold a fact twice (an input's repeated row): rules read
        relations as sets, and a pack, or `full`, holds each fact once."""
        if not frames:
            return None, 0
        pack = self._union([self.layout.part_sql(n, STATE, self._name(self._bucketed(n, self.views.of(f))))
                            for n, f in frames.items()])
        if self.partitioner is not None:
            pack = f"SELECT /*+ REPARTITION({self.most_partitions}, {PARTITION_COLUMN}) */ * FROM {self._name(pack)}"
        elif self.partitions > 1:
            pack = f"SELECT /*+ REPARTITION({self.partitions}) */ * FROM {self._name(pack)}"
        pack, (_, rows) = self._materialised(pack, self.layout.home_copy())
        self._end_statement()
        return pack, rows

    def _facts_pack(self, tick: int) -> str | None:
        """SQL: the facts stamped with `tick` (the program's and the inputs'), packed."""
        parts = [self.layout.part_sql(n, STATE, self._name(self._bucketed(n, self._rows_sql(n, r))))
                 for n, r in self.facts_at.get(tick, {}).items()]
        for name, (frame, ticks) in self.stamped.items():
            if tick in ticks:
                columns = ", ".join(self.layout.schemas[name].fieldNames())
                rows = f"SELECT {columns} FROM {self.views.of(frame)} WHERE {TICK} = {tick}"
                parts.append(self.layout.part_sql(name, STATE, self._name(self._bucketed(name, rows))))
        if not parts:
            return None
        if self.partitioner is None or self.partitions == 1:
            return self._union(parts)
        # moved to their buckets once, for every plan of the tick that reads them
        return self._cut(self._spread(self._union(parts)))

    def _may_start(self) -> set:
        """Relations that can have facts at the start of a tick."""
        names = {f.atom.name for f in self.program.facts}
        names |= {r.head.name for r in self.program.rules if r.delivery != "now"}
        names |= set(self.stamped) | self.carried
        return names | self.static_names

    def _rule_order(self) -> dict:
        """Per stratum, the relations in dependency order (for non-recursive strata)."""
        edges = [e for e in dependency_graph(self.program.rules) if e.time == "now"]
        order = list(reversed(strongly_connected(list(self.program.relations), edges)))
        rank = {rel: i for i, comp in enumerate(order) for rel in comp}
        self.component = rank  # relation -> its same-tick component, in dependency order
        out = {}
        for stratum in self.program.strata:
            rules = [self.program.rules[i] for i in stratum.rules]
            out[stratum.index] = sorted(rules, key=lambda r: rank[r.head.name])
        return out

    # ---------------------------------------------------------------- one tick
    def run_tick(self, tick: int, previous: DataFrame | None, state: LoopState) -> DataFrame:
        """Tick `tick`'s pack from the previous one (None at the first tick),
        materialised; its TickStats appended to `state.stats`. Compiled or
        interpreted by the size of the last pack (spark/codegen.py)."""
        with self.codegen.tick(self.input_rows):
            try:
                return self._tick(tick, previous, state)
            finally:
                self._end_statement()

    def _tick(self, tick: int, previous: DataFrame | None, state: LoopState) -> DataFrame:
        started = time.perf_counter()
        self._exchanges = 0 if self.count_exchanges else None
        self._pack_views = {}
        start, current, news = self._start(tick, previous)
        stratum_packs = []
        settled = []  # the Arrow fixpoint's facts: materialised, and new (see _recursive)
        iterations = 0
        for stratum in self.program.strata:
            rules = self.rule_order[stratum.index]
            names = sorted({r.head.name for r in rules})
            news_before = dict(news or {})
            if stratum.recursive:
                with self.names.scope("stratum", stratum.index):
                    found, rounds, arrow_only = self._recursive(rules, names, current, news, tick, state)
                iterations += rounds
                parts = [self.layout.part_sql(n, STATE, self._name(found[n])) for n in names]
                if arrow_only:  # materialised already: no checkpoint, and no distinct in the pack
                    settled.append(self.layout.home_copies_sql(self._name(self._union(parts))))
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
                    current[name] = self._union([current[name], derived])
                    if news is not None and name in news:
                        news[name] = self._union([news[name], derived])
                    parts.append(self.layout.part_sql(name, STATE, self._name(derived)))
            if not parts:
                continue
            # Cut the plan here: later strata read a checkpoint leaf instead of
            # re-embedding this stratum's plan at every use. Lazy: it is computed
            # by the tick's one job, not by a job of its own.
            derived_pack = self._cut(self._union(parts))
            stratum_packs.append(derived_pack)
            for n in names:
                base = self.layout.read_sql(start, n) if start is not None and n in self.may_start \
                    and n not in self.program.lattices else None
                fresh = self.layout.read_sql(derived_pack, n)
                current[n] = fresh if base is None else self._union([base, fresh])
                if n in news_before:
                    news[n] = self._union([news_before[n], fresh])
        pack, (facts, persisted, collected) = self._pack(tick, start, stratum_packs, settled, current, state)
        incremental = len(self.differential) if news is not None else 0  # each is derived once a tick
        state.stats.append(TickStats(tick, time.perf_counter() - started, iterations, facts, incremental,
                                     persisted - collected, collected, self._exchanges, self.codegen.compiled))
        return pack

    def _start(self, tick: int, previous: DataFrame | None) -> tuple[str | None, dict, dict | None]:
        """The tick's starting facts as one pack (static facts, facts @tick,
        facts derived by @next, messages arriving now, the carried relations'
        final state of the previous tick: five branches whatever the number of
        relations, and one per collected relation: its final state less its
        garbage), cut by a lazy checkpoint (a view); a relation's SQL reading
        it; and the carried relations' new facts (all but those of the
        previous tick; None at the first tick)."""
        self._previous = self.views.of(previous) if previous is not None else None
        arriving = [p for p in (self._facts_pack(tick),) if p is not None]
        self._inbox = None
        if previous is not None:
            arriving.append(self.layout.relabel_sql(self._previous, f"__kind = '{NEXT}'"))
            if self.queues is None:
                arriving.append(self.layout.relabel_sql(self._previous, f"__kind = '{MESSAGE}' AND __arrival = {tick}"))
            else:  # the messages the nodes take in (spark/queues.py)
                self._inbox = self._cut(self.queues.inbox_sql(self._previous, tick))
                arriving.append(self.layout.relabel_sql(self._inbox, "__take"))
        sources = ([self.views.of(self.static_pack)] if self.static_pack is not None else []) + arriving
        if previous is not None and self.carried:
            # identity @next rules are not evaluated: the carried relations'
            # final state of the previous tick is read directly
            names = ", ".join(f"'{n}'" for n in sorted(self.carried - self.collected))
            if names:
                sources.append(self.layout.relabel_sql(self._previous, f"__kind = '{STATE}' AND __rel IN ({names})"))
            sources += [self.layout.part_sql(n, STATE, self._name(self._surviving(n))) for n in sorted(self.collected)]
        start = self._cut(self._union(sources)) if sources else None
        self._tick_partitions = self.partitions
        if previous is not None and self.partitioner is not None and self._pack_partitions != self.partitions:
            start = self._name(self._spread(start))  # the previous pack is not in this tick's partitions
        current = Frames(lambda name: self._read_apart(name) if name in self.apart
                         else self.layout.read_sql(start, name) if start is not None and name in self.may_start
                         else self._empty(name, bucket=True))
        news = None
        if previous is not None:
            new_pack = self._name(self._union(arriving))
            news = {name: self.layout.read_sql(new_pack, name) for name in self.carried}
        return start, current, news

    def _without_lattices(self, start: str) -> str:
        """SQL: the tick's start less the rows of lattices (checks/lattices.py):
        their strata found each one whole, the best row of every group."""
        if not self.program.lattices:
            return start
        names = ", ".join(f"'{n}'" for n in sorted(self.program.lattices))
        return self._narrow(f"SELECT * FROM {self._name(start)} WHERE __rel NOT IN ({names})")

    def _read_apart(self, name: str) -> str:
        """SQL: relation `name`, which no rule derives, read from the inputs kept apart."""
        return self.layout.read_sql(self.views.of(self.input_pack), name)

    def full(self, pack: DataFrame) -> DataFrame:
        """A tick's pack with the relations kept apart (`apart`): every fact of
        the tick, once (the distinct is planned, computed by who reads)."""
        return pack if self.input_pack is None else \
            pack.unionAll(self.input_pack.where(self.layout.home_copy()).distinct())

    def _surviving(self, name: str) -> str:
        """SQL: collected relation `name`'s final state in the previous pack less its garbage."""
        final = self._name(self.layout.read_sql(self._previous, name))
        garbage = self._name(self.layout.read_sql(self._previous, name, GARBAGE))
        return self._narrow(self._joined(final, garbage, "LEFT ANTI", self._columns(name)))

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
                    return self._empty(atom.name, bucket=True)
                if atom.name in self.apart:
                    return self._read_apart(atom.name)
                if k not in self._pack_views:
                    self._pack_views[k] = self.views.of(state.packs[k])
                return self.layout.read_sql(self._pack_views[k], atom.name, STATE)
            return current[atom.name]
        return read

    def _evaluate(self, plan: RulePlan, read, tick: int) -> str:
        """SQL: what `plan` derives at this tick, its relations read by `read`."""
        return plan.evaluate(self.statement, read, tick, self._narrow)

    def _derive(self, rule, current: dict, news: dict | None, tick: int, state: LoopState) -> str | None:
        """SQL: what `rule` derives at this tick. A differential rule (see
        analysis/growth.py) after the first tick is evaluated once per positive
        atom over a carried relation, that atom reading the relation's new facts
        (`news`): None when no atom can have any."""
        plan = self.plans[rule.index]
        if news is None or rule.index not in self.differential:
            return self._placed(rule, self._evaluate(plan, self._reader(current, tick, state), tick))
        derived = [self._placed(rule, self._evaluate(plan, self._reader(current, tick, state, delta=(i, news)), tick))
                   for i, atom in enumerate(plan.positive) if atom.name in news]
        return self._union(derived) if derived else None

    def _recursive(self, rules, names: list, current: dict, news: dict | None, tick: int,
                   state: LoopState) -> tuple[dict, int, bool]:
        """A recursive stratum, semi-naive: its relations' new facts (not in
        `current` before), the number of iterations (jobs), and whether the
        Arrow fixpoint found them all. With the Arrow fixpoint allowed, the
        stratum runs component by component in dependency order, each component
        the Arrow fixpoint takes (spark/fixpoint.py) costing one job, the
        others the general loop."""
        if not self._arrow_allowed(rules, news):
            return *self._loop(rules, names, current, news, tick, state), False
        current = current.updated({})
        found, iterations, arrow_only = {}, 0, True
        for group in self._components(rules):
            group_names = sorted({r.head.name for r in group})
            arrow = self._arrow_fixpoint(group, group_names)
            if arrow is not None:
                buckets = 4 * self.most_partitions if arrow.partitioned else 1
                reads = {n: self._frame_of(current[n]) for n in arrow.reads}
                with self.codegen.compiling():
                    frames, rows = arrow.frames(reads, buckets, self.most_partitions)
                self._sized(rows)  # the rest of the tick sized to what the recursion found,
                self.codegen.grow(rows)  # its code compiled if that is large
                new = {n: self.views.of(f) for n, f in frames.items()}
                if self.partitioner is not None:  # the facts into their buckets
                    new = {n: self._spread(self.partitioner.place_sql(n, v)) for n, v in new.items()}
            else:
                new, rounds = self._loop(group, group_names, current, news, tick, state)
                iterations += rounds
                arrow_only = False
            for n in group_names:
                found[n] = new[n]
                current[n] = self._grown(n, current[n], new[n])
        return found, iterations, arrow_only

    def _components(self, rules) -> list:
        """A recursive stratum's rules (in dependency order) grouped by the
        same-tick component of their heads, in dependency order."""
        components: dict = {}
        for rule in rules:
            components.setdefault(self.component[rule.head.name], []).append(rule)
        return list(components.values())

    def _pivot_columns(self) -> dict:
        """{relation: column} for the relations the Arrow fixpoint solves with
        located rules and a pivot finer than the location (the closure's
        `path(L, X, Z)`: L and Z): the first pivot column after the location,
        which the partitioner buckets them by with it, so that a program at one
        location spreads them over every partition (not one). Their rules are
        then not partition-local: in a tick of several partitions, the general
        loop (semi-naive across ticks, `spark.sparkdedalus.fixpoint=loop`)
        shuffles what they derive."""
        if self.spark.conf.get(SETTING, ARROW) != ARROW:
            return {}
        columns = {}
        for stratum in self.program.strata:
            if not stratum.recursive:
                continue
            for group in self._components(self.rule_order[stratum.index]):
                names = sorted({r.head.name for r in group})
                arrow = self._arrow_fixpoint(group, names)
                if arrow is None or not arrow.located or arrow.by_location:
                    continue
                columns.update({n: arrow.pivot[n][1] for n in names if len(arrow.pivot[n]) > 1})
        return columns

    def _grown(self, name: str, before: str, found: str) -> str:
        """SQL: relation `name` after its recursion `found` more of it: the
        two together, or for a lattice (checks/lattices.py) what was found,
        which is the whole relation."""
        return found if name in self.program.lattices else self._union([before, found])

    def _loop(self, rules, names: list, current: dict, news: dict | None, tick: int,
              state: LoopState) -> tuple[dict, int]:
        """The general semi-naive loop of a recursive stratum (or component):
        one job per iteration. Returns the new facts of each relation, and for
        a lattice (checks/lattices.py) the whole relation: the best row of each
        group among those it starts with and those the loop finds."""
        lattices = {n: self.program.lattices[n] for n in names if n in self.program.lattices}
        current = current.updated({n: self._best(lattice, current[n]) for n, lattice in lattices.items()})
        derived: dict = {n: [] for n in names}
        for rule in rules:
            sql = self._derive(rule, current, news, tick, state)
            if sql is not None:
                derived[rule.head.name].append(sql)
        self.names.step("iteration", 1)
        (deltas,), count = self._materialise({n: self._new_facts(n, derived[n], current[n]) for n in names})
        found = {n: [deltas[n]] for n in names}
        accumulated = {n: [current[n], deltas[n]] for n in names}
        iterations = 1
        while count:
            full = current.updated({n: self._union(accumulated[n]) for n in names})
            new: dict = {n: [] for n in names}
            for rule in rules:
                plan = self.plans[rule.index]
                for occurrence, atom in enumerate(plan.positive):
                    if atom.name in names and reads_current_tick(atom, tick):
                        read = self._reader(full, tick, state, delta=(occurrence, deltas))
                        new[rule.head.name].append(self._placed(rule, self._evaluate(plan, read, tick)))
            self.names.step("iteration", iterations + 1)
            (deltas,), count = self._materialise({n: self._new_facts(n, new[n], full[n]) for n in names})
            iterations += 1
            for n in names:
                found[n].append(deltas[n])
                accumulated[n].append(deltas[n])
            if len(found[names[0]]) >= COMPACT_EVERY:
                (whole, news_so_far), _ = self._materialise(
                    {n: self._union(accumulated[n]) for n in names}, {n: self._union(found[n]) for n in names})
                accumulated = {n: [whole[n]] for n in names}
                found = {n: [news_so_far[n]] for n in names}
        return {n: self._best(lattices[n], self._union([current[n], *found[n]])) if n in lattices
                else self._union(found[n]) for n in names}, iterations

    def _arrow_allowed(self, rules, news: dict | None) -> bool:
        """Whether the session allows the Arrow fixpoint (`spark.sparkdedalus.fixpoint`)
        and the stratum's rules do not run on new facts only this tick (semi-naive
        across ticks keeps the general loop)."""
        return self.spark.conf.get(SETTING, ARROW) == ARROW and (
            news is None or not any(r.index in self.differential for r in rules))

    def _arrow_fixpoint(self, rules, names: list) -> ArrowFixpoint | None:
        """A component compiled for the Arrow fixpoint, or None when a rule
        needs more than joins (compiled once)."""
        key = tuple(names)
        if key not in self._fixpoints:
            self._fixpoints[key] = ArrowFixpoint.compile(rules, names, self.program)
        return self._fixpoints[key]

    def _new_facts(self, name: str, derived: list, known: str) -> str:
        """SQL: the distinct rows of `derived` not in `known`; for a lattice,
        the best row of each group of `derived` that improves on `known`'s."""
        candidates = self._union(derived) if derived else self._empty(name, bucket=True)
        lattice = self.program.lattices.get(name)
        if lattice is not None:
            return self._improved(lattice, self._best(lattice, candidates), known)
        unique = self._name(f"SELECT DISTINCT * FROM {self._name(candidates)}")
        return self._narrow(self._joined(unique, self._name(known), "LEFT ANTI", self._columns(name)))

    def _lattice_columns(self, lattice) -> tuple[list[str], str]:
        """A lattice frame's group columns (the partition column among them)
        and its value column."""
        columns = self._columns(lattice.relation)
        value = columns[lattice.position]
        return [c for c in columns if c != value], value

    def _best(self, lattice, sql: str) -> str:
        """SQL: the best row of each group of `sql`, a lattice's rows."""
        keys, value = self._lattice_columns(lattice)
        columns = ", ".join(f"{lattice.func}(`{c}`) AS `{c}`" if c == value else f"`{c}`"
                            for c in self._columns(lattice.relation))
        return self._narrow(f"SELECT {columns} FROM {self._name(sql)} GROUP BY {', '.join(f'`{k}`' for k in keys)}")

    def _improved(self, lattice, candidates: str, known: str) -> str:
        """SQL: the rows of `candidates` (one a group) better than every row of
        their group in `known`, or of a group `known` lacks."""
        keys, value = self._lattice_columns(lattice)
        as_good = "<=" if lattice.func == "min" else ">="
        on = " AND ".join([f"c.`{k}` = k.`{k}`" for k in keys] + [f"k.`{value}` {as_good} c.`{value}`"])
        return self._narrow(f"SELECT /*+ {JOIN_HINT}(k) */ c.* FROM {self._name(candidates)} c"
                            f" LEFT ANTI JOIN {self._name(known)} k ON {on}")

    def _materialise(self, *groups: dict) -> tuple[list, int]:
        """Checkpoint the relations of one or two groups ({relation: SQL}) with
        one job; returns per group the SQL reading each from the checkpoint (a
        view), and the number of rows."""
        kinds = (STATE, NEXT)  # a group's rows carry its own kind in the pack
        pack, rows = self._checkpoint(self._union([self.layout.part_sql(n, kind, self._name(sql))
                                                   for kind, group in zip(kinds, groups)
                                                   for n, sql in group.items()]))
        self.codegen.grow(rows)  # the rest of a tick whose recursion grows large: compiled
        view = self.views.of(pack)
        found = [{n: self.layout.read_sql(view, n, kind) for n in group} for kind, group in zip(kinds, groups)]
        return found, rows

    # ---------------------------------------------------------------- SQL building
    def _name(self, sql: str) -> str:
        """The name (a subquery's or a view's) of the relation `sql`."""
        return self.statement.name(sql)

    def _frame_of(self, sql: str) -> DataFrame:
        """The relation `sql` as a DataFrame: one `spark.sql`."""
        return self.spark.sql(self.statement.render(f"SELECT * FROM {self._name(sql)}"))

    def _cut(self, sql: str) -> str:
        """The relation `sql` behind a lazy local checkpoint (a view): readers
        see a leaf instead of its plan, computed by the first job that needs it."""
        return self.views.of(self._counted(self._frame_of(sql)).localCheckpoint(eager=False))

    def _end_statement(self) -> None:
        """Forget the tick's subqueries and drop its views (its packs are materialised)."""
        self.views.drop()
        self.statement = Statement(self._subqueries)

    def _columns(self, name: str) -> list[str]:
        """A relation frame's columns: c0..cn-1, and the partition column if any."""
        return self.layout.schemas[name].fieldNames() + self.layout.bucket

    @staticmethod
    def _joined(left: str, right: str, how: str, keys: list[str]) -> str:
        """SQL: `left` joined (`how`: LEFT ANTI, ...) with `right` on `keys`, a merge join."""
        return (f"SELECT /*+ {JOIN_HINT}(r) */ * FROM {left} l {how} JOIN {right} r"
                f" USING ({', '.join(f'`{k}`' for k in keys)})")

    # ---------------------------------------------------------------- partitioning
    def _narrow(self, sql: str) -> str:
        """SQL: `sql` kept in one partition when the loop runs in one, so that
        no join or aggregate shuffles: a union adds up its inputs' partitions,
        and a join's output no longer tells the planner it is in one partition.
        The limit (never reached) bounds the planner's size estimate, which
        multiplies at every join: above `spark.sql.maxSinglePartitionBytes` the
        planner shuffles single partitions anyway."""
        if self.partitions != 1:
            return sql
        return f"SELECT /*+ COALESCE(1) */ * FROM {self._name(sql)} LIMIT {SIZE_BOUND}"

    def _union(self, relations: list[str]) -> str:
        return self._narrow(" UNION ALL ".join(f"SELECT * FROM {self._name(r)}" for r in relations))

    def _spread(self, sql: str) -> str:
        """SQL: `sql` (with the partition column) hash-partitioned by it into the
        loop's partitions: a shuffle, unless the loop runs in one."""
        if self.partitions > 1:
            return f"SELECT /*+ REPARTITION({self.partitions}, {PARTITION_COLUMN}) */ * FROM {self._name(sql)}"
        return self._narrow(sql)

    def _bucketed(self, name: str, sql: str) -> str:
        """SQL: new facts of relation `name` with their buckets, when the loop has a partitioner."""
        return sql if self.partitioner is None else self.partitioner.place_sql(name, self._name(sql))

    def _placed(self, rule, sql: str, spread: bool = True) -> str:
        """SQL: what `rule` derives, with the partition column when the loop has
        one: a `local` plan's facts stay in their bucket, the others' are put in
        theirs (and, with `spread`, moved there)."""
        if self.partitioner is None:
            return sql
        if self.plans[rule.index].partitioned and rule.delivery != "async":
            return self.partitioner.settle_sql(rule, self._name(sql))
        placed = self._bucketed(rule.head.name, sql)
        return self._spread(placed) if spread else placed

    def _counted(self, frame: DataFrame) -> DataFrame:
        """`frame`, its plan's exchanges added to the tick's when counted."""
        if not self.count_exchanges:
            return frame
        found = exchanges(frame)
        self._exchanges = None if found is None or self._exchanges is None else self._exchanges + found
        return frame

    def _checkpoint(self, sql: str) -> tuple[DataFrame, int]:
        """The relation `sql` materialised and counted with one job (a lazy
        local checkpoint is computed by the first job that reads it: here the
        count); the loop's partitions are then resized to the data (with a
        partitioner: one, or all it has buckets for)."""
        checkpoint, (rows,) = self._materialised(sql)
        return checkpoint, rows

    def _materialised(self, sql: str, *conditions: str) -> tuple[DataFrame, tuple]:
        """As `_checkpoint`, counting in the same job the rows and the rows
        meeting each SQL condition."""
        checkpoint = self._counted(self._frame_of(sql)).localCheckpoint(eager=False)
        if conditions:
            counts = tuple(checkpoint.agg(F.count(F.lit(1)), *[F.count(F.when(F.expr(c), 1))
                                                               for c in conditions]).first())
        else:
            counts = (checkpoint.count(),)
        self._sized(counts[0])
        return checkpoint, counts

    def _sized(self, rows: int) -> None:
        """The loop sized to a materialisation of `rows` rows: the partitions of
        the next plans (with a partitioner: one, or all it has buckets for)."""
        self.input_rows = rows
        if self.fixed_partitions is None:
            self.partitions = partitions_for(rows, self.most_partitions)
            if self.partitioner is not None and self.partitions > 1:
                self.partitions = self.most_partitions

    def _sent(self, name: str, messages: str, tick: int, sent: str) -> str:
        """SQL: the messages of relation `name` (its columns and `__src`)
        leaving their senders at `tick`, as MESSAGE rows: `sent` the SQL of
        their send tick column, their arrival the network's."""
        row = list(zip(self.layout.schemas[name].fieldNames(), self.program.relations[name].types))
        arrival = arrival_sql(self.network, name, row, SOURCE_COLUMN, tick)
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
        taken = self._name(self.queues.taken_sql(self._inbox) if self._inbox is not None
                           else "SELECT CAST(NULL AS STRING) AS __node, CAST(0 AS BIGINT) AS __r FROM range(0, 1, 1, 1) WHERE false")
        distinct = self._name(f"SELECT DISTINCT * FROM {self._name(self._union(outbox))}")
        ranked = self._name(self._narrow(self.queues.outbox_sql(distinct, taken)))
        parts.append(f"SELECT {columns} FROM {ranked} WHERE NOT __leave")
        for name in self.queues.relations:
            leaving = self.layout.read_sql(ranked, name, QUEUED, extra=("__sent", SOURCE_COLUMN))
            parts.append(self._sent(name, self._name(f"{leaving} AND __leave"), tick, "`__sent`"))
        return parts

    def _pack(self, tick: int, start: str | None, derived_parts: list, settled: list, current: dict,
              state: LoopState) -> tuple[DataFrame, tuple]:
        """Everything that crosses the tick boundary, materialised with one job:
        the final state (S), facts for the next tick (N), messages (M), the
        facts GC collects (G); and its rows, its S rows of persisted relations
        and its G rows. `settled` parts hold facts no other part has (the Arrow
        fixpoint's): they are left out of the pack's distinct."""
        parts = ([self._without_lattices(start)] if start is not None else []) + derived_parts
        moved = []  # facts leaving their bucket (messages, @next facts of non-local rules): one shuffle
        queued = []  # under a capacity, the messages derived at this tick (spark/queues.py)
        reader = self._reader(current, tick, state)
        for rule in self.program.rules:
            if rule.delivery == "now" or rule.persistence:
                continue
            derived = self._name(self._placed(rule, self._evaluate(self.plans[rule.index], reader, tick), spread=False))
            name = rule.head.name
            local = self.partitioner is not None and self.plans[rule.index].partitioned and rule.delivery == "next"
            if rule.delivery == "next":
                (parts if local else moved).append(self.layout.part_sql(name, NEXT, derived))
            elif self.queues is not None:
                queued.append(self.layout.part_sql(name, QUEUED, derived, sent=str(tick), source=f"`{SOURCE_COLUMN}`"))
            else:
                moved.append(self._sent(name, derived, tick, str(tick)))
        for plan in self.gc_plans:
            name = plan.rule.head.name
            garbage = self._bucketed(name, self._evaluate(plan, reader, tick))
            moved.append(self.layout.part_sql(name, GARBAGE, self._name(garbage)))
        if self.queues is not None:
            moved += self._queued(queued, tick)
        if moved:
            parts.append(self._spread(self._union(moved)) if self.partitioner is not None else self._union(moved))
        if self._previous is not None and self.queues is None:
            parts.append(f"SELECT * FROM {self._previous} WHERE __kind = '{MESSAGE}' AND __arrival > {tick}")
        if not parts:
            first = next(iter(self.layout.names))
            parts.append(self.layout.part_sql(first, STATE, self._name(self._empty(first, bucket=True))))
        pack = self._union(parts)
        moved_partitions = self.partitions != self._tick_partitions \
            or (self._previous is not None and self.partitions != self._pack_partitions)
        if self.partitioner is not None and self.partitions > 1 and moved_partitions:
            pack = self._spread(pack)  # parts read in other partitions
        self._pack_partitions = self.partitions
        persisted = ", ".join(f"'{n}'" for n in sorted(self.program.persisted)) or "NULL"
        pack = self.layout.distinct_sql(self._name(pack), self.partitions)
        if settled:  # in the loop's partitions already (_recursive)
            pack = self._union([pack, *settled])
        pack, (rows, persisted, collected) = self._materialised(
            pack, f"__kind = '{STATE}' AND __rel IN ({persisted})", f"__kind = '{GARBAGE}'")
        self._sized(rows + self.input_rows_apart)  # the next tick reads the inputs kept apart too
        return pack, (rows + self.input_rows_apart, persisted, collected)
