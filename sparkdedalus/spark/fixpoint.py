"""A recursive stratum evaluated to its fixpoint inside Spark tasks, in Arrow.

The general semi-naive loop (executor.Executor._recursive) costs a Spark job,
a checkpoint and a shuffle per iteration. A stratum whose rules are conjunctive
queries (positive atoms of the current tick, variables and constants),
comparisons and `Z == expr` assignments with `+ - *` on numbers (checked:
an integer overflow raises), no negation, function, choice, `/` or `%`, is handed
instead to one `groupBy().applyInArrow()`: every task receives the relations
the rules read and runs the whole semi-naive loop in pyarrow (hash joins,
`left anti` joins for the difference, `group_by` for duplicates), no Spark
job per iteration: one job computes and counts the stratum's new facts, so
that the rest of the tick is sized to them (its partitions, compiled code).

Partition-local evaluation (BigDatalog's decomposable programs): when every
rule keeps some argument positions of its head equal to the same positions of
each recursive body atom (the pivot; e.g. `path(L, X, Z) :- edge(L, X, Y),
path(L, Y, Z)` keeps L and Z, and location-local rules always keep the
location), the facts are split into `buckets` by a hash of the pivot: each
task computes the facts of its bucket from all the base facts, and the
buckets' results are disjoint. Otherwise one task computes the stratum. When
every atom of every rule is at its head's location (`located`) and the pivot is
the location alone (`by_location`), a fact is sent only to the bucket of its
location, not to every bucket; a finer pivot (the closure's (L, Z)) keeps its
buckets, so that a program at one location is still solved by several tasks.

A lattice relation (min or max over its own recursion, checks/lattices.py)
keeps the best row of each group: each iteration's candidates are reduced
to it, and the next one reads the groups that improved. `solve` (and
`frames`) give its whole best relation, not only new facts; its aggregated
position is never part of a pivot.

A stratum that keeps no min or max is solved, bucket by bucket, by DuckDB
instead of the pyarrow loop (spark/recursive_query.py; `query`; not when a
differential rule reads `news`): a linear one by one recursive query (a
transitive closure's 15.6 million pairs in about 6 s where the pyarrow loop
takes 21 s), a non-linear one by a semi-naive loop of DuckDB queries; so is a
linear stratum of one relation keeping a min or max, by a keyed recursive
query. Its buckets are
DuckDB's hash of the pivot, the loop's pandas' hash: both split the facts into
disjoint parts.

Switch: the session setting `spark.sparkdedalus.fixpoint` (`arrow`, the
default; `pyarrow`, the Arrow fixpoint without the DuckDB query; or `loop` for
the general loop everywhere).

In the driver (`solve_here`): a component that one task would solve anyway
(one bucket, or buckets by location over facts of one location), whose inputs
the driver holds (the program's facts, rows given as lists, Parquet files
valid by their footers: spark/loader.py `held_tables`) in at most
`spark.sparkdedalus.fixpoint.driverComponentRows` rows (DRIVER_COMPONENT_ROWS,
0: never), is solved by the same `solve` in the driver process, and its facts
handed to Spark as a local relation (`createDataFrame` from Arrow: no job).
The work is done in one Python process either way (a Spark task's Python
worker, or the driver); what it saves is the job, the worker's round trip and
the planning of the query around it, and at scale moving the inputs through
Spark: shortest paths over 1M edges read from Parquet took 14.1 s solved in a
task (the edges read, shuffled into the task's bucket and turned from rows into
Arrow) and 5.4 s solved in the driver, DuckDB alone 4.0 s (docs/performance.md). The limit is of
the driver's memory: the inputs are read into it whole, as the task's worker
receives them whole.

>>> from sparkdedalus.checks import build_program
>>> from sparkdedalus.syntax.loader import load_text
>>> p = build_program(load_text(".decl edge(l: string, x: int, y: int) "
...     "path(L, X, Y) :- edge(L, X, Y); path(L, X, Z) :- edge(L, X, Y), path(L, Y, Z);"))
>>> plan = ArrowFixpoint.compile(p.rules, ["path"], p)
>>> plan.pivot["path"], plan.located, plan.by_location
((0, 2), True, False)
>>> import pyarrow as pa
>>> edge = pa.table({"c0": ["g"] * 3, "c1": [1, 2, 3], "c2": [2, 3, 1]})
>>> path = pa.table({"c0": pa.array([], pa.string()), "c1": pa.array([], pa.int64()),
...                  "c2": pa.array([], pa.int64())})
>>> found = plan.solve({"edge": edge, "path": path}, bucket=0, buckets=1)
>>> found["path"].num_rows     # every node of the 3-cycle reaches every node
9
>>> p = build_program(load_text(".decl edge(l: string, x: int, y: int, w: int) "
...     "dist(L, 1, 0) :- edge(L, _, _, _); "
...     "dist(L, Y, min<D>) :- dist(L, X, D1), edge(L, X, Y, W), W >= 0, D == D1 + W;"))
>>> plan = ArrowFixpoint.compile(p.rules, ["dist"], p)
>>> plan.lattices["dist"].func, plan.pivot["dist"], plan.by_location
('min', (0,), True)
>>> edge = pa.table({"c0": ["g"] * 3, "c1": [1, 2, 1], "c2": [2, 3, 3], "c3": [1, 1, 5]})
>>> dist = pa.table({"c0": ["g"], "c1": [3], "c2": [9]})   # 3 at 9 already: improved to 2
>>> sorted(plan.solve({"edge": edge, "dist": dist}, bucket=0, buckets=1)["dist"].to_pylist(), key=str)
[{'c0': 'g', 'c1': 1, 'c2': 0}, {'c0': 'g', 'c1': 2, 'c2': 1}, {'c0': 'g', 'c1': 3, 'c2': 2}]
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache, reduce

import pyarrow as pa
import pyarrow.compute as pc

from sparkdedalus.checks.safety import assignment_target
from sparkdedalus.program import Program
from sparkdedalus.spark.partitioner import spread_values
from sparkdedalus.spark.recursive_query import RecursiveQuery
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.ast import expr_vars
from sparkdedalus.syntax.printer import format_literal

#: the session setting that chooses how recursive strata run
SETTING = "spark.sparkdedalus.fixpoint"
ARROW, PYARROW, LOOP = "arrow", "pyarrow", "loop"
#: the settings that run the Arrow fixpoint (`pyarrow`: never its DuckDB query)
ARROW_MODES = (ARROW, PYARROW)
#: the session setting: the most rows of a run's inputs and of a tick's start for
#: the tick to run in the driver (spark/placement.py; 0: never)
DRIVER_ROWS_SETTING = "spark.sparkdedalus.fixpoint.driverRows"
#: its default: below it a tick runs in one partition and one task anyway (spark/sizer.py ROWS_PER_PARTITION)
DRIVER_ROWS = 200_000
#: the session setting: the most input rows of a one-task component solved in the driver (0: never)
DRIVER_COMPONENT_ROWS_SETTING = "spark.sparkdedalus.fixpoint.driverComponentRows"
#: its default: a bound on the driver's memory (10 million rows of 4 numbers: about 320 MB of Arrow)
DRIVER_COMPONENT_ROWS = 10_000_000


def driver_rows(spark) -> int:
    """The most rows a tick in the driver takes (`DRIVER_ROWS_SETTING`,
    default DRIVER_ROWS; 0 or less: never)."""
    return int(spark.conf.get(DRIVER_ROWS_SETTING, str(DRIVER_ROWS)))


def driver_component_rows(spark) -> int:
    """The most input rows of a component the Arrow fixpoint solves in the
    driver (`DRIVER_COMPONENT_ROWS_SETTING`, default DRIVER_COMPONENT_ROWS; 0
    or less: never)."""
    return int(spark.conf.get(DRIVER_COMPONENT_ROWS_SETTING, str(DRIVER_COMPONENT_ROWS)))

# a term of a compiled atom: ("v", variable name) or ("c", constant)
Term = tuple


@dataclass(frozen=True)
class _Rule:
    head: str
    head_terms: tuple  # Term per head argument
    body: tuple  # (relation, (Term, ...)) per positive atom
    steps: tuple  # the atoms (by index in body) and comparisons in evaluation order (_steps)
    differential: bool = False  # evaluated on new facts only after the first tick (analysis/growth.py)


def _term(arg) -> Term | None:
    if isinstance(arg, ast.Var):
        return ("v", arg.name)
    if isinstance(arg, ast.Const):
        return ("c", arg.value)
    return None


def _simple(rule, program: Program, lattices: dict, tick_free: bool = True,
            differential: frozenset = frozenset()) -> _Rule | None:
    """The rule as plain terms and steps, or None when it needs more than
    joins, comparisons and `+ - *` assignments (or its aggregate is not the
    min/max of a lattice relation of the stratum)."""
    if rule.negated_atoms or rule.function_atoms or rule.choose:
        return None
    if len(rule.positive_atoms) != len([lit for lit in rule.body if isinstance(lit, ast.Atom)]) \
            or len(rule.body) != len(rule.positive_atoms) + len(rule.comparisons):
        return None
    lattice = lattices.get(rule.head.name)
    head = tuple(_term(a.var) if isinstance(a, ast.Aggregate) and a.var is not None and lattice is not None
                 and (a.func, i) == (lattice.func, lattice.position) else _term(a)
                 for i, a in enumerate(rule.head.args))
    body = []
    for atom in rule.positive_atoms:
        if atom.time is not None and tick_free:
            return None
        terms = tuple(_term(a) for a in atom.args)
        if None in terms:
            return None
        body.append((atom.name, terms))
    if None in head or not body:
        return None
    types: dict = {}  # variable -> pa type, as the steps bind it
    steps = _steps(rule, program, types)
    if steps is None or any(t[0] == "v" and t[1] not in types for t in head):
        return None
    columns = [_ARROW[t] for t in program.relations[rule.head.name].types]
    if any(t[0] == "v" and types[t[1]] != c and (types[t[1]], c) != (pa.int64(), pa.float64())
           for t, c in zip(head, columns)):
        return None  # only int widens to double (values.convert)
    return _Rule(rule.head.name, head, tuple(body), steps, rule.index in differential)


def _steps(rule, program: Program, types: dict) -> tuple | None:
    """The body in the reference evaluator's order (the first comparison whose
    variables are bound, in body order, else the next atom): ("atom", i),
    ("filter", op, left, right, text) or ("assign", variable, expr, text);
    None when a comparison is not one pyarrow computes exactly as the
    reference does. Fills `types`."""
    todo = list(rule.body)
    steps = []
    atoms = 0
    while todo:
        ready = [lit for lit in todo if isinstance(lit, ast.Comparison) and (
            assignment_target(lit, set(types)) is not None
            or all(v.name in types for v in expr_vars(lit.left) + expr_vars(lit.right)))]
        literal = ready[0] if ready else next((lit for lit in todo if isinstance(lit, ast.Atom)), None)
        if literal is None:
            return None  # a comparison never bound (the checks report it)
        todo.remove(literal)
        if isinstance(literal, ast.Atom):
            for arg, name in zip(literal.args, program.relations[literal.name].types):
                if isinstance(arg, ast.Var) and types.setdefault(arg.name, _ARROW[name]) != _ARROW[name]:
                    return None  # a join of an int and a double column
            steps.append(("atom", atoms))
            atoms += 1
            continue
        text = format_literal(literal)
        target = assignment_target(literal, set(types))
        if target is not None:
            source = literal.right if target is literal.left else literal.left
            compiled = _expression(source, types)
            if compiled is None:
                return None
            types[target.name] = compiled[1]
            steps.append(("assign", target.name, compiled[0], text))
            continue
        left, right = _expression(literal.left, types), _expression(literal.right, types)
        if left is None or right is None or not _comparable(literal, left[1], right[1]):
            return None
        steps.append(("filter", literal.op, left[0], right[0], text))
    return tuple(steps)


def _expression(expr, types: dict) -> tuple | None:
    """(the expression as terms and ("+" | "-" | "*", left, right), its pa
    type), or None: a value of another type in arithmetic, / or %."""
    if isinstance(expr, (ast.Var, ast.Const)):
        value = expr.value if isinstance(expr, ast.Const) else None
        kind = types[expr.name] if isinstance(expr, ast.Var) else pa.scalar(value).type
        return _term(expr), kind
    if isinstance(expr, ast.Neg):  # 0 - x, as the reference computes it
        expr = ast.BinOp("-", ast.Const(0), expr.operand)
    if not isinstance(expr, ast.BinOp) or expr.op not in "+-*":
        return None
    left, right = _expression(expr.left, types), _expression(expr.right, types)
    if left is None or right is None or not {left[1], right[1]} <= _NUMBERS:
        return None
    kind = pa.float64() if pa.float64() in (left[1], right[1]) else pa.int64()
    return (expr.op, left[0], right[0]), kind


def _comparable(cmp: ast.Comparison, left: pa.DataType, right: pa.DataType) -> bool:
    """Whether pyarrow compares the two sides as the reference does: numbers
    (an int with a double only when the int is a constant a double holds
    exactly), or strings or bools for == and !=."""
    if left == right:
        return left in _NUMBERS or cmp.op in ("==", "!=")
    exact = [side for side, kind in ((cmp.left, left), (cmp.right, right)) if kind == pa.int64()
             and isinstance(side, ast.Const) and abs(side.value) <= 2 ** 53]
    return {left, right} == _NUMBERS and bool(exact)


def _pivot(rules: list, names: list, lattices: dict) -> dict:
    """Per stratum relation, the argument positions every rule keeps from each
    recursive body atom to its head (same relation: same positions); the
    location (position 0) when the stratum has several relations. Never a
    lattice relation's aggregated position: its groups stay in one bucket."""
    arity = {}
    for rule in rules:
        arity[rule.head] = len(rule.head_terms)
    candidates = [tuple(range(arity[names[0]]))] if len(names) == 1 else [(0,)]
    keep = set(candidates[0])
    for rule in rules:
        for name, terms in rule.body:
            if name not in names:
                continue
            if len(names) == 1:
                keep &= {k for k in keep if terms[k] == rule.head_terms[k] and terms[k][0] == "v"}
            elif not (terms[0] == rule.head_terms[0] and terms[0][0] == "v"):
                keep = set()
    return {n: tuple(sorted(keep - {lattices[n].position} if n in lattices else keep)) for n in names}


class ArrowFixpoint:
    """A recursive stratum's rules compiled for the Arrow loop."""

    def __init__(self, rules: list, names: list, schemas: dict, pivot: dict, lattices: dict, duckdb: bool = True):
        self.rules = rules
        self.names = list(names)
        self.schemas = schemas  # relation -> pa.Schema (c0..cn-1)
        self.pivot = pivot
        self.lattices = lattices  # stratum relation -> parts.Lattice, for those that keep a min or max
        self.reads = sorted({name for r in rules for name, _ in r.body} | set(names))
        #: the stratum solved by DuckDB (spark/recursive_query.py), or None: the pyarrow loop
        self.query = RecursiveQuery.of(rules, names, schemas, lattices) if duckdb else None

    @classmethod
    def compile(cls, rules, names: list, program: Program,
                differential: frozenset = frozenset(), duckdb: bool = True) -> "ArrowFixpoint | None":
        """The stratum compiled, or None when some rule needs the general loop;
        `differential`: the indexes of the rules evaluated on new facts only
        after the first tick (analysis/growth.py; `solve`'s `news`); `duckdb`:
        whether the stratum is solved by its DuckDB `query` where it can be."""
        lattices = {n: program.lattices[n] for n in names if n in program.lattices}
        simple = [_simple(r, program, lattices, differential=differential) for r in rules]
        if any(s is None for s in simple):
            return None
        schemas = {}
        for name in {n for r in simple for n, _ in r.body} | set(names):
            rel = program.relations[name]
            schemas[name] = pa.schema([(f"c{i}", _ARROW[t]) for i, t in enumerate(rel.types)])
        return cls(simple, names, schemas, _pivot(simple, list(names), lattices), lattices, duckdb)

    @property
    def differential(self) -> bool:
        """Whether some rule is evaluated on new facts only after the first tick."""
        return any(rule.differential for rule in self.rules)

    @property
    def partitioned(self) -> bool:
        return all(self.pivot[n] for n in self.names)

    def buckets(self, partitions: int, news: bool) -> int:
        """The buckets a tick of `partitions` partitions splits the stratum
        into: one without a pivot; one a partition for the DuckDB query
        (DuckDB's threads work within it; not with `news`, which the pyarrow
        loop takes); else four a partition, so that a bucket of the pyarrow
        loop fits in a Python worker."""
        if not self.partitioned:
            return 1
        return partitions if self.query is not None and not news else 4 * partitions

    @property
    def located(self) -> bool:
        """Whether every atom of every rule is at its head's location (one
        variable): then the facts of a location derive only from facts of that
        location, and a task needs only the facts of its own locations."""
        return all(rule.head_terms[0][0] == "v" and all(terms[0] == rule.head_terms[0] for _, terms in rule.body)
                   for rule in self.rules)

    @property
    def by_location(self) -> bool:
        """Whether the buckets are the locations': the rules are `located` and
        every relation's pivot is its location alone."""
        return self.located and all(self.pivot[n] == (0,) for n in self.names)

    @property
    def by_pivot(self) -> bool:
        """Whether the buckets are those of a pivot finer than the location:
        several tasks' work whatever the facts (`one_task` without reading them)."""
        return self.partitioned and not self.by_location

    # ---------------------------------------------------------------- in a task
    def solve(self, tables: dict, bucket: int, buckets: int, news: dict | None = None) -> dict:
        """The new facts of the stratum's relations (not in `tables`) whose
        pivot falls in `bucket`, from `tables` ({relation: pa.Table c0..});
        for a lattice relation, its whole best relation instead (the best row
        of every group, those of `tables` included). With `news` (after the
        first tick: {relation: its new facts this tick}), a differential rule's
        first iteration reads them, one body atom at a time, as the general
        loop's does (executor.Executor._derive): what it derives from old
        facts only is in `tables` already."""
        if self.query is not None and news is None:
            found = self.query.solve({n: tables[n] for n in self.reads}, self.pivot, bucket, buckets)
            if found is not None:  # else an integer overflow: the loop below reports it as the reference does
                return found

        def mine(name, table):
            return table if buckets == 1 else table.filter(_in_bucket(table, self.pivot[name], bucket, buckets))

        total = {n: self._reduce(n, mine(n, tables[n])) for n in self.names}
        base = {n: t for n, t in tables.items() if n not in self.names}
        full = {**base, **total}
        derived = {n: [] for n in self.names}
        for rule in self.rules:
            if news is None or not rule.differential:
                derived[rule.head].append(mine(rule.head, self._evaluate(rule, full, None, None)))
                continue
            for i, (name, _) in enumerate(rule.body):
                if name in news and news[name].num_rows:
                    derived[rule.head].append(mine(rule.head, self._evaluate(rule, full, i, news[name])))
        delta = self._new(derived, total)
        found = {n: [delta[n]] for n in self.names}
        while any(delta[n].num_rows for n in self.names):
            total = {n: pa.concat_tables([total[n], delta[n]]) for n in self.names}
            total.update({n: self._reduce(n, total[n]) for n in self.lattices})  # improved groups replaced
            full = {**base, **total}
            derived = {n: [] for n in self.names}
            for rule in self.rules:
                for i, (name, _) in enumerate(rule.body):
                    if name in self.names and delta[name].num_rows:
                        derived[rule.head].append(self._evaluate(rule, full, i, delta[name]))
            delta = self._new(derived, total)
            for n in self.names:
                found[n].append(delta[n])
        return {n: (total[n] if n in self.lattices else pa.concat_tables(found[n])).combine_chunks()
                for n in self.names}

    def _reduce(self, name: str, table: pa.Table) -> pa.Table:
        """The distinct rows of `table`; for a lattice relation the best row of each group."""
        lattice = self.lattices.get(name)
        if lattice is None or not table.num_rows:
            return _distinct(table)
        value = table.column_names[lattice.position]
        keys = [c for c in table.column_names if c != value]
        best = table.group_by(keys, use_threads=False).aggregate([(value, lattice.func)])
        return pa.table([best[f"{value}_{lattice.func}" if c == value else c] for c in table.column_names],
                        schema=self.schemas[name])

    def _new(self, derived: dict, total: dict) -> dict:
        """Per relation, the distinct derived rows not in `total`; for a
        lattice relation, the best derived row of each group that is new or
        strictly better than its row in `total`."""
        out = {}
        for n in self.names:
            frames = [t for t in derived[n] if t.num_rows]
            if not frames:
                out[n] = self.schemas[n].empty_table()
                continue
            candidates = self._reduce(n, pa.concat_tables(frames))
            if not total[n].num_rows:
                out[n] = candidates
            elif n in self.lattices:
                out[n] = _improving(candidates, total[n], self.lattices[n])
            else:  # Acero hashes the right side: the candidates (small), not the total (growing)
                out[n] = total[n].join(candidates, keys=candidates.column_names, join_type="right anti")
        return out

    def _evaluate(self, rule: _Rule, full: dict, occurrence, delta) -> pa.Table:
        """The rule's head rows, atom `occurrence` reading `delta`."""
        result = None  # no step yet: one empty binding
        for step in rule.steps:
            if step[0] == "atom":
                name, terms = rule.body[step[1]]
                result = _join(result, _bind(delta if step[1] == occurrence else full[name], terms))
            else:
                result = _test(step, _unit() if result is None else result)
            if not result.num_rows:
                return self.schemas[rule.head].empty_table()
        schema = self.schemas[rule.head]
        columns = [result[t[1]] if t[0] == "v" else pa.repeat(pa.scalar(t[1]), result.num_rows)
                   for t in rule.head_terms]
        # safe=False: an int in a double column rounds as Python's float() does
        return pa.table([pc.cast(c, f.type, safe=False) for c, f in zip(columns, schema)], schema=schema)

    # ---------------------------------------------------------------- in the driver
    def one_task(self, tables: dict) -> bool:
        """Whether one task would solve the component over `tables` ({relation:
        pa.Table c0..}): it is not split into buckets, or its buckets are by
        location and the tables hold facts of one location at most.

        >>> from sparkdedalus.checks import build_program
        >>> from sparkdedalus.syntax.loader import load_text
        >>> p = build_program(load_text(".decl link(l: string, x: int, y: int) "
        ...     "cc(L, X, X) :- link(L, X, _); cc(L, Y, min<C>) :- cc(L, X, C), link(L, X, Y);"))
        >>> plan = ArrowFixpoint.compile(p.rules, ["cc"], p)
        >>> link = pa.table({"c0": ["g", "g"], "c1": [1, 2], "c2": [2, 1]})
        >>> cc = pa.table({"c0": pa.array([], pa.string()), "c1": pa.array([], pa.int64()),
        ...                "c2": pa.array([], pa.int64())})
        >>> plan.one_task({"link": link, "cc": cc})
        True
        >>> plan.one_task({"link": pa.table({"c0": ["g", "h"], "c1": [1, 1], "c2": [2, 2]}), "cc": cc})
        False
        """
        if self.by_pivot:
            return False
        if not self.partitioned:
            return True
        locations = set()
        for table in tables.values():
            locations.update(pc.unique(table.column(0)).to_pylist() if table.num_rows else ())
        return len(locations) <= 1

    def solve_here(self, spark, tables: dict) -> tuple[dict, dict]:
        """The component solved in the driver from `tables` ({relation:
        pa.Table c0..}, every relation it reads: what `frames` would read), by
        `solve` in one bucket; its facts as local relations ({relation: frame
        c0..}, `createDataFrame` from Arrow: no job) and their number
        ({relation: rows})."""
        found = self.solve({n: tables[n].cast(self.schemas[n]) for n in self.reads}, bucket=0, buckets=1)
        frames = {n: spark.createDataFrame(found[n], _sql_schema(self.schemas[n])) for n in self.names}
        return frames, {n: found[n].num_rows for n in self.names}

    # ---------------------------------------------------------------- the Spark side
    def frames(self, current: dict, buckets: int, partitions: int, counted: bool = True, shared: bool = True,
               news: dict | None = None) -> tuple[dict, int | None]:
        """The stratum's new facts ({relation: frame c0..} reading one
        checkpoint) and their number, from the frames the rules read
        (`current`) and, after the first tick, the new facts of those that
        grow (`news`, see `solve`): one job, the buckets spread over
        `partitions` tasks. Not `counted`: no job and no number (None); the
        first job that reads the frames computes them, into a lazy checkpoint
        the others read when `shared`, else in line (one reader)."""
        slots = {n: f"s{i}" for i, n in enumerate(self.reads)}
        if news is not None:
            news = {n: f for n, f in news.items() if n in self.reads}
        grown = sorted(news) if news is not None else None  # what a task is told of `news` (no frames)
        # by location: a fact goes to the bucket of its location only; else every
        # bucket gets every fact and keeps the facts of its pivot (`solve`)
        route = [f"CAST(pmod(hash(`c0`), {buckets}) AS INT) AS __b"] if self.by_location else []
        parts = []
        # a relation's rows are tagged with its name, its new facts with "+" and its name
        for tag, name, frame in [(n, n, current[n]) for n in self.reads] + \
                                [(f"+{n}", n, news[n]) for n in grown or []]:
            exprs = [f"'{tag}' AS __rel"] + [
                (f"struct({', '.join(f'`{c}`' for c in self.schemas[o].names)}) AS {slots[o]}" if o == name
                 else f"CAST(NULL AS {_sql_struct(self.schemas[o])}) AS {slots[o]}") for o in self.reads]
            parts.append(frame.selectExpr(*exprs, *route))
        packed = reduce(lambda a, b: a.unionAll(b), parts)
        out_slots = {n: f"s{i}" for i, n in enumerate(self.names)}
        out_schema = "__rel string, " + ", ".join(f"{out_slots[n]} {_sql_struct(self.schemas[n])}"
                                                  for n in self.names)

        def table_of(table: pa.Table, tag: str, name: str) -> pa.Table:
            rows = table.filter(pc.equal(table.column("__rel"), tag)).column(slots[name])
            return pa.Table.from_struct_array(rows.combine_chunks() if rows.num_chunks else
                                              pa.array([], rows.type)).cast(self.schemas[name])

        def solved(table: pa.Table, bucket: int, buckets: int) -> dict:
            tables = {name: table_of(table, name, name) for name in self.reads}
            new = {name: table_of(table, f"+{name}", name) for name in grown} if grown is not None else None
            return self.solve(tables, bucket, buckets, new)

        def packed_found(found: dict) -> pa.Table:
            pieces = []
            for name in self.names:
                rows = found[name]
                columns = [pa.repeat(pa.scalar(name, pa.string()), rows.num_rows)]
                for other in self.names:
                    struct_type = pa.struct(list(self.schemas[other]))
                    columns.append(pa.StructArray.from_arrays([c.combine_chunks() for c in rows.columns],
                                                             fields=list(self.schemas[other]))
                                   if other == name else pa.nulls(rows.num_rows, struct_type))
                pieces.append(pa.table(columns, names=["__rel", *out_slots.values()]))
            return pa.concat_tables(pieces)

        if self.by_location:
            # a partition holds whole locations: its facts are solved together, with
            # no grouping (no sort), and in one partition with no shuffle either
            def task(batches):
                batches = list(batches)
                if batches:
                    yield from packed_found(solved(pa.Table.from_batches(batches), 0, 1)).to_batches()

            packed = packed.repartition(partitions, "__b") if partitions > 1 else packed.coalesce(1)
            result = packed.mapInArrow(task, out_schema)
        else:
            def task(table: pa.Table) -> pa.Table:
                bucket = labels.index(table.column("__b")[0].as_py())
                return packed_found(solved(table, bucket, buckets))

            # every row to every bucket: a generator, not a join (a broadcast would cost a job);
            # bucket i labelled so that it is hash-partitioned into partition i % partitions
            labels = spread_values(buckets, max(1, min(buckets, partitions)))
            packed = packed.selectExpr("*", f"explode(array({', '.join(map(str, labels))})) AS __b")
            if buckets > 1 and partitions > 1:
                # a tick in one partition would otherwise solve every bucket in one task
                packed = packed.repartition(min(buckets, partitions), "__b")
            result = packed.groupBy("__b").applyInArrow(task, out_schema)
        rows = None
        if counted or shared:
            result = result.localCheckpoint(eager=False)
        if counted:  # computed and counted now, so that the rest of the tick can be sized to it
            rows = result.count()
        return {n: result.where(f"__rel = '{n}'").select(f"{out_slots[n]}.*") for n in self.names}, rows


_ARROW = {"int": pa.int64(), "long": pa.int64(), "double": pa.float64(), "string": pa.string(),
          "bool": pa.bool_()}
_NUMBERS = {pa.int64(), pa.float64()}
_ARITH = {"+": pc.add_checked, "-": pc.subtract_checked, "*": pc.multiply_checked}
_COMPARE = {"<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal, "==": pc.equal,
            "!=": pc.not_equal}
_UNIT_NAMES = ["__unit"]


@lru_cache(maxsize=1)
def _unit() -> pa.Table:
    """The one empty binding before any atom. Built when first needed, not at
    import: building an Arrow array imports pandas (pyarrow looks for pandas
    objects), which a run that never solves a fixpoint does not need."""
    return pa.table({"__unit": pa.array([0], pa.int8())})


_SQL_TYPES = {pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.string(): "STRING", pa.bool_(): "BOOLEAN"}


def _sql_schema(schema: pa.Schema, separator: str = " ") -> str:
    """A DDL schema (`c0 STRING, c1 BIGINT`) of an Arrow schema."""
    return ", ".join(f"{f.name}{separator}{_SQL_TYPES[f.type]}" for f in schema)


def _sql_struct(schema: pa.Schema) -> str:
    """The struct type (`STRUCT<c0: STRING, c1: BIGINT>`) of an Arrow schema's rows."""
    return f"STRUCT<{_sql_schema(schema, ': ')}>"


def _bind(table: pa.Table, terms: tuple) -> pa.Table:
    """An atom's rows as one column per variable: constants and repeated
    variables become filters."""
    mask = None
    first: dict = {}
    for i, (kind, value) in enumerate(terms):
        column = table.column(i)
        if kind == "c":
            cond = pc.equal(column, pa.scalar(value).cast(column.type))
        elif value in first:
            cond = pc.equal(column, table.column(first[value]))
        else:
            first[value] = i
            continue
        mask = cond if mask is None else pc.and_(mask, cond)
    if mask is not None:
        table = table.filter(mask)
    return pa.table([table.column(i) for i in first.values()], names=list(first))


def _join(result: pa.Table | None, table: pa.Table) -> pa.Table:
    """`result` (None: no binding yet) joined with an atom's bound rows on
    their shared variables (none: a cross product)."""
    if result is None or result.column_names == _UNIT_NAMES:
        return table if result is None else _join(None, table)
    shared = [c for c in table.column_names if c in result.column_names]
    if not shared:
        result = result.append_column("__x", pa.repeat(pa.scalar(0, pa.int8()), result.num_rows))
        table = table.append_column("__x", pa.repeat(pa.scalar(0, pa.int8()), table.num_rows))
        shared = ["__x"]
    # Acero hashes the right side: the smaller one
    result = result.join(table, keys=shared, join_type="inner") if table.num_rows <= result.num_rows \
        else table.join(result, keys=shared, join_type="inner")
    return result.drop_columns(["__x"]) if "__x" in result.column_names else result


def _test(step: tuple, result: pa.Table) -> pa.Table:
    """`result` filtered by a comparison step, or with an assigned column."""
    try:
        if step[0] == "assign":
            _, name, expr, _ = step
            return result.append_column(name, _broadcast(_value(expr, result), result.num_rows))
        _, op, left, right, _ = step
        return result.filter(_broadcast(_COMPARE[op](_value(left, result), _value(right, result)), result.num_rows))
    except pa.ArrowInvalid as exc:  # the checked kernels' overflow
        raise OverflowError(f"integer overflow in `{step[-1]}`: a result does not fit in 64 bits ({exc})") from None


def _value(expr: tuple, table: pa.Table):
    """An expression of `_expression` on `table`'s rows: a column or a scalar.
    Integers are checked for overflow; with a double, both sides are doubles."""
    if expr[0] == "v":
        return table[expr[1]]
    if expr[0] == "c":
        return pa.scalar(expr[1])
    left, right = _value(expr[1], table), _value(expr[2], table)
    if pa.float64() in (left.type, right.type):
        left, right = pc.cast(left, pa.float64(), safe=False), pc.cast(right, pa.float64(), safe=False)
    return _ARITH[expr[0]](left, right)


def _broadcast(value, rows: int):
    return pa.repeat(value, rows) if isinstance(value, pa.Scalar) else value


def _distinct(table: pa.Table) -> pa.Table:
    return table.group_by(table.column_names, use_threads=False).aggregate([]) if table.num_rows else table


def _improving(candidates: pa.Table, total: pa.Table, lattice) -> pa.Table:
    """The rows of `candidates` (one per group) whose group `total` lacks or
    holds with a worse value."""
    value = candidates.column_names[lattice.position]
    keys = [c for c in candidates.column_names if c != value]
    old = total.select(keys + [value]).rename_columns(keys + ["__old"])
    joined = old.join(candidates, keys=keys, join_type="right outer")  # Acero hashes the candidates
    better = (pc.less if lattice.func == "min" else pc.greater)(joined[value], joined["__old"])
    return joined.filter(pc.fill_null(better, True)).select(candidates.column_names)


def _in_bucket(table: pa.Table, columns: tuple, bucket: int, buckets: int):
    """Whether each row's pivot columns hash to `bucket` (the same function in
    every task and process: pandas' fixed-key hash)."""
    import pandas as pd

    keys = table.select([table.column_names[k] for k in columns]).to_pandas()
    return pa.array(pd.util.hash_pandas_object(keys, index=False).to_numpy() % buckets == bucket)


# Spark's Python workers unpickle the task's function; pickle this module's
# code with it, so that they need not import this checkout of the package.
try:
    from pyspark import cloudpickle as _cloudpickle

    _cloudpickle.register_pickle_by_value(sys.modules[__name__])
except (ImportError, AttributeError, ValueError):  # pragma: no cover - an older cloudpickle
    pass
