"""The failure space of `sparkdedalus faults`, counted by hand."""

import pytest

from sparkdedalus.faults.space import Scenario, Space
from sparkdedalus.faults.verdict import Counterexample, missing, smallest_first


def test_simplog_space_is_64_scenarios_over_6_channels():
    # the figure: nodes a,b,c, EOT 4, EFF 2, no crash -> 6 channels at tick 1
    space = Space(("a", "b", "c"), eot=4, eff=2)
    assert set(space.channels()) == {(a, b, 1) for a in "abc" for b in "abc" if a != b}
    scenarios = list(space)
    assert len(scenarios) == len(set(scenarios)) == 64
    assert Scenario() in scenarios
    assert Scenario(omissions=tuple(sorted(space.channels()))) in scenarios


def test_one_crash_multiplies_by_one_plus_nodes_times_eot():
    space = Space(("a", "b", "c"), eot=4, eff=2, crashes=1)
    assert len(space) == 64 * (1 + 3 * 4)
    crashes = {s.crashes for s in space}
    assert crashes == {()} | {((n, t),) for n in "abc" for t in range(1, 5)}


def test_two_crashes_are_distinct_nodes():
    space = Space(("a", "b", "c"), eot=2, eff=0, crashes=2)
    # none; one of 3 nodes at 1 of 2 ticks; two of 3 nodes at 2x2 ticks
    assert len(space) == 1 + 6 + 3 * 4
    scenarios = list(space)
    assert len(set(scenarios)) == len(scenarios)
    assert all(len({n for n, _ in s.crashes}) == len(s.crashes) for s in scenarios)
    assert Scenario(crashes=(("a", 2), ("c", 1))) in scenarios


def test_two_phase_commit_space_eff_0():
    # the 2PC: coordinator and 3 participants, EOT 5, EFF 0, 1 crash
    space = Space(("c", "p1", "p2", "p3"), eot=5, eff=0, crashes=1)
    assert space.channels() == ()
    assert len(space) == 21


def test_smallest_first_and_sample():
    space = Space(("a", "b", "c"), eot=4, eff=2)
    ordered = space.smallest_first()
    assert [s.size for s in ordered] == sorted(s.size for s in ordered)
    assert ordered[0] == Scenario()
    drawn = space.sample(10, seed=3)
    assert len(set(drawn)) == 10 and set(drawn) <= set(space)
    assert drawn == space.sample(10, seed=3) != space.sample(10, seed=4)
    assert sorted(space.sample(100)) == sorted(space)
    # a space too large to enumerate can still be sampled
    huge = Space(tuple("abcdefgh"), eot=10, eff=5, crashes=2)
    assert huge.count > 10 ** 60
    assert len(set(huge.sample(5))) == 5


@pytest.mark.parametrize("kwargs", [dict(nodes=("a", "a"), eot=2, eff=1), dict(nodes=("a",), eot=2, eff=3),
                                    dict(nodes=("a",), eot=0, eff=0), dict(nodes=("a",), eot=2, eff=1, crashes=2)])
def test_bad_spaces_are_refused(kwargs):
    with pytest.raises(ValueError):
        Space(**kwargs)


def test_scenario_network_drops_what_it_omits():
    network = Scenario(omissions=(("a", "b", 1),), crashes=(("c", 2),)).network()
    assert network.arrival("m", ("b", 1), "a", 1) is None
    assert network.arrival("m", ("b", 1), "a", 2) == 3
    assert network.arrival("m", ("a", 1), "c", 2) is None
    assert network.arrival("m", ("a", 1), "c", 1) == 2


def test_missing_and_order_of_counterexamples():
    assert missing({("b", "x"), ("c", "x")}, {("b", "x")}) == (("c", "x"),)
    assert missing({("b", "x")}, {("b", "x"), ("c", "y")}) == ()
    big = Counterexample(Scenario(omissions=(("a", "b", 1), ("a", "c", 1))), (("b", 1),))
    small = Counterexample(Scenario(omissions=(("a", "c", 1),)), (("c", 1),))
    assert smallest_first([big, small]) == [small, big]
