"""A tick's plans as SQL text: named subqueries over temporary views.

The loop builds each query it runs as SQL text instead of DataFrame calls: a
DataFrame call is a py4j round trip and an analysis of the plan so far (a
two-phase-commit tick made about 2,100 of them), where one `spark.sql` parses
and analyses the whole query once. A `Statement` names each subquery once
however often it is read (`name`); `render(sql)` writes the query out with the
subqueries it reads in place. In place rather than as a `WITH` clause: Spark's
`InlineCTE` rule grows quadratically with the number of CTEs (docs/engine.md).
The checkpoints the loop cuts its plans with are temporary views (`Views`),
named uniquely and dropped when the tick is over.

Subquery names are unique for the whole run (`counter`), so that a text kept
past the tick it was built for fails loudly (an unknown name) instead of
reading another subquery.

>>> statement = Statement()
>>> a = statement.name("SELECT 1 AS x")
>>> b = statement.name(f"SELECT x + 1 AS x FROM {a}")
>>> a == statement.name("SELECT 1 AS x"), statement.render(f"SELECT * FROM {b} JOIN {a} USING (x)")
(True, 'SELECT * FROM (SELECT x + 1 AS x FROM (SELECT 1 AS x)) JOIN (SELECT 1 AS x) USING (x)')
"""

from __future__ import annotations

import itertools
import re

from pyspark.sql import DataFrame, SparkSession

_NAME = re.compile(r"\b__q\d+\b")


class Statement:
    """The named subqueries of the queries being built (see the module)."""

    def __init__(self, counter=None):
        self._counter = counter or itertools.count(1)
        self._names: dict[str, str] = {}  # text -> name
        self._texts: dict[str, str] = {}  # name -> text, in the order defined

    def name(self, sql: str) -> str:
        """The name of the subquery `sql` (defined on first use). A bare name
        (a view's or a subquery's) is its own name."""
        if sql.isidentifier():
            return sql
        if sql not in self._names:
            name = f"__q{next(self._counter)}"
            self._names[sql], self._texts[name] = name, sql
        return self._names[sql]

    def render(self, sql: str) -> str:
        """The query `sql` with the subqueries it reads written out in place."""
        expanded: dict = {}

        def expand(text: str) -> str:
            return _NAME.sub(lambda m: f"({inline(m.group(0))})", text)

        def inline(name: str) -> str:
            if name not in expanded:
                expanded[name] = expand(self._texts[name])
            return expanded[name]
        return expand(sql)


    def render_with(self, sql: str) -> str:
        """The query `sql` with the subqueries it reads named once each in a
        `WITH` clause, in dependency order: for a planner that takes common
        table expressions in its stride (DuckDB's, spark/duck/), where written
        in place a subquery read twice is parsed and planned twice.

        >>> statement = Statement()
        >>> a = statement.name("SELECT 1 AS x")
        >>> statement.render_with(f"SELECT * FROM {a} JOIN {a} USING (x)")
        'WITH __q1 AS (SELECT 1 AS x) SELECT * FROM __q1 JOIN __q1 USING (x)'
        """
        order: list = []
        done: set = set()
        stack = [(name, False) for name in reversed(_NAME.findall(sql))]
        while stack:  # depth first, a subquery after those it reads
            name, expanded = stack.pop()
            if name in done:
                continue
            if expanded:
                done.add(name)
                order.append(name)
                continue
            stack.append((name, True))
            stack.extend((read, False) for read in reversed(_NAME.findall(self._texts[name])) if read not in done)
        if not order:
            return sql
        return "WITH " + ", ".join(f"{name} AS ({self._texts[name]})" for name in order) + " " + sql


class Views:
    """Temporary views of DataFrames for the loop's queries: `of(frame)` names
    one (unique to the run), `drop()` drops those made so far."""

    _runs = itertools.count(1)

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self.prefix = f"__sd{next(Views._runs)}_v"
        self._counter = itertools.count(1)
        self._made: list[str] = []

    def of(self, frame: DataFrame) -> str:
        name = f"{self.prefix}{next(self._counter)}"
        frame.createOrReplaceTempView(name)
        self._made.append(name)
        return name

    def drop(self) -> None:
        for name in self._made:
            self.spark.catalog.dropTempView(name)
        self._made = []
