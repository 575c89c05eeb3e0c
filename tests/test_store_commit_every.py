"""`commit_every` (`sparkdedalus run --commit-every K`): a commit every K ticks
writes the tables a commit every tick writes, row for row, in fewer Delta
commits; a commit of several ticks that crashed half-way (some tables written)
is redone once, whatever K the resumed run uses. Killed writers:
test_store_kill_resume.py."""

from __future__ import annotations

import json
from collections import Counter

import pyarrow as pa
import pytest

from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.spark.engine import Engine
from sparkdedalus.store import read
from sparkdedalus.store.writers import TICK_KEY, SparkDeltaWriter
from store_helpers import CHANGING, reference, store_differences

pytestmark = pytest.mark.spark

NETWORK = Network.parse("delay=uniform(1,3),seed=5")
TICKS = 7


def table_rows(path: str) -> dict:
    """Every table's rows as a multiset (a row written twice counts twice)."""
    return {name: Counter(tuple(sorted(row.items()))
                          for row in pa.table(read.delta_table(path, name).to_pyarrow_table()).to_pylist())
            for name in read.relations(path)}


def commit_ticks(path: str, name: str) -> list:
    """The ticks of a table's commits after its creation, oldest first."""
    history = read.delta_table(path, name).history()
    ticks = [int(h.get(TICK_KEY) or json.loads(h.get("userMetadata", "{}")).get(TICK_KEY, 0)) for h in history]
    return sorted(t for t in ticks if t)


@pytest.fixture(scope="module")
def every_tick(spark, tmp_path_factory):
    """(run directory, table rows) of the run with a commit at every tick."""
    path = str(tmp_path_factory.mktemp("every") / "run")
    Engine(spark).run(Program.parse(CHANGING), TICKS, network=NETWORK, store=path)
    return path, table_rows(path)


@pytest.fixture(scope="module")
def trace():
    return reference(Program.parse(CHANGING), TICKS, NETWORK)


def test_every_third_tick_writes_the_same_tables_in_fewer_commits(spark, tmp_path, every_tick, trace):
    path = str(tmp_path / "run")
    run = Engine(spark).run(Program.parse(CHANGING), TICKS, network=NETWORK, store=path, commit_every=3)
    assert read.last_tick(path) == TICKS and sorted(run.store.written) == [3, 6, 7]
    assert table_rows(path) == every_tick[1]
    assert commit_ticks(path, "count") == [3, 6, 7]  # count changes at every tick
    assert commit_ticks(every_tick[0], "count") == list(range(1, TICKS + 1))
    assert store_differences(path, trace, range(1, TICKS + 1)) == []


@pytest.mark.parametrize("resume_every", [4, pytest.param(2, marks=pytest.mark.slow)])
def test_a_commit_of_several_ticks_that_crashed_half_way_is_redone_once(spark, tmp_path, monkeypatch,
                                                                       every_tick, trace, resume_every):
    """The commit of ticks 4..6 writes `count` and `ping`, then fails on `seen`
    (as a crash would): the manifest stays at tick 3. Resumed with a commit
    every 4 ticks (commits 4 and 5..7: `count` and `ping` get nothing at 4 and
    their rows of tick 7 only at 7) or every 2 (commits 4, 5..6 and 7: nothing
    until 7), every table ends with each row once, as in the run with a commit
    at every tick."""
    original = SparkDeltaWriter.commit

    def crash_on_seen(self, table, tick, frame):
        if tick == 6 and table.endswith("/seen"):
            raise RuntimeError("simulated crash")
        return original(self, table, tick, frame)

    monkeypatch.setattr(SparkDeltaWriter, "commit", crash_on_seen)
    path = str(tmp_path / "run")
    with pytest.raises(RuntimeError, match="simulated crash"):
        Engine(spark).run(Program.parse(CHANGING), TICKS, network=NETWORK, store=path, commit_every=3)
    monkeypatch.undo()
    assert read.last_tick(path) == 3
    assert commit_ticks(path, "count") == [3, 6] and commit_ticks(path, "seen") == [3]
    assert store_differences(path, trace, range(1, 4)) == []  # the horizon hides ticks 4..6

    run = Engine(spark).run(Program.parse(CHANGING), TICKS, network=NETWORK, store=path, resume=True,
                            commit_every=resume_every)
    assert run.store.resumed_from == 3 and read.last_tick(path) == TICKS
    assert table_rows(path) == every_tick[1]
    assert store_differences(path, trace, range(1, TICKS + 1)) == []
