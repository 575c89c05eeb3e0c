"""Large inputs in the Spark engine: facts written in the program's text above
`INLINE_ROWS` are loaded as a DataFrame once instead of inlined in the plan, and
nothing on the input path or in the tick loop collects rows to the driver."""

from __future__ import annotations

import json

import pytest

from engine_helpers import differences
from sparkdedalus import Program
from sparkdedalus.network import Network
from sparkdedalus.spark.inputs import read_inputs
from sparkdedalus.spark.executor import LoopState
from sparkdedalus.spark.loader import INLINE_ROWS
from sparkdedalus.spark.loop import TickLoop

pytestmark = pytest.mark.spark

MANY = INLINE_ROWS + 40


def many_facts_program(edb: int, stamped: int) -> Program:
    """`edb` facts of `edge` at every tick, `stamped` facts of `event` spread
    over ticks 1..4, and rules joining, negating and sending them."""
    lines = [f'edge("n{i % 3}", {i}, {i + 1});' for i in range(edb)]
    lines += [f'event("n{i % 3}", {i})@{i % 4 + 1};' for i in range(stamped)]
    lines += [
        'hit(L, X, Y) :- event(L, X), edge(L, X, Y);',
        'miss(L, X) :- event(L, X), notin edge(L, X, _);',
        'seen(L, X)@next :- hit(L, X, _);',
        'seen(L, X)@next :- seen(L, X);',
        'note(Y, X)@async :- hit(L, X, Y), edge(L, X, Y), Y < 3;',
        'alive(L, X) :- event(L, X), notin crash(L, "n9", _);',
    ]
    return Program.parse("\n".join(lines))


def test_many_facts_in_the_text_match_the_reference_at_every_tick(spark):
    # events MANY.. have no edge: hits and misses
    program = many_facts_program(edb=MANY, stamped=MANY + 30)
    network = Network.parse("crash=n1@3")
    assert differences(spark, program, ticks=5, network=network) == []


def test_few_facts_match_the_reference_too(spark):
    assert differences(spark, many_facts_program(edb=5, stamped=7), ticks=3) == []


def _struct_expressions(frame) -> int:
    """Row expressions in the analysed plan (its JSON form is not abbreviated)."""
    return frame._jdf.queryExecution().analyzed().toJSON().count("CreateNamedStruct")


def test_facts_above_the_threshold_are_loaded_not_inlined(spark):
    at_limit = TickLoop(spark, many_facts_program(edb=INLINE_ROWS, stamped=INLINE_ROWS))
    above = TickLoop(spark, many_facts_program(edb=INLINE_ROWS + 1, stamped=INLINE_ROWS + 1))
    rows = [(f"n{i}", i, i + 1) for i in range(INLINE_ROWS + 1)]
    # an inline array: one expression per fact in the plan; loaded: none
    assert _struct_expressions(at_limit.loader.frame("edge", rows[:INLINE_ROWS])) == INLINE_ROWS
    assert _struct_expressions(above.loader.frame("edge", rows)) == 0
    # stamped facts: inlined per tick at the limit, one loaded frame with a tick column above it
    assert "event" not in at_limit.loader.stamped
    assert sum(len(by["event"]) for by in at_limit.loader.facts_at.values()) == INLINE_ROWS
    assert set(above.loader.stamped) == {"event"} and above.loader.stamped["event"][1] == {1, 2, 3, 4}
    assert all("event" not in by for by in above.loader.facts_at.values())


class _Collected(AssertionError):
    pass


def test_the_tick_loop_collects_no_rows_to_the_driver(spark, monkeypatch, tmp_path):
    """A crash network over inputs used to collect every input's distinct
    locations; the loop now counts (one row of counts per job) and collects
    nothing else."""
    (tmp_path / "program.ded").write_text(
        '.decl visit(loc: string, who: string)\n.input visit from "visit.csv"\n'
        'up(L, N) :- visit(L, N), notin crash(L, N, _);\n')
    (tmp_path / "visit.csv").write_text("loc,who,tick\nz,b,2\nu,b,\n")
    program = Program.from_files(str(tmp_path / "program.ded"))
    static, stamped, _, _ = read_inputs(spark, program, last_tick=3)

    def counts_only(original):
        def guarded(frame, *args, **kwargs):
            if frame.columns and all(c.startswith("count(") for c in frame.columns):  # numbers, not rows
                return original(frame, *args, **kwargs)
            raise _Collected("rows collected to the driver")
        return guarded

    frame_class = type(spark.range(1))  # the session's DataFrame class (classic or Connect)
    for method in ("collect", "toPandas", "toLocalIterator", "take", "head", "first", "tail"):
        monkeypatch.setattr(frame_class, method, counts_only(getattr(frame_class, method)))
    loop = TickLoop(spark, program, Network.parse("crash=b@2"), static, stamped=stamped)
    state = LoopState()
    previous = None
    for tick in (1, 2, 3):
        previous = state.packs[tick] = loop.run_tick(tick, previous, state)
    monkeypatch.undo()
    crash = {tuple(r) for r in loop.layout.extract(loop.full(previous), "crash").collect()}
    assert crash == {("z", "b", 2), ("u", "b", 2), ("b", "b", 2)}  # by hand: input locations and the node


def test_stamped_ticks_collected_are_those_of_the_run(spark, tmp_path):
    (tmp_path / "program.ded").write_text(
        '.decl visit(loc: string, who: string)\n.input visit from "visit.csv"\n'
        '.decl late(loc: string, who: string)\n.input late from "late.csv"\n')
    (tmp_path / "visit.csv").write_text("loc,who,tick\n" + "".join(f"a,b,{t}\n" for t in range(1, 1001)))
    (tmp_path / "late.csv").write_text("loc,who,tick\nz,b,500\n")
    program = Program.from_files(str(tmp_path / "program.ded"))
    stamped = read_inputs(spark, program, last_tick=3).stamped
    assert stamped["visit"][1] == {1, 2, 3}
    # rows only after the run: still a stamped relation (its locations count for crash facts)
    assert stamped["late"][1] == set() and stamped["late"][0].count() == 1


@pytest.mark.parametrize("fmt, check", [("csv", 1), ("parquet", 0)])
def test_an_input_without_a_tick_column_costs_one_job(spark, tmp_path, fmt, check):
    """Checking and counting an input is one job (`check`), none for a Parquet
    file whose footer shows its rows valid (its schema read from the footer
    too: Spark runs no job to infer it); only rows that may carry a tick cost
    one more, to find the ticks they hold (spark/inputs.py)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from test_provenance_spark import jobs

    (tmp_path / "program.ded").write_text(f'.decl visit(loc: string, who: string)\n.input visit from "visit.{fmt}"\n')
    program = Program.from_files(str(tmp_path / "program.ded"))
    for ticks, expected in ((None, check), ([1, 2, 2], check + 1)):
        columns = {"loc": ["a", "a", "b"], "who": ["x", "y", "z"], **({"tick": ticks} if ticks else {})}
        if fmt == "csv":
            rows = zip(*columns.values())
            (tmp_path / "visit.csv").write_text(",".join(columns) + "\n" + "".join(
                ",".join(map(str, row)) + "\n" for row in rows))
        else:
            pq.write_table(pa.table(columns), tmp_path / "visit.parquet")
        found = {}
        assert jobs(spark, lambda: found.update(read_inputs(spark, program)._asdict())) == expected
        static = {tuple(r) for r in found["static"]["visit"].collect()}
        if ticks is None:
            assert static == {("a", "x"), ("a", "y"), ("b", "z")} and found["stamped"] == {}
            assert found["rows"] == {"visit": 3}
        else:
            assert static == set() and found["stamped"]["visit"][1] == {1, 2}


def test_reading_a_json_array_sends_the_driver_no_rows(spark, monkeypatch, tmp_path):
    """The check that a JSON input is an array used to bring the whole array
    to the driver; the driver now receives scalars only (flags, row ids)."""
    (tmp_path / "program.ded").write_text('.decl visit(loc: string, n: int)\n.input visit from "visit.json"\n')
    (tmp_path / "visit.json").write_text(json.dumps([{"loc": "a", "n": i} for i in range(300)]))
    program = Program.from_files(str(tmp_path / "program.ded"))
    received = []
    frame_class = type(spark.range(1))  # the session's DataFrame class (classic or Connect)
    for method in ("first", "collect", "head", "take"):
        original = getattr(frame_class, method)

        def recording(self, *args, _original=original, **kwargs):
            result = _original(self, *args, **kwargs)
            received.extend(result if isinstance(result, list) else [result])
            return result

        monkeypatch.setattr(frame_class, method, recording)
    static = read_inputs(spark, program, last_tick=2).static
    monkeypatch.undo()
    values = [v for row in received if row is not None for v in row]
    assert values and all(v is None or isinstance(v, (bool, int, float, str)) for v in values), values[:3]
    assert static["visit"].count() == 300
