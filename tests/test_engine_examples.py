"""Differential tests: the Spark engine gives the reference evaluator's facts
for every relation at every tick of every shipped example."""

import pytest

from sparkdedalus import Program
from sparkdedalus.network import Network, Uniform
from engine_helpers import EXAMPLES, PLACEMENTS, differences, example_ticks, placement

pytestmark = pytest.mark.spark

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.ded"))


@pytest.mark.parametrize("mode", PLACEMENTS)
@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_example_matches_reference(spark, path, mode):
    program = Program.from_files(str(path))
    with placement(spark, mode):
        assert differences(spark, program, example_ticks(path)) == []


@pytest.mark.parametrize("mode", PLACEMENTS)
@pytest.mark.parametrize("name", ["nonconfluent", "broadcast"])
def test_example_with_random_delays_matches_reference(spark, name, mode):
    path = EXAMPLES / f"{name}.ded"
    program = Program.from_files(str(path))
    network = Network(delay=Uniform(1, 3), seed=11)
    with placement(spark, mode):
        assert differences(spark, program, example_ticks(path) + 2, network=network) == []


@pytest.mark.parametrize("mode", PLACEMENTS)
def test_broadcast_with_omission_and_crash_matches_reference(spark, mode):
    path = EXAMPLES / "broadcast.ded"
    program = Program.from_files(str(path))
    network = Network(omissions=frozenset({("a", "c", 1)}), crashes={"b": 2})
    with placement(spark, mode):
        assert differences(spark, program, 5, network=network) == []
