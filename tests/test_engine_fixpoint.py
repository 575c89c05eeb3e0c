"""The Arrow fixpoint of recursive strata (sparkdedalus/spark/fixpoint.py): which
strata it takes and how it splits them (no Spark), and runs that must agree with
the reference evaluator, with the switch on and off."""

from __future__ import annotations

import pyarrow as pa
import pytest

from engine_helpers import compared_run
from sparkdedalus.checks import build_program
from sparkdedalus.spark.fixpoint import LOOP, PYARROW, SETTING, ArrowFixpoint
from sparkdedalus.syntax.loader import load_text

RECURSIVE = """
.decl edge(l: string, x: int, y: int)
.decl alloc(l: string, v: string, o: string)
.decl assign(l: string, v: string, w: string)
.decl store(l: string, v: string, f: string, w: string)
.decl load(l: string, v: string, w: string, f: string)
edge("a", 1, 2); edge("a", 2, 3); edge("a", 3, 1); edge("a", 3, 4); edge("a", 4, 5);
edge("b", 1, 2); edge("b", 2, 6); edge("b", 6, 6);
path(L, X, Y) :- edge(L, X, Y);
path(L, X, Z) :- edge(L, X, Y), path(L, Y, Z);
tc(L, X, Y) :- edge(L, X, Y);
tc(L, X, Z) :- tc(L, X, Y), tc(L, Y, Z);
from1(L, Y) :- edge(L, 1, Y);
from1(L, Z) :- from1(L, Y), edge(L, Y, Z);
far(L, X, Y) :- edge(L, X, Y);
far(L, X, Z) :- far(L, X, Y), edge(L, Y, Z), X % 7 != Z;
node(L, X) :- edge(L, X, _);
node(L, Y) :- edge(L, _, Y);
unreached(L, X, Y) :- node(L, X), node(L, Y), !path(L, X, Y);
reach(L, X, count<Y>) :- path(L, X, Y);
alloc("a", "p", "o1"); alloc("a", "q", "o2"); alloc("b", "p", "o3");
assign("a", "r", "p"); assign("a", "s", "t"); assign("b", "r", "p");
store("a", "r", "f", "q"); store("b", "r", "f", "p");
load("a", "t", "p", "f"); load("b", "t", "p", "f");
pts(L, V, O) :- alloc(L, V, O);
pts(L, V, O) :- assign(L, V, W), pts(L, W, O);
hpts(L, O1, F, O2) :- store(L, V, F, W), pts(L, V, O1), pts(L, W, O2);
pts(L, V, O2) :- load(L, V, W, F), pts(L, W, O1), hpts(L, O1, F, O2);
aliased(L, V, W) :- pts(L, V, O), pts(L, W, O), V != W;
"""


def program(text: str):
    return build_program(load_text(text))


def stratum_plan(prog, *names: str):
    """The Arrow plan of the component deriving `names` (None: the general loop)."""
    rules = [r for r in prog.rules if r.head.name in names]
    return ArrowFixpoint.compile(rules, sorted(names), prog)


def test_pivots_and_fallbacks():
    prog = program(RECURSIVE)
    assert stratum_plan(prog, "path").pivot == {"path": (0, 2)}  # right-linear: keeps L and Z
    assert stratum_plan(prog, "tc").pivot == {"tc": (0,)}  # non-linear: only the location
    assert stratum_plan(prog, "from1").pivot == {"from1": (0,)}
    assert stratum_plan(prog, "pts", "hpts").pivot == {"hpts": (0,), "pts": (0,)}  # mutual recursion
    assert stratum_plan(prog, "far") is None  # a modulo: the general loop


MOVING = """
.decl peer(l: string, m: string)
.decl link(l: string, x: int, m: string, y: int)
peer("a", "b"); peer("b", "c"); peer("c", "a"); token("a", 1);
link("a", 1, "b", 2); link("b", 2, "c", 3); link("c", 3, "a", 1); link("c", 3, "b", 4);
seen(L, X) :- token(L, X);
seen(M, X) :- seen(L, X), peer(L, M);
hop(L, X) :- token(L, X);
hop(M, Y) :- hop(L, X), link(L, X, M, Y);
lonely(L) :- peer(L, _), !hop(L, 4);
"""


def test_a_recursion_across_locations_splits_only_by_what_it_keeps():
    prog = program(MOVING)
    assert stratum_plan(prog, "seen").pivot == {"seen": (1,)}  # keeps X, not the location
    plan = stratum_plan(prog, "hop")
    assert plan.pivot == {"hop": ()} and not plan.partitioned  # keeps nothing: one task


def test_buckets_split_the_fixpoint_into_disjoint_parts():
    plan = stratum_plan(program(RECURSIVE), "path")
    edges = [("a", 1, 2), ("a", 2, 3), ("a", 3, 1), ("a", 3, 4), ("b", 1, 2), ("b", 2, 6), ("b", 6, 6)]
    edge = pa.table({f"c{i}": list(col) for i, col in enumerate(zip(*edges))})
    empty = plan.schemas["path"].empty_table()

    def rows(bucket, buckets):
        found = plan.solve({"edge": edge, "path": empty}, bucket, buckets)["path"]
        return [tuple(r.values()) for r in found.to_pylist()]

    whole = rows(0, 1)
    # by hand: in "a" the cycle 1-2-3 reaches 1, 2, 3, 4 and 4 reaches nothing; in "b" 1 -> 2, 6 and 2, 6 -> 6
    expected = {("a", x, y) for x in (1, 2, 3) for y in (1, 2, 3, 4)} | {("b", 1, 2), ("b", 1, 6), ("b", 2, 6),
                                                                        ("b", 6, 6)}
    assert len(whole) == len(set(whole)) and set(whole) == expected
    parts = [rows(b, 3) for b in range(3)]
    assert sorted(sum(parts, [])) == sorted(whole)
    assert sum(1 for p in parts if p) > 1  # the buckets really split the work


def test_solve_returns_only_new_facts():
    plan = stratum_plan(program(RECURSIVE), "from1")
    edge = pa.table({"c0": ["a", "a", "a"], "c1": [1, 2, 3], "c2": [2, 3, 1]})
    known = pa.table({"c0": ["a"], "c1": [3]})
    found = plan.solve({"edge": edge, "from1": known}, 0, 1)["from1"]
    assert sorted(found.column("c1").to_pylist()) == [1, 2]


@pytest.mark.spark
def test_recursive_strata_match_the_reference_with_and_without_arrow(spark):
    prog = program(RECURSIVE)
    iterations = {}
    for mode in ("arrow", PYARROW, LOOP):
        spark.conf.set(SETTING, mode)
        try:
            found, run = compared_run(spark, prog, ticks=2)
        finally:
            spark.conf.unset(SETTING)
        assert found == [], mode
        iterations[mode] = [s.iterations for s in run.stats]
    # `far` (a modulo) is left to the general loop: a job per iteration
    assert iterations["arrow"][0] > 0, iterations


@pytest.mark.spark
def test_a_recursion_across_locations_matches_the_reference(spark):
    found, run = compared_run(spark, program(MOVING), ticks=1)
    assert found == [] and run.stats[0].iterations == 0


@pytest.mark.spark
@pytest.mark.parametrize("driver_rows", [0, None])
def test_the_pack_holds_each_fact_once_when_the_fixpoint_found_it(spark, driver_rows):
    # The Arrow fixpoint's facts skip the pack's distinct (they are new, and only their
    # stratum derives them). A pack row is a fact here (no @next, no messages), so its
    # rows must equal the reference's facts: `path` over the constant `edge` is
    # replicated into every bucket, and only one copy may reach the pack. In Spark's
    # tasks (driverRows=0), and with the components the driver may solve solved there
    # (the default: those at location "a" alone), whose pack is then counted in the driver.
    import re

    from sparkdedalus.reference.evaluator import run as reference_run

    text = "\n".join(line for line in RECURSIVE.splitlines()
                     if not line.startswith(("far", "node", "unreached", "reach", "aliased")))
    prog = program(re.sub(r'\w+\("b", [^;]*\);', "", text))
    with _driver_rows(spark, driver_rows):
        found, run = compared_run(spark, prog, ticks=1)  # (from tick 2 on these relations grow: the loop)
    assert found == [] and run.stats[0].iterations == 0  # the Arrow fixpoint only
    assert (run.stats[0].in_driver > 0) == (driver_rows is None)
    assert run.stats[0].facts == sum(len(v) for v in reference_run(prog, ticks=1).at(1).values())


@pytest.mark.spark
def test_a_closure_at_one_location_is_spread_by_its_pivot(spark):
    # One location: bucketed by location alone, every path would sit in one
    # partition (one task for the pack's job). The closure's pivot is (L, Z): the
    # partitioner buckets `path` by L and Z, so both partitions hold paths, and the
    # facts still equal the reference's.
    from pyspark.sql import functions as F

    edges = " ".join(f'edge("g", {i}, {i + 1});' for i in range(1, 30)) + ' edge("g", 30, 1);'
    prog = program(".decl edge(l: string, x: int, y: int)\n" + edges + """
path(L, X, Y) :- edge(L, X, Y);
path(L, X, Z) :- edge(L, X, Y), path(L, Y, Z);
""")
    found, run = compared_run(spark, prog, ticks=1, partitions=2)
    assert found == [] and run.stats[0].iterations == 0  # the Arrow fixpoint only
    assert run.driver.loop.plan.partitioner.keys["path"] == (2, ())
    paths = run.driver.packs[1].where("__rel = 'path'")
    assert {r[0] for r in paths.select(F.spark_partition_id()).distinct().collect()} == {0, 1}


def test_only_a_located_recursion_finer_than_its_location_is_bucketed_by_its_pivot():
    from sparkdedalus.spark.partitioner import Partitioner

    prog = program(RECURSIVE)
    by_pivot, plain = Partitioner(prog, 2, {"path": 2}), Partitioner(prog, 2)
    assert by_pivot.keys["path"] == (2, ()) and "path" not in by_pivot.replicated
    # without: `path`, derived from text facts only, is replicated (a copy in every bucket)
    assert "path" not in plain.keys and "path" in plain.replicated


def test_a_one_tick_recursive_query_over_parquet_is_one_job(spark, tmp_path):
    """Shortest paths over a Parquet graph whose footer shows its rows valid,
    solved in Spark (`driverRows=0`; the driver's path: the tests below): no
    job checks, infers or packs the input, and the Arrow fixpoint, which
    nothing after it reads, is computed by the tick's pack job: one job for
    the run (5 before: schema, check, input pack, fixpoint, pack). The answer
    is the hand-computed one."""
    import pyarrow.parquet as pq

    from sparkdedalus import Program
    from sparkdedalus.spark.engine import Engine
    from test_provenance_spark import jobs

    # 0 -1-> 1 -1-> 2, 0 -5-> 2, 2 -1-> 0 (a cycle), 3 unreachable
    pq.write_table(pa.table({"l": ["g"] * 5, "x": [0, 1, 0, 2, 3], "y": [1, 2, 2, 0, 0], "w": [1, 1, 5, 1, 1]}),
                   tmp_path / "edge.parquet")
    (tmp_path / "sssp.ded").write_text(
        '.decl edge(l: string, x: int, y: int, w: int)\n.input edge from "edge.parquet"\n'
        'source("g", 0);\ndist(L, X, 0) :- source(L, X);\n'
        'dist(L, Y, min<D>) :- dist(L, X, D1), edge(L, X, Y, W), W >= 0, D == D1 + W;\n')
    program = Program.from_files(str(tmp_path / "sssp.ded"))
    found = {}
    with _driver_rows(spark, 0):
        assert jobs(spark, lambda: found.update(run=Engine(spark).run(program, 1, keep_history=False))) == 1
    assert {tuple(r) for r in found["run"].relation("dist").collect()} == {("g", 0, 0), ("g", 1, 1), ("g", 2, 2)}


GROWING = """
.decl step(l: string, n: int)
step("g", 1);
step(L, M)@next :- step(L, N), M == N + 1;
edge(L, N, M) :- step(L, N), M == N + 1;
edge(L, X, Y)@next :- edge(L, X, Y);
path(L, X, Y) :- edge(L, X, Y);
path(L, X, Z) :- path(L, X, Y), edge(L, Y, Z);
path(L, X, Y)@next :- path(L, X, Y);
even(L, X, Y) :- path(L, X, Y), (Y - X) % 2 == 0;
"""


def test_a_differential_rule_reads_only_new_facts_in_its_first_iteration():
    # `path(L, X, Z) :- path(L, X, Y), edge(L, Y, Z)` with rule 1 differential: given a
    # new edge 3 -> 4 only, it derives the paths through that edge (and on from them),
    # not (1, 3), which the old facts give and `tables` lacks only for this test.
    prog = program(".decl edge(l: string, x: int, y: int)\n"
                   "path(L, X, Y) :- edge(L, X, Y);\npath(L, X, Z) :- path(L, X, Y), edge(L, Y, Z);")
    rules = [r for r in prog.rules if r.head.name == "path"]
    plan = ArrowFixpoint.compile(rules, ["path"], prog, frozenset(r.index for r in rules))
    edge = pa.table({"c0": ["g"] * 3, "c1": [1, 2, 3], "c2": [2, 3, 4]})
    path = pa.table({"c0": ["g"] * 3, "c1": [1, 2, 2], "c2": [2, 3, 3]})
    news = {"edge": edge.slice(2)}

    def pairs(found):
        return sorted(zip(found["path"].column("c1").to_pylist(), found["path"].column("c2").to_pylist()))

    assert pairs(plan.solve({"edge": edge, "path": path}, 0, 1, news)) == [(2, 4), (3, 4)]
    assert pairs(plan.solve({"edge": edge, "path": path}, 0, 1)) == [(1, 3), (1, 4), (2, 4), (3, 4)]


@pytest.mark.spark
def test_a_growing_recursion_with_plain_rules_beside_it_is_one_job_a_tick(spark):
    """One recursive stratum of four components: `edge` (plain joins) and `even`
    (a modulo, which the Arrow fixpoint leaves to SQL) are not recursive and
    cost no job; `path` grows every tick (its rule runs on new facts) and is
    solved by the Arrow fixpoint, counted at tick 1 (a job), then small:
    computed by the tick's job. Before: a job per component at tick 1, and
    the general loop's iterations from tick 2. The facts are the reference's,
    and by hand: a chain 1 -> ... -> 5 at tick 4, whose even paths are
    (1, 3), (1, 5), (2, 4) and (3, 5)."""
    from sparkdedalus.spark.engine import Engine
    from test_provenance_spark import jobs

    prog = program(GROWING)
    assert [s.recursive for s in prog.strata] == [True]
    differences, run = compared_run(spark, prog, ticks=4)
    assert differences == []
    assert {(x, y) for _, x, y in run.facts(4, ["even"])["even"]} == {(1, 3), (1, 5), (2, 4), (3, 5)}
    runs = {}
    assert jobs(spark, lambda: runs.update(run=Engine(spark).run(prog, ticks=4, keep_history=False))) == 2 + 3
    assert [s.iterations for s in runs["run"].stats] == [0, 0, 0, 0]


# ---------------------------------------------------------------- solved in the driver
# 0 -1-> 1 -1-> 2 -1-> 0 (a cycle), 0 -5-> 2, 2 -2-> 3, 3 -1-> 1, 4 -1-> 0 (4 unreached)
SSSP_EDGES = {"l": ["g"] * 7, "x": [0, 1, 2, 0, 2, 3, 4], "y": [1, 2, 0, 2, 3, 1, 0], "w": [1, 1, 1, 5, 2, 1, 1]}
SSSP_DIST = {("g", 0, 0), ("g", 1, 1), ("g", 2, 2), ("g", 3, 4)}
SSSP = ('.decl edge(l: string, x: int, y: int, w: int)\n.input edge from "edge.parquet"\n'
        'source("g", 0);\ndist(L, X, 0) :- source(L, X);\n'
        'dist(L, Y, min<D>) :- dist(L, X, D1), edge(L, X, Y, W), W >= 0, D == D1 + W;\n')
# a forest of three trees, {3, 5, 7, 9}, {2, 4, 8}, {6, 10}, each link both ways
FOREST = [(5, 3), (3, 7), (3, 9), (2, 8), (8, 4), (6, 10)]
CC_LABELS = {("g", x, c) for c, xs in ((3, (3, 5, 7, 9)), (2, (2, 4, 8)), (6, (6, 10))) for x in xs}
CC = ('.decl link(l: string, x: int, y: int)\n.input link from "link.parquet"\n'
      'cc(L, X, X) :- link(L, X, _);\ncc(L, Y, min<C>) :- cc(L, X, C), link(L, X, Y);\n')


class _Settings:
    """Session settings ({key: value}; None: its default) set for a `with` block."""

    def __init__(self, spark, settings: dict):
        self.spark, self.settings = spark, settings

    def __enter__(self):
        for key, value in self.settings.items():
            if value is not None:
                self.spark.conf.set(key, str(value))

    def __exit__(self, *exc):
        for key in self.settings:
            self.spark.conf.unset(key)


def _driver_rows(spark, value, component="as value"):
    """`spark.sparkdedalus.fixpoint.driverRows` (the rows of a tick the driver
    takes) at `value` and `driverComponentRows` (of a component) at
    `component`, by default `value` too (None: a default), for a `with` block."""
    from sparkdedalus.spark.fixpoint import DRIVER_COMPONENT_ROWS_SETTING, DRIVER_ROWS_SETTING

    return _Settings(spark, {DRIVER_ROWS_SETTING: value,
                             DRIVER_COMPONENT_ROWS_SETTING: value if component == "as value" else component})


def _run_counted(spark, program, ticks: int = 1, **kwargs):
    """(the run, the Spark jobs it ran)."""
    from sparkdedalus.spark.engine import Engine
    from test_provenance_spark import jobs

    found = {}
    count = jobs(spark, lambda: found.update(run=Engine(spark).run(program, ticks, **kwargs)))
    return found["run"], count


def _graph_program(tmp_path, kind: str, extra: str = "", locations=("g",)):
    """sssp or cc over the hand-checked graph above, read from Parquet (one copy per location)."""
    import pyarrow.parquet as pq

    from sparkdedalus import Program

    if kind == "sssp":
        columns, text, name = SSSP_EDGES, SSSP, "edge"
    else:
        pairs = FOREST + [(y, x) for x, y in FOREST]
        columns, text, name = {"l": ["g"] * len(pairs), "x": [x for x, _ in pairs], "y": [y for _, y in pairs]}, \
            CC, "link"
    rows = len(columns["l"])
    columns = {c: (v if c != "l" else []) * len(locations) for c, v in columns.items()}
    columns["l"] = [loc for loc in locations for _ in range(rows)]
    pq.write_table(pa.table(columns), tmp_path / f"{name}.parquet")
    (tmp_path / f"{kind}.ded").write_text(text + extra)
    return Program.from_files(str(tmp_path / f"{kind}.ded"))


@pytest.mark.spark
@pytest.mark.parametrize("kind", ["sssp", "cc"])
def test_the_driver_and_a_task_solve_a_small_component_alike(spark, tmp_path, kind):
    """Shortest paths over a graph with a cycle, components of a forest: solved
    in a Spark task (`driverRows=0`) and in the driver (the default threshold),
    the same hand-checked facts; the driver's run counts its pack without a job,
    so the run itself runs no Spark job (the task's: one, the pack's)."""
    program = _graph_program(tmp_path, kind)
    relation, expected = ("dist", SSSP_DIST) if kind == "sssp" else ("cc", CC_LABELS)
    seen = {}
    for setting in (0, None):
        with _driver_rows(spark, setting):
            run, count = _run_counted(spark, program, keep_history=False)
        seen[setting] = (count, run.stats[0].in_driver, run.stats[0].facts,
                         {tuple(r) for r in run.relation(relation).collect()})
    assert seen[0][:2] == (1, 0) and seen[None][:2] == (0, 1), seen
    assert seen[0][2:] == seen[None][2:] and seen[None][3] == expected


@pytest.mark.spark
def test_a_component_of_a_tick_on_spark_is_solved_in_the_driver_within_its_own_limit(spark, tmp_path):
    """Inputs over `driverRows` (8 rows, the limit 6) put the tick on Spark;
    its one-task component is still solved in the driver, whose limit for a
    component is `driverComponentRows` (default 10 million), and not at a
    `driverComponentRows` of 6. The hand-checked distances either way."""
    program = _graph_program(tmp_path, "sssp")
    solved = {}
    for component_rows in (None, 6):
        with _driver_rows(spark, 6, component=component_rows):
            run, _ = _run_counted(spark, program, keep_history=False)
        solved[component_rows] = (run.stats[0].in_driver, {tuple(r) for r in run.relation("dist").collect()})
    assert solved == {None: (1, SSSP_DIST), 6: (0, SSSP_DIST)}


@pytest.mark.spark
def test_the_driver_leaves_what_it_may_not_solve_to_spark(spark, tmp_path):
    """Not in the driver: inputs above the threshold, a graph at two locations
    (two tasks' work), a CSV input (only Spark holds its rows), and the second
    tick (its start is the first tick's pack). With a later stratum reading the
    component, the driver still solves it, but the pack, which that stratum adds
    to, is counted by its job. The facts are right every time."""
    from sparkdedalus import Program

    program = _graph_program(tmp_path, "sssp")
    with _driver_rows(spark, 6):  # 7 edge rows and a source fact
        run, count = _run_counted(spark, program, keep_history=False)
    assert (run.stats[0].in_driver, count) == (0, 1)
    assert {tuple(r) for r in run.relation("dist").collect()} == SSSP_DIST

    (tmp_path / "two").mkdir()
    two = _graph_program(tmp_path / "two", "cc", locations=("g", "h"))
    run, count = _run_counted(spark, two, keep_history=False)
    assert run.stats[0].in_driver == 0
    assert {tuple(r) for r in run.relation("cc").collect()} == CC_LABELS | {("h", x, c) for _, x, c in CC_LABELS}

    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    (csv_dir / "link.csv").write_text("l,x,y\n" + "".join(f"g,{x},{y}\ng,{y},{x}\n" for x, y in FOREST))
    (csv_dir / "cc.ded").write_text(CC.replace("link.parquet", "link.csv"))
    run, _ = _run_counted(spark, Program.from_files(str(csv_dir / "cc.ded")), keep_history=False)
    assert run.stats[0].in_driver == 0 and {tuple(r) for r in run.relation("cc").collect()} == CC_LABELS

    run, _ = _run_counted(spark, program, ticks=2)
    assert [s.in_driver for s in run.stats] == [1, 0]
    for tick in (1, 2):
        assert {tuple(r) for r in run.relation("dist", tick).collect()} == SSSP_DIST

    later = _graph_program(tmp_path, "sssp", extra="reached(L, count<Y>) :- dist(L, Y, _);\n")
    run, count = _run_counted(spark, later, keep_history=False)
    assert (run.stats[0].in_driver, count) == (1, 1)  # the pack's job
    assert {tuple(r) for r in run.relation("dist").collect()} == SSSP_DIST
    assert {tuple(r) for r in run.relation("reached").collect()} == {("g", 4)}
