"""The DataFrame-level API of a Spark run: `run.relation(name, tick)` is a DataFrame
with the relation's declared column names and types, holding the reference's rows.

The expected rows below are derived by hand (see the comments), then also checked
against the reference evaluator.
"""

import pytest
from chispa import assert_df_equality
from pyspark.sql.types import LongType, StringType, StructField, StructType

from sparkdedalus import Program
from sparkdedalus.reference import run as reference_run
from sparkdedalus.spark.engine import Engine

pytestmark = pytest.mark.spark

SHOP = """
.decl item(node: string, name: string, price: int)
.decl cheap(node: string, name: string)
.decl stats(node: string, items: long, total: int, low: int)
.decl inbox(node: string, name: string, price: int)
item("a", "x", 3)@1; item("a", "y", 10)@1; item("b", "z", 4)@1;
item(N, I, P)@next :- item(N, I, P);
cheap(N, I) :- item(N, I, P), P < 5;
stats(N, count<I>, sum<P>, min<P>) :- item(N, I, P);
inbox("b", I, P * 2)@async :- item(N, I, P), N == "a", P > 5;
"""
TICKS = 3

# By hand:
# - item holds its three facts at every tick (facts @1, then the identity @next rule);
# - cheap: the items under 5 -> (a, x) and (b, z);
# - stats per node: a has x=3 and y=10 -> 2 items, total 13, lowest 3; b has z=4;
# - inbox: a sends ("b", "y", 20) at every tick (y costs 10 > 5); with the default
#   network a message arrives one tick after it is sent, so inbox is empty at tick 1
#   and holds ("b", "y", 20) from tick 2 on.
EXPECTED = {
    "item": [("a", "x", 3), ("a", "y", 10), ("b", "z", 4)],
    "cheap": [("a", "x"), ("b", "z")],
    "stats": [("a", 2, 13, 3), ("b", 1, 4, 4)],
}
SCHEMAS = {
    "item": StructType([StructField("node", StringType()), StructField("name", StringType()),
                        StructField("price", LongType())]),
    "cheap": StructType([StructField("node", StringType()), StructField("name", StringType())]),
    "stats": StructType([StructField("node", StringType()), StructField("items", LongType()),
                         StructField("total", LongType()), StructField("low", LongType())]),
    "inbox": StructType([StructField("node", StringType()), StructField("name", StringType()),
                         StructField("price", LongType())]),
}


def expected_rows(name: str, tick: int) -> list:
    if name == "inbox":
        return [] if tick == 1 else [("b", "y", 20)]
    return EXPECTED[name]


@pytest.fixture(scope="module")
def shop():
    return Program.parse(SHOP)


@pytest.fixture(scope="module")
def shop_run(spark, shop):
    return Engine(spark).run(shop, ticks=TICKS)


def test_hand_derived_rows_are_the_reference_rows(shop):
    trace = reference_run(shop, ticks=TICKS)
    for tick in range(1, TICKS + 1):
        for name in SCHEMAS:
            assert trace.relation(name, tick) == frozenset(expected_rows(name, tick)), (name, tick)


@pytest.mark.parametrize("tick", range(1, TICKS + 1))
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_relation_is_a_dataframe_of_the_reference_rows(spark, shop_run, name, tick):
    actual = shop_run.relation(name, tick)
    expected = spark.createDataFrame(expected_rows(name, tick), SCHEMAS[name])
    assert actual.columns == [f.name for f in SCHEMAS[name].fields]
    # the engine's columns are non-nullable, a DataFrame built from rows nullable
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True)


def test_relation_defaults_to_the_last_tick(spark, shop_run):
    expected = spark.createDataFrame(expected_rows("inbox", TICKS), SCHEMAS["inbox"])
    assert_df_equality(shop_run.relation("inbox"), expected, ignore_row_order=True, ignore_nullable=True)


def test_undeclared_relation_columns_are_named_loc_c1(spark):
    program = Program.parse('p("a", 1); p("b", 2); q(L, X + 1) :- p(L, X);')
    run = Engine(spark).run(program, ticks=1)
    expected = spark.createDataFrame([("a", 2), ("b", 3)], "loc string, c1 bigint")
    assert_df_equality(run.relation("q", 1), expected, ignore_row_order=True, ignore_nullable=True)


def test_unknown_relation_and_tick_are_errors(shop_run):
    with pytest.raises(ValueError, match="unknown relation 'nope'"):
        shop_run.relation("nope", 1)
    with pytest.raises(ValueError, match="tick 9 is not available"):
        shop_run.relation("item", 9)


def test_a_run_leaves_no_temporary_view_in_the_session(spark, shop):
    """The ticks' checkpoints are temporary views of the caller's session
    (spark/statement.py): each tick drops its own, so a user's catalog is as
    before the run; the run's relations still read back."""
    def views():
        return {row.viewName for row in spark.sql("SHOW VIEWS").collect()}
    before = views()
    run = Engine(spark).run(shop, ticks=TICKS)
    assert views() == before
    assert sorted(run.relation("cheap", TICKS).collect()) == sorted(EXPECTED["cheap"])
