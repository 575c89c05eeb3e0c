"""Run examples on a local Spark Connect server and compare every tick with
the reference evaluator; prints one JSON line per example. Used by
test_engine_connect.py (a Connect server cannot share a process with the
classic session of the other tests)."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_helpers import EXAMPLES, differences, example_ticks  # noqa: E402
from sparkdedalus import Program  # noqa: E402
from sparkdedalus.spark.session import remote_session  # noqa: E402


def main(names: list[str]) -> None:
    spark = remote_session("local[2]", delta=False)
    try:
        assert "connect" in type(spark).__module__, type(spark).__module__
        for name in names:
            path = EXAMPLES / f"{name}.ded"
            found = differences(spark, Program.from_files(str(path)), example_ticks(path))
            print(json.dumps({"example": name, "differences": found}), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
