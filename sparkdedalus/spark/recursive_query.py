"""A linear recursive stratum solved by one DuckDB recursive query.

When no rule of a stratum reads more than one atom of the stratum (linear
recursion: a transitive closure, same generation, an ontology's hierarchy) and
no relation of it keeps a min or max, semi-naive evaluation is what DuckDB's
`WITH RECURSIVE ... UNION` does: each iteration joins only the rows the one
before added, and `UNION` keeps every row once in one hash table for the whole
loop. The pyarrow loop of spark/fixpoint.py instead anti-joins each
iteration's candidates with the whole relation so far, and de-duplicates them
by grouping (a closure of 15.6 million pairs: 21 s in pyarrow, about 6 s here,
on DuckDB's threads).

The stratum's relations share one recursive table `s`: a column `__r` (which
relation; none for a stratum of one relation) and a slot of columns per relation (`k<relation>_<position>`, NULL
in the other relations' rows). The non-recursive part is the facts already
known and the rules that read no atom of the stratum; the recursive part is
the other rules, each reading `s` once. A rule becomes a `SELECT` over its
atoms (constants and repeated variables as conditions), its comparisons as
conditions and its assignments as expressions; numbers are typed as the
pyarrow loop types them (integer literals BIGINT, decimals DOUBLE), so DuckDB
raises on an integer overflow where pyarrow's checked kernels do: `solve`
then returns None and the caller runs the pyarrow loop, which reports it (or
not) exactly as before.

>>> from sparkdedalus.checks import build_program
>>> from sparkdedalus.syntax.loader import load_text
>>> from sparkdedalus.spark.fixpoint import ArrowFixpoint
>>> p = build_program(load_text(".decl edge(l: string, x: int, y: int) "
...     "path(L, X, Y) :- edge(L, X, Y); path(L, X, Z) :- edge(L, X, Y), path(L, Y, Z);"))
>>> plan = ArrowFixpoint.compile(p.rules, ["path"], p)
>>> query = RecursiveQuery.of(plan.rules, plan.names, plan.schemas, plan.lattices)
>>> edge = pa.table({"c0": ["g"] * 3, "c1": [1, 2, 3], "c2": [2, 3, 1]})
>>> query.solve({"edge": edge, "path": plan.schemas["path"].empty_table()})["path"].num_rows
9
"""

from __future__ import annotations

import sys

import pyarrow as pa
import pyarrow.compute as pc

_SQL_TYPES = {pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.string(): "VARCHAR", pa.bool_(): "BOOLEAN"}
_OPS = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _literal(value) -> str:
    """A constant as a typed DuckDB literal (an int BIGINT, a float DOUBLE)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return f"CAST({value} AS BIGINT)"
    if isinstance(value, float):
        return f"CAST('{value!r}' AS DOUBLE)"
    return "'" + str(value).replace("'", "''") + "'"


def _expression(expr: tuple, binding: dict) -> str:
    """An expression of fixpoint._expression as SQL over the bound columns."""
    if expr[0] == "v":
        return binding[expr[1]]
    if expr[0] == "c":
        return _literal(expr[1])
    return f"({_expression(expr[1], binding)} {expr[0]} {_expression(expr[2], binding)})"


class RecursiveQuery:
    """A linear stratum's rules as one DuckDB recursive query (see the module)."""

    def __init__(self, rules: list, names: list, schemas: dict):
        self.rules = rules
        self.names = list(names)
        self.schemas = schemas
        self.reads = sorted({name for r in rules for name, _ in r.body if name not in names})
        self.tagged = len(self.names) > 1  # `__r` says whose a row is (one relation: no column)

    @classmethod
    def of(cls, rules: list, names: list, schemas: dict, lattices: dict) -> "RecursiveQuery | None":
        """The query of a stratum whose rules read at most one of its atoms
        each and that keeps no min or max; else None."""
        if lattices or any(sum(name in names for name, _ in r.body) > 1 for r in rules):
            return None
        return cls(rules, names, schemas)

    def _slot(self, name: str, position: int) -> str:
        return f"k{self.names.index(name)}_{position}"

    def _row(self, name: str, values: list) -> str:
        """A row of `s`: relation `name`'s values in its slot, NULL elsewhere."""
        columns = [f"{self.names.index(name)} AS __r"] if self.tagged else []
        for other in self.names:
            for i, field in enumerate(self.schemas[other]):
                value = values[i] if other == name else "NULL"
                columns.append(f"CAST({value} AS {_SQL_TYPES[field.type]}) AS {self._slot(other, i)}")
        return ", ".join(columns)

    def _select(self, rule) -> str:
        """The rule as a SELECT of rows of `s`."""
        binding, conditions, sources = {}, [], []
        for j, (name, terms) in enumerate(rule.body):
            alias = f"a{j}"
            if name in self.names:
                sources.append(f"s AS {alias}")
                if self.tagged:
                    conditions.append(f"{alias}.__r = {self.names.index(name)}")
                columns = [f"{alias}.{self._slot(name, p)}" for p in range(len(terms))]
            else:
                sources.append(f"__b{self.reads.index(name)} AS {alias}")
                columns = [f"{alias}.c{p}" for p in range(len(terms))]
            for (kind, value), column in zip(terms, columns):
                if kind == "c":
                    conditions.append(f"{column} = {_literal(value)}")
                elif value in binding:
                    conditions.append(f"{column} = {binding[value]}")
                else:
                    binding[value] = column
        for step in rule.steps:
            if step[0] == "assign":
                binding[step[1]] = _expression(step[2], binding)
            elif step[0] == "filter":
                _, op, left, right, _ = step
                conditions.append(f"{_expression(left, binding)} {_OPS[op]} {_expression(right, binding)}")
        values = [binding[value] if kind == "v" else _literal(value) for kind, value in rule.head_terms]
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        return f"SELECT {self._row(rule.head, values)} FROM {', '.join(sources)}{where}"

    def sql(self, known: list, pivot: dict | None = None, bucket: int = 0, buckets: int = 1) -> str:
        """The recursive query; `known`: the stratum relations with facts
        already (read from `__k<index>`), which seed it; with `buckets` > 1,
        only the facts whose `pivot` columns ({relation: positions}, kept by
        every rule from its recursive atom to its head) hash to `bucket`."""
        seeds = [(n, f"SELECT {self._row(n, [f'c{i}' for i in range(len(self.schemas[n]))])} "
                     f"FROM __k{self.names.index(n)}") for n in known]
        steps = []
        for rule in self.rules:
            if all(name not in self.names for name, _ in rule.body):
                seeds.append((rule.head, self._select(rule)))
            else:
                steps.append(self._select(rule))
        if buckets > 1:  # the seeds of the bucket: what derives from them keeps their pivot
            seeds = [(n, f"SELECT * FROM ({seed}) WHERE hash({', '.join(self._slot(n, p) for p in pivot[n])}) "
                         f"% {buckets} = {bucket}") for n, seed in seeds]
        seeds = [seed for _, seed in seeds]
        if not seeds:  # nothing to start from
            seeds = [f"SELECT {self._row(self.names[0], ['NULL'] * len(self.schemas[self.names[0]]))} WHERE FALSE"]
        columns = ["__r"] * self.tagged + [self._slot(n, i) for n in self.names for i in range(len(self.schemas[n]))]
        recursive = f"\nUNION\nSELECT * FROM ({' UNION ALL '.join(steps)})" if steps else ""
        return (f"WITH RECURSIVE s({', '.join(columns)}) AS ({' UNION ALL '.join(seeds)}{recursive})\n"
                "SELECT * FROM s")

    def solve(self, tables: dict, pivot: dict | None = None, bucket: int = 0, buckets: int = 1) -> dict | None:
        """The new facts of the stratum's relations (not in `tables`) whose
        pivot falls in `bucket` (see `sql`; DuckDB's `hash`), from `tables`
        ({relation: pa.Table c0..}); None when DuckDB raised on an integer
        overflow (see the module)."""
        import duckdb

        con = duckdb.connect()
        try:
            for i, name in enumerate(self.reads):
                con.register(f"__b{i}", tables[name])
            known = [n for n in self.names if tables[n].num_rows]
            for n in known:
                con.register(f"__k{self.names.index(n)}", tables[n])
            try:
                found = con.sql(self.sql(known, pivot, bucket, buckets)).to_arrow_table()
            except duckdb.OutOfRangeException:
                return None
            out = {}
            for n in self.names:
                slots = [self._slot(n, i) for i in range(len(self.schemas[n]))]
                rows = found.filter(pc.equal(found["__r"], self.names.index(n))) if self.tagged else found
                rows = rows.select(slots)
                rows = rows.rename_columns(self.schemas[n].names).cast(self.schemas[n])
                if n in known:  # only what is new (the known facts of every bucket: none of another's)
                    rows = rows.join(tables[n].cast(self.schemas[n]), keys=rows.column_names, join_type="left anti")
                out[n] = rows.combine_chunks()
            return out
        finally:
            con.close()


# Spark's Python workers unpickle the Arrow fixpoint's task, which calls this
# module: pickle its code with it (see spark/fixpoint.py).
try:
    from pyspark import cloudpickle as _cloudpickle

    _cloudpickle.register_pickle_by_value(sys.modules[__name__])
except (ImportError, AttributeError, ValueError):  # pragma: no cover - an older cloudpickle
    pass
