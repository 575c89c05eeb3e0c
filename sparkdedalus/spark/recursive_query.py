"""A recursive stratum solved by DuckDB: one recursive query when linear, a
semi-naive loop of queries when not, and a keyed recursive query for a linear
stratum of one relation that keeps a min or max.

When no rule of a stratum reads more than one atom of the stratum (linear
recursion: a transitive closure, same generation, an ontology's hierarchy) and
no relation of it keeps a min or max, semi-naive evaluation is what DuckDB's
`WITH RECURSIVE ... UNION` does: each iteration joins only the rows the one
before added, and `UNION` keeps every row once in one hash table for the whole
loop. The pyarrow loop of spark/fixpoint.py instead anti-joins each
iteration's candidates with the whole relation so far, and de-duplicates them
by grouping (a closure of 15.6 million pairs: 21 s in pyarrow, about 6 s here,
on DuckDB's threads).

The recursive query's relations share one recursive table `s`: a column `__r` (which
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

A non-linear stratum (Andersen's points-to: `pts` joined with itself) is
beyond a recursive query, whose recursive part sees only the last
iteration's rows. Its loop (`loop_sql`) keeps each relation's facts in a
DuckDB table and the last iteration's new ones in another; an iteration
evaluates each rule once per atom of the stratum in its body, that atom
reading the new facts, and keeps what is not known yet (`EXCEPT`): the
semi-naive loop the pyarrow loop runs, on DuckDB's joins, which also spill
to disk where pyarrow's hold everything in memory (points-to over 20,000
methods, 17 million facts: a Python worker of the pyarrow loop was killed at
9.3 GB).

A linear stratum of one relation keeping the min (max) of a column per group
of the others (shortest paths, components: checks/lattices.py) is DuckDB's
`WITH RECURSIVE ... USING KEY` (`lattice_sql`): one row a group, each
iteration relaxing only the rows the last one improved, where the pyarrow
loop groups and compares the candidates in Python's worker.

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
    """A stratum's rules solved by DuckDB: one recursive query when linear, a
    semi-naive loop of queries when not (see the module)."""

    def __init__(self, rules: list, names: list, schemas: dict, lattice=None):
        self.rules = rules
        self.names = list(names)
        self.schemas = schemas
        self.lattice = lattice  # parts.Lattice of a linear stratum of one relation keeping a min or max
        self.reads = sorted({name for r in rules for name, _ in r.body if name not in names})
        self.tagged = len(self.names) > 1  # `__r` says whose a row is (one relation: no column)
        #: no rule reads more than one atom of the stratum: one recursive query (`sql`), else `loop_sql`
        self.linear = all(sum(name in names for name, _ in r.body) <= 1 for r in rules)

    @classmethod
    def of(cls, rules: list, names: list, schemas: dict, lattices: dict) -> "RecursiveQuery | None":
        """The query of a stratum that keeps no min or max, or of a linear
        stratum of one relation that does (`lattice_sql`); else None."""
        if not lattices:
            return cls(rules, names, schemas)
        query = cls(rules, names, schemas, next(iter(lattices.values())))
        return query if query.linear and len(query.names) == 1 else None

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

    def _own_row(self, name: str, values: list) -> str:
        """A row of relation `name`'s own table (`loop_sql`): its values as c0, c1, ..."""
        return ", ".join(f"CAST({value} AS {_SQL_TYPES[field.type]}) AS c{i}"
                         for i, (value, field) in enumerate(zip(values, self.schemas[name])))

    def _in_s(self, j: int, name: str, alias: str, arity: int) -> tuple:
        """Atom `j` of a rule read from the recursive table `s` (`sql`), or a base table."""
        if name not in self.names:
            return f"__b{self.reads.index(name)}", [f"{alias}.c{p}" for p in range(arity)], []
        tag = [f"{alias}.__r = {self.names.index(name)}"] if self.tagged else []
        return "s", [f"{alias}.{self._slot(name, p)}" for p in range(arity)], tag

    def _select(self, rule, source=None, row=None) -> str:
        """The rule as a SELECT: atom j read from `source(j, name, alias,
        arity)` = (table, its columns, conditions), `_in_s` unless given; the
        head's values as `row(name, values)`, `_row` unless given."""
        source, row = source or self._in_s, row or self._row
        binding, conditions, sources = {}, [], []
        for j, (name, terms) in enumerate(rule.body):
            alias = f"a{j}"
            table, columns, read = source(j, name, alias, len(terms))
            sources.append(f"{table} AS {alias}")
            conditions += read
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
        return f"SELECT {row(rule.head, values)} FROM {', '.join(sources)}{where}"

    def _seeds(self, known: list, own: bool, pivot: dict | None, bucket: int, buckets: int) -> list:
        """(relation, SQL) of the facts the stratum starts from: those
        `known` (`__k<index>`) and what its rules that read none of its atoms
        derive, as rows of `s` (`_row`) or, when `own`, of the relation's own
        table (`_own_row`); with `buckets` > 1, only those whose `pivot`
        columns hash to `bucket` (what derives from them keeps their pivot)."""
        row = self._own_row if own else self._row
        seeds = [(n, f"SELECT {row(n, [f'c{i}' for i in range(len(self.schemas[n]))])} "
                     f"FROM __k{self.names.index(n)}") for n in known]
        seeds += [(rule.head, self._select(rule, row=row)) for rule in self.rules
                  if all(name not in self.names for name, _ in rule.body)]
        if buckets > 1:
            slot = (lambda n, p: f"c{p}") if own else self._slot
            seeds = [(n, f"SELECT * FROM ({seed}) WHERE hash({', '.join(slot(n, p) for p in pivot[n])}) "
                         f"% {buckets} = {bucket}") for n, seed in seeds]
        return seeds

    def _steps(self) -> list:
        """The rules that read an atom of the stratum."""
        return [rule for rule in self.rules if any(name in self.names for name, _ in rule.body)]

    def sql(self, known: list, pivot: dict | None = None, bucket: int = 0, buckets: int = 1) -> str:
        """The recursive query of a linear stratum; `known`: the stratum
        relations with facts already (read from `__k<index>`), which seed it;
        with `buckets` > 1, only the facts whose `pivot` columns ({relation:
        positions}, kept by every rule from its recursive atom to its head)
        hash to `bucket`."""
        seeds = [seed for _, seed in self._seeds(known, False, pivot, bucket, buckets)]
        steps = [self._select(rule) for rule in self._steps()]
        if not seeds:  # nothing to start from
            seeds = [f"SELECT {self._row(self.names[0], ['NULL'] * len(self.schemas[self.names[0]]))} WHERE FALSE"]
        columns = ["__r"] * self.tagged + [self._slot(n, i) for n in self.names for i in range(len(self.schemas[n]))]
        recursive = f"\nUNION\nSELECT * FROM ({' UNION ALL '.join(steps)})" if steps else ""
        return (f"WITH RECURSIVE s({', '.join(columns)}) AS ({' UNION ALL '.join(seeds)}{recursive})\n"
                "SELECT * FROM s")

    def loop_sql(self, known: list, pivot: dict | None = None, bucket: int = 0, buckets: int = 1) -> tuple:
        """A non-linear stratum's semi-naive loop, as (SQL creating each
        relation's table of all facts so far, `__f<index>`, from the seeds (see
        `sql`); SQL of each relation's new facts of an iteration, from the
        last iteration's, `__d<index>`). An iteration evaluates a rule once
        per atom of the stratum in its body, that atom reading `__d`, the
        others `__f`; what `__f` holds already is taken out (`EXCEPT`)."""
        seeds = self._seeds(known, True, pivot, bucket, buckets)
        first, step = [], []
        for index, name in enumerate(self.names):
            mine = [seed for n, seed in seeds if n == name]
            empty = f"SELECT {self._own_row(name, ['NULL'] * len(self.schemas[name]))} WHERE FALSE"
            first.append(f"CREATE OR REPLACE TEMP TABLE __f{index} AS SELECT DISTINCT * FROM ("
                         f"{' UNION ALL '.join(mine) or empty})")
            selects = []
            for rule in self._steps():
                if rule.head != name:
                    continue
                for j, (atom, _) in enumerate(rule.body):  # atom j reads the last iteration's, the others all
                    if atom in self.names:
                        read = self._own(lambda k, n, j=j: f"{'__d' if k == j else '__f'}{self.names.index(n)}")
                        selects.append(self._select(rule, read, self._own_row))
            step.append(f"SELECT * FROM ({' UNION ALL '.join(selects) or empty}) EXCEPT SELECT * FROM __f{index}")
        return first, step

    def lattice_sql(self, known: list, pivot: dict | None = None, bucket: int = 0, buckets: int = 1) -> str:
        """The recursive query of a linear stratum of one relation keeping the
        min (max) of a column per group of the others (`sql`'s arguments):
        DuckDB's `WITH RECURSIVE ... USING KEY` (the group) keeps one row a
        group; an iteration joins the rows the last one improved, takes the
        best candidate of each group and keeps those better than the group's
        row so far (`recurring.s`), which replace it."""
        name, position, func = self.names[0], self.lattice.position, self.lattice.func
        columns = [f"c{i}" for i in range(len(self.schemas[name]))]
        group = [c for i, c in enumerate(columns) if i != position]
        value = columns[position]
        empty = f"SELECT {self._own_row(name, ['NULL'] * len(columns))} WHERE FALSE"

        def best(selects: list) -> str:
            chosen = ", ".join(f"{func}({c}) AS {c}" if c == value else c for c in columns)
            return f"SELECT {chosen} FROM ({' UNION ALL '.join(selects) or empty}) GROUP BY {', '.join(group)}"

        seeds = [seed for _, seed in self._seeds(known, True, pivot, bucket, buckets)]
        steps = [self._select(rule, self._own(lambda j, n: "s"), self._own_row) for rule in self._steps()]
        on = " AND ".join(f"b.{c} IS NOT DISTINCT FROM n.{c}" for c in group)
        recursive = (f"\nUNION\nSELECT n.* FROM ({best(steps)}) n LEFT JOIN recurring.s b ON {on} "
                     f"WHERE b.{value} IS NULL OR n.{value} {'<' if func == 'min' else '>'} b.{value}") if steps else ""
        return (f"WITH RECURSIVE s({', '.join(columns)}) USING KEY ({', '.join(group)}) AS ({best(seeds)}{recursive})\n"
                "SELECT * FROM s")

    def _own(self, table_of):
        """`_select`'s source for tables of columns c0, c1, ...: a base table,
        or for atom j of the stratum's relation `name`, `table_of(j, name)`."""
        def source(j: int, name: str, alias: str, arity: int) -> tuple:
            table = table_of(j, name) if name in self.names else f"__b{self.reads.index(name)}"
            return table, [f"{alias}.c{p}" for p in range(arity)], []
        return source

    def solve(self, tables: dict, pivot: dict | None = None, bucket: int = 0, buckets: int = 1) -> dict | None:
        """The new facts of the stratum's relations (not in `tables`) whose
        pivot falls in `bucket` (see `sql`; DuckDB's `hash`), from `tables`
        ({relation: pa.Table c0..}); for a relation keeping a min or max, its
        whole best relation, those of `tables` included, as the pyarrow loop
        gives it; None when DuckDB raised on an integer overflow (see the
        module)."""
        import duckdb

        con = duckdb.connect()
        try:
            for i, name in enumerate(self.reads):  # copied in: DuckDB reads an Arrow table anew at every iteration
                con.register(f"__a{i}", tables[name])
                con.execute(f"CREATE TEMP TABLE __b{i} AS SELECT * FROM __a{i}").fetchall()
            known = [n for n in self.names if tables[n].num_rows]
            for n in known:
                con.register(f"__k{self.names.index(n)}", tables[n])
            try:
                found = self._found(con, known, pivot, bucket, buckets)
            except duckdb.OutOfRangeException:
                return None
            out = {}
            for n, rows in found.items():
                rows = rows.rename_columns(self.schemas[n].names).cast(self.schemas[n])
                if n in known and self.lattice is None:  # only what is new (the known facts of every bucket: none of another's)
                    rows = rows.join(tables[n].cast(self.schemas[n]), keys=rows.column_names, join_type="left anti")
                out[n] = rows.combine_chunks()
            return out
        finally:
            con.close()

    def _loop(self, con, known: list, pivot: dict | None, bucket: int, buckets: int) -> dict:
        """{relation: its facts} by `loop_sql`'s semi-naive loop on `con`: an
        iteration's new facts (`__n`) are added to all (`__f`) and become the
        next iteration's delta (`__d`, renamed, not copied)."""
        def run(statement: str) -> list:  # DuckDB 2 wants every result fetched
            return con.execute(statement).fetchall()

        first, step = self.loop_sql(known, pivot, bucket, buckets)
        for index, create in enumerate(first):
            run(create)
            run(f"CREATE TEMP TABLE __d{index} AS SELECT * FROM __f{index}")
        while True:
            for index, new in enumerate(step):
                run(f"CREATE TEMP TABLE __n{index} AS {new}")
            grew = False
            for index in range(len(step)):
                run(f"INSERT INTO __f{index} SELECT * FROM __n{index}")
                grew |= run(f"SELECT count(*) FROM __n{index}")[0][0] > 0
                run(f"DROP TABLE __d{index}")
                run(f"ALTER TABLE __n{index} RENAME TO __d{index}")
            if not grew:
                return {n: con.sql(f"SELECT * FROM __f{i}").to_arrow_table() for i, n in enumerate(self.names)}

    def _found(self, con, known: list, pivot: dict | None, bucket: int, buckets: int) -> dict:
        """{relation: its facts, pa.Table}, the known ones among them, by the
        recursive query (linear) or the loop (`solve`'s connection `con`)."""
        if not self.linear:
            return self._loop(con, known, pivot, bucket, buckets)
        if self.lattice is not None:
            return {self.names[0]: con.sql(self.lattice_sql(known, pivot, bucket, buckets)).to_arrow_table()}
        found = con.sql(self.sql(known, pivot, bucket, buckets)).to_arrow_table()
        out = {}
        for n in self.names:
            rows = found.filter(pc.equal(found["__r"], self.names.index(n))) if self.tagged else found
            out[n] = rows.select([self._slot(n, i) for i in range(len(self.schemas[n]))])
        return out


# Spark's Python workers unpickle the Arrow fixpoint's task, which calls this
# module: pickle its code with it (see spark/fixpoint.py).
try:
    from pyspark import cloudpickle as _cloudpickle

    _cloudpickle.register_pickle_by_value(sys.modules[__name__])
except (ImportError, AttributeError, ValueError):  # pragma: no cover - an older cloudpickle
    pass
