"""Differential tests of the network capacity (`capacity=C`, docs/semantics.md):
the Spark engine's queues (spark/queues.py) give the reference evaluator's facts
at every tick, on examples, on a saturated leader and on generated programs,
with capacities 1, 2 and 3, alone and with delays, omissions and crashes.

SPARKDEDALUS_DIFF_CAPACITY (default 12) sets the number of generated programs."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from program_generator import LOCATIONS, SMALL, programs
from reference_helpers import example
from sparkdedalus import Program
from sparkdedalus.errors import UsageError
from sparkdedalus.network import Fixed, Network, Uniform
from sparkdedalus.reference import run as reference_run
from sparkdedalus.spark.engine import Engine
from test_capacity import THREE_SENDERS, leader_program
from engine_helpers import PLACEMENTS
from test_engine_differential import SETTINGS, check_alone

EXAMPLES = int(os.environ.get("SPARKDEDALUS_DIFF_CAPACITY", "12"))

pytestmark = pytest.mark.spark

locations = st.sampled_from(LOCATIONS)
#: capacities 1-3, some with random delays, omissions and crashes
networks = st.builds(Network,
                     delay=st.sampled_from([Fixed(), Fixed(), Uniform(1, 2)]),
                     seed=st.integers(0, 1000),
                     omissions=st.frozensets(st.tuples(locations, locations, st.integers(1, 3)), max_size=2),
                     crashes=st.dictionaries(locations, st.integers(1, 4), max_size=1),
                     capacity=st.integers(1, 3))


def differences(spark, program: Program, ticks: int, network: Network) -> list:
    trace = reference_run(program, ticks, network=network)
    run = Engine(spark).run(program, ticks, network=network)
    names = list(program.relations)
    found = []
    for tick in range(1, ticks + 1):
        got = run.facts(tick, relations=names)
        found += [(tick, name) for name in names if set(trace.at(tick)[name]) != got[name]]
    return found


@pytest.mark.parametrize("name, ticks, spec", [
    ("broadcast.ded", 6, "capacity=1"),
    ("two_phase_commit.ded", 8, "capacity=2,delay=uniform(1,2),seed=3"),
    ("voting.ded", 7, "capacity=1,crash=p1@3"),
])
def test_examples_match_the_reference_under_a_capacity(spark, name, ticks, spec):
    assert differences(spark, example(name), ticks, Network.parse(spec)) == []


def test_a_saturated_leader_and_a_queue_of_three_match_the_reference(spark):
    assert differences(spark, Program.parse(leader_program(2, 3)), 12, Network.parse("capacity=2,omit=l>p1@4")) == []
    assert differences(spark, Program.parse(THREE_SENDERS), 5, Network.parse("capacity=1,seed=9")) == []


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(program=programs(shape=SMALL), network=networks, mode=st.sampled_from(PLACEMENTS))
def test_generated_programs_match_the_reference_under_a_capacity(spark, program, network, mode):
    check_alone(spark, program, network, mode)


#: facts go(S, D, X)@T and link(S, D) drawn per example: messages sent at several
#: ticks, fanned out and forwarded, so that a capacity of 1-3 binds (generated
#: programs rarely send enough messages for that)
sends = st.lists(st.tuples(locations, locations, st.integers(0, 5), st.integers(1, 3)), min_size=3, max_size=9)
links = st.lists(st.tuples(locations, locations), max_size=4)


def traffic(go: list, link: list) -> str:
    facts = [f'go("{s}", "{d}", {x})@{t};' for s, d, x, t in go] + [f'link("{s}", "{d}");' for s, d in link]
    return "\n".join([
        "m(D, S, X)@async :- go(S, D, X);",
        "m(D, S, X + 1)@async :- m(S, _, X), link(S, D), X < 4;",
        "got(N, count<X>) :- m(N, _, X);",
        "seen(N, X)@next :- m(N, _, X);", "seen(N, X)@next :- seen(N, X);",
        "link(\"n1\", \"n1\");", *facts])


@settings(max_examples=max(1, EXAMPLES // 2), **SETTINGS)
@given(go=sends, link=links, network=networks)
def test_message_traffic_matches_the_reference_under_a_capacity(spark, go, link, network):
    assert differences(spark, Program.parse(traffic(go, link)), 5, network) == []


def test_a_run_with_capacity_is_not_stored(spark, tmp_path):
    with pytest.raises(UsageError, match="capacity= cannot be stored yet"):
        Engine(spark).run(Program.parse(THREE_SENDERS), 2, network=Network(capacity=1), store=str(tmp_path / "r"))
