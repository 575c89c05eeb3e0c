"""Smoke test of benchmarks/store_commit.py --quick: it runs, prints only JSON
lines on stdout, and every measurement is there and plausible. Slow (its own
Spark session, a few minutes on a busy 2-core machine): `pytest -m slow`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_quick_store_benchmark_prints_every_measurement():
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "store_commit.py"), "--quick"],
                            cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [line["measurement"] for line in lines]
    assert kinds == ["load", "commit", "commit", "storage", "load"]
    commits = {line["writer"]: line for line in lines if line["measurement"] == "commit"}
    assert set(commits) == {"spark-delta", "delta-rs"}
    assert all(c["commit_seconds"]["median"] > 0 and c["tables_written_per_commit_median"] == 2
               for c in commits.values())
    storage = lines[3]
    assert storage["naive_rows"] > storage["store_rows"] > 0
