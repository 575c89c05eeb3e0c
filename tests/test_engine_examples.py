"""Differential tests: the Spark engine gives the reference evaluator's facts
for every relation at every tick of every shipped example."""

import pytest

from sparkdedalus import Program
from sparkdedalus.network import Network, Uniform
from engine_helpers import EXAMPLES, differences, example_ticks

pytestmark = pytest.mark.spark

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.ded"))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_example_matches_reference(spark, path):
    program = Program.from_files(str(path))
    assert differences(spark, program, example_ticks(path)) == []


@pytest.mark.parametrize("name", ["nonconfluent", "broadcast"])
def test_example_with_random_delays_matches_reference(spark, name):
    path = EXAMPLES / f"{name}.ded"
    program = Program.from_files(str(path))
    network = Network(delay=Uniform(1, 3), seed=11)
    assert differences(spark, program, example_ticks(path) + 2, network=network) == []


def test_broadcast_with_omission_and_crash_matches_reference(spark):
    path = EXAMPLES / "broadcast.ded"
    program = Program.from_files(str(path))
    network = Network(omissions=frozenset({("a", "c", 1)}), crashes={"b": 2})
    assert differences(spark, program, 5, network=network) == []
