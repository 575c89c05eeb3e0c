"""The narrow pack (pack/layout.py): relations of every type share a few typed
value columns, and each reads back exactly its own rows."""

import pytest

from sparkdedalus import Program
from sparkdedalus.pack.columns import MESSAGE, STATE
from sparkdedalus.pack.layout import Layout

DECLS = """
.decl mixed(a: string, n: int, x: double, ok: bool, b: string)
.decl ints(a: int, b: int, c: int)
.decl pair(a: string, b: string)
"""


def test_a_relation_argument_takes_the_next_column_of_its_type():
    layout = Layout(Program.parse(DECLS).relations)
    assert layout.columns == {"mixed": ["s0", "l0", "d0", "b0", "s1"], "ints": ["l0", "l1", "l2"],
                              "pair": ["s0", "s1"]}
    # as many columns of a type as the relation with the most of that type: 3 bigint, 2 string
    assert layout.value_columns == ["l0", "l1", "l2", "d0", "s0", "s1", "b0"]
    assert len(layout.pack_schema) == 5 + 7


@pytest.mark.spark
def test_each_relation_reads_back_its_own_rows(spark):
    layout = Layout(Program.parse(DECLS).relations)
    rows = {"mixed": [("a", 1, 0.5, True, "b"), ("c", -2, 2.0, False, "d")],
            "ints": [(1, 2, 3)], "pair": [("a", "b"), ("x", "y")]}
    frames = {n: spark.createDataFrame(r, layout.schemas[n]) for n, r in rows.items()}
    pack = layout.union([layout.part(n, STATE, f) for n, f in frames.items()]
                        + [layout.part("pair", MESSAGE, frames["pair"], sent="3", arrival="4", source="c0")])
    assert pack.columns == layout.pack_schema.fieldNames()
    for name, expected in rows.items():
        read = layout.extract(pack, name)
        assert read.schema.fieldNames() == layout.schemas[name].fieldNames()
        assert sorted(tuple(r) for r in read.collect()) == sorted(expected)
    messages = pack.where(f"__kind = '{MESSAGE}'").collect()
    assert sorted((m["__rel"], m["__sent"], m["__arrival"], m["__src"], layout.row_of("pair", m))
                  for m in messages) == [("pair", 3, 4, "a", ("a", "b")), ("pair", 3, 4, "x", ("x", "y"))]
