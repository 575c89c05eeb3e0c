"""Shared by the Spark engine tests: run both engines and compare every tick."""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path

from sparkdedalus.reference import run as reference_run
from sparkdedalus.spark.engine import Engine
from sparkdedalus.spark.placement import SETTING as PLACEMENT

#: the placements every differential test of the examples runs in (spark/placement.py)
PLACEMENTS = ("driver", "spark", "alternate")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example_ticks(path: Path) -> int:
    """The `// ticks: N` an example's header asks for."""
    match = re.search(r"//\s*ticks:\s*(\d+)", path.read_text())
    return int(match.group(1)) if match else 3


@contextmanager
def placement(spark, mode: str, **settings):
    """The runs inside place their ticks by `mode` (`spark.sparkdedalus.placement`),
    with the other session `settings` given; the session's own come back after."""
    wanted = {PLACEMENT: mode, **settings}
    before = {key: spark.conf.get(key, None) for key in wanted}
    for key, value in wanted.items():
        spark.conf.set(key, str(value))
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def differences(spark, program, ticks: int, network=None, edb=None) -> list[str]:
    """Where the Spark engine and the reference evaluator disagree, tick by tick
    (empty when they agree on every relation at every tick)."""
    return compared_run(spark, program, ticks, network, edb)[0]


def compared_run(spark, program, ticks: int, network=None, edb=None, **options) -> tuple[list[str], object]:
    """`differences(...)` and the Spark engine's `Run`; `options` (e.g. `gc`)
    go to both engines (`store`, `resume`: to the Spark engine only)."""
    return compared(spark, program, ticks, network, edb, **options)[:2]


def compared(spark, program, ticks: int, network=None, edb=None, **options) -> tuple[list[str], object, dict]:
    """`compared_run(...)` and the Spark engine's facts: tick -> {relation: rows}."""
    trace = reference_run(program, ticks=ticks, network=network, edb=edb, **{k: v for k, v in options.items()
                                                                               if k == "gc"})
    run = Engine(spark).run(program, ticks=ticks, network=network, edb=edb, **options)
    found, facts = [], {}
    for tick in range(1, ticks + 1):
        expected = trace.at(tick)
        actual = facts[tick] = run.facts(tick, relations=list(program.relations))
        for name in program.relations:
            want, got = set(expected.get(name, ())), actual.get(name, set())
            if want != got:
                found.append(f"tick {tick} {name}: missing {sorted(want - got)[:5]}, extra {sorted(got - want)[:5]}")
    return found, run, facts
