"""A rewrite plan that raises a closed-loop program's simulated throughput,
within a machine budget: greedy on the bottleneck (`sparkdedalus optimize`,
docs/protocols.md).

From the program as written, each round measures the current plan at its
peak (`measure.saturate` over N/8, N/4, N/2 and N clients, under the
network's capacity: the best throughput, and its bottleneck; on the reference
evaluator, or on the simulator given, e.g. the Spark engine's; each plan
simulated once) and takes the
component of the bottleneck node. It tries every move on that component the
analyses allow, skipping those over the budget:

- each decoupling candidate `explain` finds (`analysis.decoupling`) that a
  coordination-free decoupling applies to (`rewrite.plan`, without `coordinated`);
- moving all its rules but those over constant relations to a new part, when
  they read what the clients send: the component then only relays it, as
  `rewrite --auto` does;
- partitioning it on 2..`max_partitions` partitions (more partitions, in
  place of the earlier step, when it is partitioned already), with partial
  partitioning and a coordinator where the policy asks for it.

Machines are counted per component (`machine_counts`): the base's nodes
(those the measurement sees, the clients excepted); a decoupling adds as many
nodes as its component has, K partitions multiply them by K, and a
coordinator adds one per location. The move kept is the one with the most
throughput (then the fewest machines) when some move raises it by more than
`TOLERANCE`; else, at most `PLATEAU` rounds in a row, the one with the
fewest machines (then the least work left) among those that keep the
throughput (within `TOLERANCE`) and lower the most messages per answered
command on a node of the bottleneck component: with two nodes at the same
load (a leader and its collectors) one move cannot show, two do. The search
stops when no move is kept. It returns the best plan kept (better by more
than `TRIM`; ties: the first), its partition counts then lowered while the
throughput holds (within `TRIM`). The clients' component (the one deriving
`committed`) is outside every rewrite.

>>> from sparkdedalus import Program
>>> from sparkdedalus.network import Network
>>> p = Program.parse('component client { .persist committed\\n'
...     'request(S, K, C)@async :- client(C, S, K)@T, T == 1;\\n'
...     'committed(C, X) :- done(C, X);\\n'
...     'request(S, X + 1000, C)@async :- done(C, X), client(C, S, _); }\\n'
...     'component server { job(W, X, S, C)@async :- request(S, X, C), worker(S, W);\\n'
...     '  done(C, X)@async :- finished(S, X, C); }\\n'
...     'component worker { finished(S, X, C)@async :- job(W, X, S, C); }\\n'
...     'client("c1", "s", 1); worker("s", "w");')
>>> result = optimize(p, budget=4, clients=8, network=Network(), ticks=24)  # no capacity: nothing to gain
>>> result.plan.steps, result.plan.measurement.throughput, result.base.machines
((), 2.0, 2)
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field, replace

from sparkdedalus.analysis.decoupling import decouplings
from sparkdedalus.analysis.roles import component_rules, constant_relations
from sparkdedalus.network import Network
from sparkdedalus.rewrite import RewriteError
from sparkdedalus.rewrite.naming import name_part
from sparkdedalus.rewrite.partial_partition import coordinator_of
from sparkdedalus.rewrite.plan import Step, apply_plan, selectors
from sparkdedalus.rewrite.scope import relayed
from sparkdedalus.throughput.closed_loop import COMMITTED
from sparkdedalus.throughput.measure import Measurement, reference, saturate

#: plateau moves (same throughput, less work on the bottleneck component) allowed in a row
PLATEAU = 3
#: throughputs closer than this share are the same (a window's count of answers varies by a few percent)
TOLERANCE = 0.05
#: a plan kept is the best so far when it beats it by this share; a lower partition
#: count at the end of the search may lose no more
TRIM = 0.01


@dataclass(frozen=True)
class Plan:
    steps: tuple
    program: object = field(repr=False)
    counts: dict  # component -> its machines
    measurement: Measurement = field(repr=False)
    scope: tuple  # the base's: the components the first step may change (all but the clients')

    @property
    def machines(self) -> int:
        return sum(self.counts.values())

    @property
    def throughput(self) -> float:
        return self.measurement.throughput


@dataclass(frozen=True)
class Result:
    plan: Plan  # the best found
    base: Plan
    tried: int  # plans simulated (each once)
    seconds: float

    def to_json(self) -> dict:
        m = self.plan.measurement
        return {"rewrites": [s.option() for s in self.plan.steps], "throughput": self.plan.throughput,
                "base_throughput": self.base.throughput, "machines": self.plan.machines,
                "base_machines": self.base.machines, "bottleneck": m.bottleneck,
                "bottleneck_component": m.components.get(m.bottleneck), "clients": m.clients,
                "tried": self.tried, "seconds": round(self.seconds, 2)}


def optimize(program, budget: int, clients: int = 64, network: Network | None = None, ticks: int = 100,
             max_partitions: int = 5, simulate=reference) -> Result:
    """The best plan found for `program` within `budget` machines (module doc),
    each plan measured on `simulate` (a simulator, `sparkdedalus.traffic`)."""
    started = time.perf_counter()
    outside = {r.component for r in program.rules if r.head.name == COMMITTED}
    scope = tuple(c for c in program.components if c not in outside)
    counts = tuple(sorted({max(1, clients >> i) for i in range(4)}))  # N/8, N/4, N/2, N

    peaks = {}  # steps -> the plan's peak: each plan is simulated once (the search may come back to it)

    def peak(steps, program) -> Measurement:
        if steps not in peaks:
            peaks[steps] = max(saturate(program, counts, network, ticks, simulate), key=lambda m: m.throughput)
        return peaks[steps]

    first = peak((), program)
    base = Plan((), program, dict(Counter(c for c in first.components.values() if c)), first, scope)
    if base.machines > budget:
        raise ValueError(f"the program as written already runs on {base.machines} machines, over the budget "
                         f"of {budget}")
    current, best, plateau = base, base, PLATEAU
    while True:
        component = current.measurement.components.get(current.measurement.bottleneck)
        found = []
        for steps in _moves(current, component, max_partitions):
            try:
                program, _ = apply_plan(base.program, steps, base.scope, coordinated=False)
            except RewriteError:
                continue
            machines = machine_counts(base.counts, steps, program)
            if sum(machines.values()) > budget:
                continue
            found.append(Plan(steps, program, machines, peak(steps, program), base.scope))
        if not found:
            break
        now = current.throughput
        better = [p for p in found if p.throughput > now * (1 + TOLERANCE)]
        relieving = [p for p in found if p.throughput >= now * (1 - TOLERANCE)
                     and _work(p, component) < _work(current, component) * (1 - TOLERANCE)]
        if better:
            pick, plateau = max(better, key=lambda p: (_rounded(p.throughput), -p.machines)), PLATEAU
        elif relieving and plateau:
            pick, plateau = min(relieving, key=lambda p: (p.machines, _work(p, component))), plateau - 1
        else:
            break
        current = pick
        if current.throughput > best.throughput * (1 + TRIM):
            best = current
    best = _trim(best, base, peak)
    return Result(best, base, len(peaks), time.perf_counter() - started)


def _rounded(throughput: float) -> int:
    """The throughput's bucket: buckets `TOLERANCE` wide on a log scale."""
    return round(math.log(throughput) / math.log(1 + TOLERANCE)) if throughput > 0 else -10 ** 9


def _work(plan: Plan, component: str) -> float:
    """The most messages per answered command on a node of `component`."""
    m = plan.measurement
    loads = [load for node, load in m.load.items() if m.components.get(node) == component]
    return max(loads, default=0.0) / m.throughput if m.throughput else float("inf")


def _moves(plan: Plan, component: str | None, max_partitions: int):
    """The plans one move away from `plan` on `component` (step tuples)."""
    program = plan.program
    if component is None or component not in _scope(plan):
        return
    splits = [c.rules for c in decouplings(program, component) if c.applicable]
    constant = constant_relations(program)
    rest = tuple(i for i in component_rules(program, component) if program.rules[i].head.name not in constant)
    if rest and relayed(program, _scope(plan), rest):
        splits.append(rest)
    for rules in splits:
        named = selectors(program, component, rules)
        if all(isinstance(s, str) for s in named):  # a plan's steps are options of `rewrite`
            yield plan.steps + (Step("decouple", component, named, name_part(program, component, rules)),)
    done = [i for i, s in enumerate(plan.steps) if s.kind == "partition" and s.component == component]
    if done:  # partitioned already: more partitions in its place
        i = done[0]
        for k in range(plan.steps[i].partitions + 1, max_partitions + 1):
            yield plan.steps[:i] + (replace(plan.steps[i], partitions=k),) + plan.steps[i + 1:]
    else:
        for k in range(2, max_partitions + 1):
            yield plan.steps + (Step("partition", component, partitions=k),)


def _scope(plan: Plan) -> tuple:
    """The components a rewrite of `plan.program` may change: the base's and the parts split off."""
    return plan.scope + tuple(s.name for s in plan.steps if s.kind == "decouple")


def machine_counts(counts: dict, steps, program) -> dict:
    """component -> its machines in `program`, the plan `steps` applied to a
    base whose components have `counts` machines: a decoupling's new
    component has as many as the one it leaves, K partitions multiply a
    component's by K, and partial partitioning's coordinator, when it adds one
    (`rewrite.partial_partition`), has one per location of the component."""
    counts = dict(counts)
    for step in steps:
        if step.kind == "decouple":
            counts[step.name] = counts.get(step.component, 1)
            continue
        located = counts.get(step.component, 1)
        counts[step.component] = located * step.partitions
        if coordinator_of(step.component) in program.components:
            counts[coordinator_of(step.component)] = located
    return counts


def _trim(best: Plan, base: Plan, peak) -> Plan:
    """`best` with each partition count lowered to the least that keeps its
    throughput (within `TRIM`); `peak(steps, program)` measures a plan."""
    for i, step in enumerate(best.steps):
        if step.kind != "partition":
            continue
        for k in range(2, step.partitions):
            steps = best.steps[:i] + (replace(step, partitions=k),) + best.steps[i + 1:]
            program, _ = apply_plan(base.program, steps, base.scope, coordinated=False)
            m = peak(steps, program)
            if m.throughput >= best.throughput * (1 - TRIM):
                best = Plan(steps, program, machine_counts(base.counts, steps, program), m, base.scope)
                break
    return best
