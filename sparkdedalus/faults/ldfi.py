"""Lineage-driven fault injection (LDFI), Molly's search: the lineage of the runs
so far, the formula of the failure sets that break it, and its minimal models.

The lineage is a graph of facts `(relation, row, tick)`, each with the ways it
was derived in some run (`Support`): the facts its rule joined, the failures of
the space any one of which breaks it, and its negated atoms. A message breaks
when its channel (sender, receiver, send tick) is omitted or its sender crashed
at or before the send tick; a rule's `notin crash(...)` breaks when a matching
crash happens; any other `notin` breaks when a fact it matches comes to hold.
Facts absent from a run can hold under failures: the lineage also holds the rule
instances that only a negated atom blocked (`reference.why.blocked`), which
apply once the blocking facts lose their derivations, and those whose body facts
held in different runs (`Union`, `reference.why.joined`). An aggregate's fact rests
on its group, and is lost when a member comes to hold that changes its value: for
`max<>` (`min<>`) one with a greater (smaller) value, for the others any (`others`
atoms, matched like negated atoms). A failure set is a
candidate when, for some target (a `pre` fact at EOT seen in a run), the `post`
fact with the same row loses every derivation while the `pre` fact keeps one.
The solver (python-sat, docs/faults.md) finds the candidates that are minimal
among the failure sets not run yet: no smaller one of them is one too.

>>> from sparkdedalus.faults.space import Scenario, Space
>>> space = Space(nodes=("a", "b"), eot=3, eff=2, crashes=1)
>>> lineage = Lineage(space)
>>> sent = frozenset({("omit", "a", "b", 1), ("crash", "a", 1)})  # a's message to b at tick 1
>>> lineage.add_fact(("post", ("b",), 3), [Support((("log", ("b",), 2),), frozenset())])
>>> lineage.add_fact(("log", ("b",), 2), [Support((("log", ("a",), 1),), sent)])
>>> lineage.add_fact(("log", ("a",), 1), [Support((), frozenset())])
>>> lineage.add_fact(("pre", ("b",), 3), [Support((), frozenset())])
>>> lineage.targets.add(("b",))
>>> lineage.candidates()
[Scenario(omissions=(), crashes=(('a', 1),)), Scenario(omissions=(('a', 'b', 1),), crashes=())]
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.faults.space import Scenario, Space
from sparkdedalus.faults.verdict import POST, PRE, Checked, smallest_first
from sparkdedalus.program import CRASH
from sparkdedalus.syntax import ast
from udfs.registry import spark_string

#: the SAT solver python-sat runs (CaDiCaL 1.9.5)
SOLVER = "cadical195"


@dataclass(frozen=True)
class Support:
    """One derivation of a fact as LDFI sees it: the facts it joined (`body`:
    (relation, row, tick) keys), the failures any one of which breaks it, and
    the failures it needs (a `crash` fact of the failure model needs its crash),
    the negated atoms no holding fact may match (`unless`), and for an aggregate
    the atoms no holding fact outside `body` may match (`others`: a member that
    changes its value). A failure is ("omit", sender, receiver, tick) or
    ("crash", node, tick)."""

    body: tuple
    broken_by: frozenset
    needs: frozenset = frozenset()
    unless: tuple = ()  # negated atoms other than crash's: (relation, pattern, tick), None for any value
    others: tuple = ()  # (relation, pattern, tick); a pattern may hold a `Beyond`


class Union:
    """The facts of several runs together, as a trace without provenance
    (`program`, `at(tick)`): what `joined` joins across runs.

    >>> class Run:
    ...     program, provenance = None, None
    ...     def __init__(self, facts): self.facts = facts
    ...     def at(self, tick): return self.facts
    >>> Union([Run({"p": frozenset({("a",)})}), Run({"p": frozenset({("b",)})})]).at(1)["p"] == {("a",), ("b",)}
    True
    """

    provenance = None

    def __init__(self, runs):
        self.runs = list(runs)
        self.program = self.runs[0].program
        self._ticks: dict = {}

    def at(self, tick: int) -> dict:
        if tick not in self._ticks:
            facts = [run.at(tick) for run in self.runs]
            self._ticks[tick] = {name: frozenset().union(*(f[name] for f in facts)) for name in facts[0]}
        return self._ticks[tick]


@dataclass(frozen=True)
class Beyond:
    """In a pattern: any value greater than `value` (`below`: smaller), a member
    that would replace a `max<>` (`min<>`).

    >>> _matches(("r", Beyond(1)), ("r", 2)), _matches(("r", Beyond(1, below=True)), ("r", 2))
    (True, False)
    """

    value: object
    below: bool = False

    def admits(self, value) -> bool:
        return value < self.value if self.below else value > self.value


class Lineage:
    """What the runs of a search have shown: every derivation of the `pre` and
    `post` facts at EOT and of the facts they rest on, and the targets (the rows
    of the `pre` facts seen). `locations` are the run's locations (crash facts
    hold at every one of them); the space's nodes are added."""

    def __init__(self, space: Space, locations=()):
        self.space = space
        self.locations = frozenset(spark_string(loc) for loc in locations) | frozenset(space.nodes)
        self.supports: dict = {}  # (relation, row, tick) -> {Support: None}, in the order seen
        self.matching: dict = {}  # a negated atom (relation, pattern, tick) -> {fact key it matches: None}
        self.targets: set = set()  # rows of pre facts at EOT
        self.failures = _failures(space)  # those of the space, each a variable of the formula
        self.runs: list = []  # the traces added
        self.looked_up: list = []  # per run, the keys (facts, and ("notin",) + negated atoms) looked up in it

    def add_run(self, trace, pre_rows, blocked, joined=None) -> None:
        """Add a run (a reference trace with provenance) that holds every `pre`
        row's `post` fact at EOT: the targets, and, for the `pre` and `post` facts
        at EOT, every fact the lineage knew and every fact they rest on, their
        derivations in the run and the rule instances only a negated atom blocked
        (`blocked(trace, relation, pattern, tick)`: the reference's
        `reference.why.blocked`, passed in since faults/ comes before reference/);
        for each negated atom, the facts that match it in the run or could (the
        heads of such blocked instances). The new run looks up every fact the
        lineage knows; a fact first seen then is looked up in the earlier runs
        too, and so on until no run shows a new one (Molly re-derives the
        lineage of every run the same way): each fact is looked up once in each
        run, and the lineage is the same as if every run looked up every fact.
        With `joined` (`reference.why.joined`), every fact is also looked up in the
        `Union` of the runs, whose rule instances may join facts of different runs:
        a fact that holds only when what two runs showed happens together (a
        negated atom's match among them) is known, with those derivations."""
        self.runs.append(trace)
        self.looked_up.append(set())
        self.targets |= set(pre_rows)
        views = [(run, blocked, done) for run, done in reversed(list(zip(self.runs, self.looked_up)))]  # the new first
        if joined is not None:
            views.append((Union(self.runs), joined, set()))  # new facts together: everything looked up again
        todo = True
        while todo:
            todo = False
            for view, instances, done in views:
                keys = [key for key in self.keys() if key not in done]
                if keys:
                    self._look_up(view, instances, keys, done)
                    todo = True

    def keys(self) -> list:
        """What a run looks up: every target's `pre` and `post` fact at EOT, every
        fact the lineage knows, and ("notin",) + every negated atom it knows."""
        eot = self.space.eot
        return [(name, row, eot) for row in sorted(self.targets, key=repr) for name in (PRE, POST)] \
            + list(self.supports) + [("notin",) + atom for atom in self.matching]

    def _look_up(self, trace, blocked, todo: list, done: set) -> None:
        """The keys `todo` (see `keys`) and every key they lead to and not in
        `done`, looked up in one run or a `Union` (see `add_run`): the derivations
        it recorded, if any, and the rule instances `blocked` gives; each key is
        added to `done`."""
        while todo:
            key = todo.pop()
            if key in done:
                continue
            done.add(key)
            if key[0] == "notin":
                _, relation, pattern, tick = key
                loose = tuple(None if isinstance(p, Beyond) else p for p in pattern)
                rows = list(trace.at(tick)[relation]) + [row for row, _ in blocked(trace, relation, loose, tick)]
                facts = [(relation, row, tick) for row in rows if _matches(pattern, row)]
                self.add_absent(key[1:], facts)
                todo += facts
                continue
            recorded = () if trace.provenance is None else trace.provenance.derivations(*key)
            derivations = list(recorded) + [d for _, d in blocked(trace, *key)]
            supports = [self.support(key, d, trace.program) for d in derivations]
            self.add_fact(key, supports)
            todo += [b for s in supports for b in s.body] \
                + [("notin",) + atom for s in supports for atom in s.unless + s.others]

    def add_fact(self, key: tuple, supports) -> None:
        """Add the derivations of the fact `key` (relation, row, tick)."""
        known = self.supports.setdefault(key, {})
        for support in supports:
            known[support] = None

    def add_absent(self, atom: tuple, facts) -> None:
        """Add facts (relation, row, tick) that match, or could match, the negated
        atom `atom` (relation, pattern, tick)."""
        self.matching.setdefault(atom, {}).update(dict.fromkeys(facts))

    def support(self, key: tuple, derivation, program=None) -> Support:
        """A provenance derivation of the fact `key` as a `Support` (see `add_run`);
        an aggregate's (`program` given) with its `others` (see `_others`)."""
        body = tuple((f.relation, f.row, f.tick) for f in derivation.body)
        broken, unless = set(), []
        if derivation.kind == "crash":  # the fact crash(L, N, T) holds when N crashes at T
            _, (_, node, tick), _ = key
            return Support(body, frozenset(), frozenset({("crash", spark_string(node), tick)}))
        if derivation.kind == "message":
            m = derivation.message
            sender, receiver = spark_string(m.src), spark_string(m.row[0])
            broken |= {f for f in self.failures
                       if f == ("omit", sender, receiver, m.sent)
                       or f[0] == "crash" and f[1] == sender and f[2] <= m.sent}
        for absent in derivation.absent:
            if absent.relation == CRASH:
                broken |= self._crash_matches(absent.pattern)
            else:
                unless.append((absent.relation, absent.pattern, absent.tick))
        rule = program.rules[derivation.rule] if program is not None and derivation.rule is not None else None
        others = _others(rule, key, derivation) if rule is not None and rule.is_aggregate else ()
        return Support(body, frozenset(broken), unless=tuple(unless), others=others)

    def _crash_matches(self, pattern: tuple) -> set:
        """The crashes of the space that give a `crash(L, N, T)` fact matching
        `pattern` (None: any value)."""
        where, node, tick = pattern
        if where is not None and spark_string(where) not in self.locations:
            return set()
        return {f for f in self.failures if f[0] == "crash" and (node is None or spark_string(node) == f[1])
                and (tick is None or tick == f[2])}

    def candidates(self, tried=()) -> list:
        """The minimal failure sets (as `Scenario`s, fewest failures first), other
        than the `tried` scenarios, that break every known derivation of some
        target's `post` fact and keep one of its `pre` fact's."""
        return Formula(self, tried).minimal()

    def breaks(self, scenario: Scenario) -> bool:
        """Whether `scenario` is a model of the formula: it breaks every known
        derivation of some target's `post` fact and keeps one of its `pre`."""
        return Formula(self).allows(_scenario_failures(scenario))


def search(space: Space, lineage: Lineage, evaluate) -> Checked:
    """LDFI's loop, whichever engine runs the scenarios: `evaluate(scenarios)`
    runs a round's scenarios (first the failure-free one alone, then the
    minimal candidates, fewest failures first), adds to `lineage` the runs that
    keep the invariant and returns the scenarios it ran and the counterexamples
    among them (it may stop at the first). Asks the lineage for the candidates
    not run yet, until a round finds a counterexample or none is left. The
    result holds the smallest counterexample of that round, the size of the
    space and the scenarios run (`executions`).

    >>> space = Space(("a", "b"), eot=2, eff=2)
    >>> search(space, Lineage(space), lambda batch: (batch, [])).executions  # no target: no candidate
    1
    """
    tried, found, batch = set(), [], [Scenario()]
    while batch:
        ran, found = evaluate(batch)
        tried |= set(ran)
        if found:
            break
        batch = lineage.candidates(tried)
    return Checked(space.count, smallest_first(found)[:1], executions=len(tried), search="ldfi")


def _failures(space: Space) -> tuple:
    """The failures of the space: its omissible channels, and each node's crash
    at each tick when crashes are allowed."""
    crashes = [("crash", n, t) for n in space.nodes for t in range(1, space.eot + 1)] if space.crashes else []
    return tuple(("omit",) + c for c in space.channels()) + tuple(crashes)


def _matches(pattern: tuple, row: tuple) -> bool:
    return all(p is None or (p.admits(v) if isinstance(p, Beyond) else p == v) for p, v in zip(pattern, row))


def _others(rule, key: tuple, derivation) -> tuple:
    """The atoms (relation, pattern, tick) of the members that would change the
    aggregate fact `key` derived by `rule`: the body atoms over its group (the
    head's variables bound to `key`'s values); for `max<X>` (`min<X>`) those with
    X, X greater (smaller) than the fact's, for `count`, `sum` and `avg` all of
    them. A fact matching one counts as a member whether or not it joins the
    other atoms or passes the negated atoms and comparisons (the aggregate is
    thought lost more often than it is).

    >>> from sparkdedalus import Program
    >>> from sparkdedalus.reference.provenance import Derivation
    >>> rule = Program.parse('top(R, max<X>) :- got(R, X), ok(R);').rules[0]
    >>> _others(rule, ("top", ("r", 1), 3), Derivation("rule"))
    (('got', ('r', Beyond(value=1, below=False)), 3),)
    """
    _, row, tick = key
    at = tick if derivation.kind == "rule" else tick - 1 if derivation.kind == "next" else derivation.message.send_tick
    group, better = {}, {}  # variable -> value of `key`; aggregated variable -> Beyond
    for arg, value in zip(rule.head.args, row):
        if isinstance(arg, ast.Var):
            group[arg.name] = value
        elif isinstance(arg, ast.Aggregate) and arg.func in ("max", "min"):
            better[arg.var.name] = Beyond(value, below=arg.func == "min")
    every = any(a.func not in ("max", "min") for a in rule.aggregates)
    found = []
    for atom in rule.positive_atoms:
        pattern = tuple(arg.value if isinstance(arg, ast.Const) else group.get(getattr(arg, "name", None))
                        for arg in atom.args)
        read = atom.time.tick if isinstance(atom.time, ast.TickTime) else at
        if every:
            found.append((atom.name, pattern, read))
        for i, arg in enumerate(atom.args):
            if isinstance(arg, ast.Var) and arg.name in better:
                found.append((atom.name, pattern[:i] + (better[arg.name],) + pattern[i + 1:], read))
    return tuple(dict.fromkeys(found))


def _scenario_failures(scenario: Scenario) -> set:
    return {("omit",) + o for o in scenario.omissions} | {("crash",) + c for c in scenario.crashes}


class Formula:
    """The lineage as clauses over one variable per failure, per fact ("it
    holds") and per derivation ("it applies"):

    - a derivation whose body holds, that no failure breaks and whose negated
      atoms (and `others`) no holding fact matches makes its fact hold (a `post` fact required
      not to hold has every derivation broken, recursion included);
    - a fact holds only through one of its derivations, which then is unbroken,
      has its body and no fact matching a negated atom, nor for an aggregate a
      fact outside its body matching one of `others` (the completion: a `pre`
      fact required to hold keeps a derivation; on a cycle it may be assumed,
      which only adds candidates);
    - some target's `pre` fact holds and its `post` fact does not;
    - the space: at most one crash tick per node, at most `crashes` nodes; and
      none of the `tried` scenarios' failure sets.
    """

    def __init__(self, lineage: Lineage, tried=()):
        self.failures = lineage.failures
        self.var = {f: i for i, f in enumerate(self.failures, 1)}
        self.top = len(self.failures)  # the last variable used
        self.clauses = []
        fact_var = {}

        def holds(key) -> int:
            if key not in fact_var:
                fact_var[key] = self._new()
            return fact_var[key]

        for key, supports in lineage.supports.items():
            applies = []
            for support in supports:
                body = [holds(b) for b in support.body]
                broken = [self.var[f] for f in support.broken_by]
                needs = [self.var[f] for f in support.needs]
                unless = [holds(f) for atom in support.unless for f in lineage.matching.get(atom, ())] \
                    + [holds(f) for atom in support.others for f in lineage.matching.get(atom, ())
                       if f not in support.body]
                self.clauses.append([-b for b in body] + broken + [-n for n in needs] + unless + [holds(key)])
                applies.append(self._new())
                self.clauses += [[-applies[-1], b] for b in body] + [[-applies[-1], -f] for f in broken] \
                    + [[-applies[-1], n] for n in needs] + [[-applies[-1], -u] for u in unless]
            self.clauses.append([-holds(key)] + applies)
        chosen = []
        for row in sorted(lineage.targets, key=repr):
            chosen.append(self._new())
            self.clauses += [[-chosen[-1], holds((PRE, row, lineage.space.eot))],
                             [-chosen[-1], -holds((POST, row, lineage.space.eot))]]
        self.clauses.append(chosen)
        for key in set(fact_var) - set(lineage.supports):  # a fact with no derivation seen does not hold
            self.clauses.append([-fact_var[key]])
        self._space(lineage.space)
        for scenario in tried:
            failures = _scenario_failures(scenario)
            self.clauses.append([-self.var[f] if f in failures else self.var[f] for f in self.failures])

    def _new(self) -> int:
        self.top += 1
        return self.top

    def _space(self, space: Space) -> None:
        crashed = []
        for node in space.nodes if space.crashes else ():
            ticks = [self.var["crash", node, t] for t in range(1, space.eot + 1)]
            crashed.append(self._new())
            self.clauses += [[-t, crashed[-1]] for t in ticks]
            self._cardinality(ticks, 1)
        if crashed and space.crashes < len(crashed):
            self._cardinality(crashed, space.crashes)

    def _cardinality(self, literals: list, bound: int) -> None:
        from pysat.card import CardEnc, EncType  # python-sat is loaded by a search, not by `import` (see _solver)
        encoded = CardEnc.atmost(literals, bound=bound, top_id=self._new(), encoding=EncType.seqcounter)
        self.clauses += encoded.clauses
        self.top = max(self.top, encoded.nv)

    def allows(self, failures: set) -> bool:
        """Whether exactly `failures` (and no other failure) satisfy the formula."""
        with self._solver() as solver:
            return solver.solve(assumptions=[self.var[f] if f in failures else -self.var[f] for f in self.failures])

    def minimal(self) -> list:
        """The subset-minimal models' failures, as scenarios, fewest failures first:
        a model is shrunk one failure at a time (asking for a model within the
        rest), then every superset of it is excluded, until none is left."""
        found = []
        with self._solver() as solver:
            while solver.solve():
                chosen = self._chosen(solver.get_model())
                for failure in list(chosen):
                    if failure in chosen:
                        rest = chosen - {failure}
                        if solver.solve(assumptions=[-self.var[f] for f in self.failures if f not in rest]):
                            chosen = self._chosen(solver.get_model())
                found.append(_scenario(chosen))
                if not chosen:
                    break
                solver.add_clause([-self.var[f] for f in chosen])
        return sorted(found, key=lambda s: (s.size, s))

    def _solver(self):
        """A solver holding the clauses. python-sat is imported here, not at
        module level: the Spark engine imports this module (for `Engine.faults`'s
        LDFI search) and a plain run should not load the solvers."""
        from pysat.solvers import Solver
        return Solver(name=SOLVER, bootstrap_with=self.clauses)

    def _chosen(self, model: list) -> set:
        true = set(model)
        return {f for f in self.failures if self.var[f] in true}


def _scenario(failures: set) -> Scenario:
    return Scenario(tuple(sorted(f[1:] for f in failures if f[0] == "omit")),
                    tuple(sorted(f[1:] for f in failures if f[0] == "crash")))
