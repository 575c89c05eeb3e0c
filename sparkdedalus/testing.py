"""Assertions for users' own tests of Dedalus programs, on chispa.

    from sparkdedalus import Engine, Program
    from sparkdedalus.testing import assert_relation_equals

    def test_every_neighbour_logs_the_first_payload(spark):
        run = Engine(spark).run(Program.from_files("examples/broadcast.ded"), ticks=2)
        assert_relation_equals(run, "log", [("a", "hi"), ("b", "hi"), ("c", "hi"), ("d", "hi"),
                                            ("b", "yo")], tick=2)

Rows are tuples in the relation's column order, location first; order does not
matter (relations are sets).
"""

from __future__ import annotations

from chispa import assert_df_equality


def assert_relation_equals(run, name: str, rows, tick: int | None = None) -> None:
    """Relation `name` of `run` at `tick` (default: the last) holds exactly `rows`;
    on a mismatch, chispa's table of both sides."""
    actual = run.relation(name, tick)
    expected = actual.sparkSession.createDataFrame([tuple(r) for r in rows], actual.schema)
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True)
