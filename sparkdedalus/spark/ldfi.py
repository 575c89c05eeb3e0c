"""Lineage-driven fault injection on the Spark engine: `Engine(spark).faults(...,
search="ldfi")` and `sparkdedalus faults --search ldfi --engine spark`
(docs/faults.md, "LDFI on Spark").

The loop, the lineage, the formula and its minimal models are the reference's
(`faults/ldfi.py`: `search`, `Lineage`); this module runs the scenarios:

- a round of several candidates is one batched fault run (`run_faults(...,
  only=batch)`: a world per candidate, numbered in the part of the space they
  use), which gives their verdicts; a round with a counterexample stops there;
- otherwise each candidate of the round (and the failure-free scenario, the
  first round, alone) runs once more with provenance (`Engine.run(...,
  provenance=True)`), fewest failures first, unless the lineage learnt from
  the runs before it no longer allows it (as on the reference): the batched
  run splits its worlds into classes of scenarios and rewrites the program
  with a world column, so its facts are not per candidate; a run of one
  scenario is. Its derivations and its facts at every tick are collected
  (`spark.provenance.Collected`) and added to the lineage;
- the rule instances LDFI also reads (those only a negated atom blocked, and
  those joining facts of different runs: `reference.why.blocked` and `joined`)
  are computed on Spark over the facts of every run so far together
  (`spark.provenance.instances`, one query per run added): every instance joined
  from the runs' facts together contains each one blocked in a single run, so
  that query serves both.

    checked = Engine(spark).faults(program, nodes=("a", "b", "c"), eot=4, eff=2, search="ldfi")
    checked.counterexamples, checked.executions, checked.search
"""

from __future__ import annotations

from functools import reduce

from sparkdedalus.faults.ldfi import Lineage, search as ldfi_search
from sparkdedalus.faults.space import Space
from sparkdedalus.faults.verdict import POST, PRE, Checked, Counterexample, missing
from sparkdedalus.program import Program
from sparkdedalus.spark.duck.session import DuckFrame
from sparkdedalus.spark.faults import run_faults
from sparkdedalus.spark.provenance import Collected, instances, read_back


def search(engine, program: Program, space: Space) -> Checked:
    """LDFI over `space` on the Spark engine of `engine` (see the module doc):
    the first counterexample found (the smallest of its round), the size of the
    space and the scenarios run (`executions`, each candidate of a batched run
    counted)."""
    if program.inputs:
        raise ValueError("fault scenarios of a program with .input relations are not supported yet")
    lineage, traces = Lineage(space, {fact.row[0] for fact in program.facts}), []

    def evaluate(batch: list):
        if len(batch) > 1:
            found = run_faults(engine.spark, program, space.nodes, space.eot, space.eff, space.crashes, only=batch)
            if found.counterexamples:
                return batch, found.counterexamples
        for scenario in batch:
            # as on the reference: a run earlier in the round may have shown another derivation
            # this scenario does not break, then its lineage is not needed
            if lineage.runs and not lineage.breaks(scenario):
                continue
            trace = Collected(engine.run(program, ticks=space.eot, network=scenario.network(), provenance=True))
            lost = missing(trace.at(space.eot)[PRE], trace.at(space.eot)[POST])
            if lost:
                return batch, [Counterexample(scenario, lost)]
            traces.append(trace)
            lineage.add_run(trace, trace.at(space.eot)[PRE], _none, Instances(engine.spark, program, traces, space.eot))
        return batch, []

    return ldfi_search(space, lineage, evaluate)


def _none(trace, relation: str, pattern: tuple, tick: int) -> list:
    """The rule instances `Lineage.add_run` looks up in one run but for its
    negated atoms (`blocked`): none here, `Instances` gives them all."""
    return []


class Instances:
    """`reference.why.joined` for the lineage's union of `traces`: every rule
    instance on their facts together (`spark.provenance.instances`), collected
    once (one job; none when every run was the driver's: found there), then looked up as `joined(view, relation, pattern, tick)`
    for a view of those runs (None in `pattern`: any value)."""

    def __init__(self, spark, program: Program, traces: list, eot: int):
        on_spark = [trace for trace in traces if not isinstance(trace.packs[1], DuckFrame)]
        if on_spark:  # the driver's runs' packs join Spark's (they lack only the partition column)
            session, loop = spark, on_spark[0].loop
            frames = {t: [spark.createDataFrame(p.toArrow()) if isinstance(p, DuckFrame) else p
                          for p in (trace.packs[t] for trace in traces)] for t in range(1, eot + 1)}
        else:  # every run's packs in the driver: the instances found there too
            session, loop = traces[0].loop.spark, traces[0].loop
            frames = {t: [trace.packs[t] for trace in traces] for t in range(1, eot + 1)}
        packs = {t: reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames[t]) for t in frames}
        self.found: dict = {}
        for record in instances(session, program, loop, packs, eot).collect():
            fact, derivation = read_back(program, record)
            self.found.setdefault((fact.relation, fact.tick), []).append((fact.row, derivation))

    def __call__(self, view, relation: str, pattern: tuple, tick: int) -> list:
        return [(row, d) for row, d in self.found.get((relation, tick), ())
                if all(p is None or p == v for p, v in zip(pattern, row))]
