"""The engine on Spark Connect: same facts as the reference evaluator, with no
RDD, SparkContext or JVM handle anywhere in the engine."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.connect]

DRIVER = Path(__file__).resolve().parent / "connect_driver.py"
ENGINE = Path(__file__).resolve().parents[1] / "sparkdedalus" / "spark"


def test_examples_on_spark_connect_match_reference():
    """Three examples, and test_engine_large_inputs' program with facts above the
    inline threshold (loaded from Arrow), in one driver: one Connect server."""
    examples = ["broadcast", "transitive_closure", "voting", "many_facts"]
    done = subprocess.run([sys.executable, str(DRIVER), *examples], capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["example"] for r in results] == examples
    assert all(r["differences"] == [] for r in results), results


@pytest.mark.parametrize("forbidden", [r"\.sparkContext\b", r"\._jvm\b", r"\._jdf\b", r"\._jc\b", r"\.rdd\b"])
def test_engine_code_avoids_classic_only_handles(forbidden):
    # session.py builds sessions; jobnames.py names jobs through a classic session's
    # SparkContext where there is one (its own try/except: Spark Connect has none)
    engine_files = [p for p in ENGINE.glob("*.py") if p.name not in ("session.py", "command.py", "jobnames.py")]
    offenders = [p.name for p in engine_files if re.search(forbidden, p.read_text())]
    assert offenders == []
