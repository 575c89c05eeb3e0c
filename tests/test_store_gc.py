"""A stored run with garbage collection: a collected fact's validity ends at
the tick it was collected, so time travel shows it at the ticks where it held
and not after; a run stopped right after a tick that collected something and
resumed ends as the reference run with GC (the `G` rows come back from the
tables). Expected facts derived by hand (DR_PLUS: y("a", 1) holds from tick
2, so x("a", 1) is dropped at the end of tick 2)."""

from __future__ import annotations

import json
import textwrap

import pytest

from sparkdedalus import Program
from sparkdedalus.reference import run as reference_run
from sparkdedalus.spark.engine import Engine
from sparkdedalus.store import manifest, read
from sparkdedalus.store.errors import StoreError
from frontend_helpers import exit_code
from store_helpers import store_differences
from test_analysis_gc import DR_PLUS

pytestmark = pytest.mark.spark

PROGRAM = Program.parse(textwrap.dedent(DR_PLUS).lstrip("\n"), "t.ded")
X = {1: {("a", 1), ("a", 2)}, 2: {("a", 1), ("a", 2)}, 3: {("a", 2)}, 4: {("a", 2)}}


def test_time_travel_shows_a_collected_fact_where_it_held(spark, tmp_path, capsys):
    path = str(tmp_path / "run")
    run = Engine(spark).run(PROGRAM, 4, store=path, gc=True)
    assert read.relation_history(path, "x", 1, 4) == X
    assert {tuple(r) for r in run.relation("x", 2).collect()} == X[2]
    assert {tuple(r) for r in run.relation("x", 3).collect()} == X[3]
    assert store_differences(path, reference_run(PROGRAM, 4, gc=True), range(1, 5)) == []
    # the deletion is a change: x("a", 1) has one +1 S row (tick 1), one -1 (tick 3)
    rows = read.delta_table(path, "x").to_pandas()
    mine = rows[(rows["c1"] == 1) & (rows["_kind"] == "S")].sort_values("_tick")
    assert list(zip(mine["_tick"], mine["_op"])) == [(1, 1), (3, -1)]
    # `show` says that x is collected where it prints it: x("a", 1) holds at tick 3 but is not shown
    assert exit_code(["show", path, "x", "--at", "3", "--format", "json"]) == 0
    shown = capsys.readouterr()
    assert json.loads(shown.out) == {"tick": 3, "relations": {"x": [["a", 2]]}, "gc_collected": ["x"]}
    assert "garbage-collected: x " in shown.err
    assert exit_code(["show", path, "y", "--format", "json"]) == 0
    assert "garbage-collected" not in capsys.readouterr().err
    # so does `diagram --relation x`, whose dots list x's stored facts
    assert exit_code(["diagram", path, "--out", str(tmp_path / "d.svg"), "--relation", "x"]) == 0
    assert "garbage-collected: x " in capsys.readouterr().err
    assert exit_code(["diagram", path, "--out", str(tmp_path / "d.svg"), "--relation", "y"]) == 0
    assert "garbage-collected" not in capsys.readouterr().err


def test_resume_after_the_tick_that_collected(spark, tmp_path):
    """Stopped after tick 2 (whose G row says x("a", 1) goes): the resumed run
    must not carry x("a", 1) into tick 3."""
    path = str(tmp_path / "run")
    Engine(spark).run(PROGRAM, 2, store=path, gc=True)
    run = Engine(spark).run(PROGRAM, 4, store=path, resume=True, gc=True)
    assert run.store.resumed_from == 2
    assert read.relation_history(path, "x", 1, 4) == X
    assert store_differences(path, reference_run(PROGRAM, 4, gc=True), range(1, 5)) == []


def test_resuming_with_other_gc_rules_is_refused(spark, tmp_path):
    """The manifest records the run's GC rules: a resume without them (or with
    GC where the run had none) would carry facts the stored ticks dropped, so
    it is refused, and the store is left as it was."""
    path = str(tmp_path / "run")
    Engine(spark).run(PROGRAM, 2, store=path, gc=True)
    assert manifest.load(path).gc == ["x(L, K) when y(L, K)"]
    with pytest.raises(StoreError, match="was run with GC rules 'x\\(L, K\\) when y\\(L, K\\)', not without GC"):
        Engine(spark).run(PROGRAM, 4, store=path, resume=True)
    assert manifest.load(path).last_tick == 2
    other = str(tmp_path / "plain")
    Engine(spark).run(PROGRAM, 1, store=other)
    assert manifest.load(other).gc == []
    with pytest.raises(StoreError, match="was run without GC, not with GC rules"):
        Engine(spark).run(PROGRAM, 2, store=other, resume=True, gc=True)
