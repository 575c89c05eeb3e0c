"""Function relations on the Spark engine against the reference evaluator, for
those the generated programs do not draw (`home`, which the rewrites use)."""

from __future__ import annotations

import pytest

from engine_helpers import compared_run
from sparkdedalus import Program

pytestmark = pytest.mark.spark


def test_home_strips_the_last_path_segment(spark):
    # By hand: "leader/checker" -> "leader"; "a/b/c" -> "a/b"; "plain" stays "plain".
    program = Program.parse('n("leader/checker"); n("a/b/c"); n("plain");\nh(L, H) :- n(L), home(L, H);')
    found, run = compared_run(spark, program, 1)
    assert found == []
    assert run.facts(1, relations=["h"])["h"] == {("leader/checker", "leader"), ("a/b/c", "a/b"),
                                                  ("plain", "plain")}
