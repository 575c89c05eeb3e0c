r"""One rule as Spark SQL.

Positive atoms become equi-joins (`USING`) on their shared variables (the
location among them), constants filters at the scan, comparisons filters,
assignments and function relations computed columns, negated atoms `LEFT ANTI`
joins, `choose` a deterministic `row_number()` pick, head aggregates `GROUP BY`.

A `RulePlan` is compiled once; `evaluate(statement, read, tick)` writes its
SQL for one tick, a named subquery per step (spark/statement.py), and returns
the head facts' subquery. `read(atom, occurrence)` returns the SQL (a name or a
query) of the relation (columns c0..cn-1) for a positive atom — the executor
decides whether that is the full relation or a semi-naive delta — and
`read(atom, None)` the full relation for a negation. A plan compiled
`partitioned` reads relations with a partition column (spark/partitioner.py)
and keeps it: every join, negation and group is also on it, and the head facts
(but for `@async`) stay in their bucket.

>>> from sparkdedalus.program import Program
>>> program = Program.parse('.decl e(a: int, b: int)\n.decl p(a: int, b: int)\np(X, Z) :- e(X, Y), e(Y, Z);')
>>> statement = Statement()
>>> head = RulePlan(program.rules[0], program).evaluate(statement, lambda atom, occurrence: "edges", 1)
>>> statement.render(f"SELECT * FROM {head}")  # e(X, Y), e(Y, Z) joined on Y (v1); the head is (X, Z)
'SELECT * FROM (SELECT * FROM (SELECT CAST(`v0` AS bigint) AS `c0`, CAST(`v2` AS bigint) AS `c1` FROM (SELECT /*+ merge(r) */ * FROM (SELECT `c0` AS `v0`, `c1` AS `v1` FROM edges) l JOIN (SELECT `c0` AS `v1`, `c1` AS `v2` FROM edges) r USING (`v1`))) WHERE `c0` IS NOT NULL AND `c1` IS NOT NULL)'
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.checks.normalize import is_wildcard
from sparkdedalus.checks.safety import assignment_target
from sparkdedalus.program import Program, Rule
from sparkdedalus.pack.columns import PARTITION_COLUMN, SOURCE_COLUMN, relation_columns
from sparkdedalus.pack.columns import SPARK_TYPES
from sparkdedalus.spark.expressions import expr_type, sql_comparison, sql_expr, sql_literal
from sparkdedalus.spark.statement import Statement
from sparkdedalus.syntax import ast
from udfs.registry import FUNCTIONS, spark_string_sql

#: Join strategies: never a broadcast (each broadcast is a Spark job of its own,
#: and a tick should be one job); a sort-merge join spills when data is large and,
#: over inputs in one partition, needs no shuffle at all.
JOIN_HINT = "merge"
CROSS_JOIN_HINT = "shuffle_replicate_nl"
CHOICE_SEPARATOR = "\x1f"


#: the columns `RulePlan.derivations` adds: the body's facts and the negated atoms' patterns
BODY, ABSENT = "__body", "__absent"
BODY_TYPE = "STRUCT<relation: STRING, row: ARRAY<STRING>, tick: BIGINT>"
ABSENT_TYPE = "STRUCT<relation: STRING, pattern: ARRAY<STRING>, tick: BIGINT>"


def _unchanged(sql: str) -> str:
    return sql


def _array(elements: list, element_type: str) -> str:
    """SQL: an array of `elements` (SQL), typed even when empty."""
    return f"CAST(array({', '.join(elements)}) AS ARRAY<{element_type}>)"


def _bound(name: str, computed: list) -> str:
    """SQL: the rows of `name` with computed columns [(column, SQL)] added,
    those whose value is NULL (a division by zero, a failed function) dropped."""
    added = ", ".join(f"{sql} AS `{column}`" for column, sql in computed)
    return (f"SELECT * FROM (SELECT *, {added} FROM {name}) "
            f"WHERE {' AND '.join(f'`{column}` IS NOT NULL' for column, _ in computed)}")


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
        conditions (constants, repeated variables, `@T` against the tick)."""
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

    def _atom_sql(self, relation: str, atom: ast.Atom, tick: int) -> tuple[str, list]:
        """SQL: relation -> the atom's variables (and the carried columns),
        constants filtered; and its columns."""
        values, conditions = self._match(atom, tick)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        select = [f"{sql} AS `{self.columns[v]}`" for v, sql in values.items()] + self.carried
        return (f"SELECT {', '.join(select)} FROM {relation}{where}",
                [self.columns[v] for v in values] + self.carried)

    def bindings(self, statement: Statement, read, tick: int, narrow=_unchanged,
                 every: bool = False) -> tuple[str, list]:
        """The subquery of all variable bindings that satisfy the body, and its
        columns. `narrow` (SQL -> SQL) is applied to the result of every join
        (see `evaluate`). With `every`, the negated atoms and `choose` are left
        out: every binding of the body atoms whose comparisons hold."""
        name, columns = None, []
        for step in self.steps:
            if step.kind in ("scan", "join"):
                occurrence, atom, shared = step.payload
                sql, part_columns = self._atom_sql(statement.name(read(atom, occurrence)), atom, tick)
                part = statement.name(sql)
                keys = self.carried + [self.columns[v] for v in shared]
                if name is None:
                    name, columns = part, part_columns
                    continue
                if keys:
                    sql = (f"SELECT /*+ {JOIN_HINT}(r) */ * FROM {name} l JOIN {part} r"
                           f" USING ({', '.join(f'`{k}`' for k in keys)})")
                else:
                    sql = f"SELECT /*+ {CROSS_JOIN_HINT}(r) */ * FROM {name} l CROSS JOIN {part} r"
                name = statement.name(narrow(sql))
                columns = keys + [c for c in columns if c not in keys] + [c for c in part_columns if c not in keys]
            elif step.kind == "filter":
                name = statement.name(f"SELECT * FROM {name} WHERE "
                                      f"{sql_comparison(step.payload, self.columns, self.types)}")
            elif step.kind == "assign":
                column, source = step.payload
                name = statement.name(_bound(name, [(column, sql_expr(source, self.columns, self.types))]))
                columns = columns + [column]
            elif step.kind == "function":
                name, columns = self._function(statement, name, columns, *step.payload)
            elif step.kind in ("anti", "choose") and every:
                continue
            elif step.kind == "anti":
                name = statement.name(narrow(self._anti(statement, name, columns, step.payload, read, tick)))
            elif step.kind == "choose":
                name = statement.name(narrow(self._choose(statement, name, step.payload)))
        return name, columns

    def _function(self, statement: Statement, name: str, columns: list, function, inputs, outputs):
        args = [(sql_expr(a, self.columns, self.types), expr_type(a, self.types)) for a in inputs]
        results = function.spark(*args)
        bound = [(target, result) for (mode, target), result in zip(outputs, results) if mode == "bind"]
        checks = [f"({sql_expr(target, self.columns, self.types)}) = ({result})"
                  for (mode, target), result in zip(outputs, results) if mode == "check"]
        sql = _bound(name, bound) if bound else f"SELECT * FROM {name}"
        if checks:
            sql = f"SELECT * FROM ({sql}) WHERE {' AND '.join(checks)}"
        return statement.name(sql), columns + [target for target, _ in bound]

    def _anti(self, statement: Statement, name: str, columns: list, atom: ast.Atom, read, tick: int) -> str:
        """`notin atom`: a left anti join on the atom's variables (`notin r(..)@T`
        matches only when T is the current tick)."""
        values, conditions = self._match(atom, tick, skip_wildcards=True)
        negated = statement.name(read(atom, None))
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        if not values and not self.partitioned:  # an equi-join on a constant: no nested-loop join, no broadcast
            kept = ", ".join(f"l.`{c}`" for c in columns)
            return (f"SELECT /*+ {JOIN_HINT}(r) */ {kept} FROM (SELECT *, 1 AS __any FROM {name}) l"
                    f" LEFT ANTI JOIN (SELECT DISTINCT 1 AS __any FROM {negated}{where}) r USING (__any)")
        select = [f"{sql} AS `{self.columns[v]}`" for v, sql in values.items()] + self.carried
        keys = self.carried + [self.columns[v] for v in values]
        return (f"SELECT /*+ {JOIN_HINT}(r) */ * FROM {name} l LEFT ANTI JOIN"
                f" (SELECT {', '.join(select)} FROM {negated}{where}) r USING ({', '.join(f'`{k}`' for k in keys)})")

    def _choose(self, statement: Statement, name: str, choose: ast.Choose) -> str:
        keys = [f"`{self.columns[v.name]}`" for v in choose.keys]
        values = [f"`{self.columns[v.name]}`" for v in choose.values]
        as_text = [spark_string_sql(f"`{self.columns[v.name]}`", self.types[v.name]) for v in choose.values]
        order = f"xxhash64(concat_ws(chr({ord(CHOICE_SEPARATOR)}), {sql_literal(str(self.seed))}, {', '.join(as_text)}))"
        partition = f"PARTITION BY {', '.join(keys)} " if keys else ""
        picked = ", ".join(keys + values)
        chosen = statement.name(
            f"SELECT {picked} FROM (SELECT {picked}, row_number() OVER ({partition}ORDER BY {order}, "
            f"{', '.join(as_text)}) AS __pick FROM (SELECT DISTINCT {picked} FROM {name})) WHERE __pick = 1")
        return f"SELECT /*+ {JOIN_HINT}(r) */ * FROM {name} l LEFT SEMI JOIN {chosen} r USING ({picked})"

    def evaluate(self, statement: Statement, read, tick: int, narrow=_unchanged) -> str:
        """The subquery of the head facts (columns c0..cn-1, plus __src for
        @async rules), in `statement`. `read(atom, occurrence)` gives the SQL
        (a name or a query) of the relation an atom reads.

        `narrow(sql)` is applied after every join: the executor passes a
        `COALESCE(1)` when it keeps a tick in one partition, because a join's
        output no longer says so and the next join would shuffle."""
        name, _ = self.bindings(statement, read, tick, narrow)
        return self._head(statement, name, narrow)

    def derivations(self, statement: Statement, read, tick: int, narrow=_unchanged, every: bool = False) -> str:
        """The subquery of the head facts as `evaluate` derives them, each with
        how it came (why-provenance, spark/provenance.py): `__body`, the body
        atoms' facts (`relation`, `row` printed as `spark_string`, the `tick`
        read) in body order, and `__absent`, the negated atoms' patterns (NULL
        for a variable the body binds nowhere else). A row per binding; an
        aggregate's row one per group, its body every fact of the group
        (sorted), but for `@async`: one per binding and sender, as sent. With
        `every`, every binding of the body atoms (see `bindings`).

        >>> from sparkdedalus.program import Program
        >>> program = Program.parse('.decl e(a: int)\\n.decl q(a: int, b: string)\\np(X) :- e(X), notin q(X, _);')
        >>> statement = Statement()
        >>> head = RulePlan(program.rules[0], program).derivations(statement, lambda atom, occurrence: atom.name, 3)
        >>> sql = statement.render(head)  # e(X)'s fact, and q(X, _) with X bound and _ any value
        >>> "named_struct('relation', 'e', 'row', array(CAST(CAST(`v0` AS bigint) AS STRING)), 'tick', 3L)" in sql
        True
        >>> "'pattern', CAST(array(CAST(`v0` AS STRING), CAST(NULL AS STRING)) AS ARRAY<STRING>)" in sql
        True
        """
        name, _ = self.bindings(statement, read, tick, narrow, every)
        body = [self._fact_sql(atom, tick) for atom in self.positive]
        absent = [self._absent_sql(atom, tick) for atom in self.rule.negated_atoms]
        witnessed = statement.name(f"SELECT *, {_array(body, BODY_TYPE)} AS `{BODY}`, "
                                   f"{_array(absent, ABSENT_TYPE)} AS `{ABSENT}` FROM {name}")
        return self._head(statement, witnessed, narrow, witness=True)

    def _fact_sql(self, atom: ast.Atom, tick: int) -> str:
        """SQL: the fact a positive atom matched under the binding, printed."""
        types = self.program.relations[atom.name].types
        row = [spark_string_sql(f"CAST({sql_expr(arg, self.columns, self.types)} AS {SPARK_TYPES[t]})", t)
               for arg, t in zip(atom.args, types)]
        return (f"named_struct('relation', {sql_literal(atom.name)}, 'row', array({', '.join(row)}), "
                f"'tick', {ast.read_tick(atom, tick)}L)")

    def _absent_sql(self, atom: ast.Atom, tick: int) -> str:
        """SQL: a negated atom's pattern under the binding, printed (NULL: unbound)."""
        pattern = [spark_string_sql(sql_expr(arg, self.columns, self.types), expr_type(arg, self.types))
                   if isinstance(arg, ast.Const) or arg.name in self.columns else "CAST(NULL AS STRING)"
                   for arg in atom.args]
        return (f"named_struct('relation', {sql_literal(atom.name)}, 'pattern', "
                f"{_array(pattern, 'STRING')}, 'tick', {ast.read_tick(atom, tick)}L)")

    def _head(self, statement: Statement, name: str, narrow, witness: bool = False) -> str:
        """The head facts of the bindings `name`; with `witness`, with their
        `__body` and `__absent` (see `derivations`)."""
        head = self.rule.head
        types = self.program.relations[head.name].types
        out = relation_columns(head.arity)
        sender = []  # SQL text of the sender column of an @async rule
        kept = self.carried if self.rule.delivery != "async" else []
        witnesses = [f"`{BODY}`", f"`{ABSENT}`"] if witness else []
        if self.rule.delivery == "async":
            location = self.positive[0].args[0]
            text = spark_string_sql(sql_expr(location, self.columns, self.types), expr_type(location, self.types))
            sender = [f"{text} AS `{SOURCE_COLUMN}`"]
        if not self.rule.is_aggregate:
            cols = [f"CAST({sql_expr(arg, self.columns, self.types)} AS {SPARK_TYPES[t]}) AS `{c}`"
                    for arg, t, c in zip(head.args, types, out)]
            result = f"SELECT {', '.join(cols + sender + kept + witnesses)} FROM {name}"
        else:
            groups = [f"{sql_expr(arg, self.columns, self.types)} AS `{c}`"
                      for arg, c in zip(head.args, out) if not isinstance(arg, ast.Aggregate)] + sender
            aggs = [f"{self._aggregate_sql(arg)} AS `{c}`"
                    for arg, c in zip(head.args, out) if isinstance(arg, ast.Aggregate)]
            variables = [f"`{c}`" for c in self.columns.values()]
            grouped = statement.name(f"SELECT {', '.join(groups + variables + kept + witnesses)} FROM {name}")
            keys = [f"`{c}`" for arg, c in zip(head.args, out) if not isinstance(arg, ast.Aggregate)] + kept
            group_by = f" GROUP BY {', '.join(keys)}" if keys else ""
            # a group's derivation: every fact of the group (an @async one: per binding, below)
            merged = [f"array_sort(array_distinct(flatten(collect_list({w})))) AS {w}"
                      for w in witnesses if not sender]
            result = statement.name(f"SELECT {', '.join(keys + aggs + merged)} FROM {grouped}{group_by}")
            if sender:
                # a group's row is sent by every sender among the group's bindings
                per_binding = [f"array_distinct({w}) AS {w}" for w in witnesses]
                senders = statement.name(
                    f"SELECT DISTINCT {', '.join(keys + [SOURCE_COLUMN] + per_binding)} FROM {grouped}")
                result = statement.name(narrow(
                    f"SELECT /*+ {JOIN_HINT}(r) */ * FROM {result} l JOIN {senders} r USING ({', '.join(keys)})"
                    if keys else
                    f"SELECT /*+ {CROSS_JOIN_HINT}(r) */ * FROM {result} l CROSS JOIN {senders} r"))
            cast = [f"CAST(`{c}` AS {SPARK_TYPES[t]}) AS `{c}`" for c, t in zip(out, types)]
            result = (f"SELECT {', '.join(cast + ([f'`{SOURCE_COLUMN}`'] if sender else []) + kept + witnesses)}"
                      f" FROM {result}")
        return statement.name(f"SELECT * FROM ({result}) WHERE {' AND '.join(f'`{c}` IS NOT NULL' for c in out)}")

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

