"""Importing the Spark engine loads what a plain run needs, not what only a
fault search needs: python-sat (LDFI's solver, faults/ldfi.py) and the
`rewrite` package (its every rewrite and their analyses, which the worlds
rewrite of faults/worlds.py reaches through `rewrite.source`). Checked in a
fresh interpreter by the modules it holds, not by time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: module prefixes only a fault run (batched worlds or LDFI) needs
FAULT_ONLY = ("pysat", "pysolvers", "sparkdedalus.rewrite")


def loaded_after(statement: str) -> list:
    """The modules a fresh interpreter holds after running `statement`."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def fault_only(modules: list) -> list:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in FAULT_ONLY)]


def test_importing_the_engine_loads_no_fault_only_module():
    assert fault_only(loaded_after("import sparkdedalus.spark.engine")) == []


def test_importing_the_engine_loads_no_pandas():
    """pandas (a quarter of a second) is for the Arrow fixpoint's bucket hash
    only; pyarrow builds no array at import (building one imports pandas)."""
    assert [m for m in loaded_after("import sparkdedalus.spark.engine") if m.split(".")[0] == "pandas"] == []


def test_a_fault_search_still_loads_them():
    """The check can say no: the worlds rewrite and the solver load what the
    engine's import left out."""
    loaded = loaded_after(
        "from sparkdedalus import Program\n"
        "from sparkdedalus.faults.worlds import with_worlds\n"
        "from sparkdedalus.faults.ldfi import Formula, Lineage\n"
        "from sparkdedalus.faults.space import Space\n"
        "with_worlds(Program.parse('pre(N) :- a(N); post(N) :- a(N); a(\"n\")@1;'))\n"
        "Formula(Lineage(Space(nodes=('a',), eot=2, eff=1, crashes=1))).allows(set())")
    assert {"pysat.solvers", "pysat.card", "sparkdedalus.rewrite.source"} <= set(loaded)
