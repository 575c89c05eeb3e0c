"""`.input` relations read with Spark: the same rows, and the same one-line
errors, as the reference evaluator's reader (sparkdedalus.inputs)."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from sparkdedalus import Program
from sparkdedalus.inputs import read_inputs
from sparkdedalus.spark.inputs import read_input

pytestmark = pytest.mark.spark

PROGRAM = """
    .decl req(loc: string, id: int, weight: double, urgent: bool)
    .input req from "{path}"
    heavy(L, Id) :- req(L, Id, W, _), W > 1.0;
"""


def program_for(directory, data_file: str) -> Program:
    path = os.path.join(str(directory), "prog.ded")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(PROGRAM.format(path=data_file)))
    return Program.from_files(path)


def write(directory, name: str, text: str) -> None:
    with open(os.path.join(str(directory), name), "w", encoding="utf-8") as handle:
        handle.write(text)


def spark_rows(spark, program) -> set:
    frame = read_input(spark, program, program.inputs[0])
    assert frame.columns == ["c0", "c1", "c2", "c3", "tick"]
    return {(r["tick"], tuple(r[c] for c in ("c0", "c1", "c2", "c3"))) for r in frame.collect()}


def reference_rows(program) -> set:
    return {(tick, row) for _, tick, row in read_inputs(program)}


def reference_error(program) -> str:
    with pytest.raises(ValueError) as info:
        read_inputs(program)
    return str(info.value)


GOOD = {
    "req.csv": 'id,loc,weight,urgent,tick\n1,a,0.5,true,\n2,"b, c", 2 ,FALSE,2\n\n3,,1e3,True,3\n4,"q""t",-inf,false,\n'
               "5,x,1_000.5,false,\n+6,y,.5,true,1\n",
    "lines.json": '{"loc": "a", "id": 1, "weight": 2, "urgent": false}\n\n'
                  '{"loc": "b", "id": 2, "weight": 0.25, "urgent": true, "tick": 2}\n'
                  '{"loc": "c", "id": -3, "weight": 1e2, "urgent": true, "tick": null}\n',
    "array.json": '  [{"loc": "a", "id": 1, "weight": 2, "urgent": false},\n'
                  ' {"urgent": true, "tick": 3, "weight": 0.5, "id": 9223372036854775807, "loc": "z"}]',
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_text_inputs_read_as_the_reference_reads_them(spark, tmp_path, name):
    write(tmp_path, name, GOOD[name])
    program = program_for(tmp_path, name)
    expected = reference_rows(program)
    assert expected and spark_rows(spark, program) == expected


def test_parquet_and_delta_inputs(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from deltalake import write_deltalake
    table = pa.table({"loc": ["a", "b"], "id": pa.array([4, 5], pa.int32()), "weight": [1.5, 2.0],
                      "urgent": [True, False], "tick": pa.array([None, 2], pa.int64())})
    pq.write_table(table, str(tmp_path / "req.parquet"))
    write_deltalake(str(tmp_path / "req_delta"), table)
    for name in ("req.parquet", "req_delta"):
        program = program_for(tmp_path, name)
        assert spark_rows(spark, program) == reference_rows(program) == {
            (None, ("a", 4, 1.5, True)), (2, ("b", 5, 2.0, False))}, name


BAD = [
    ("req.csv", "loc,id,weight,urgent\na,1,0.5,true\na,x,0.5,true\n"),
    ("req.csv", "loc,id,weight,urgent\na,1,0.5,maybe\n"),
    ("req.csv", "loc,id,weight,urgent\na,1,0.5,true\nb,2,0.5\nc,x,1,true\n"),
    ("req.csv", "loc,id,weight\na,1,0.5\n"),
    ("req.csv", "loc,id,weight,urgent,color\na,1,0.5,true,red\n"),
    ("req.csv", "loc,id,weight,urgent,tick\na,1,0.5,true,0\n"),
    ("req.csv", "loc,id,weight,urgent,tick\na,1,0.5,true, \n"),
    ("req.csv", "loc,id,weight,urgent\na,99999999999999999999,0.5,true\n"),
    ("req.csv", "loc,id,weight,urgent\na,1,1d,true\n"),
    ("req.csv", ""),
    ("req.json", '[{"loc": "a", "id": 1, "weight": 1, "urgent": true}, {"loc": "a", "id": "2", "weight": 1, '
                 '"urgent": true}]'),
    ("req.json", '{"loc": "a", "id": 1.5, "weight": 1, "urgent": true}\n'),
    ("req.json", '{"loc": "a", "id": 1, "weight": null, "urgent": true}\n'),
    ("req.json", '{"loc": "a", "id": 1, "weight": 1, "urgent": 1}\n'),
    ("req.json", '{"loc": "a", "id": 1, "weight": 1}\n'),
    ("req.json", '{"loc": "a", "id": 1, "weight": 1, "urgent": true, "tick": 0}\n'),
    ("req.json", '{"loc": "a", "id": 1, "weight": 1, "urgent": true, "x": 2}\n'),
    ("req.json", '[1, 2]'),
    ("req.json", '{"loc": "a",'),
    ("req.json", '{"loc": "a", "id": 1, "weight": 1, "urgent": true}\n{"loc": "a",\n[3]\n'),
]


@pytest.mark.parametrize("name,text", BAD, ids=[f"{i}-{n}" for i, (n, _) in enumerate(BAD)])
def test_malformed_rows_give_the_reference_message(spark, tmp_path, name, text):
    write(tmp_path, name, text)
    program = program_for(tmp_path, name)
    expected = reference_error(program)
    with pytest.raises(ValueError) as info:
        read_input(spark, program, program.inputs[0])
    assert str(info.value) == expected
    assert "\n" not in str(info.value) and name in str(info.value)


def test_parquet_schema_mismatch_names_row_and_column(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"loc": ["a"], "id": ["4"], "weight": [1.5], "urgent": [True]}),
                   str(tmp_path / "req.parquet"))
    pq.write_table(pa.table({"loc": ["a", "b"], "id": [4, 5], "weight": [1.5, None], "urgent": [True, True]}),
                   str(tmp_path / "nulls.parquet"))
    for name, message in (("req.parquet", "req.parquet: row 1: column 'id': '4' is not a value of type int"),
                          ("nulls.parquet", "nulls.parquet: row 2: column 'weight': None is not a value")):
        program = program_for(tmp_path, name)
        assert message in reference_error(program)
        with pytest.raises(ValueError) as info:
            read_input(spark, program, program.inputs[0])
        assert str(info.value) == reference_error(program)


def test_missing_file(spark, tmp_path):
    program = program_for(tmp_path, "absent.csv")
    with pytest.raises(ValueError) as info:
        read_input(spark, program, program.inputs[0])
    assert str(info.value) == reference_error(program)
    json.dumps(str(info.value))


ENGINE_PROGRAM = """
    .decl req(loc: string, id: int, weight: double, urgent: bool)
    .input req from "{path}"
    heavy(L, Id) :- req(L, Id, W, _), W > 1.0;
    seen(L, Id)@next :- seen(L, Id);
    seen(L, Id) :- heavy(L, Id);
    tell(L, Id)@async :- heavy(L, Id), req(L, _, _, true);
"""


def test_engine_runs_inputs_as_the_reference_does_and_stores_them(spark, tmp_path):
    """Rows without a tick hold at every tick, stamped rows at their tick only."""
    from sparkdedalus.spark.engine import Engine
    from sparkdedalus.store import read
    from engine_helpers import differences
    from store_helpers import store_differences
    write(tmp_path, "req.csv", "loc,id,weight,urgent,tick\na,1,2.5,true,\nb,2,3.0,false,2\nc,3,0.5,true,3\n"
                               "d,4,9.0,true,3\n")
    path = os.path.join(str(tmp_path), "prog.ded")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(ENGINE_PROGRAM.format(path="req.csv")))
    program = Program.from_files(path)
    assert differences(spark, program, 4) == []
    from sparkdedalus.reference import run as reference_run
    store = str(tmp_path / "run")
    Engine(spark).run(program, 4, store=store, store_writer="delta-rs")
    assert store_differences(store, reference_run(program, 4), range(1, 5)) == []


def test_bad_input_row_is_a_one_line_error_and_nothing_is_written(tmp_path):
    """Through the command line: the error names file, row and column; the run
    directory is not even created."""
    import subprocess
    import sys
    write(tmp_path, "req.csv", "loc,id,weight,urgent\na,1,2.5,true\nb,two,3.0,false\n")
    path = os.path.join(str(tmp_path), "prog.ded")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(ENGINE_PROGRAM.format(path="req.csv")))
    store = str(tmp_path / "run")
    command = os.path.join(os.path.dirname(sys.executable), "sparkdedalus")
    result = subprocess.run([command, "run", path, "--ticks", "3", "--store", store, "-q"],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(f"sparkdedalus: error: {tmp_path / 'req.csv'}: row 2: column 'id': ")
    assert result.stderr.count("\n") == 1 and "'two'" in result.stderr
    assert not os.path.exists(store)


@pytest.mark.parametrize("case", ["tick 0", "null without statistics", "valid without statistics", "int32 ids",
                                  "valid, two row groups", "null in the second row group"])
def test_parquet_footer_decides_only_when_it_can(spark, tmp_path, case):
    """A Parquet file whose footer shows every row valid is read with no job
    to check it; any other (a bad value the statistics reveal, or no
    statistics) is checked row by row: both read the reference's rows or
    refuse with the reference's message."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sparkdedalus.spark.inputs import _reader

    ids = pa.array([4, 5], pa.int32() if case == "int32 ids" else pa.int64())
    weight = [1.5, None] if "null" in case else [1.5, 2.0]
    columns = {"loc": ["a", "b"], "id": ids, "weight": weight, "urgent": [True, False]}
    if case == "tick 0":
        columns["tick"] = [1, 0]
    options = {"write_statistics": False} if "without statistics" in case else \
        {"row_group_size": 1} if "row group" in case else {}
    pq.write_table(pa.table(columns), str(tmp_path / "req.parquet"), **options)
    program = program_for(tmp_path, "req.parquet")
    decided = _reader(spark, program, program.inputs[0], None).valid_footer() is not None
    assert decided == (case in ("int32 ids", "valid, two row groups"))  # by hand: stats present, nothing bad
    if case == "tick 0" or "null" in case:
        with pytest.raises(ValueError) as info:
            read_input(spark, program, program.inputs[0])
        assert str(info.value) == reference_error(program)
    else:
        assert spark_rows(spark, program) == reference_rows(program)
