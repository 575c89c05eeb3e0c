"""Why-provenance as data on the Spark engine: every derivation of every fact of
ticks 1..N, one DataFrame (`Engine.run(..., provenance=True)` gives it as
`run.provenance`; docs/provenance.md).

A pass over the run's recorded states, after the run: the tick loop is not
changed. A rule's derivation is a binding of its body that holds on the final
state of the tick its body reads, so each rule is compiled once more
(`RulePlan.derivations`, the same SQL as the run's) and evaluated on each
tick's final state, from the packs the run keeps:

- `rule`: a deductive rule on the final state of t, recorded at t;
- `next`: an `@next` rule on the final state of t, recorded at t + 1 (a
  persistence rule's facts that GC collects at t excepted);
- `message`: an `@async` rule on the final state of the send tick t, joined
  with the messages of the pack of t that arrive (a lost one derives nothing),
  recorded at the arrival;
- leaves: `fact` (a fact of the program), `input` (`edb=` and `.input` rows),
  `crash` (a `crash` fact of the failure model), at each tick they hold.

Values are printed as `spark_string` prints them (`row`, `body[].row`,
`absent[].pattern`, NULL in a pattern for any value). An aggregate's fact has
one derivation per group, its body every fact of the group, sorted; an
`@async` aggregate one per binding that sent it (as the reference records).
The frame is a set: a derivation found twice is listed once.

    run = Engine(spark).run(program, ticks=3, provenance=True)
    run.provenance.where("relation = 'log' AND tick = 3").show(truncate=False)

Collecting it is one Spark SQL query over every tick (its plan grows with
ticks x rules): see docs/provenance.md for its cost.
"""

from __future__ import annotations

from functools import reduce

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import (ArrayType, IntegerType, LongType, StringType, StructField, StructType)

from sparkdedalus.derivations import Absent, Derivation, FactAt
from sparkdedalus.inputs import TICK
from sparkdedalus.network import Message
from sparkdedalus.pack.columns import GARBAGE, MESSAGE, SOURCE_COLUMN, SPARK_TYPES, STATE, relation_columns
from sparkdedalus.program import CRASH, Program
from sparkdedalus.spark.compiler import ABSENT, BODY, RulePlan
from sparkdedalus.spark.expressions import sql_literal
from sparkdedalus.spark.sizer import SIZE_BOUND, partitions_for
from sparkdedalus.spark.statement import Statement, Views
from sparkdedalus.syntax import ast
from sparkdedalus.values import convert, from_text
from udfs.registry import spark_string, spark_string_sql

_FACT = StructType([StructField("relation", StringType()), StructField("row", ArrayType(StringType())),
                    StructField("tick", LongType())])
_ABSENT = StructType([StructField("relation", StringType()), StructField("pattern", ArrayType(StringType())),
                      StructField("tick", LongType())])
_MESSAGE = StructType([StructField("sender", StringType()), StructField("send_tick", LongType()),
                       StructField("receiver", StringType()), StructField("arrival", LongType())])
#: the columns of `run.provenance`: the fact (relation, row, tick) and one derivation of it
SCHEMA = StructType([
    StructField("relation", StringType()), StructField("row", ArrayType(StringType())),
    StructField("tick", LongType()), StructField("kind", StringType()), StructField("rule", IntegerType()),
    StructField("pos", StringType()), StructField("body", ArrayType(_FACT)),
    StructField("absent", ArrayType(_ABSENT)), StructField("message", _MESSAGE)])
_COLUMNS = ", ".join(f"CAST({f.name} AS {f.dataType.simpleString()}) AS {f.name}" for f in SCHEMA.fields)
_NONE = ", ".join(f"CAST(NULL AS {f.dataType.simpleString()}) AS {f.name}" for f in SCHEMA.fields)
_KIND = {"now": "rule", "next": "next", "async": "message"}


def provenance(spark: SparkSession, program: Program, loop, state, ticks: int,
               static: dict, stamped: dict) -> DataFrame:
    """The derivations of a run of ticks 1..`ticks` (columns `SCHEMA`), from
    its `loop` (a `TickLoop`, spark/loop.py), its `state` (a `LoopState`, every tick's pack
    kept) and the inputs it read (`static`, `stamped`: as `Engine.run` gives
    them the loop). Builds plans only: no Spark job. Where every tick of the
    run fitted in one partition, so does every join of the pass. `spark` may be
    the driver's session (a DuckSession, spark/duck/) with its loop and packs:
    the same texts run there."""
    views = Views(spark)
    try:
        named = {t: views.of(loop.full(state.packs[t])) for t in range(1, ticks + 1)}  # every fact of t
        plans = [RulePlan(rule, program, loop.plan.network.seed) for rule in program.rules]
        largest = max(s.facts for s in state.stats)
        one = loop.sizer.fixed_partitions in (None, 1) and partitions_for(largest, loop.sizer.most_partitions) == 1
        derived = [spark.sql(_tick_sql(program, loop, plans, named, t, ticks, one)) for t in range(1, ticks + 1)]
        leaves = _leaves(spark, program, loop, state, ticks, static, stamped)
        return _union(leaves + derived).distinct()
    finally:
        views.drop()  # the frames keep the packs they read


def _union(frames: list):
    """The frames' rows, by position, as UNION ALL (a Spark DataFrame or a driver frame)."""
    return reduce(lambda a, b: a.unionAll(b), frames)


def instances(spark: SparkSession, program: Program, loop, packs: dict, ticks: int) -> DataFrame:
    """Every instance of every rule but the aggregates on the facts of `packs`
    ({tick: pack} for ticks 1..`ticks`, e.g. the packs of several runs of
    `program` together, `loop` one of their `TickLoop`s): a binding of its
    body atoms to facts whose comparisons hold, its negated atoms and its
    `choose` aside (they are the derivation's `absent` atoms whether a fact
    matches them or not), within ticks 1..`ticks`; an `@async` one a message
    arriving at the next tick. Columns `SCHEMA`: the reference's
    `reference.why.joined`, for LDFI on Spark (spark/ldfi.py). Builds plans
    only: no Spark job."""
    views = Views(spark)
    try:
        named = {t: views.of(pack) for t, pack in packs.items()}
        plans = [RulePlan(rule, program, loop.plan.network.seed) for rule in program.rules if not rule.is_aggregate]
        found = [spark.sql(_tick_sql(program, loop, plans, named, t, ticks, False, every=True))
                 for t in range(1, ticks + 1)]
        return _union(found).distinct()
    finally:
        views.drop()


def read_back(program: Program, record) -> tuple:
    """A row of `run.provenance` (or of `instances`) as the reference records
    it: (FactAt, Derivation), values read back by their columns' types (a
    negated atom's constant as written). `record`: a Spark Row or a driver
    frame's dict, read by field name."""
    fact = _fact(program, record)
    if record["rule"] is None:
        return fact, Derivation(record["kind"], record["pos"])
    rule = program.rules[record["rule"]]
    absent = tuple(Absent(a["relation"], tuple(arg.value if isinstance(arg, ast.Const) else value for arg, value in
                                               zip(atom.args, _values(a["pattern"],
                                                                      program.relations[a["relation"]].types))),
                          a["tick"]) for atom, a in zip(rule.negated_atoms, record["absent"]))
    message = None
    if record["message"] is not None:
        m = record["message"]
        sender = rule.positive_atoms[0].args[0]
        src = sender.value if isinstance(sender, ast.Const) else \
            from_text(m["sender"], program.relations[rule.positive_atoms[0].name].types[0])
        message = Message(record["relation"], fact.row, src, m["send_tick"], m["arrival"])
    return fact, Derivation(record["kind"], record["pos"], record["rule"],
                            tuple(_fact(program, f) for f in record["body"]), absent, message)


class Collected:
    """A run with provenance (`Engine.run(..., provenance=True)`) collected to
    the driver and read as a reference trace is: `program`, `at(tick)`
    ({relation: frozenset of rows}, every relation), `messages` (`Message`s
    sent, arrival None when lost) and `provenance.derivations(relation, row,
    tick)` (the reference's records, `read_back`); and `packs` ({tick: every
    fact of the tick}) and `loop`, the run's. Three jobs. What `reference.why`
    and LDFI's lineage (spark/ldfi.py) read.

        trace = Collected(Engine(spark).run(program, ticks=3, provenance=True))
        why(trace, "log", ("c", "hi"), 3)     # reference/why.py: the shell's why --engine spark
    """

    def __init__(self, run):
        self.program, self.provenance = run.program, self
        #: the tick loop of the run's packs: the driver's or Spark's (`run.driver.loop.loop_of`)
        self.loop = run.driver.loop.loop_of(run.driver.packs[run.ticks])
        self.packs = {t: self.loop.full(run.driver.packs[t]) for t in range(1, run.ticks + 1)}
        layout, relations = self.loop.layout, self.program.relations
        self.facts = {t: {name: set() for name in relations} for t in self.packs}
        self.messages = []
        columns = ", ".join(["__rel", "__kind", "__sent", "__arrival", SOURCE_COLUMN, *layout.value_columns])
        every = _union([pack.selectExpr(f"{t}L AS __tick", *columns.split(", "))
                        .where(f"__kind IN ('{STATE}', '{MESSAGE}')") for t, pack in self.packs.items()])
        for row in every.collect():
            name, values = row["__rel"], layout.row_of(row["__rel"], row)
            if row["__kind"] == STATE:
                self.facts[row["__tick"]][name].add(values)
            elif row["__sent"] == row["__tick"]:  # a message is in the pack of its send tick
                src = from_text(row[SOURCE_COLUMN], relations[name].types[0])
                self.messages.append(Message(name, values, src, row["__sent"], row["__arrival"]))
        self.found: dict = {}
        for record in run.derivation_rows():
            fact, derivation = read_back(self.program, record)
            self.found.setdefault((fact.relation, fact.row, fact.tick), []).append(derivation)

    def at(self, tick: int) -> dict:
        return {name: frozenset(rows) for name, rows in self.facts[tick].items()}

    def derivations(self, relation: str, row: tuple, tick: int) -> list:
        return self.found.get((relation, row, tick), [])


def _values(texts, types) -> tuple:
    return tuple(None if t is None else from_text(t, typ) for t, typ in zip(texts, types))


def _fact(program: Program, fact) -> FactAt:
    return FactAt(fact["relation"], _values(fact["row"], program.relations[fact["relation"]].types), fact["tick"])


def _tick_sql(program: Program, loop, plans: list, named: dict, tick: int, ticks: int, one: bool,
              every: bool = False) -> str:
    """SQL: the derivations that the rules' bindings on the final state of
    `tick` give (`@next` ones only before the last tick); with `one`, each
    join kept in one partition; with `every`, every rule instance (see
    `instances`)."""
    statement, layout, view = Statement(), loop.layout, named[tick]

    def read(atom, occurrence):
        at = ast.read_tick(atom, tick)
        if at not in named or at > tick:
            return f"SELECT * FROM ({layout.read_sql(view, atom.name)}) WHERE false"
        return layout.read_sql(named[at], atom.name)

    def narrow(sql: str) -> str:  # as the loop's one-partition ticks: no join shuffles
        return f"SELECT /*+ COALESCE(1) */ * FROM {statement.name(sql)} LIMIT {SIZE_BOUND}" if one else sql

    parts = [_rule_sql(program, loop, plan, statement, read, narrow, view, tick, ticks, every)
             for plan in plans if plan.rule.delivery == "now" or tick < ticks or plan.rule.delivery == "async"
             and not every]
    if not parts:
        return f"SELECT {_NONE} FROM range(0, 1, 1, 1) WHERE false"
    union = " UNION ALL ".join(f"SELECT {_COLUMNS} FROM ({part})" for part in parts)
    return loop.tick_sql.render(statement, union)


def _rule_sql(program: Program, loop, plan: RulePlan, statement: Statement, read, narrow, view: str,
              tick: int, ticks: int, every: bool = False) -> str:
    """SQL: the derivations of one rule's bindings on the final state of `tick`
    (the pack `view`): at `tick` for a deductive rule, at tick + 1 for an
    `@next` one (less what GC collects from a persistence rule), at the
    arrival within the run for an `@async` one; with `every`, every instance
    (see `instances`), an `@async` one arriving at tick + 1."""
    rule, layout = plan.rule, loop.layout
    name, types = rule.head.name, program.relations[rule.head.name].types
    found = statement.name(plan.derivations(statement, read, tick, narrow, every))
    columns = relation_columns(len(types))
    row = f"array({', '.join(spark_string_sql(f'`{c}`', t) for c, t in zip(columns, types))})"
    at, message = f"{tick}L", "NULL"
    if rule.delivery == "next" and rule.persistence and name in loop.plan.collected and not every:
        garbage = statement.name(layout.read_sql(view, name, GARBAGE))
        found = statement.name(f"SELECT * FROM {found} l LEFT ANTI JOIN {garbage} r USING ({', '.join(columns)})")
    if rule.delivery == "next":
        at = f"{tick + 1}L"
    elif rule.delivery == "async" and every:
        at = f"{tick + 1}L"
        message = (f"named_struct('sender', {SOURCE_COLUMN}, 'send_tick', {tick}L, 'receiver', element_at({row}, 1), "
                   f"'arrival', {at})")
    elif rule.delivery == "async":
        sent = statement.name(layout.read_sql(view, name, MESSAGE, ("__sent", "__arrival", SOURCE_COLUMN)))
        arriving = statement.name(f"SELECT * FROM {sent} WHERE __sent = {tick} AND __arrival <= {ticks}")
        found = statement.name(f"SELECT * FROM {found} JOIN {arriving} USING ({', '.join(columns + [SOURCE_COLUMN])})")
        at = "__arrival"
        message = (f"named_struct('sender', {SOURCE_COLUMN}, 'send_tick', {tick}L, 'receiver', element_at({row}, 1), "
                   f"'arrival', __arrival)")
    return (f"SELECT {sql_literal(name)} AS relation, {row} AS row, {at} AS tick, '{_KIND[rule.delivery]}' AS kind, "
            f"{rule.index} AS rule, {sql_literal(_line(rule.pos))} AS pos, {BODY} AS body, {ABSENT} AS absent, "
            f"{message} AS message FROM {found}")


def _leaves(spark: SparkSession, program: Program, loop, state, ticks: int, static: dict, stamped: dict) -> list:
    """Frames of the leaves: the program's facts, the input rows and the crash
    facts, at each tick of 1..`ticks` they hold."""
    every = f"explode(sequence(1L, {ticks}L))"
    facts = [(f.atom.name, _printed(f.row, program.relations[f.atom.name].types), f.tick, _line(f.pos))
             for f in program.facts if f.tick is None or 1 <= f.tick <= ticks]
    frames = []
    if facts:
        relation, row, at, pos = zip(*facts)
        frame = spark.createDataFrame(pa.table({"relation": pa.array(relation, pa.string()),
                                                "row": pa.array(row, pa.list_(pa.string())),
                                                "at": pa.array(at, pa.int64()), "pos": pa.array(pos, pa.string())}))
        frames.append(_leaf(frame, "relation", "row", f"explode(CASE WHEN at IS NULL THEN sequence(1L, {ticks}L) "
                                                      "ELSE array(at) END)", "fact", "pos"))
    for name, frame in static.items():
        types = program.relations[name].types
        if isinstance(frame, list):  # rows given to Engine.run as a list
            frame = spark.createDataFrame(pa.table({"row": pa.array([_printed(r, types) for r in frame],
                                                                    pa.list_(pa.string()))}))
            frames.append(_leaf(frame, sql_literal(name), "row", every, "input"))
        else:
            frames.append(_leaf(frame, sql_literal(name), _row_sql(frame, types), every, "input"))
    for name, (frame, _) in stamped.items():
        frame = frame.where(f"{TICK} BETWEEN 1 AND {ticks}")
        frames.append(_leaf(frame, sql_literal(name), _row_sql(frame, program.relations[name].types),
                            f"CAST({TICK} AS BIGINT)", "input"))
    if CRASH in program.relations and loop.plan.network.crashes:  # the same at every tick: tick 1's
        crashes = spark.sql(loop.layout.read_sql("{pack}", CRASH), pack=loop.full(state.packs[1]))
        frames.append(_leaf(crashes, f"'{CRASH}'", _row_sql(crashes, program.relations[CRASH].types), every, "crash"))
    return frames


def _leaf(frame, relation: str, row: str, tick: str, kind: str, pos: str = "''") -> DataFrame:
    """Leaf derivations (columns `SCHEMA`) of `frame`'s rows; the arguments are SQL over its columns."""
    return frame.selectExpr(f"{relation} AS relation", f"{row} AS row", f"{tick} AS tick", f"'{kind}' AS kind",
                            f"{pos} AS pos").selectExpr(
        "relation", "row", "tick", "kind", "CAST(NULL AS INT) AS rule", "pos",
        f"CAST(array() AS {SCHEMA['body'].dataType.simpleString()}) AS body",
        f"CAST(array() AS {SCHEMA['absent'].dataType.simpleString()}) AS absent",
        f"CAST(NULL AS {_MESSAGE.simpleString()}) AS message")


def _row_sql(frame, types: tuple) -> str:
    """SQL: a frame's first len(types) columns, typed and printed, as an array."""
    printed = [spark_string_sql(f"CAST(`{c}` AS {SPARK_TYPES[t]})", t) for c, t in zip(frame.columns, types)]
    return f"array({', '.join(printed)})"


def _printed(row: tuple, types: tuple) -> list:
    """A row of Python values as its column types print it.

    >>> _printed((1, 2, "a"), ("int", "double", "string"))
    ['1', '2.0', 'a']
    """
    return [spark_string(convert(v, t)) for v, t in zip(row, types)]


def _line(pos) -> str:
    return f"{pos.file}:{pos.line}"
