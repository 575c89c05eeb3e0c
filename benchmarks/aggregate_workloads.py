"""Seeded inputs for the recursive-aggregate benchmarks (issue 34: min inside a
recursion) and three baselines for them, none of them the engine: single-source
shortest paths (dist(y, d): the least total weight of a path from the source to y)
and connected components (cc(x, c): c the least node id of x's component).

- DuckDB: a recursive CTE with `USING KEY`. Its recursive table is keyed (one row a
  node); in the recursive step `dist` (or `cc`) is the working table, the rows the last
  iteration improved, and `recurring.dist` the whole keyed table, so each step relaxes
  only the improved rows, keeps the rows that beat the best so far (min per key) and
  overwrites them by key; it stops when no row improves. DuckDB 2.0.0 has it, and it
  gives networkx's answers (tests/test_aggregate_workloads.py), so no loop driven from
  Python is needed here (unlike benchmarks/recursion_workloads.py).
- PySpark: the loop a Spark user writes by hand (DataFrame joins, groupBy min, the
  improved rows anti-joined into the result, localCheckpoint per iteration so the
  lineage stays short) until no row improves.
- networkx: the oracle on small graphs.

Every baseline gives the same rows: a set of (y, d) or (x, c) tuples, or a count; the
DuckDB ones leave them in table dist(y, d) or cc(x, c) (for engine.py's duck_digest),
the PySpark ones return a DataFrame of those columns (for its spark_digest).

>>> edges = weighted_graph(50, 3, seed=1)
>>> len(edges), min(w for _, _, w in edges) >= 1, len({(x, y) for x, y, _ in edges})
(150, True, 150)
>>> import duckdb
>>> small = [(0, 1, 5), (0, 2, 1), (2, 1, 1), (1, 3, 1), (3, 0, 1), (7, 8, 1)]  # a cycle; 7, 8 unreachable
>>> sorted(duckdb_sssp(duckdb.connect(), small)) == sorted(networkx_sssp(small)) == [(0, 0), (1, 2), (2, 1), (3, 3)]
True
>>> links = symmetric([(5, 3), (3, 9), (9, 5), (4, 8), (6, 6)])   # a triangle, a pair, a loner
>>> sorted(duckdb_cc(duckdb.connect(), links)) == sorted(networkx_cc(links))
True
>>> sorted(networkx_cc(links))
[(3, 3), (4, 4), (5, 3), (6, 6), (8, 4), (9, 3)]
>>> forest = forest_graph(100, components=10, seed=1)
>>> len({c for _, c in networkx_cc(symmetric(forest))})
10
"""

from __future__ import annotations

import random

SSSP_WORKLOAD = ("single-source shortest paths from node 0 over a seeded random directed graph "
                 "(`edges_per_node` edges a node, weights 1..100, an edge from a smaller node into "
                 "every node so node 0 reaches all); dist(Y, min<D>)")

CC_WORKLOAD = ("connected components of a seeded random forest of `components` random trees over "
               "shuffled node ids, plus `extra_per_node` edges a node inside random components, read as a "
               "symmetric link relation; cc(X, min<C>), C the least node id of X's component")


def weighted_graph(nodes: int, edges_per_node: int, seed: int, max_weight: int = 100) -> list:
    """(x, y, w) rows, node ids 0..nodes-1, 1 <= w <= max_weight, one row per (x, y), no
    self-loops: an edge into every node y > 0 from a random smaller node (so node 0
    reaches them all), then random edges up to nodes * edges_per_node rows."""
    rng = random.Random(seed)
    weight = {(rng.randrange(y), y): rng.randint(1, max_weight) for y in range(1, nodes)}
    target = min(nodes * edges_per_node, nodes * (nodes - 1))
    while len(weight) < target:
        x, y = rng.randrange(nodes), rng.randrange(nodes)
        if x != y and (x, y) not in weight:
            weight[(x, y)] = rng.randint(1, max_weight)
    return sorted((x, y, w) for (x, y), w in weight.items())


def forest_graph(nodes: int, components: int, seed: int, extra_per_node: float = 0.1) -> list:
    """(x, y) rows, one direction per edge: node ids 0..nodes-1 shuffled and dealt into
    `components` random trees (each node linked to a random earlier node of its tree),
    plus about nodes * extra_per_node extra edges inside random trees (cycles). A tree
    of one node has no edge, so it is not in the rows: keep components <= nodes / 2."""
    rng = random.Random(seed)
    order = list(range(nodes))
    rng.shuffle(order)
    trees = [order[k::components] for k in range(components)]
    rows = {(tree[i], tree[rng.randrange(i)]) for tree in trees for i in range(1, len(tree))}
    for _ in range(round(nodes * extra_per_node)):
        tree = rng.choice(trees)
        x, y = rng.choice(tree), rng.choice(tree)
        if x != y:
            rows.add((x, y))
    return sorted(rows)


def symmetric(rows: list) -> list:
    """Both directions of every (x, y) row: the link relation connected components read."""
    return sorted({(x, y) for x, y in rows} | {(y, x) for x, y in rows})


def _load(con, name: str, columns: list, rows: list) -> None:
    import pandas as pd

    con.register("rows_frame", pd.DataFrame(rows, columns=columns))
    casts = ", ".join(f"{c}::BIGINT AS {c}" for c in columns)
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT {casts} FROM rows_frame")
    con.unregister("rows_frame")


def _result(con, name: str, count_only: bool):
    if count_only:
        return con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
    return {tuple(row) for row in con.execute(f"SELECT * FROM {name}").fetchall()}


def duckdb_sssp(con, edges: list, source: int = 0, count_only: bool = False):
    """dist's (y, d) rows (or their count) from (x, y, w) rows, left in table dist."""
    _load(con, "edge", ["x", "y", "w"], edges)
    con.execute(f"""CREATE OR REPLACE TABLE dist AS
        WITH RECURSIVE dist(y, d) USING KEY (y) AS (
            SELECT {int(source)}::BIGINT, 0::BIGINT
            UNION
            SELECT e.y, min(dist.d + e.w) FROM dist JOIN edge e ON e.x = dist.y
            LEFT JOIN recurring.dist best ON best.y = e.y
            GROUP BY e.y, best.d HAVING best.d IS NULL OR min(dist.d + e.w) < best.d)
        SELECT * FROM dist""")
    return _result(con, "dist", count_only)


def duckdb_cc(con, links: list, count_only: bool = False):
    """cc's (x, c) rows (or their count) from a symmetric (x, y) link relation, left in table cc."""
    _load(con, "link", ["x", "y"], links)
    con.execute("""CREATE OR REPLACE TABLE cc AS
        WITH RECURSIVE cc(x, c) USING KEY (x) AS (
            SELECT x, least(x, min(y)) FROM link GROUP BY x
            UNION
            SELECT l.y, min(cc.c) FROM cc JOIN link l ON l.x = cc.x
            JOIN recurring.cc best ON best.x = l.y
            GROUP BY l.y, best.c HAVING min(cc.c) < best.c)
        SELECT * FROM cc""")
    return _result(con, "cc", count_only)


def _frame(spark, rows, schema: str):
    """A DataFrame of `rows` (a list, sent through Arrow) or `rows` itself if it is one."""
    import pandas as pd

    if not isinstance(rows, list):
        return rows
    return spark.createDataFrame(pd.DataFrame(rows, columns=[c.split()[0] for c in schema.split(", ")]), schema)


def _improve(start, step, key: str, value: str):
    """The loop both PySpark baselines share, from the (key, value) rows `start`:
    `step(delta)` gives candidates, min per key; the ones that beat the best so far (or
    are new) are the next delta. Returns (best, iterations) once no row improves."""
    from pyspark.sql import functions as F

    best = delta = start
    iterations = 0
    while True:
        iterations += 1
        new = step(delta).groupBy(key).agg(F.min(value).alias("new"))
        delta = (new.join(best, key, "left").where(F.col(value).isNull() | (F.col("new") < F.col(value)))
                 .select(key, F.col("new").alias(value)).localCheckpoint())
        if delta.isEmpty():
            return best, iterations
        best = best.join(delta, key, "left_anti").unionByName(delta).localCheckpoint()


def pyspark_sssp(spark, edges, source: int = 0):
    """(DataFrame of dist(y, d), iterations) from (x, y, w) rows or a DataFrame of them."""
    from pyspark.sql import functions as F

    edge = _frame(spark, edges, "x bigint, y bigint, w bigint").cache()
    start = spark.createDataFrame([(source, 0)], "y bigint, d bigint").localCheckpoint()
    dist, iterations = _improve(start, lambda delta: delta.withColumnRenamed("y", "x").join(edge, "x")
                                .select("y", (F.col("d") + F.col("w")).alias("d")), "y", "d")
    edge.unpersist()
    return dist, iterations


def pyspark_cc(spark, links):
    """(DataFrame of cc(x, c), iterations) from symmetric (x, y) rows or a DataFrame of them."""
    from pyspark.sql import functions as F

    link = _frame(spark, links, "x bigint, y bigint").cache()
    start = link.groupBy("x").agg(F.least(F.col("x"), F.min("y")).alias("c")).localCheckpoint()
    cc, iterations = _improve(start, lambda delta: delta.join(link, "x")
                              .select(F.col("y").alias("x"), "c"), "x", "c")
    link.unpersist()
    return cc, iterations


def networkx_sssp(edges: list, source: int = 0) -> set:
    """dist's (y, d) rows by Dijkstra."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_weighted_edges_from(edges)
    if source not in graph:
        return {(source, 0)}
    return set(nx.single_source_dijkstra_path_length(graph, source).items())


def networkx_cc(links: list) -> set:
    """cc's (x, c) rows: every node of the link rows with its component's least id."""
    import networkx as nx

    graph = nx.Graph(links)
    return {(x, min(part)) for part in nx.connected_components(graph) for x in part}
