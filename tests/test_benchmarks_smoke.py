"""Smoke tests of the benchmark scripts run with --quick: each runs, prints nothing
but JSON lines on stdout, every measurement is there, and the results in it are right.

Slow: each starts its own Spark session and runs every workload at small sizes
(a few minutes on a busy 2-core machine). Run them with
`pytest -m slow tests/test_benchmarks_smoke.py`. Not slow: the DuckDB loops the
recursion benchmarks check the engine against give the reference evaluator's facts
(benchmarks/recursion_workloads.py, no Spark).
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from sparkdedalus import Program
from sparkdedalus.reference import run as reference_run

REPO = Path(__file__).resolve().parents[1]


def benchmark_module(name: str):
    """benchmarks/<name>.py imported (the directory is not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rw = benchmark_module("recursion_workloads")


def quick_run(script: str, *args: str) -> list[dict]:
    """`benchmarks/<script> --quick [args]`, its stdout parsed as JSON lines."""
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), "--quick", *args],
                            cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in result.stdout.splitlines()]  # nothing but JSON on stdout


@pytest.mark.slow
def test_quick_engine_benchmark_prints_every_measurement():
    by_kind: dict = {}
    for line in quick_run("engine.py"):
        by_kind.setdefault(line["measurement"], []).append(line)

    assert [x["when"] for x in by_kind["load"]] == ["start", "end"]
    assert by_kind["config"][0]["quick"] is True
    assert by_kind["floor"][0]["seconds_median"] > 0

    tpc = by_kind["two_phase_commit"][0]
    assert tpc["status"] == "ok" and tpc["matches_reference"], tpc
    assert all(t["jobs"] >= 1 for t in tpc["per_tick"])

    assert [b["nodes"] for b in by_kind["broadcast"]] == [3, 30]
    assert all(b["status"] == "ok" and b["correct"] for b in by_kind["broadcast"])
    assert by_kind["broadcast_scaling"][0]["ratio"] > 0

    creep = by_kind["tick_creep"][0]
    assert creep["status"] == "ok" and creep["correct"] and creep["ratio"] > 0

    tc = by_kind["transitive_closure"][0]
    assert {r["status"] for r in tc["results"].values()} == {"ok"}, tc
    assert tc["pair_counts_agree"] is True
    assert_inputs_step(by_kind)
    aggregates = by_kind["aggregate_recursion"]
    assert [a["kind"] for a in aggregates] == ["sssp", "cc"]
    assert all(a["results_agree"] and set(a["results"]) == {"engine", "duckdb", "pyspark_loop", "networkx"}
               for a in aggregates), aggregates
    assert by_kind["done"][0]["failed_steps"] == 0


@pytest.mark.slow
def test_quick_large_ticks_benchmark_compares_the_masters():
    lines = quick_run("large_ticks.py", "--workloads", "voting", "--stages")
    runs = {x["master"]: x for x in lines if x["measurement"] == "run"}
    assert set(runs) == {"local[1]", "local[2]"}
    for run in runs.values():
        assert [t["tick"] for t in run["per_tick"]] == [1, 2, 3, 4, 5, 6]
        assert all(t["facts_per_second"] == round(t["facts"] / t["seconds"]) and t["heap_mib"] > 0
                   and t["classes_compiled"] >= 0 and t["jit_ms"] >= 0 for t in run["per_tick"])
        # every tick runs at least its pack's job; a stage's seconds fit in the tick's
        assert all(t["stages"]["stages"] >= 1 and 0 < t["stages"]["stage_busy"] <= t["stages"]["wall"]
                   and t["stages"]["wall"] >= t["seconds"] - 0.01 for t in run["per_tick"])
    assert [t["facts"] for t in runs["local[1]"]["per_tick"]] == [t["facts"] for t in runs["local[2]"]["per_tick"]]
    (comparison,) = [x for x in lines if x["measurement"] == "comparison"]
    assert comparison["identical"] and lines[-1] == {"measurement": "done", "failed": 0}


@pytest.mark.slow
def test_quick_partitioning_benchmark_compares_both_sides():
    lines = quick_run("partitioning.py")
    assert [x["when"] for x in lines if x["measurement"] == "load"] == ["start", "end"]
    runs = [x for x in lines if x["measurement"] == "run"]
    assert sorted((r["workload"], r["policy"]) for r in runs) == [
        ("two_phase_commit", False), ("two_phase_commit", True), ("voting", False), ("voting", True)]
    assert all(len(r["per_tick"]) == 6 and r["tick_seconds_median"] > 0 for r in runs)
    comparisons = {x["workload"]: x for x in lines if x["measurement"] == "comparison"}
    assert set(comparisons) == {"voting", "two_phase_commit"}
    assert all(c["identical"] and c["fewer_exchanges"] for c in comparisons.values()), comparisons
    assert lines[-1] == {"measurement": "done", "failed": 0}


@pytest.mark.slow
def test_gc_spark_benchmark_runs_both_sides():
    """benchmarks/gc_spark.py at a small size: one line per side, the outputs
    checked equal by the script (exit 0), and less state kept with GC."""
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gc_spark.py"), "--requests", "6",
                             "--ticks", "14"], cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [x["measurement"] for x in lines] == ["load", "gc_spark", "gc_spark", "load"]
    without, with_gc = lines[1], lines[2]
    assert (without["gc"], with_gc["gc"]) == (False, True)
    assert len(without["persisted_rows"]) == len(with_gc["persisted_rows"]) == 14
    assert sum(without["collected_rows"]) == 0 < sum(with_gc["collected_rows"])
    assert with_gc["persisted_rows"][-1] < without["persisted_rows"][-1]


def assert_inputs_step(by_kind: dict) -> None:
    text = by_kind["text_facts"][0]
    assert set(text["results"]) == {"loaded", "inlined"}
    assert all(r["status"] == "ok" and r["correct"] and r["setup_seconds"] > 0 for r in text["results"].values())
    (large,) = by_kind["large_input"]
    assert large["format"] == "parquet" and large["status"] == "ok" and large["correct"], large
    assert large["two_per_tick"] == large["expected_two_per_tick"]
    assert large["python_peak_rss_mib_after"] > 0 and large["jvm_peak_heap_used_mib"] > 0


@pytest.mark.slow
def test_quick_inputs_step_alone():
    """The inputs step on its own (`--only inputs`): the cheap way to check it."""
    by_kind: dict = {}
    for line in quick_run("engine.py", "--only", "inputs"):
        by_kind.setdefault(line["measurement"], []).append(line)
    assert "two_phase_commit" not in by_kind
    assert_inputs_step(by_kind)
    assert by_kind["done"][0]["failed_steps"] == 0


@pytest.mark.slow
def test_quick_store_benchmark_prints_every_measurement():
    lines = quick_run("store_commit.py")
    kinds = [line["measurement"] for line in lines]
    assert kinds == ["load", "commit", "commit", "storage", "load"]
    commits = {line["writer"]: line for line in lines if line["measurement"] == "commit"}
    assert set(commits) == {"spark-delta", "delta-rs"}
    assert all(c["commit_seconds"]["median"] > 0 and c["tables_written_per_commit_median"] == 2
               for c in commits.values())
    storage = lines[3]
    assert storage["naive_rows"] > storage["store_rows"] > 0


@pytest.mark.slow
def test_quick_overhead_benchmark_prints_every_measurement():
    lines = quick_run("overhead.py")
    kinds = [line["measurement"] for line in lines]
    assert kinds == ["load", "config"] + ["codegen_run"] * 3 + ["codegen", "commit_every", "commit_every", "load"]
    runs = {line["mode"]: line for line in lines if line["measurement"] == "codegen_run"}
    assert set(runs) == {"off", "on", "auto"} and all(line["status"] == "ok" for line in runs.values())
    # 4 transactions: every tick compiled with `on`, none with `off` or `auto` (far below 200,000 rows)
    assert (runs["on"]["compiled_ticks"], runs["off"]["compiled_ticks"], runs["auto"]["compiled_ticks"]) == \
        ([1, 2, 3], [], [])
    every = {line["commit_every"]: line for line in lines if line["measurement"] == "commit_every"}
    assert (every[1]["ticks"], every[1]["commits"], every[2]["ticks"], every[2]["commits"]) == (3, 3, 4, 2)
    assert all(line["store_seconds_per_tick"] > 0 for line in every.values())


def reference_facts(name: str, relations: list, edb: dict) -> list:
    program = Program.from_files(str(REPO / "benchmarks" / "programs" / name))
    trace = reference_run(program, 1, edb=edb)
    return [{row[1:] for row in trace.relation(r, 1)} for r in relations]


def test_recursion_workloads_and_stages_doc_examples():
    assert doctest.testmod(rw).failed == 0
    assert doctest.testmod(benchmark_module("stages")).failed == 0


@pytest.mark.parametrize("seed", [1, 2])
def test_duckdb_same_generation_gives_the_reference_facts(seed):
    par = rw.same_generation_graph(60, seed, tree=20)
    (expected,) = reference_facts("same_generation_bench.ded", ["sg"], {"par": [("g", x, p) for x, p in par]})
    assert rw.duckdb_same_generation(duckdb.connect(), par) == expected
    assert rw.duckdb_same_generation(duckdb.connect(), par, count_only=True) == len(expected)
    siblings = {(x, y) for x, p in par for y, q in par if p == q}
    assert expected > siblings  # the recursion added cousins to the children of one parent


@pytest.mark.parametrize("seed", [1, 2])
def test_duckdb_points_to_gives_the_reference_facts(seed):
    facts = rw.points_to_facts(6, seed)
    edb = {name: [("p", *row) for row in rows] for name, rows in facts.items()}
    pts, hpts = reference_facts("andersen_bench.ded", ["pts", "hpts"], edb)
    assert hpts and len(pts) > len(facts["alloc"])  # the heap and the assignments both carried objects
    assert rw.duckdb_points_to(duckdb.connect(), facts) == (pts, hpts)
    wrong = dict(facts, assign=[])  # without assignments, only allocations: the comparison says no
    assert rw.duckdb_points_to(duckdb.connect(), wrong) != (pts, hpts)


@pytest.mark.slow
def test_quick_recursion_steps_agree():
    """tc, sg and pt alone: the engine, DuckDB (and the PySpark loop, the reference
    evaluator) agree on the results."""
    by_kind: dict = {}
    for line in quick_run("engine.py", "--only", "tc,sg,pt", "--stages"):
        by_kind.setdefault(line["measurement"], []).append(line)
    (tc,) = by_kind["transitive_closure"]
    assert tc["pair_counts_agree"] is True and tc["results"]["engine"]["fixpoint"] == "arrow", tc
    assert tc["results"]["engine"]["iterations"] == 0  # the Arrow fixpoint ran: no iteration job
    stages = tc["results"]["engine"]["stage_detail"]  # --stages: at least the fixpoint's job and the tick's
    assert len(stages) >= 2 and all(s["at"] >= 0 and s["tasks"] >= 1 for s in stages), stages
    for kind, relations in (("same_generation", ["sg"]), ("points_to", ["pts", "hpts"])):
        (line,) = by_kind[kind]
        assert line["all_finished"] and line["results_agree"], line
        assert set(line["results"]) == {"duckdb", "engine", "reference"}
        assert all(line["results"]["engine"][r]["count"] > 0 for r in relations)
    assert by_kind["done"][0]["failed_steps"] == 0


@pytest.mark.parametrize("script", ["engine.py", "large_ticks.py", "partitioning.py", "placement.py"])
def test_a_spark_setting_without_a_value_is_refused_in_one_line(script):
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), "--conf", "spark.sql.shuffle.partitions"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith("--conf 'spark.sql.shuffle.partitions': expected KEY=VALUE")
    assert "Traceback" not in result.stderr and result.stdout.count('"measurement": "config"') == 0


@pytest.mark.slow
def test_placement_benchmark_compares_both_placements():
    """Both placements' facts agree at every size (the script exits 1 when they do not)."""
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "placement.py"), "--sizes", "100,300",
                             "--ticks", "3"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    sizes = [line for line in lines if line["measurement"] == "size"]
    assert [line["edges"] for line in sizes] == [100, 300]
    assert all(line["driver_seconds"] > 0 and line["spark_seconds"] > 0 for line in sizes)
    assert [line["measurement"] for line in lines][-2:] == ["crossover", "load"]


def test_spark_settings_split_at_the_first_equals_sign():
    import argparse
    assert benchmark_module("engine").spark_settings(argparse.ArgumentParser(), ["a.b=1", "c=x=y"]) \
        == {"a.b": "1", "c": "x=y"}
