"""The baselines of the recursive-aggregate benchmarks (benchmarks/aggregate_workloads.py):
DuckDB's USING KEY recursions and the hand-written PySpark loops give networkx's
shortest paths and connected components on small seeded graphs, and on hand-made ones
with a cycle and a node out of reach."""

from __future__ import annotations

import doctest
import importlib.util
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("networkx")

SPEC = importlib.util.spec_from_file_location(
    "aggregate_workloads", Path(__file__).resolve().parents[1] / "benchmarks" / "aggregate_workloads.py")
aw = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(aw)

# 0 -> 2 -> 1 beats 0 -> 1; 1 -> 3 -> 0 closes a cycle; 7 -> 8 is out of 0's reach
CYCLE = [(0, 1, 5), (0, 2, 1), (2, 1, 1), (1, 3, 1), (3, 0, 1), (3, 2, 9), (7, 8, 1)]
# a cycle 5-3-9, a chain 4-8-2 whose least id is at its end, 6 alone (a self-loop)
LINKS = aw.symmetric([(5, 3), (3, 9), (9, 5), (4, 8), (8, 2), (6, 6)])


def sssp_inputs():
    return [CYCLE, aw.weighted_graph(200, 4, seed=1), aw.weighted_graph(200, 2, seed=2, max_weight=3)]


def cc_inputs():
    return [LINKS] + [aw.symmetric(aw.forest_graph(200, components=c, seed=s)) for c, s in ((12, 1), (40, 2))]


def test_inputs_are_seeded_and_shaped():
    edges = aw.weighted_graph(200, 4, seed=1)
    assert edges == aw.weighted_graph(200, 4, seed=1) != aw.weighted_graph(200, 4, seed=2)
    assert len(edges) == 800 == len({(x, y) for x, y, _ in edges}) and all(1 <= w <= 100 and x != y
                                                                           for x, y, w in edges)
    assert len(aw.networkx_sssp(edges)) == 200  # node 0 reaches every node
    forest = aw.forest_graph(200, components=12, seed=1)
    assert len({c for _, c in aw.networkx_cc(aw.symmetric(forest))}) == 12
    assert doctest.testmod(aw).failed == 0


def test_duckdb_gives_networkx_answers():
    assert aw.duckdb_sssp(duckdb.connect(), CYCLE) == {(0, 0), (1, 2), (2, 1), (3, 3)}
    for edges in sssp_inputs():
        expected = aw.networkx_sssp(edges)
        assert aw.duckdb_sssp(duckdb.connect(), edges) == expected
        assert aw.duckdb_sssp(duckdb.connect(), edges, count_only=True) == len(expected)
    assert aw.duckdb_cc(duckdb.connect(), LINKS) == {(2, 2), (3, 3), (4, 2), (5, 3), (6, 6), (8, 2), (9, 3)}
    for links in cc_inputs():
        expected = aw.networkx_cc(links)
        assert aw.duckdb_cc(duckdb.connect(), links) == expected
        assert aw.duckdb_cc(duckdb.connect(), links, count_only=True) == len(expected)


@pytest.mark.spark
def test_pyspark_loops_give_networkx_answers(spark):
    """On two inputs of each kind only: every iteration of a loop is a few Spark jobs."""
    for edges in sssp_inputs()[:2]:
        dist, iterations = aw.pyspark_sssp(spark, edges)
        assert {tuple(row) for row in dist.collect()} == aw.networkx_sssp(edges) and iterations > 1
    for links in cc_inputs()[:2]:
        cc, iterations = aw.pyspark_cc(spark, links)
        assert {tuple(row) for row in cc.collect()} == aw.networkx_cc(links) and iterations > 1
