"""The facts of one tick as text: the JSON contract both engines share, a
table for terminals, CSV for tools.

>>> facts_json(2, {"log": {("b", "hi"), ("a", "hi")}})
{'tick': 2, 'relations': {'log': [['a', 'hi'], ['b', 'hi']]}}
"""

from __future__ import annotations

import csv
import io
import json

FORMATS = ("table", "json", "csv")
_TYPE_RANK = {bool: 0, int: 1, float: 1, str: 2}


def sort_key(row: tuple) -> tuple:
    """A total order on rows of mixed types: (type rank, value) per column,
    booleans < numbers < strings."""
    return tuple((_TYPE_RANK[type(value)], value) for value in row)


def facts_json(tick: int, relations: dict) -> dict:
    """{"tick": tick, "relations": {name: [[value, ...], ...]}} with sorted names and rows."""
    return {"tick": tick,
            "relations": {name: [list(row) for row in sorted(relations[name], key=sort_key)]
                          for name in sorted(relations)}}


def render(fmt: str, tick: int, relations: dict, program, collected=(), placement=None) -> str:
    """`relations` maps names to sets of rows; columns are named by the program.
    `collected`: the relations shown whose facts garbage collection removes
    (docs/gc.md); JSON names them in `"gc_collected"` (absent when none), the
    other formats leave that line to the caller (`shell/stats.say_collected`).
    `placement`: where each tick of the run ran (the Spark engine's "driver" or
    "spark", spark/placement.py), in JSON as `"placement"` (absent when None:
    the reference evaluator's); the facts are the same either way."""
    data = facts_json(tick, relations)
    if fmt == "json":
        extra = {**({"gc_collected": sorted(collected)} if collected else {}),
                 **({"placement": list(placement)} if placement is not None else {})}
        return json.dumps({**data, **extra})
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["tick", "relation", "values..."])
        for name, rows in data["relations"].items():
            for row in rows:
                writer.writerow([tick, name, *row])
        return out.getvalue().rstrip("\n")
    blocks = [f"tick {tick}"]
    for name, rows in data["relations"].items():
        columns = program.relations[name].columns
        cells = [list(columns)] + [[json.dumps(v) if isinstance(v, str) else str(v) for v in row] for row in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
        blocks.append(f"{name} ({len(rows)} facts)\n  " + "\n  ".join([lines[0], *lines[1:]]))
    return "\n\n".join(blocks)
