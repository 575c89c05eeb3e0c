"""The random program generator used by the differential tests (no Spark here):
its programs are valid and run on the reference evaluator, it covers every
construct it knows, and the batching premise holds: programs renamed apart and
combined into one compute, part by part, what each computes alone."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from program_generator import FEATURES, FULL, KNOWN_BUGS, SMALL, GeneratedProgram, batch, combine, programs
from sparkdedalus import Program
from sparkdedalus.network import Fixed, Network, Uniform
from sparkdedalus.reference import run as reference_run

SETTINGS = settings(deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

networks = st.builds(
    Network, delay=st.sampled_from([Fixed(), Uniform(1, 3)]), seed=st.integers(0, 100),
    omissions=st.frozensets(st.tuples(st.sampled_from(["n1", "n2"]), st.sampled_from(["n2", "n3"]),
                                      st.integers(1, 3)), max_size=2),
    crashes=st.dictionaries(st.sampled_from(["n1", "n2", "n3"]), st.integers(1, 4), max_size=1))


@settings(SETTINGS, max_examples=150)
@given(program=programs(), network=networks)
def test_generated_programs_run_on_the_reference(program, network):
    parsed = Program.parse(program.text)
    assert set(program.relations) >= set(parsed.relations) - {"crash"}
    assert not program.features & KNOWN_BUGS
    reference_run(parsed, ticks=program.ticks, network=network)


@settings(SETTINGS, max_examples=100)
@given(program=programs(shape=SMALL))
def test_small_programs_run_on_the_reference(program):
    reference_run(program.parse(), ticks=program.ticks)


def test_generator_covers_every_construct():
    seen: Counter = Counter()

    @settings(SETTINGS, max_examples=400)
    @given(programs(avoid=frozenset()))
    def collect(program):
        seen.update(program.features)

    collect()
    rare = {"sum_double", "avg_huge", "double_payload"}  # need an avg read back, or a hash averaged
    assert set(FEATURES) - rare <= set(seen), f"never generated: {sorted(set(FEATURES) - rare - set(seen))}"


def test_small_programs_exercise_semi_naive_across_ticks():
    """Enough of the differential tests' programs have a rule the engine evaluates
    on a tick's new facts only (analysis/growth.py) reading a carried relation."""
    from sparkdedalus.analysis.growth import carried_relations, differential_rules, growing_relations
    counts: Counter = Counter()

    @settings(SETTINGS, max_examples=200)
    @given(programs(shape=SMALL))
    def collect(program):
        parsed = program.parse()
        growing = growing_relations(parsed)
        carried = carried_relations(parsed, growing)
        rules = [parsed.rules[i] for i in differential_rules(parsed, growing)]
        counts["programs"] += 1
        counts["incremental"] += any(a.name in carried for r in rules for a in r.positive_atoms)

    collect()
    assert counts["incremental"] >= counts["programs"] // 20, counts  # 18 of 200 when written


@settings(SETTINGS, max_examples=60)
@given(parts=st.lists(programs(shape=SMALL), min_size=2, max_size=4), network=networks)
def test_parts_of_a_batch_compute_what_they_compute_alone(parts, network):
    """The premise of batched differential testing, on the reference evaluator."""
    renamed = batch(parts)
    ticks = 3
    together = reference_run(Program.parse(combine(renamed)), ticks=ticks, network=network)
    for part in renamed:
        alone = reference_run(part.parse(), ticks=ticks, network=network)
        for tick in range(1, ticks + 1):
            for name in part.parse().relations:
                assert together.relation(name, tick) == alone.relation(name, tick), (name, tick, part.text)


def test_renaming_touches_relation_names_only():
    p = GeneratedProgram(('peer("n1", "n2");', 'e0("n1", "peer");', 'r1_0(L, X0) :- e0(L, X0), peer(L, X0);',
                          "t0(L, count<X0>)@next :- r1_0(L, X0), notin crash(L, L, _), hash(X0, X1);",
                          ".persist r1_0"), ("peer", "e0", "r1_0", "t0"))
    assert p.renamed("g1_").statements == (
        'g1_peer("n1", "n2");', 'g1_e0("n1", "peer");', 'g1_r1_0(L, X0) :- g1_e0(L, X0), g1_peer(L, X0);',
        "g1_t0(L, count<X0>)@next :- g1_r1_0(L, X0), notin crash(L, L, _), hash(X0, X1);",
        ".persist g1_r1_0")
    assert FULL.atoms >= SMALL.atoms
