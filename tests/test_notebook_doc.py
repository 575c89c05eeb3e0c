"""docs/notebook.md runs top to bottom: its python cells, in order, in one
namespace holding the test session's `spark`, in a fresh directory."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "notebook.md"
CONNECT_DRIVER = Path(__file__).resolve().parent / "notebook_connect_driver.py"

pytestmark = pytest.mark.spark

#: session settings Delta Lake sets when it writes a table
DELTA_WRITE_SETTINGS = {"spark.databricks.delta.lastCommitVersionInSession",
                        "spark.sql.parquet.fieldId.read.enabled", "spark.sql.parquet.fieldId.write.enabled"}


def python_cells(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def test_the_notebook_has_cells_to_run():
    cells = python_cells(NOTEBOOK.read_text())
    assert len(cells) >= 8 and all("assert" in c or "print" in c or "spark" in c for c in cells)


def test_the_notebook_runs_top_to_bottom(spark, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = dict(spark.conf.getAll)
    namespace = {"spark": spark}
    for number, cell in enumerate(python_cells(NOTEBOOK.read_text()), start=1):
        exec(compile(cell, f"{NOTEBOOK.name}, cell {number}", "exec"), namespace)
    assert namespace["spark"] is spark  # the notebook's own session, used as it is...
    after = dict(spark.conf.getAll)
    # ...and left as it was, but for what Delta Lake's own writes record in the session
    assert {k: v for k, v in settings.items() if after.get(k) != v and k not in DELTA_WRITE_SETTINGS} == {}
    assert set(after) - set(settings) <= DELTA_WRITE_SETTINGS
    assert (tmp_path / "runs" / "notebook" / "manifest.json").exists()


@pytest.mark.connect
def test_the_notebook_runs_on_spark_connect(tmp_path):
    done = subprocess.run([sys.executable, str(CONNECT_DRIVER), str(tmp_path)], capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    ran = [line for line in done.stdout.splitlines() if line.startswith("cell ")]
    assert len(ran) == len(python_cells(NOTEBOOK.read_text()))
    assert all(line.endswith("on pyspark.sql.connect.session") for line in ran), ran
    assert (tmp_path / "runs" / "notebook" / "manifest.json").exists()
