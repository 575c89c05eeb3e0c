"""Run examples on a local Spark Connect server and compare every tick with
the reference evaluator; prints one JSON line per example. Used by
test_engine_connect.py (a Connect server cannot share a process with the
classic session of the other tests)."""

import json
import os
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # this checkout's engine, not an installed one

from engine_helpers import EXAMPLES, differences, example_ticks  # noqa: E402
from sparkdedalus import Program  # noqa: E402
from sparkdedalus.network import Network  # noqa: E402
from sparkdedalus.plumbing.session import local_session  # noqa: E402


#: not an example: tests/test_engine_large_inputs.py's program with many facts
MANY_FACTS = "many_facts"


def connect_session(delta: bool = False):
    """A Spark Connect client of a server started in this process on a free
    port (what `remote("local[2]")` does, but not tied to port 15002); with
    `delta` the server has Delta Lake."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    local_session(delta=delta, extra_conf={"spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
                                           "spark.connect.grpc.binding.port": str(port),
                                           "spark.sql.adaptive.enabled": "false"})
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"  # as remote("local") does: functions build Connect columns
    return ConnectSession.builder.remote(f"sc://localhost:{port}").getOrCreate()


def main(names: list[str]) -> None:
    spark = connect_session()
    try:
        assert "connect" in type(spark).__module__, type(spark).__module__
        for name in names:
            if name == MANY_FACTS:  # facts above the inline threshold: loaded from Arrow
                from test_engine_large_inputs import MANY, many_facts_program
                found = differences(spark, many_facts_program(MANY, MANY), 5, Network.parse("crash=n1@3"))
            else:
                path = EXAMPLES / f"{name}.ded"
                found = differences(spark, Program.from_files(str(path)), example_ticks(path))
            print(json.dumps({"example": name, "differences": found}), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
