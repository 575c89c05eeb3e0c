"""The reference evaluator: the executable specification of a run.

Written for clarity, not speed: relations are Python sets of tuples, rule bodies are
evaluated binding by binding with plain loops, strata are iterated naively to a
fixpoint. One concession: an atom with bound arguments looks its rows up in a
hash index on those columns (`_lookup`), so that a state of thousands of facts
does not make every tick quadratic. Every later engine is tested against it.
docs/semantics.md states the semantics it implements, decision by decision.

>>> from sparkdedalus import Program
>>> program = Program.parse('p(N, X + 1)@next :- p(N, X), X < 2; p("a", 0)@1;')
>>> trace = run(program, ticks=4)
>>> [sorted(trace.relation("p", tick=t)) for t in (1, 2, 3, 4)]
[[('a', 0)], [('a', 1)], [('a', 2)], []]

A tick t, at all locations together (the location is the first column):
1. the state starts with the EDB facts, the facts `@t`, the facts derived for t by
   `@next` rules at t-1, the messages the network delivers at t, the rows of `edb`
   and of `.input` relations (unstamped or stamped t), and the `crash` facts;
2. the deductive rules run to fixpoint, stratum by stratum (`program.strata`);
3. `@next` rules, on the final state of t, derive facts for t+1; `@async` rules, on
   the final state of t, send messages whose arrival the `Network` decides (with
   a capacity, through every node's queues: `reference/queues.py`);
4. with `gc=True`, a persisted fact that a GC rule (`analysis/gc.py`) matches on
   the final state of t is not carried to t+1 by its persistence rule.
"""

from __future__ import annotations

import time
from collections import defaultdict

from sparkdedalus.analysis.gc import applied
from sparkdedalus.checks.normalize import is_wildcard
from sparkdedalus.checks.safety import assignment_target
from sparkdedalus.network import Network, choice_key
from sparkdedalus.program import CRASH
from sparkdedalus.inputs import edb_rows, read_inputs
from sparkdedalus.reference.provenance import Recorder
from sparkdedalus.reference.queues import Queues
from sparkdedalus.reference.trace import Message, Trace
from sparkdedalus.output import sort_key
from sparkdedalus.reference.values import EvaluationError, NoValue, compare, convert_row, evaluate
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.ast import atom_vars, expr_vars
from udfs.registry import FUNCTIONS, spark_string


def run(program, ticks: int, network: Network | None = None, edb: dict | None = None,
        inputs_dir: str | None = None, gc: bool | list = False, provenance: bool = False) -> Trace:
    """Evaluate `program` for ticks 1..`ticks`.

    `network` decides message delays and failures and seeds `choose` (default:
    `Network()`, every message arrives at the next tick). `edb` maps a relation to
    rows that hold at every tick. `.input` files are read relative to `inputs_dir`
    when given, else to the program file that declares them. Raises `InputError`
    (one line) on bad input data and `EvaluationError` (a ValueError) when a value
    does not fit its column (e.g. an integer overflow). `gc`: True applies the
    GC rules of `gc_rules(program)`, a list applies those `GcRule`s; the trace's
    `stats` give the persisted rows carried after every tick either way.
    `provenance=True` records every derivation of every fact in the trace's
    `provenance` (reference/provenance.py; None when off).
    """
    if not isinstance(ticks, int) or isinstance(ticks, bool) or ticks < 1:
        raise ValueError(f"ticks must be an integer >= 1, not {ticks!r}")
    collect = applied(program, gc)
    evaluator = _Evaluator(program, network or Network(), edb_rows(program, edb) + read_inputs(program, inputs_dir),
                           collect, provenance)
    for tick in range(1, ticks + 1):
        started = time.perf_counter()
        evaluator.run_tick(tick)
        evaluator.stats[-1]["seconds"] = time.perf_counter() - started
    messages = evaluator.queues.messages() if evaluator.queues else evaluator.messages
    recorded = evaluator.recorder.finish(messages) if provenance else None
    return Trace(program, evaluator.network, evaluator.history, messages, evaluator.stats, recorded)


class _Evaluator:
    def __init__(self, program, network: Network, input_rows: list[tuple], collect: list, provenance: bool):
        self.program = program
        self.network = network
        # (relation, tick or None, row) for program facts and input rows, typed once
        self.base_rows = [(f.atom.name, f.tick, _typed(f.row, program.relations[f.atom.name], f.pos))
                          for f in program.facts] + input_rows
        self.crash_rows = frozenset()
        if CRASH in program.relations:
            self.crash_rows = network.crash_rows(program, {row[0] for _, _, row in input_rows})
        # GC rules as rules `r(x̄) :- r(x̄), cond` with negative indices (for their plans)
        self.collect = [g.as_rule(-1 - k) for k, g in enumerate(collect)]
        self.plans = {rule.index: _plan(rule) for rule in list(program.rules) + self.collect}
        self.stats: list[dict] = []  # per tick: persisted rows carried, rows collected
        self.indexes: dict = {}  # (id(rows), columns) -> (rows, len(rows), {values: [row]})
        self.history: list[dict] = []  # history[t - 1]: the final state of tick t
        self.arriving: dict = defaultdict(lambda: defaultdict(set))  # tick -> relation -> rows
        self.messages: list[Message] = []
        self.queues = Queues(network) if network.capacity is not None else None
        self.recorder = Recorder(program, self.base_rows, self.crash_rows) if provenance else None

    # ------------------------------------------------------------ one tick
    def run_tick(self, tick: int) -> None:
        self.indexes.clear()
        state = self._initial_state(tick)
        for stratum in self.program.strata:
            self._fixpoint([self.program.rules[i] for i in stratum.rules], state, tick, stratum.lattices)
        final = {name: frozenset(rows) for name, rows in state.items()}
        self.history.append(final)
        if self.recorder:
            self.recorder.deduced(final, tick, self._derive)
        garbage = defaultdict(set)
        for rule in self.collect:
            garbage[rule.head.name] |= set(self._derive(rule, final, tick))
        carried, collected = {}, 0
        for rule in self.program.rules_of("next"):
            derived = self._derive(rule, final, tick)
            rows = set(derived)
            if rule.persistence:
                collected += len(rows & garbage[rule.head.name])
                rows -= garbage[rule.head.name]
                carried[rule.head.name] = len(rows)
            if self.recorder:
                self.recorder.carried(rule, derived, rows, tick)
            self.arriving[tick + 1][rule.head.name] |= rows
        self.stats.append({"tick": tick, "persisted_rows": sum(carried.values()), "persisted": carried,
                           "collected_rows": collected})
        self._send(final, tick)

    def _initial_state(self, tick: int) -> dict:
        state = {name: set() for name in self.program.relations}
        for name, at, row in self.base_rows:
            if at is None or at == tick:
                state[name].add(row)
        for name, rows in self.arriving.pop(tick, {}).items():
            state[name] |= rows
        for name, row in self.queues.take_in(tick) if self.queues else ():
            state[name].add(row)
        if self.crash_rows:
            state[CRASH] |= self.crash_rows
        return state

    def _fixpoint(self, rules: list, state: dict, tick: int, lattices: tuple = ()) -> None:
        """Apply the rules of one stratum until nothing new is derived (naive
        iteration: every pass re-evaluates every rule on the whole state). A
        lattice relation (checks/lattices.py) keeps the best row of every group
        of its facts, those it starts with included: a pass changes it only by
        adding a group or improving one."""
        kept = {lattice.relation: lattice for lattice in lattices}
        for name, lattice in kept.items():
            state[name] = lattice.best(state[name])
        changed = True
        while changed:
            changed = False
            for rule in rules:
                name = rule.head.name
                derived = set(self._derive(rule, state, tick))
                if name in kept:
                    best = kept[name].best(state[name] | derived)
                    if best != state[name]:
                        state[name] = best
                        changed = True
                    continue
                new = derived - state[name]
                if new:
                    state[name] |= new
                    changed = True

    def _send(self, final: dict, tick: int) -> None:
        """Evaluate the @async rules on the final state of `tick` and route the messages."""
        sent = set()
        for rule in self.program.rules_of("async"):
            sender = rule.positive_atoms[0].args[0]
            derived = self._derive(rule, final, tick)
            if self.recorder:
                self.recorder.sent(rule, derived, tick)
            for row, bindings in derived.items():
                for binding in bindings:
                    sent.add((rule.head.name, row, evaluate(sender, binding)))
        if self.queues:
            self.queues.send(sent, tick)
            return
        for name, row, src in sorted(sent, key=lambda m: (m[0], sort_key(m[1]), spark_string(m[2]))):
            arrival = self.network.arrival(name, row, src, tick)
            self.messages.append(Message(name, row, src, tick, arrival))
            if arrival is not None:
                self.arriving[arrival][name].add(row)

    # ------------------------------------------------------------ one rule
    def _derive(self, rule, state: dict, tick: int) -> dict:
        """head row -> the bindings that produce it (for an aggregate: its group)."""
        relation = self.program.relations[rule.head.name]
        bindings = self._bindings(rule, state, tick)
        groups: dict = defaultdict(list)
        for binding in bindings:
            try:
                key = tuple(None if isinstance(arg, ast.Aggregate) else evaluate(arg, binding)
                            for arg in rule.head.args)
            except NoValue:
                continue
            groups[key].append(binding)
        derived: dict = defaultdict(list)
        for key, members in groups.items():
            row = tuple(_aggregate(arg, members) if isinstance(arg, ast.Aggregate) else value
                        for arg, value in zip(rule.head.args, key))
            derived[_typed(row, relation, rule.pos)].extend(members)
        return derived

    def _bindings(self, rule, state: dict, tick: int) -> list[dict]:
        """Every binding of the body's variables that satisfies the body."""
        bindings = [{}]
        for step in self.plans[rule.index]:
            bindings = [out for binding in bindings for out in self._apply(step, binding, state, tick)]
        if rule.choose is not None:
            bindings = _choose(rule.choose, bindings, self.network.seed)
        return bindings

    def _apply(self, step: tuple, binding: dict, state: dict, tick: int):
        """The extensions of `binding` that satisfy one body literal."""
        kind, literal = step[0], step[1]
        if kind == "atom":
            binding = bind_tick(literal, binding, tick)
            if binding is not None:
                for row in self._lookup(literal, binding, state, tick):
                    matched = match(literal.args, row, binding)
                    if matched is not None:
                        yield matched
        elif kind == "negated":
            timed = bind_tick(literal, binding, tick)
            if timed is None or not any(match(literal.args, row, timed) is not None
                                        for row in self._lookup(literal, timed, state, tick)):
                yield binding
        elif kind == "function":
            function = FUNCTIONS[literal.name]
            inputs = [evaluate(arg, binding) for arg in literal.args[:function.inputs]]
            matched = match(literal.args[function.inputs:], function.python(*inputs), binding)
            if matched is not None:
                yield matched
        elif kind == "assign":
            try:
                yield {**binding, step[2]: evaluate(step[3], binding)}
            except NoValue:
                pass
        else:  # "filter"
            try:
                if compare(literal.op, evaluate(literal.left, binding), evaluate(literal.right, binding)):
                    yield binding
            except NoValue:
                pass

    def _lookup(self, atom: ast.Atom, binding: dict, state: dict, tick: int):
        """The rows of `atom` that agree with `binding` on its bound arguments
        (constants and bound variables), by a hash index on those columns; the
        caller still matches each one. Within a tick relations only grow, so an
        index stays valid while its set keeps its size."""
        rows = self._rows(atom, state, tick)
        columns = tuple(i for i, arg in enumerate(atom.args) if isinstance(arg, ast.Const) or arg.name in binding)
        if not columns or not rows:
            return rows
        entry = self.indexes.get((id(rows), columns))
        if entry is None or entry[0] is not rows or entry[1] != len(rows):
            index = defaultdict(list)
            for row in rows:
                index[tuple(row[i] for i in columns)].append(row)
            entry = (rows, len(rows), index)
            self.indexes[(id(rows), columns)] = entry
        args = atom.args
        return entry[2].get(tuple(args[i].value if isinstance(args[i], ast.Const) else binding[args[i].name]
                                  for i in columns), ())

    def _rows(self, atom: ast.Atom, state: dict, tick: int):
        """The rows an atom reads: the current state, or a past tick's final
        state for `rel(...)@k` (nothing when k is not in 1..tick)."""
        at = atom.time.tick if isinstance(atom.time, ast.TickTime) else tick
        if at == tick:
            return state[atom.name]
        if 1 <= at < tick:
            return self.history[at - 1][atom.name]
        return ()


# ------------------------------------------------------------ planning a body

def _plan(rule) -> list[tuple]:
    """The body literals (except choose) in an order where each one's needs are
    bound: at every step the first ready filter (comparison, assignment,
    function relation, negated atom) in body order, else the first positive atom."""
    todo = [lit for lit in rule.body if not isinstance(lit, ast.Choose)]
    bound: set[str] = set()
    steps = []
    while todo:
        ready = [(i, step) for i, step in enumerate(_step(lit, bound) for lit in todo) if step is not None]
        if not ready:
            raise EvaluationError(f"{rule.pos}: cannot order the body of the rule: some variable is never bound")
        i, step = next(((i, s) for i, s in ready if s[0] != "atom"), ready[0])
        del todo[i]
        steps.append(step)
        bound |= _binds(step)
    return steps


def _step(literal, bound: set):
    """The evaluation step of `literal` when everything it needs is bound, else None."""
    if isinstance(literal, ast.Atom):
        if literal.name not in FUNCTIONS:
            return ("atom", literal)
        n_in = FUNCTIONS[literal.name].inputs
        if all(v.name in bound for arg in literal.args[:n_in] for v in expr_vars(arg)):
            return ("function", literal)
    elif isinstance(literal, ast.Negated):
        if all(v.name in bound for v in atom_vars(literal.atom) if not is_wildcard(v)):
            return ("negated", literal.atom)
    elif isinstance(literal, ast.Comparison):
        target = assignment_target(literal, bound)
        if target is not None:
            source = literal.right if target is literal.left else literal.left
            return ("assign", literal, target.name, source)
        if all(v.name in bound for v in expr_vars(literal.left) + expr_vars(literal.right)):
            return ("filter", literal)
    return None


def _binds(step: tuple) -> set:
    kind, literal = step[0], step[1]
    if kind == "atom":
        return {v.name for v in atom_vars(literal)}
    if kind == "function":
        return {v.name for arg in literal.args[FUNCTIONS[literal.name].inputs:] for v in expr_vars(arg)}
    if kind == "assign":
        return {step[2]}
    return set()


# ------------------------------------------------------------ matching and heads

def bind_tick(atom: ast.Atom, binding: dict, tick: int) -> dict | None:
    """`rel(...)@T` reads the current tick: bind T to it, or check a bound T."""
    if not isinstance(atom.time, ast.VarTime):
        return binding
    name = atom.time.var.name
    if name not in binding:
        return {**binding, name: tick}
    return binding if binding[name] == tick else None


def match(args: tuple, row: tuple, binding: dict) -> dict | None:
    """`binding` extended so that `args` (variables and constants) equal `row`, or None."""
    out = binding
    for arg, value in zip(args, row):
        if isinstance(arg, ast.Const):
            if arg.value != value:
                return None
        elif arg.name in out:
            if out[arg.name] != value:
                return None
        else:
            if out is binding:
                out = dict(binding)
            out[arg.name] = value
    return out


def _choose(choose: ast.Choose, bindings: list[dict], seed: int) -> list[dict]:
    """For every binding of the keys keep the bindings of the one value tuple
    with the smallest `choice_key`."""
    def keys(b):
        return tuple(b[v.name] for v in choose.keys)

    def values(b):
        return tuple(b[v.name] for v in choose.values)

    chosen: dict = {}
    for binding in bindings:
        k, v = keys(binding), values(binding)
        if k not in chosen or choice_key(seed, v) < choice_key(seed, chosen[k]):
            chosen[k] = v
    return [b for b in bindings if values(b) == chosen[keys(b)]]


def _aggregate(agg: ast.Aggregate, group: list[dict]):
    """count<*>: distinct bindings; count/sum/avg over the distinct values of the
    variable; min/max."""
    if agg.var is None:
        return len({frozenset(b.items()) for b in group})
    values = {b[agg.var.name] for b in group}
    if agg.func == "count":
        return len(values)
    if agg.func == "min":
        return min(values)
    if agg.func == "max":
        return max(values)
    total = _sum(values)
    return total if agg.func == "sum" else total / len(values)


def _sum(values: set):
    """Exact for integers; for doubles the distinct values added in ascending
    order, so that every engine gets the same bits (docs/semantics.md)."""
    if any(isinstance(v, float) for v in values):
        total = 0.0
        for value in sorted(values, key=float):
            total += value
        return total
    return sum(values)


def _typed(row: tuple, relation, pos) -> tuple:
    try:
        return convert_row(row, relation.types)
    except EvaluationError as exc:
        raise EvaluationError(f"{pos}: a fact of '{relation.name}' {row!r}: {exc}") from None
