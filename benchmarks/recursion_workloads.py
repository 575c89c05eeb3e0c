"""Seeded inputs for the recursion benchmarks (benchmarks/engine.py) and DuckDB's
answers to them: same generation (a non-linear recursion) and an Andersen-style
points-to analysis (mutually recursive). No Spark here.

DuckDB's recursive CTE reads only the last iteration's rows at each reference to the
recursive table, which is not the semantics of a rule that reads its own relation
twice (`sg(X, Y) :- sg(X, Z), sg(Z, Y)`) or reads two relations of one recursion;
so DuckDB evaluates these two by a semi-naive loop of plain SQL statements driven
from here (every rule once per recursive atom, that atom reading the last
iteration's new rows, the others everything so far).

>>> par = same_generation_graph(12, seed=1, tree=4)
>>> len({x for x, _ in par}), all(p < x for x, p in par)   # 3 roots of 4-node trees
(9, True)
>>> import duckdb
>>> sg = duckdb_same_generation(duckdb.connect(), [(1, 0), (2, 0), (3, 1), (4, 2)])
>>> sorted(sg)   # 1, 2 share a parent; so do their children 3, 4
[(1, 1), (1, 2), (2, 1), (2, 2), (3, 3), (3, 4), (4, 3), (4, 4)]
>>> facts = points_to_facts(3, seed=1)
>>> sorted(facts), min(o for _, o in facts["alloc"])
(['alloc', 'assign', 'load', 'store'], 0)
>>> pts, hpts = duckdb_points_to(duckdb.connect(), {"alloc": [(1, 10), (2, 20)], "assign": [(3, 1)],
...     "store": [(3, 0, 2)], "load": [(4, 1, 0)]})   # a = new 10; b = new 20; c = a; c.f = b; d = a.f
>>> sorted(pts), sorted(hpts)
([(1, 10), (2, 20), (3, 10), (4, 20)], [(10, 0, 20)])
"""

from __future__ import annotations

import random

SAME_GENERATION_WORKLOAD = ("a seeded forest of `tree`-node random recursive trees (each node's parent "
                            "drawn from the earlier nodes of its tree; 1 in 10 nodes has a second parent); "
                            "sg: same depth below a common ancestor, closed under sg(X,Z), sg(Z,Y)")

POINTS_TO_WORKLOAD = ("Andersen points-to over a seeded program of `methods` methods of 20 variables "
                      "(4 allocations, 20 assignments inside the method, 2 from its caller, 3 stores "
                      "and 3 loads over 4 fields; the call graph a random recursive tree), read "
                      "with .input from Parquet")


def same_generation_graph(nodes: int, seed: int, tree: int = 100) -> list:
    """par(x, p) rows: a forest of `tree`-node trees, node ids 0..nodes-1, a parent
    always smaller than its child (no cycles)."""
    rng = random.Random(seed)
    rows = set()
    for x in range(nodes):
        first, local = x - x % tree, x % tree
        if local == 0:
            continue  # a root
        rows.add((x, first + rng.randrange(local)))
        if local > 1 and rng.random() < 0.1:
            rows.add((x, first + rng.randrange(local)))
    return sorted(rows)


def points_to_facts(methods: int, seed: int, width: int = 20, fields: int = 4, inside: int = 20,
                    passed: int = 2) -> dict:
    """The facts of a generated program, without locations: alloc(v, o),
    assign(v, w) (v = w), store(v, f, w) (v.f = w), load(v, w, f) (v = w.f).
    Method k has variables k*width .. k*width+width-1; its caller is a random
    earlier method, which passes it two values."""
    rng = random.Random(seed)
    alloc, assign, store, load = set(), set(), set(), set()
    objects = 0
    for k in range(methods):
        local = [k * width + i for i in range(width)]
        for v in rng.sample(local, 4):
            alloc.add((v, objects))
            objects += 1
        for _ in range(inside):
            v, w = rng.sample(local, 2)
            assign.add((v, w))
        if k:
            caller = rng.randrange(k)
            for _ in range(passed):
                assign.add((rng.choice(local), caller * width + rng.randrange(width)))
        for _ in range(3):
            store.add((rng.choice(local), rng.randrange(fields), rng.choice(local)))
            load.add((rng.choice(local), rng.choice(local), rng.randrange(fields)))
    return {"alloc": sorted(alloc), "assign": sorted(assign), "store": sorted(store), "load": sorted(load)}


def _fixpoint(con, tables: dict, rules: dict) -> None:
    """Semi-naive in DuckDB. `tables`: {relation: (columns, SQL of its first rows)};
    `rules`: {relation: [SQL reading d_<r> (last new rows) and t_<r> (all so far)]}.
    Leaves the results in tables t_<relation>."""
    for name, (columns, first) in tables.items():
        con.execute(f"CREATE OR REPLACE TABLE t_{name} AS SELECT DISTINCT * FROM ({first}) AS s({columns})")
        con.execute(f"CREATE OR REPLACE TABLE d_{name} AS SELECT * FROM t_{name}")
    while True:
        for name, (columns, _) in tables.items():
            union = " UNION ".join(rules[name])
            con.execute(f"CREATE OR REPLACE TABLE n_{name} AS SELECT * FROM ({union}) AS s({columns}) "
                        f"EXCEPT SELECT * FROM t_{name}")
        grew = False
        for name in tables:
            con.execute(f"INSERT INTO t_{name} SELECT * FROM n_{name}")
            con.execute(f"CREATE OR REPLACE TABLE d_{name} AS SELECT * FROM n_{name}")
            grew |= con.execute(f"SELECT count(*) FROM d_{name}").fetchone()[0] > 0
        if not grew:
            return


def _load(con, name: str, columns: str, rows: list) -> None:
    import pandas as pd

    con.register("rows_frame", pd.DataFrame(rows, columns=columns.split(", ")))
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM rows_frame")
    con.unregister("rows_frame")


def duckdb_same_generation(con, par: list, count_only: bool = False):
    """sg's rows (or their count) from par(x, p) rows."""
    _load(con, "par", "x, p", par)
    _fixpoint(con, {"sg": ("x, y", "SELECT a.x, b.x FROM par a JOIN par b ON a.p = b.p")}, {"sg": [
        "SELECT a.x, b.x FROM par a JOIN d_sg s ON a.p = s.x JOIN par b ON b.p = s.y",
        "SELECT d.x, t.y FROM d_sg d JOIN t_sg t ON d.y = t.x",
        "SELECT t.x, d.y FROM t_sg t JOIN d_sg d ON t.y = d.x"]})
    return _result(con, "sg", count_only)


def duckdb_points_to(con, facts: dict, count_only: bool = False):
    """(pts rows, hpts rows), or their counts, from points_to_facts."""
    for name, columns in (("alloc", "v, o"), ("assign", "v, w"), ("store", "v, f, w"), ("load", "v, w, f")):
        _load(con, name, columns, facts[name])
    empty = "SELECT 0, 0, 0 WHERE false"
    _fixpoint(con, {"pts": ("v, o", "SELECT v, o FROM alloc"), "hpts": ("o1, f, o2", empty)}, {
        "pts": ["SELECT a.v, p.o FROM assign a JOIN d_pts p ON p.v = a.w",
                "SELECT l.v, h.o2 FROM load l JOIN d_pts p ON p.v = l.w JOIN t_hpts h ON h.o1 = p.o AND h.f = l.f",
                "SELECT l.v, h.o2 FROM load l JOIN t_pts p ON p.v = l.w JOIN d_hpts h ON h.o1 = p.o AND h.f = l.f"],
        "hpts": ["SELECT p.o, s.f, q.o FROM store s JOIN d_pts p ON p.v = s.v JOIN t_pts q ON q.v = s.w",
                 "SELECT p.o, s.f, q.o FROM store s JOIN t_pts p ON p.v = s.v JOIN d_pts q ON q.v = s.w"]})
    return _result(con, "pts", count_only), _result(con, "hpts", count_only)


def _result(con, name: str, count_only: bool):
    if count_only:
        return con.execute(f"SELECT count(*) FROM t_{name}").fetchone()[0]
    return {tuple(row) for row in con.execute(f"SELECT * FROM t_{name}").fetchall()}
