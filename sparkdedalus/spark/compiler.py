"""One rule as a DataFrame plan.

Positive atoms become equi-joins on their shared variables (the location among
them), constants filters at the scan, comparisons filters, assignments and
function relations computed columns, negated atoms `left_anti` joins, `choose`
a deterministic window pick, head aggregates `groupBy().agg()`.

A `RulePlan` is compiled once; `evaluate(read, tick)` builds the plan for one
tick. `read(atom, occurrence)` returns the relation's frame (columns c0..cn-1)
for a positive atom — the runtime decides whether that is the full relation or
a semi-naive delta — and `read(atom, None)` the full relation for a negation.
A plan compiled `partitioned` reads frames with a partition column (spark/
partitioner.py) and keeps it: every join, negation and group is also on it, and
the head facts (but for `@async`) stay in their bucket.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from sparkdedalus.checks.normalize import is_wildcard
from sparkdedalus.checks.safety import assignment_target
from sparkdedalus.program import Program, Rule
from sparkdedalus.pack.columns import PARTITION_COLUMN, SOURCE_COLUMN, relation_columns
from sparkdedalus.pack.columns import SPARK_TYPES
from sparkdedalus.spark.expressions import expr_type, sql_comparison, sql_expr, sql_literal
from sparkdedalus.syntax import ast
from udfs.registry import FUNCTIONS, spark_string_sql

#: Join strategies: never a broadcast (each broadcast is a Spark job of its own,
#: and a tick should be one job); a sort-merge join spills when data is large and,
#: over inputs in one partition, needs no shuffle at all.
JOIN_HINT = "merge"
CROSS_JOIN_HINT = "shuffle_replicate_nl"
CHOICE_SEPARATOR = "\x1f"


def _unchanged(frame: DataFrame) -> DataFrame:
    return frame


@dataclass(frozen=True)
class _Step:
    kind: str  # scan | join | filter | assign | function | anti | choose
    payload: object


class RulePlan:
    def __init__(self, rule: Rule, program: Program, seed: int = 0, partitioned: bool = False):
        self.rule = rule
        self.partitioned = partitioned
        self.carried = [PARTITION_COLUMN] if partitioned else []  # bookkeeping columns kept
        self.program = program
        self.seed = seed
        self.columns: dict[str, str] = {}  # variable -> column name
        self.types: dict[str, str] = {}  # variable -> dialect type
        self.steps: list[_Step] = []
        self.positive = rule.positive_atoms
        self._order()

    # ---------------------------------------------------------------- compile time
    def _column(self, var: str) -> str:
        if var not in self.columns:
            self.columns[var] = f"v{len(self.columns)}"
        return self.columns[var]

    def _bind_atom(self, atom: ast.Atom) -> None:
        rel_types = self.program.relations[atom.name].types
        for i, arg in enumerate(atom.args):
            if isinstance(arg, ast.Var) and arg.name not in self.types:
                self.types[arg.name] = rel_types[i]
                self._column(arg.name)
        if isinstance(atom.time, ast.VarTime) and atom.time.var.name not in self.types:
            self.types[atom.time.var.name] = "int"
            self._column(atom.time.var.name)

    def _order(self) -> None:
        """Choose the order of the steps: join atoms sharing variables first,
        apply every filter or computed column as soon as its inputs are bound."""
        pending_atoms = list(enumerate(self.positive))
        others = [lit for lit in self.rule.body
                  if isinstance(lit, ast.Comparison) or (isinstance(lit, ast.Atom) and lit.name in FUNCTIONS)]
        first = True
        while pending_atoms:
            index = next((k for k, (_, a) in enumerate(pending_atoms)
                          if any(isinstance(x, ast.Var) and x.name in self.types for x in a.args)), 0)
            occurrence, atom = pending_atoms.pop(index)
            shared = sorted({x.name for x in ast.atom_vars(atom) if x.name in self.types})
            self.steps.append(_Step("scan" if first else "join", (occurrence, atom, shared)))
            first = False
            self._bind_atom(atom)
            others = self._apply_ready(others)
        others = self._apply_ready(others)
        for lit in self.rule.body:
            if isinstance(lit, ast.Negated):
                self.steps.append(_Step("anti", lit.atom))
        if self.rule.choose is not None:
            self.steps.append(_Step("choose", self.rule.choose))

    def _apply_ready(self, others: list) -> list:
        progress = True
        while progress:
            progress = False
            for lit in list(others):
                if isinstance(lit, ast.Comparison):
                    target = assignment_target(lit, set(self.types))
                    if target is not None:
                        source = lit.right if target is lit.left else lit.left
                        self.types[target.name] = expr_type(source, self.types)
                        self.steps.append(_Step("assign", (self._column(target.name), source)))
                    elif all(v.name in self.types for v in ast.expr_vars(lit.left) + ast.expr_vars(lit.right)):
                        self.steps.append(_Step("filter", lit))
                    else:
                        continue
                else:
                    function = FUNCTIONS[lit.name]
                    inputs = lit.args[:function.inputs]
                    if not all(v.name in self.types for a in inputs for v in ast.expr_vars(a)):
                        continue
                    outputs = []
                    for declared, out in zip(function.output_types, lit.args[function.inputs:]):
                        typ = expr_type(inputs[0], self.types) if declared == "same" else declared
                        if isinstance(out, ast.Var) and out.name not in self.types:
                            self.types[out.name] = typ
                            outputs.append(("bind", self._column(out.name)))
                        else:
                            outputs.append(("check", out))
                    self.steps.append(_Step("function", (function, inputs, outputs)))
                others.remove(lit)
                progress = True
        return others

    # ---------------------------------------------------------------- plan building
    def _match(self, atom: ast.Atom, tick: int, skip_wildcards: bool = False) -> tuple[dict, list]:
        """How a relation frame matches `atom`: {variable: SQL of its value}
        (a column, or the tick for `@T` when T is not an argument) and SQL
        conditions (constants, repeated variables, `@T` against the tick).
        SQL text rather than Column objects: one py4j call per expression."""
        values: dict[str, str] = {}
        conditions = []
        for i, arg in enumerate(atom.args):
            col = f"`c{i}`"
            if isinstance(arg, ast.Const):
                conditions.append(f"{col} = {sql_literal(arg.value)}")
            elif skip_wildcards and is_wildcard(arg):
                continue
            elif arg.name in values:
                conditions.append(f"{col} = {values[arg.name]}")
            else:
                values[arg.name] = col
        if isinstance(atom.time, ast.VarTime):
            name = atom.time.var.name
            if name in values:  # T is also an argument: that column must hold the tick
                conditions.append(f"{values[name]} = {tick}L")
            else:
                values[name] = f"{tick}L"
        return values, conditions

    def _atom_frame(self, frame: DataFrame, atom: ast.Atom, tick: int) -> DataFrame:
        """Relation frame -> frame of the atom's variables, constants filtered."""
        values, conditions = self._match(atom, tick)
        if conditions:
            frame = frame.where(" AND ".join(conditions))
        return frame.selectExpr(*[f"{sql} AS `{self.columns[v]}`" for v, sql in values.items()], *self.carried)

    def bindings(self, read, tick: int, narrow=_unchanged) -> DataFrame:
        """The frame of all variable bindings that satisfy the body. `narrow` is
        applied to the result of every join (see `evaluate`)."""
        frame = None
        for step in self.steps:
            if step.kind in ("scan", "join"):
                occurrence, atom, shared = step.payload
                part = self._atom_frame(read(atom, occurrence), atom, tick)
                keys = self.carried + [self.columns[v] for v in shared]
                if frame is None:
                    frame = part
                elif keys:
                    frame = narrow(frame.join(part.hint(JOIN_HINT), on=keys))
                else:
                    frame = narrow(frame.crossJoin(part.hint(CROSS_JOIN_HINT)))
            elif step.kind == "filter":
                frame = frame.where(sql_comparison(step.payload, self.columns, self.types))
            elif step.kind == "assign":
                column, source = step.payload
                frame = frame.selectExpr("*", f"{sql_expr(source, self.columns, self.types)} AS `{column}`")
                frame = frame.where(f"`{column}` IS NOT NULL")
            elif step.kind == "function":
                frame = self._function(frame, *step.payload)
            elif step.kind == "anti":
                frame = narrow(self._anti(frame, step.payload, read, tick))
            elif step.kind == "choose":
                frame = narrow(self._choose(frame, step.payload))
        return frame

    def _function(self, frame: DataFrame, function, inputs, outputs) -> DataFrame:
        args = [(sql_expr(a, self.columns, self.types), expr_type(a, self.types)) for a in inputs]
        results = [F.expr(sql) for sql in function.spark(*args)]
        for (mode, target), result in zip(outputs, results):
            if mode == "bind":
                frame = frame.withColumn(target, result).where(F.col(target).isNotNull())
            else:
                frame = frame.where(F.expr(sql_expr(target, self.columns, self.types)) == result)
        return frame

    def _anti(self, frame: DataFrame, atom: ast.Atom, read, tick: int) -> DataFrame:
        """`notin atom`: a left anti join on the atom's variables (`notin r(..)@T`
        matches only when T is the current tick)."""
        values, conditions = self._match(atom, tick, skip_wildcards=True)
        negated = read(atom, None)
        if conditions:
            negated = negated.where(" AND ".join(conditions))
        if not values and not self.partitioned:  # an equi-join on a constant: no nested-loop join, no broadcast
            negated = negated.selectExpr("1 AS __any").distinct()
            return frame.selectExpr("*", "1 AS __any").join(negated.hint(JOIN_HINT), on="__any",
                                                           how="left_anti").drop("__any")
        negated = negated.selectExpr(*[f"{sql} AS `{self.columns[v]}`" for v, sql in values.items()], *self.carried)
        return frame.join(negated.hint(JOIN_HINT), on=self.carried + [self.columns[v] for v in values],
                          how="left_anti")

    def _choose(self, frame: DataFrame, choose: ast.Choose) -> DataFrame:
        keys = [self.columns[v.name] for v in choose.keys]
        values = [self.columns[v.name] for v in choose.values]
        as_text = [F.expr(spark_string_sql(f"`{self.columns[v.name]}`", self.types[v.name])) for v in choose.values]
        order = F.xxhash64(F.concat_ws(CHOICE_SEPARATOR, F.lit(str(self.seed)), *as_text))
        window = Window.partitionBy(*keys).orderBy(order, *as_text) if keys else Window.orderBy(order, *as_text)
        chosen = (frame.select(*(keys + values)).distinct()
                  .withColumn("__pick", F.row_number().over(window))
                  .where(F.col("__pick") == 1).drop("__pick"))
        return frame.join(chosen.hint(JOIN_HINT), on=keys + values, how="left_semi")

    def evaluate(self, read, tick: int, narrow=_unchanged) -> DataFrame:
        """Head facts (columns c0..cn-1, plus __src for @async rules).

        `narrow(frame)` is applied after every join: the runtime passes
        `coalesce(1)` when it keeps a tick in one partition, because a join's
        output no longer says so and the next join would shuffle."""
        frame = self.bindings(read, tick, narrow)
        head = self.rule.head
        types = self.program.relations[head.name].types
        out = relation_columns(head.arity)
        sender = []  # SQL text of the sender column of an @async rule
        kept = self.carried if self.rule.delivery != "async" else []
        if self.rule.delivery == "async":
            location = self.positive[0].args[0]
            text = spark_string_sql(sql_expr(location, self.columns, self.types), expr_type(location, self.types))
            sender = [f"{text} AS `{SOURCE_COLUMN}`"]
        if not self.rule.is_aggregate:
            cols = [f"CAST({sql_expr(arg, self.columns, self.types)} AS {SPARK_TYPES[t]}) AS `{c}`"
                    for arg, t, c in zip(head.args, types, out)]
            result = frame.selectExpr(*cols, *sender, *kept)
        else:
            groups = [f"{sql_expr(arg, self.columns, self.types)} AS `{c}`"
                      for arg, c in zip(head.args, out) if not isinstance(arg, ast.Aggregate)] + sender
            aggs = [F.expr(self._aggregate_sql(arg)).alias(c)
                    for arg, c in zip(head.args, out) if isinstance(arg, ast.Aggregate)]
            grouped = frame.selectExpr(*groups, *[f"`{c}`" for c in self.columns.values()], *kept)
            keys = [c for arg, c in zip(head.args, out) if not isinstance(arg, ast.Aggregate)] + kept
            result = grouped.groupBy(*keys).agg(*aggs)
            if sender:
                # a group's row is sent by every sender among the group's bindings
                senders = grouped.select(*keys, SOURCE_COLUMN).distinct()
                result = narrow(result.join(senders.hint(JOIN_HINT), on=keys) if keys
                                else result.crossJoin(senders.hint(CROSS_JOIN_HINT)))
            result = result.selectExpr(*[f"CAST(`{c}` AS {SPARK_TYPES[t]}) AS `{c}`" for c, t in zip(out, types)],
                                       *([f"`{SOURCE_COLUMN}`"] if sender else []), *kept)
        return result.where(" AND ".join(f"`{c}` IS NOT NULL" for c in out))

    def _aggregate_sql(self, agg: ast.Aggregate) -> str:
        if agg.var is None:
            cols = ", ".join(f"`{c}`" for c in self.columns.values()) or "1"
            return f"count(DISTINCT {cols})"
        col = f"`{self.columns[agg.var.name]}`"
        if agg.func in ("sum", "avg") and self.types.get(agg.var.name) == "double":
            # the distinct values added in ascending order, as the reference adds them:
            # the same bits whatever order the rows come in (docs/semantics.md)
            total = f"aggregate(array_sort(collect_set({col})), CAST(0 AS DOUBLE), (acc, v) -> acc + v)"
            return total if agg.func == "sum" else f"{total} / size(collect_set({col}))"
        if agg.func in ("count", "sum", "avg"):
            return f"{agg.func}(DISTINCT {col})"
        return f"{agg.func}({col})"

