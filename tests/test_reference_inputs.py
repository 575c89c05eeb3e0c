"""`.input` relations read from CSV, JSON (array or lines), Parquet and Delta files."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from reference_helpers import history
from sparkdedalus import Program
from sparkdedalus.reference import run

PROGRAM = """
    .decl req(loc: string, id: int, weight: double, urgent: bool)
    .input req from "{path}"
    heavy(L, Id) :- req(L, Id, W, _), W > 1.0;
    urgent(L, Id) :- req(L, Id, _, true);
"""


def write(directory, name: str, text: str) -> str:
    path = os.path.join(str(directory), name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(text).lstrip())
    return path


def program_in(directory, data_file: str) -> Program:
    path = write(directory, "prog.ded", PROGRAM.format(path=data_file))
    return Program.from_files(path)


def test_csv_with_and_without_tick(tmp_path):
    write(tmp_path, "req.csv", """
        id,loc,weight,urgent,tick
        1,a,0.5,true,
        2,a,2,FALSE,2
        3,b,1.5,false,3
    """)
    trace = run(program_in(tmp_path, "req.csv"), ticks=3)
    req = history(trace, "req")
    assert req[1] == {("a", 1, 0.5, True)}
    assert req[2] == {("a", 1, 0.5, True), ("a", 2, 2.0, False)}
    assert req[3] == {("a", 1, 0.5, True), ("b", 3, 1.5, False)}
    assert history(trace, "heavy") == {1: set(), 2: {("a", 2)}, 3: {("b", 3)}}
    assert history(trace, "urgent") == {t: {("a", 1)} for t in (1, 2, 3)}


def test_json_array_and_json_lines(tmp_path):
    records = [{"loc": "a", "id": 1, "weight": 2, "urgent": False},
               {"loc": "b", "id": 2, "weight": 0.25, "urgent": True, "tick": 2}]
    write(tmp_path, "array.json", json.dumps(records))
    write(tmp_path, "lines.json", "\n".join(json.dumps(r) for r in records) + "\n")
    for name in ("array.json", "lines.json"):
        trace = run(program_in(tmp_path, name), ticks=2)
        assert history(trace, "req") == {1: {("a", 1, 2.0, False)},
                                          2: {("a", 1, 2.0, False), ("b", 2, 0.25, True)}}
        assert history(trace, "urgent") == {1: set(), 2: {("b", 2)}}


def test_paths_are_relative_to_inputs_dir_when_given(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    write(data, "req.csv", "loc,id,weight,urgent\nc,9,3.0,true\n")
    program = program_in(tmp_path, "req.csv")
    assert history(run(program, ticks=1, inputs_dir=str(data)), "heavy") == {1: {("c", 9)}}
    with pytest.raises(ValueError, match="cannot read input"):
        run(program, ticks=1)


def test_parquet_and_delta(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from deltalake import write_deltalake
    table = pa.table({"loc": ["a"], "id": pa.array([4], pa.int64()), "weight": [1.5], "urgent": [True]})
    pq.write_table(table, str(tmp_path / "req.parquet"))
    write_deltalake(str(tmp_path / "req_delta"), table)
    for name in ("req.parquet", "req_delta"):
        trace = run(program_in(tmp_path, name), ticks=1)
        assert history(trace, "req") == {1: {("a", 4, 1.5, True)}}, name


@pytest.mark.parametrize("name,text,message", [
    ("req.csv", "loc,id,weight,urgent\na,1,0.5,true\na,x,0.5,true\n",
     "req.csv: row 2: column 'id': cannot read 'x' as int"),
    ("req.csv", "loc,id,weight,urgent\na,1,0.5,maybe\n", "row 1: column 'urgent': cannot read 'maybe' as bool"),
    ("req.csv", "loc,id,weight,urgent\na,1,0.5\n", "row 1: 3 values, the header has 4"),
    ("req.csv", "loc,id,weight\na,1,0.5\n", "row 1: column 'urgent' is missing"),
    ("req.csv", "loc,id,weight,urgent,color\na,1,0.5,true,red\n", "row 1: unknown column 'color'"),
    ("req.csv", "loc,id,weight,urgent,tick\na,1,0.5,true,0\n", "row 1: column 'tick': ticks start at 1"),
    ("req.csv", "", "empty file"),
    ("req.json", '[{"loc": "a", "id": 1, "weight": 1, "urgent": true}, {"loc": "a", "id": "2", "weight": 1, '
                 '"urgent": true}]', "req.json: row 2: column 'id': '2' is not a value of type int"),
    ("req.json", '{"loc": "a", "id": 1.5, "weight": 1, "urgent": true}\n', "row 1: column 'id'"),
    ("req.json", '[1, 2]', "row 1: expected a JSON object"),
    ("req.json", '{"loc": "a",', "not JSON"),
])
def test_malformed_rows_raise_one_line_errors(tmp_path, name, text, message):
    write(tmp_path, name, text)
    with pytest.raises(ValueError) as info:
        run(program_in(tmp_path, name), ticks=1)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
