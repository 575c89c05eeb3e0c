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


#: Molly's protocols as this dialect writes them (examples/faults/), 6 ticks, with the
#: failure-free network and with a crash and an omission: the first in the driver in
#: the default suite, the rest (on Spark, alternating, the failures) under `slow`
MOLLY_FILES = sorted(EXAMPLES.glob("faults/*.ded"))
MOLLY_NETWORKS = {"failure-free": Network(), "crash and omission": Network(omissions=frozenset({("a", "b", 1)}),
                                                                             crashes={"c": 2})}
MOLLY_CASES = [pytest.param(mode, network, marks=() if (mode, network) == ("driver", "failure-free")
                            else pytest.mark.slow, id=f"{mode}-{network}")
               for mode in PLACEMENTS for network in MOLLY_NETWORKS]


@pytest.mark.parametrize("mode, network", MOLLY_CASES)
@pytest.mark.parametrize("path", MOLLY_FILES, ids=lambda p: p.stem)
def test_molly_protocol_matches_reference(spark, path, mode, network):
    program = Program.from_files(str(path))
    with placement(spark, mode):
        assert differences(spark, program, 6, network=MOLLY_NETWORKS[network]) == []
