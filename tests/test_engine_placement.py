"""Where a run's ticks go (spark/placement.py): each tick where the placement
says, the same facts as the reference evaluator in every placement and when a run
moves between the driver and Spark, no Spark job for a tick in the driver, and the
Spark SQL the driver runs giving Spark's own values (spark/duck/dialect.py)."""

import pytest

from sparkdedalus import Program
from sparkdedalus.errors import UsageError
from sparkdedalus.spark.duck.session import DuckSession
from sparkdedalus.spark.engine import Engine
from sparkdedalus.spark.expressions import sql_expr
from sparkdedalus.spark.fixpoint import DRIVER_ROWS_SETTING
from sparkdedalus.syntax import ast
from udfs.registry import spark_string_sql
from engine_helpers import EXAMPLES, compared_run, placement
from test_job_names import next_job_id

pytestmark = pytest.mark.spark

BROADCAST = Program.from_files(str(EXAMPLES / "broadcast.ded"))

#: 40 facts at tick 2, carried one tick by @next, then gone: a run that grows past 30 rows and shrinks
GROWING = Program.parse("""
seed(1);
""" + "".join(f"big({i})@2;\n" for i in range(40)) + """
copy(X)@next :- big(X);
""")


@pytest.mark.parametrize("mode, where", [
    ("driver", ["driver"] * 4),
    ("spark", ["spark"] * 4),
    ("alternate", ["driver", "spark", "driver", "spark"]),
    ("auto", ["driver"] * 4),
])
def test_each_tick_runs_where_the_placement_says(spark, mode, where):
    with placement(spark, mode):
        found, run = compared_run(spark, BROADCAST, 4)
    assert found == []
    assert [s.placement for s in run.stats] == where


def test_auto_moves_a_growing_run_to_spark_and_back(spark):
    """driverRows 30: tick 2 starts from tick 1's pack (a few rows): driver; it
    hands on 80 rows (40 `big` facts, 40 `copy` facts @next): tick 3 on Spark;
    tick 3 hands on 40 `copy` facts: tick 4 on Spark; tick 4 hands on nothing:
    tick 5 back in the driver. The facts are the reference's at every tick."""
    with placement(spark, "auto", **{DRIVER_ROWS_SETTING: 30}):
        found, run = compared_run(spark, GROWING, 5)
    assert found == []
    assert [s.facts for s in run.stats][:4] == [1, 81, 41, 1]
    assert [s.placement for s in run.stats] == ["driver", "driver", "spark", "spark", "driver"]


def test_driver_rows_zero_means_always_spark(spark):
    with placement(spark, "auto", **{DRIVER_ROWS_SETTING: 0}):
        run = Engine(spark).run(BROADCAST, ticks=2)
    assert [s.placement for s in run.stats] == ["spark", "spark"]


def test_a_run_in_the_driver_runs_no_spark_job(spark):
    first = next_job_id(spark)
    with placement(spark, "driver"):
        run = Engine(spark).run(BROADCAST, ticks=5)
        facts = run.facts(5, relations=["log"])
    assert [s.placement for s in run.stats] == ["driver"] * 5
    assert facts["log"]  # read from the driver's pack
    assert next_job_id(spark) == first  # neither the ticks nor the read ran a job


def test_inputs_only_spark_holds_keep_the_run_on_spark(spark):
    """An `edb=` DataFrame is Spark's: every tick runs there, even when the driver is asked for."""
    program = Program.parse("link(\"a\", \"b\");\nedge(X, Y) :- link(X, Y);")
    frame = spark.createDataFrame([("b", "c")], "c0 string, c1 string")
    with placement(spark, "driver"):
        run = Engine(spark).run(program, ticks=2, edb={"link": frame})
    assert [s.placement for s in run.stats] == ["spark", "spark"]
    assert run.facts(2, relations=["edge"])["edge"] == {("a", "b"), ("b", "c")}


def test_an_unknown_placement_is_a_usage_error(spark):
    with placement(spark, "everywhere"), pytest.raises(UsageError, match="spark.sparkdedalus.placement"):
        Engine(spark).run(BROADCAST, ticks=1)


DOUBLES = [0.1, 2.5, 1e16, 1e-5, -3.25, 1.0 / 3, 123456789.125, 0.0, -0.0, float("inf"), float("nan"), 5e-324]


@pytest.mark.parametrize("text", [
    *(spark_string_sql(f"CAST('{v!r}' AS DOUBLE)", "double") for v in DOUBLES),
    "xxhash64(concat_ws(chr(31), '7', 'a', CAST(CAST(3 AS BIGINT) AS STRING)))",
    "pmod(xxhash64('seed'), 3)",
    sql_expr(ast.BinOp("/", ast.Const(-7), ast.Const(2)), {}, {}),
    sql_expr(ast.BinOp("%", ast.Const(-7), ast.Const(3)), {}, {}),
    sql_expr(ast.BinOp("/", ast.Const(7), ast.Const(0)), {}, {}),
    "sha2('sig:a', 256)",
    "CAST(char_length('héllo') AS BIGINT)",
    "regexp_extract('n/1/2', '^(.*)/[^/]*$', 1)",
])
def test_the_driver_computes_sparks_values(spark, text):
    """The same Spark SQL text, in Spark and in the driver: the same value."""
    query = f"SELECT {text} AS v FROM range(0, 1, 1, 1)"
    assert DuckSession({}).sql(query).collect()[0]["v"] == spark.sql(query).collect()[0]["v"]


def test_the_driver_keeps_sparks_row_order_for_choose(spark):
    """`row_number()` over a hash order picks the same row in both."""
    query = ("SELECT k, v FROM (SELECT k, v, row_number() OVER (PARTITION BY k ORDER BY xxhash64(v)) AS r "
             "FROM (SELECT inline(array(struct('a' AS k, 'x' AS v), struct('a' AS k, 'y' AS v), "
             "struct('b' AS k, 'z' AS v))) FROM range(0, 1, 1, 1))) WHERE r = 1 ORDER BY k")
    duck = [tuple(r.values()) for r in DuckSession({}).sql(query).collect()]
    assert duck == [tuple(r) for r in spark.sql(query).collect()]


def _inputs_program(tmp_path, ballots: int):
    """A `.input` CSV of `ballots` rows at every tick and a stamped one (rows at ticks 2 and 3)."""
    (tmp_path / "program.ded").write_text(
        '.decl vote(voter: string, choice: long)\n.input vote from "vote.csv"\n'
        '.decl late(voter: string, choice: long)\n.input late from "late.csv"\n'
        'tally(C, count<V>) :- vote(V, C);\n'
        'tally(C, count<V>) :- late(V, C);\n'
        'seen(V)@next :- late(V, _);\nseen(V)@next :- seen(V);\n')
    (tmp_path / "vote.csv").write_text("voter,choice\n" + "".join(f"v{i},{i % 3}\n" for i in range(ballots)))
    (tmp_path / "late.csv").write_text("voter,choice,tick\nw1,7,2\nw2,7,3\nw3,8,\n")
    return Program.from_files(str(tmp_path / "program.ded"))


@pytest.mark.parametrize("mode, settings", [
    ("driver", {}), ("alternate", {}), ("auto", {}),
    ("auto", {"spark.sql.autoBroadcastJoinThreshold": "16"}),  # files over the cap: Spark reads, the driver collects
])
def test_input_files_reach_the_driver(spark, tmp_path, mode, settings):
    """`.input` CSV files (at every tick, and stamped with ticks) read by the driver
    (or, over the byte cap, by Spark and collected once), then every tick in the
    driver (every other one when alternating): the reference's facts."""
    program = _inputs_program(tmp_path, 30)
    with placement(spark, mode, **settings):
        found, run = compared_run(spark, program, 4)
    assert found == []
    assert [s.placement for s in run.stats] == (["driver", "spark"] * 2 if mode == "alternate" else ["driver"] * 4)


def test_a_bad_input_row_is_the_same_one_line_error_in_the_driver(spark, tmp_path):
    program = _inputs_program(tmp_path, 3)
    (tmp_path / "vote.csv").write_text("voter,choice\nv1,x\n")
    with placement(spark, "driver"), pytest.raises(ValueError, match=r"vote.csv: row 1: column 'choice'"):
        Engine(spark).run(program, ticks=1)


def test_input_files_larger_than_the_threshold_stay_on_spark(spark, tmp_path):
    program = _inputs_program(tmp_path, 30)
    with placement(spark, "auto", **{DRIVER_ROWS_SETTING: 20}):
        found, run = compared_run(spark, program, 3)
    assert found == []
    assert [s.placement for s in run.stats] == ["spark"] * 3


def test_a_tick_the_driver_cannot_run_runs_on_spark(spark, monkeypatch):
    """SQL with no DuckDB twin (`NotInDriver`) at tick 3: that tick and the next run on
    Spark, the ticks before stay the driver's, and every fact is the reference's."""
    from sparkdedalus.reference import run as reference_run
    from sparkdedalus.spark.duck import session
    from sparkdedalus.spark.duck.dialect import NotInDriver

    original, failing = session.DuckSession.sql, [False]

    def sql(self, text):
        if failing[0]:
            raise NotInDriver("a function DuckDB lacks")
        return original(self, text)
    monkeypatch.setattr(session.DuckSession, "sql", sql)

    def progress(tick, stats):
        failing[0] = tick == 2  # tick 3 fails in the driver
    with placement(spark, "driver"):
        run = Engine(spark).run(BROADCAST, ticks=4, progress=progress)
    failing[0] = False
    assert [s.placement for s in run.stats] == ["driver", "driver", "spark", "spark"]
    trace = reference_run(BROADCAST, ticks=4)
    names = list(BROADCAST.relations)
    for tick in range(1, 5):
        got = run.facts(tick, relations=names)
        assert {n: set(trace.at(tick).get(n, ())) for n in names} == got, tick


def test_parquet_inputs_whose_footers_give_too_many_rows_are_not_read_by_the_driver(spark, tmp_path, monkeypatch):
    """Over `driverRows` by its footer, a Parquet input goes to Spark unread by the
    driver (it read and typed every row before finding out: 4 s of a shortest-paths
    run over 1M edges); under it, the driver reads it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import sparkdedalus.inputs as inputs

    (tmp_path / "program.ded").write_text('.decl vote(voter: string, choice: long)\n.input vote from "vote.parquet"\n'
                                          'tally(C, count<V>) :- vote(V, C);\n')
    pq.write_table(pa.table({"voter": [f"v{i}" for i in range(30)], "choice": [i % 3 for i in range(30)]}),
                   tmp_path / "vote.parquet")
    program = Program.from_files(str(tmp_path / "program.ded"))
    reads = []
    read = inputs.read_inputs
    monkeypatch.setattr(inputs, "read_inputs", lambda *a, **k: reads.append(1) or read(*a, **k))
    with placement(spark, "auto", **{DRIVER_ROWS_SETTING: 20}):
        found, run = compared_run(spark, program, 1)
    assert found == [] and run.stats[0].placement == "spark"
    assert reads == []  # the driver placement read nothing (the reference reads with its own import)
    with placement(spark, "auto", **{DRIVER_ROWS_SETTING: 30}):
        found, run = compared_run(spark, program, 1)
    assert found == [] and run.stats[0].placement == "driver" and reads == [1]
