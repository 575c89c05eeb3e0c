"""A recursive stratum evaluated to its fixpoint inside Spark tasks, in Arrow.

The general semi-naive loop (runtime.TickLoop._recursive) costs a Spark job,
a checkpoint and a shuffle per iteration. A stratum whose rules are plain
conjunctive queries (positive atoms of the current tick, variables and
constants; no negation, comparison, function, aggregate or choice) is handed
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
buckets' results are disjoint. Otherwise one task computes the stratum.

Switch: the session setting `spark.sparkdedalus.fixpoint` (`arrow`, the
default, or `loop` for the general loop everywhere).

>>> from sparkdedalus.checks import build_program
>>> from sparkdedalus.syntax.loader import load_text
>>> p = build_program(load_text(".decl edge(l: string, x: int, y: int) "
...     "path(L, X, Y) :- edge(L, X, Y); path(L, X, Z) :- edge(L, X, Y), path(L, Y, Z);"))
>>> plan = ArrowFixpoint.compile(p.rules, ["path"], p)
>>> plan.pivot["path"]
(0, 2)
>>> import pyarrow as pa
>>> edge = pa.table({"c0": ["g"] * 3, "c1": [1, 2, 3], "c2": [2, 3, 1]})
>>> path = pa.table({"c0": pa.array([], pa.string()), "c1": pa.array([], pa.int64()),
...                  "c2": pa.array([], pa.int64())})
>>> found = plan.solve({"edge": edge, "path": path}, bucket=0, buckets=1)
>>> found["path"].num_rows     # every node of the 3-cycle reaches every node
9
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import reduce

import pyarrow as pa
import pyarrow.compute as pc

from sparkdedalus.program import Program
from sparkdedalus.syntax import ast

#: the session setting that chooses how recursive strata run
SETTING = "spark.sparkdedalus.fixpoint"
ARROW, LOOP = "arrow", "loop"

# a term of a compiled atom: ("v", variable name) or ("c", constant)
Term = tuple


@dataclass(frozen=True)
class _Rule:
    head: str
    head_terms: tuple  # Term per head argument
    body: tuple  # (relation, (Term, ...)) per positive atom


def _term(arg) -> Term | None:
    if isinstance(arg, ast.Var):
        return ("v", arg.name)
    if isinstance(arg, ast.Const):
        return ("c", arg.value)
    return None


def _simple(rule, tick_free: bool = True) -> _Rule | None:
    """The rule as plain terms, or None when it needs more than joins."""
    if rule.negated_atoms or rule.comparisons or rule.function_atoms or rule.choose or rule.aggregates:
        return None
    if len(rule.positive_atoms) != len([lit for lit in rule.body if isinstance(lit, ast.Atom)]) \
            or len(rule.body) != len(rule.positive_atoms):
        return None
    head = tuple(_term(a) for a in rule.head.args)
    body = []
    for atom in rule.positive_atoms:
        if atom.time is not None and tick_free:
            return None
        terms = tuple(_term(a) for a in atom.args)
        if None in terms:
            return None
        body.append((atom.name, terms))
    variables = {t[1] for _, terms in body for t in terms if t[0] == "v"}
    if None in head or any(t[0] == "v" and t[1] not in variables for t in head) or not body:
        return None
    return _Rule(rule.head.name, head, tuple(body))


def _pivot(rules: list, names: list) -> dict:
    """Per stratum relation, the argument positions every rule keeps from each
    recursive body atom to its head (same relation: same positions); the
    location (position 0) when the stratum has several relations."""
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
    return {n: tuple(sorted(keep)) for n in names}


class ArrowFixpoint:
    """A recursive stratum's rules compiled for the Arrow loop."""

    def __init__(self, rules: list, names: list, schemas: dict, pivot: dict):
        self.rules = rules
        self.names = list(names)
        self.schemas = schemas  # relation -> pa.Schema (c0..cn-1)
        self.pivot = pivot
        self.reads = sorted({name for r in rules for name, _ in r.body} | set(names))

    @classmethod
    def compile(cls, rules, names: list, program: Program) -> "ArrowFixpoint | None":
        """The stratum compiled, or None when some rule needs the general loop."""
        simple = [_simple(r) for r in rules]
        if any(s is None for s in simple):
            return None
        schemas = {}
        for name in {n for r in simple for n, _ in r.body} | set(names):
            rel = program.relations[name]
            schemas[name] = pa.schema([(f"c{i}", _ARROW[t]) for i, t in enumerate(rel.types)])
        return cls(simple, names, schemas, _pivot(simple, list(names)))

    @property
    def partitioned(self) -> bool:
        return all(self.pivot[n] for n in self.names)

    # ---------------------------------------------------------------- in a task
    def solve(self, tables: dict, bucket: int, buckets: int) -> dict:
        """The new facts of the stratum's relations (not in `tables`) whose
        pivot falls in `bucket`, from `tables` ({relation: pa.Table c0..})."""
        def mine(name, table):
            return table if buckets == 1 else table.filter(_in_bucket(table, self.pivot[name], bucket, buckets))

        total = {n: _distinct(mine(n, tables[n])) for n in self.names}
        base = {n: t for n, t in tables.items() if n not in self.names}
        full = {**base, **total}
        derived = {n: [] for n in self.names}
        for rule in self.rules:
            derived[rule.head].append(mine(rule.head, self._evaluate(rule, full, None, None)))
        delta = self._new(derived, total)
        found = {n: [delta[n]] for n in self.names}
        while any(delta[n].num_rows for n in self.names):
            total = {n: pa.concat_tables([total[n], delta[n]]) for n in self.names}
            full = {**base, **total}
            derived = {n: [] for n in self.names}
            for rule in self.rules:
                for i, (name, _) in enumerate(rule.body):
                    if name in self.names and delta[name].num_rows:
                        derived[rule.head].append(self._evaluate(rule, full, i, delta[name]))
            delta = self._new(derived, total)
            for n in self.names:
                found[n].append(delta[n])
        return {n: pa.concat_tables(found[n]).combine_chunks() for n in self.names}

    def _new(self, derived: dict, total: dict) -> dict:
        """Per relation, the distinct derived rows not in `total`."""
        out = {}
        for n in self.names:
            frames = [t for t in derived[n] if t.num_rows]
            if not frames:
                out[n] = self.schemas[n].empty_table()
                continue
            candidates = _distinct(pa.concat_tables(frames))
            # Acero hashes the right side: the candidates (small), not the total (growing)
            out[n] = total[n].join(candidates, keys=candidates.column_names, join_type="right anti") \
                if total[n].num_rows else candidates
        return out

    def _evaluate(self, rule: _Rule, full: dict, occurrence, delta) -> pa.Table:
        """The rule's head rows, atom `occurrence` reading `delta`."""
        result = None
        for i, (name, terms) in enumerate(rule.body):
            table = _bind(delta if i == occurrence else full[name], terms)
            if result is None:
                result = table
                continue
            shared = [c for c in table.column_names if c in result.column_names]
            if not shared:
                result = result.append_column("__x", pa.repeat(pa.scalar(0, pa.int8()), result.num_rows))
                table = table.append_column("__x", pa.repeat(pa.scalar(0, pa.int8()), table.num_rows))
                shared = ["__x"]
            # Acero hashes the right side: the smaller one
            result = result.join(table, keys=shared, join_type="inner") if table.num_rows <= result.num_rows \
                else table.join(result, keys=shared, join_type="inner")
            if "__x" in result.column_names:
                result = result.drop_columns(["__x"])
            if not result.num_rows:
                return self.schemas[rule.head].empty_table()
        schema = self.schemas[rule.head]
        columns = [result[t[1]] if t[0] == "v" else pa.repeat(pa.scalar(t[1]), result.num_rows)
                   for t in rule.head_terms]
        return pa.table([c.cast(f.type) for c, f in zip(columns, schema)], schema=schema)


    # ---------------------------------------------------------------- the Spark side
    def frames(self, current: dict, buckets: int, partitions: int) -> tuple[dict, int]:
        """The stratum's new facts ({relation: frame c0..} reading one
        checkpoint) and their number, from the frames the rules read
        (`current`): one job, the buckets spread over `partitions` tasks."""
        slots = {n: f"s{i}" for i, n in enumerate(self.reads)}
        parts = []
        for name in self.reads:
            exprs = [f"'{name}' AS __rel"] + [
                (f"struct({', '.join(f'`{c}`' for c in self.schemas[o].names)}) AS {slots[o]}" if o == name
                 else f"CAST(NULL AS {_sql_struct(self.schemas[o])}) AS {slots[o]}") for o in self.reads]
            parts.append(current[name].selectExpr(*exprs))
        packed = reduce(lambda a, b: a.unionAll(b), parts)
        spark = packed.sparkSession
        packed = packed.crossJoin(spark.range(0, buckets, 1, 1).selectExpr("CAST(id AS INT) AS __b"))
        if buckets > 1 and partitions > 1:
            # a tick in one partition would otherwise solve every bucket in one task
            packed = packed.repartition(min(buckets, partitions), "__b")
        out_slots = {n: f"s{i}" for i, n in enumerate(self.names)}
        out_schema = "__rel string, " + ", ".join(f"{out_slots[n]} {_sql_struct(self.schemas[n])}"
                                                  for n in self.names)

        def task(table: pa.Table) -> pa.Table:
            bucket = table.column("__b")[0].as_py()
            tables = {}
            for name in self.reads:
                rows = table.filter(pc.equal(table.column("__rel"), name)).column(slots[name])
                tables[name] = pa.Table.from_struct_array(rows.combine_chunks() if rows.num_chunks else
                                                          pa.array([], rows.type)).cast(self.schemas[name])
            found = self.solve(tables, bucket, buckets)
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

        # computed and counted now, so that the rest of the tick can be sized to it
        result = packed.groupBy("__b").applyInArrow(task, out_schema).localCheckpoint(eager=False)
        rows = result.count()
        return {n: result.where(f"__rel = '{n}'").select(f"{out_slots[n]}.*") for n in self.names}, rows


_ARROW = {"int": pa.int64(), "long": pa.int64(), "double": pa.float64(), "string": pa.string(),
          "bool": pa.bool_()}


def _sql_struct(schema: pa.Schema) -> str:
    names = {pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.string(): "STRING", pa.bool_(): "BOOLEAN"}
    return "STRUCT<" + ", ".join(f"{f.name}: {names[f.type]}" for f in schema) + ">"


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


def _distinct(table: pa.Table) -> pa.Table:
    return table.group_by(table.column_names, use_threads=False).aggregate([]) if table.num_rows else table


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
