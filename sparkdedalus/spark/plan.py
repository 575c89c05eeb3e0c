"""What a run decides once, before its first tick: the tick plan.

The strata's rules in dependency order and each rule's compiled plan
(spark/compiler.py), the GC rules' plans, the relations that grow and those
carried from tick to tick, the rules evaluated on new facts only
(analysis/growth.py), the components the Arrow fixpoint solves
(spark/fixpoint.py) and the pivots it buckets them by, the partitioner and the
pack's layout, the message queues under a capacity, and the relations kept
apart from the packs. The executor (spark/executor.py) reads it at every tick
and never changes it.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from sparkdedalus.analysis.growth import carried_relations, differential_rules, growing_relations
from sparkdedalus.checks.dependencies import dependency_graph, strongly_connected
from sparkdedalus.network import Network
from sparkdedalus.pack.layout import Layout
from sparkdedalus.program import Program
from sparkdedalus.spark.compiler import RulePlan
from sparkdedalus.spark.fixpoint import ARROW, ARROW_MODES, PYARROW, SETTING, ArrowFixpoint
from sparkdedalus.spark.partitioner import Partitioner
from sparkdedalus.spark.queues import Queues


class TickPlan:
    """A run's plan of every tick (see the module)."""

    def __init__(self, spark: SparkSession, program: Program, network: Network, stamped: frozenset,
                 gc: list, policy: bool, most_partitions: int):
        """`stamped`: the relations with input rows at some ticks only
        (spark/inputs.py); `gc`: the `GcRule`s to apply (analysis/gc.py);
        `policy`: partition by the distribution policies into at most
        `most_partitions` (spark/partitioner.py)."""
        self.program = program
        self.network = network
        self.gc_plans = [RulePlan(g.as_rule(-1 - k), program, network.seed) for k, g in enumerate(gc)]
        self.collected = frozenset(plan.rule.head.name for plan in self.gc_plans)
        growing = growing_relations(program, stamped, self.collected)
        self.carried = carried_relations(program, growing)
        self.differential = differential_rules(program, growing, self.collected)
        self.rule_order = self._rule_order()
        #: the relations some rule derives for the same tick
        self.derived_now = frozenset(r.head.name for r in program.rules if r.delivery == "now")
        self._fixpoints: dict = {}  # stratum relations -> ArrowFixpoint or None
        self._duckdb = spark.conf.get(SETTING, ARROW) != PYARROW  # linear strata by a DuckDB query
        pivots = self._pivot_columns() if spark.conf.get(SETTING, ARROW) in ARROW_MODES else {}
        self.partitioner = Partitioner(program, most_partitions, pivots) if policy else None
        self.layout = Layout(program.relations, self.partitioner)
        #: the message queues under a network capacity (spark/queues.py), else None
        self.queues = Queues(self.layout, network, program) \
            if network.capacity is not None and program.rules_of("async") else None
        self.plans = {r.index: RulePlan(r, program, network.seed,
                                        self.partitioner is not None and self.partitioner.local(r))
                      for r in program.rules}
        self.apart: set = set()  # set with the inputs (keep_apart)
        self.static_names: set = set()
        self.may_start: set = set()
        self._stamped = stamped

    def keep_apart(self, static: set, input_apart: bool) -> None:
        """Given the relations with facts at every tick (`static`): the
        relations kept apart (`apart`) when `input_apart`, those true at
        every tick that no rule derives and no fact or input adds to at some
        tick, materialised once and never copied into a tick's pack; and the
        relations that can have facts at the start of a tick (`may_start`)."""
        program = self.program
        timed = {f.atom.name for f in program.facts if f.tick is not None}
        varying = {r.head.name for r in program.rules} | set(program.lattices) | set(self._stamped) | timed
        self.apart = {n for n in static if n not in varying} if input_apart else set()
        self.static_names = set(static)
        self.may_start = {f.atom.name for f in program.facts} | set(self._stamped) | self.carried | self.static_names
        self.may_start |= {r.head.name for r in program.rules if r.delivery != "now"}

    def _rule_order(self) -> dict:
        """Per stratum, the relations in dependency order (for non-recursive strata)."""
        edges = [e for e in dependency_graph(self.program.rules) if e.time == "now"]
        order = list(reversed(strongly_connected(list(self.program.relations), edges)))
        rank = {rel: i for i, comp in enumerate(order) for rel in comp}
        self.component = rank  # relation -> its same-tick component, in dependency order
        #: the relations of recursive components: several relations, or one reading itself
        self.recursive = {rel for comp in order if len(comp) > 1 for rel in comp} \
            | {e.target for e in edges if e.source == e.target}
        out = {}
        for stratum in self.program.strata:
            rules = [self.program.rules[i] for i in stratum.rules]
            out[stratum.index] = sorted(rules, key=lambda r: rank[r.head.name])
        return out

    def components(self, rules) -> list:
        """A recursive stratum's rules (in dependency order) grouped by the
        same-tick component of their heads, in dependency order."""
        components: dict = {}
        for rule in rules:
            components.setdefault(self.component[rule.head.name], []).append(rule)
        return list(components.values())

    def read_after(self, names: list, stratum) -> bool:
        """Whether a rule evaluated after `stratum` in a tick reads one of
        `names`: a rule of a later stratum, one deriving facts for a later
        tick (`@next`, `@async`) or a GC rule. If none does, the tick's pack
        is all that reads them.

        >>> p = Program.parse('e(1, 2); t(X, Y) :- e(X, Y); t(X, Z) :- t(X, Y), e(Y, Z); u(X)@next :- e(X, _);')
        >>> plan = TickPlan.__new__(TickPlan); plan.program, plan.gc_plans = p, []
        >>> plan.read_after(["t"], p.strata[-1]), plan.read_after(["e"], p.strata[-1])
        (False, True)
        """
        strata = self.program.strata
        later = [self.program.rules[i] for s in strata[strata.index(stratum) + 1:] for i in s.rules]
        later += [r for r in self.program.rules if r.delivery != "now"] + [p.rule for p in self.gc_plans]
        return any(atom.name in names for rule in later for atom in rule.positive_atoms + rule.negated_atoms)

    def arrow_fixpoint(self, rules, names: list) -> ArrowFixpoint | None:
        """A component compiled for the Arrow fixpoint, or None when a rule
        needs more than joins (compiled once)."""
        key = tuple(names)
        if key not in self._fixpoints:
            self._fixpoints[key] = ArrowFixpoint.compile(rules, names, self.program, self.differential, self._duckdb)
        return self._fixpoints[key]

    def _pivot_columns(self) -> dict:
        """{relation: column} for the relations the Arrow fixpoint solves with
        located rules and a pivot finer than the location (the closure's
        `path(L, X, Z)`: L and Z): the first pivot column after the location,
        which the partitioner buckets them by with it, so that a program at one
        location spreads them over every partition (not one). Their rules are
        then not partition-local: in a tick of several partitions, the general
        loop (semi-naive across ticks, `spark.sparkdedalus.fixpoint=loop`)
        shuffles what they derive."""
        columns = {}
        for stratum in self.program.strata:
            if not stratum.recursive:
                continue
            for group in self.components(self.rule_order[stratum.index]):
                names = sorted({r.head.name for r in group})
                arrow = self.arrow_fixpoint(group, names)
                if arrow is None or not arrow.located or arrow.by_location:
                    continue
                columns.update({n: arrow.pivot[n][1] for n in names if len(arrow.pivot[n]) > 1})
        return columns
