"""Why does a fact hold at a tick? Its derivation trees, from a run's provenance.

`why(trace, relation, row, tick)` on a trace of `run(..., provenance=True)` gives a
`Why`: the fact, and every alternative derivation (`Step`), each with the `Why` of
each body fact, down to the program's facts, inputs, crashes and messages. A
derivation that uses the fact it derives (or a fact that fact is used for, at the
same tick) is not a derivation: recursion at one tick gives finite trees. For a
fact that does not hold, it gives a `WhyNot`: the rule that came closest (the
most body atoms matched) and the atoms that were missing. `blocked(trace, ...)`
gives the rule instances that came closest of all: every body atom matched, only
a negated atom's fact stood in the way.

>>> from sparkdedalus import Program
>>> from sparkdedalus.reference import run
>>> program = Program.parse('''e("g", "a", "b"); e("g", "b", "c"); e("g", "a", "c");
... p(G, X, Y) :- e(G, X, Y);
... p(G, X, Z) :- e(G, X, Y), p(G, Y, Z);''')
>>> trace = run(program, ticks=1, provenance=True)
>>> print(why(trace, "p", ("g", "a", "c"), 1).text())
p("g", "a", "c")@1
  derivation 1 of 2: by rule <string>:2: p(G, X, Y) :- e(G, X, Y);
    e("g", "a", "c")@1
      fact of the program (<string>:1)
  derivation 2 of 2: by rule <string>:3: p(G, X, Z) :- e(G, X, Y), p(G, Y, Z);
    e("g", "a", "b")@1
      fact of the program (<string>:1)
    p("g", "b", "c")@1
      by rule <string>:2: p(G, X, Y) :- e(G, X, Y);
        e("g", "b", "c")@1
          fact of the program (<string>:1)
>>> print(why(trace, "p", ("g", "c", "a"), 1).text())
p("g", "c", "a")@1 does not hold
  closest: rule <string>:2: p(G, X, Y) :- e(G, X, Y); at tick 1, 0 of 1 body atoms matched
    missing: e("g", "c", "a")@1
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.checks.normalize import is_wildcard, unwild_literal
from sparkdedalus.reference.evaluator import bind_tick, match
from sparkdedalus.network import Message
from sparkdedalus.output import sort_key
from sparkdedalus.reference.provenance import Absent, Derivation, FactAt, absent_atoms
from sparkdedalus.reference.values import EvaluationError, NoValue, compare, convert_row, evaluate
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.printer import format_atom, format_literal, format_rule


@dataclass(frozen=True, eq=False)
class Step:
    """One derivation, with the `Why` of each of its body facts (in body order)."""

    derivation: object  # provenance.Derivation
    body: tuple


@dataclass(frozen=True, eq=False)
class Why:
    """A fact that holds, and its derivations. Subtrees may be shared."""

    program: object
    fact: FactAt
    steps: tuple

    holds = True

    def text(self) -> str:
        """An indented tree; a derived fact printed already shows as `(as above)`."""
        lines, shown = [], set()
        todo: list = [(self, 0)]  # a `Why` and its depth, or a line ready to print
        while todo:
            item = todo.pop()
            if isinstance(item, str):
                lines.append(item)
                continue
            node, depth = item
            pad = "  " * depth
            if id(node) in shown:
                lines.append(f"{pad}{_fact_text(node.fact)} (as above)")
                continue
            if any(step.body for step in node.steps):
                shown.add(id(node))
            lines.append(pad + _fact_text(node.fact))
            below = []
            for k, step in enumerate(node.steps):
                count = f"derivation {k + 1} of {len(node.steps)}: " if len(node.steps) > 1 else ""
                below.append(f"{pad}  {count}{_label(self.program, node.fact, step.derivation)}")
                below += [f"{pad}    {_absent_text(a)}" for a in step.derivation.absent]
                below += [(child, depth + 2) for child in step.body]
            todo += reversed(below)
        return "\n".join(lines)

    def to_json(self) -> dict:
        """`{"holds": true, "fact": ID, "facts": [{"id", "relation", "row", "tick",
        "derivations": [{"kind", "rule", "pos", "text", "body": [ID...], "absent",
        "message"}]}]}`: the trees as a graph, each `Why` once (a fact may show
        twice when it has other derivations inside a recursion)."""
        ids, order = {id(self): 0}, [self]
        for node in order:  # grows while it is walked
            for child in (child for step in node.steps for child in step.body):
                if id(child) not in ids:
                    ids[id(child)] = len(order)
                    order.append(child)
        return {"holds": True, "fact": 0, "facts": [
            {"id": ids[id(node)], **_fact_json(node.fact), "derivations": [
                {**_derivation_json(self.program, step.derivation),
                 "body": [ids[id(child)] for child in step.body]} for step in node.steps]}
            for node in order]}


@dataclass(frozen=True)
class Closest:
    """The rule that came closest to deriving a fact: at `tick` (the tick its body
    reads), the body facts it matched, the body atoms no fact matched, the negated
    atoms a fact matched and the comparisons that were false (values bound)."""

    rule: int
    pos: str
    text: str
    tick: int
    matched: tuple  # FactAt
    missing: tuple  # str
    present: tuple  # str
    failed: tuple  # str

    def to_json(self) -> dict:
        return {"rule": self.rule, "pos": self.pos, "text": self.text, "tick": self.tick,
                "matched": [_fact_json(f) for f in self.matched], "missing": list(self.missing),
                "present": list(self.present), "failed": list(self.failed)}


@dataclass(frozen=True)
class WhyNot:
    """A fact that does not hold: the closest rule (None when no rule derives
    the relation), and the messages of this fact that did not arrive then."""

    fact: FactAt
    closest: Closest | None
    messages: tuple  # network.Message: lost, or arriving at another tick

    holds = False

    def text(self) -> str:
        lines = [f"{_fact_text(self.fact)} does not hold"]
        c = self.closest
        if c is None:
            lines.append(f"  no rule derives {self.fact.relation}, and no fact or input gives it at {self.fact.tick}")
        else:
            atoms = len(c.matched) + len(c.missing)
            lines.append(f"  closest: rule {c.pos}: {c.text} at tick {c.tick}, "
                         f"{len(c.matched)} of {atoms} body atoms matched")
            lines += [f"    matched: {_fact_text(f)}" for f in c.matched]
            lines += [f"    missing: {text}" for text in c.missing]
            lines += [f"    present: {text} (negated in the rule)" for text in c.present]
            lines += [f"    false: {text}" for text in c.failed]
        for m in self.messages:
            fate = "lost" if m.arrival is None else f"arrived at tick {m.arrival}"
            lines.append(f"  message from {_value(m.src)} sent at tick {m.send_tick}: {fate}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"holds": False, **_fact_json(self.fact),
                "closest": None if self.closest is None else self.closest.to_json(),
                "messages": [_message_json(m) for m in self.messages]}


def why(trace, relation: str, row: tuple, tick: int) -> Why | WhyNot:
    """Why `relation(row)` holds at `tick` in `trace` (a run with
    `provenance=True`), or why not. Raises ValueError for an unknown relation, a
    row of the wrong arity or types, a tick outside the run, or a trace without
    provenance."""
    program = trace.program
    if trace.provenance is None:
        raise ValueError("the run recorded no provenance: run it with provenance=True")
    if relation not in program.relations:
        raise ValueError(f"unknown relation '{relation}'")
    types = program.relations[relation].types
    if len(row) != len(types):
        raise ValueError(f"'{relation}' has {len(types)} columns, not {len(row)}")
    fact = FactAt(relation, convert_row(tuple(row), types), tick)
    if fact.row not in trace.at(tick)[relation]:
        messages = tuple(m for m in trace.messages if (m.relation, m.row) == (relation, fact.row)
                         and m.send_tick < tick and m.arrival != tick)
        return WhyNot(fact, _closest(trace, fact), messages)
    return _tree(program, trace.provenance, fact)


# ------------------------------------------------------------ the trees

def _tree(program, provenance, root: FactAt) -> Why:
    """Every fact the root's derivations reach is built first with no ancestors,
    earliest tick first: a tree recurses only within one tick."""
    reached, todo = set(), [root]
    while todo:
        fact = todo.pop()
        if fact not in reached:
            reached.add(fact)
            todo += [f for d in provenance.derivations(fact.relation, fact.row, fact.tick) for f in d.body]
    memo: dict = {}
    for fact in sorted(reached, key=lambda f: f.tick):
        _node(program, provenance, fact, frozenset(), memo)
    # a fact that holds has a derivation without cycles (the fixpoint found one)
    return memo[root, frozenset()]


def _node(program, provenance, fact: FactAt, ancestors: frozenset, memo: dict) -> Why | None:
    """The `Why` of `fact` below `ancestors` (facts of its tick it is used for),
    None when every derivation needs one of them."""
    key = (fact, ancestors)
    if key not in memo:
        inner = ancestors | {fact}
        steps = []
        for d in provenance.derivations(fact.relation, fact.row, fact.tick):
            if any(f in inner for f in d.body):
                continue
            body = [_node(program, provenance, f, inner if f.tick == fact.tick else frozenset(), memo)
                    for f in d.body]
            if None not in body:
                steps.append(Step(d, tuple(body)))
        memo[key] = Why(program, fact, tuple(steps)) if steps else None
    return memo[key]


# ------------------------------------------------------------ the closest rule

def _closest(trace, fact: FactAt) -> Closest | None:
    best = None
    for rule in trace.program.defining_rules(fact.relation):
        head = match_head(rule.head, fact.row)
        if head is None:
            continue
        ticks = {"now": [fact.tick], "next": [fact.tick - 1], "async": range(fact.tick - 1, 0, -1)}[rule.delivery]
        for tick in ticks:
            if tick >= 1:
                found = _best_match(trace, rule, head, tick)
                if best is None or len(found.matched) > len(best.matched):
                    best = found
    return best


def match_head(head: ast.Atom, row: tuple) -> dict | None:
    """The binding of the head's variables to `row` (expressions and aggregates
    are left out), None when a constant or a repeated variable disagrees."""
    binding: dict = {}
    for arg, value in zip(head.args, row):
        if isinstance(arg, (ast.Const, ast.Var)):
            binding = match((arg,), (value,), binding)
            if binding is None:
                return None
    return binding


def _best_match(trace, rule, head: dict, tick: int) -> Closest:
    atoms = rule.positive_atoms
    best = [-1, None, ()]  # matched count, binding, ((atom index, FactAt), ...)

    def search(i: int, binding: dict, matched: tuple) -> None:
        if len(matched) + len(atoms) - i <= best[0]:
            return
        if i == len(atoms):
            best[:] = [len(matched), binding, matched]
            return
        for extended, fact in _extensions(trace, atoms[i], binding, tick):
            search(i + 1, extended, matched + ((i, fact),))
        search(i + 1, binding, matched)

    search(0, head, ())
    _, binding, matched = best
    binding, failed = _conditions(rule, binding)
    done = {i for i, _ in matched}
    missing = tuple(_pattern(atom, binding, ast.read_tick(atom, tick)) for i, atom in enumerate(atoms) if i not in done)
    present = tuple(_pattern(atom, binding, ast.read_tick(atom, tick)) for atom in rule.negated_atoms
                    if _matches_some(trace, atom, binding, tick))
    return Closest(rule.index, f"{rule.pos.file}:{rule.pos.line}", rule_text(rule), tick,
                   tuple(f for _, f in matched), missing, present, failed)


def blocked(trace, relation: str, pattern: tuple, tick: int) -> list:
    """The rule instances that would derive a fact of `relation` matching `pattern`
    (None: any value) at `tick` but for their negated atoms: every body atom matched
    a fact of `trace`, every comparison held, and some negated atom matched a fact.
    Each is (row, Derivation) as `reference.provenance` records one (an `@async`
    rule's `Message` arrives at the next tick). Aggregates are left out.

    >>> from sparkdedalus import Program
    >>> from sparkdedalus.reference import run
    >>> trace = run(Program.parse('q("a")@1; r("a")@1; p(L)@next :- q(L), notin r(L);'), ticks=2)
    >>> [(row, d.kind, d.body, d.absent) for row, d in blocked(trace, "p", (None,), 2)]
    [(('a',), 'next', (FactAt(relation='q', row=('a',), tick=1),), (Absent(relation='r', pattern=('a',), tick=1),))]
    """
    return _instances(trace, relation, pattern, tick, blocked_only=True)


def joined(trace, relation: str, pattern: tuple, tick: int) -> list:
    """Every rule instance that would derive a fact of `relation` matching `pattern`
    at `tick` from the facts of `trace`, its negated atoms aside (they are the
    derivation's `absent` atoms, whether a fact matches them or not): as `blocked`,
    for rules with or without negated atoms. `trace` may be any view with
    `program` and `at(tick)`, e.g. the facts of several runs together, where an
    instance's body facts may come from different runs (LDFI's `Union`).

    >>> from sparkdedalus import Program
    >>> from sparkdedalus.reference import run
    >>> trace = run(Program.parse('q("a")@1; r("a")@1; p(L) :- q(L), r(L), notin s(L);'), ticks=1)
    >>> [(row, d.kind, d.absent) for row, d in joined(trace, "p", ("a",), 1)]
    [(('a',), 'rule', (Absent(relation='s', pattern=('a',), tick=1),))]
    >>> blocked(trace, "p", ("a",), 1)
    []
    """
    return _instances(trace, relation, pattern, tick, blocked_only=False)


def _instances(trace, relation: str, pattern: tuple, tick: int, blocked_only: bool) -> list:
    program, found = trace.program, []
    for rule in program.defining_rules(relation):
        known = [(arg, value) for arg, value in zip(rule.head.args, pattern) if value is not None]
        head = match_head(ast.Atom(relation, tuple(a for a, _ in known)), tuple(v for _, v in known))
        at = tick if rule.delivery == "now" else tick - 1
        if blocked_only and not rule.negated_atoms or rule.is_aggregate or head is None or at < 1:
            continue
        for binding, matched in _joins(trace, rule, head, at, 0, ()):
            binding, failed = _conditions(rule, binding)
            if failed or blocked_only and not any(_matches_some(trace, atom, binding, at)
                                                  for atom in rule.negated_atoms):
                continue
            try:
                row = convert_row(tuple(evaluate(arg, binding) for arg in rule.head.args),
                                  program.relations[relation].types)
            except (KeyError, NoValue, EvaluationError):
                continue
            if any(v is not None and v != r for v, r in zip(pattern, row)):
                continue
            kind = {"now": "rule", "next": "next", "async": "message"}[rule.delivery]
            message = Message(relation, row, evaluate(rule.positive_atoms[0].args[0], binding), at, at + 1) \
                if kind == "message" else None
            found.append((row, Derivation(kind, f"{rule.pos.file}:{rule.pos.line}", rule.index, matched,
                                          absent_atoms(rule, binding, at), message)))
    return found


def _joins(trace, rule, binding: dict, tick: int, i: int, matched: tuple):
    """Every binding that matches the rule's body atoms from the i-th on, with the facts."""
    atoms = rule.positive_atoms
    if i == len(atoms):
        yield binding, matched
        return
    for extended, fact in _extensions(trace, atoms[i], binding, tick):
        yield from _joins(trace, rule, extended, tick, i + 1, matched + (fact,))


def _extensions(trace, atom, binding: dict, tick: int):
    """(binding extended, the fact) for every fact of the tick `atom` reads that matches it."""
    at = ast.read_tick(atom, tick)
    timed = bind_tick(atom, binding, tick)
    if timed is not None and 1 <= at <= tick:
        for row in sorted(trace.at(at)[atom.name], key=repr):
            extended = match(atom.args, row, timed)
            if extended is not None:
                yield extended, FactAt(atom.name, row, at)


def _conditions(rule, binding: dict) -> tuple:
    """`binding` with the assignments made, and the comparisons that are false."""
    failed = []
    for comparison in rule.comparisons:
        sides = (comparison.left, comparison.right)
        try:
            unbound = [s for s in sides if isinstance(s, ast.Var) and s.name not in binding]
            if comparison.op == "==" and len(unbound) == 1:
                other = sides[1] if unbound[0] is sides[0] else sides[0]
                binding = {**binding, unbound[0].name: evaluate(other, binding)}
            elif not compare(comparison.op, evaluate(comparison.left, binding), evaluate(comparison.right, binding)):
                failed.append(format_literal(comparison))
        except KeyError:  # a variable no matched atom bound
            continue
        except (NoValue, EvaluationError):
            failed.append(format_literal(comparison))
    return binding, tuple(failed)


def _matches_some(trace, atom: ast.Atom, binding: dict, tick: int) -> bool:
    at = ast.read_tick(atom, tick)
    timed = bind_tick(atom, binding, tick)
    return timed is not None and 1 <= at <= tick and any(
        match(atom.args, row, timed) is not None for row in trace.at(at)[atom.name])


# ------------------------------------------------------------ text and JSON

def _pattern(atom: ast.Atom, binding: dict, tick: int) -> str:
    """`atom` with its bound variables replaced by their values, at `tick`."""
    args = tuple(ast.Const(binding[a.name]) if isinstance(a, ast.Var) and a.name in binding
                 else ast.Wildcard() if isinstance(a, ast.Var) and is_wildcard(a) else a for a in atom.args)
    return f"{format_atom(ast.Atom(atom.name, args))}@{tick}"


def _fact_text(fact) -> str:
    """`rel(values)@tick`; None in an `Absent` pattern prints as `_`."""
    values = fact.pattern if isinstance(fact, Absent) else fact.row
    args = tuple(ast.Wildcard() if v is None else ast.Const(v) for v in values)
    return f"{format_atom(ast.Atom(fact.relation, args))}@{fact.tick}"


def _absent_text(absent: Absent) -> str:
    return f"{_fact_text(absent)[:-len(str(absent.tick)) - 1]} was absent at {absent.tick}"


def _value(value) -> str:
    return format_atom(ast.Atom("", (ast.Const(value),)))[1:-1]


def rule_text(rule) -> str:
    """The rule as written (wildcards as `_`)."""
    return format_rule(ast.Rule(rule.head, rule.delivery, tuple(unwild_literal(lit) for lit in rule.body)))


def _label(program, fact: FactAt, d) -> str:
    """One derivation, as the line above its body facts."""
    rule = f"{d.pos}: {rule_text(program.rules[d.rule])}" if d.rule is not None else ""
    if d.kind == "rule":
        return f"by rule {rule}"
    if d.kind == "next":
        how = "persisted" if program.rules[d.rule].persistence else "@next"
        return f"{how} from tick {fact.tick - 1} by rule {rule}"
    if d.kind == "message":
        m = d.message
        return (f"message from {_value(m.src)} sent at tick {m.send_tick}, received by {_value(m.row[0])} "
                f"at tick {m.arrival}, by rule {rule}")
    return {"fact": f"fact of the program ({d.pos})", "input": "input row (edb or .input)",
            "crash": "crash of the failure model (--network)"}[d.kind]


def _fact_json(fact: FactAt) -> dict:
    return {"relation": fact.relation, "row": list(fact.row), "tick": fact.tick}


def _message_json(m) -> dict:
    return {"sender": m.src, "send_tick": m.send_tick, "receiver": m.row[0], "arrival": m.arrival}


def _derivation_json(program, d) -> dict:
    return {"kind": d.kind, "rule": d.rule, "pos": d.pos,
            "text": None if d.rule is None else rule_text(program.rules[d.rule]),
            "absent": [{"relation": a.relation, "pattern": list(a.pattern), "tick": a.tick} for a in d.absent],
            "message": None if d.message is None else _message_json(d.message)}


# ------------------------------------------------------------ every derivation of a tick

def derivation_records(program, found: list) -> list[dict]:
    """Derivations `found` ((FactAt, Derivation), as `tick_derivations` lists
    them) as flat records (`run --provenance --format json`, both engines): the
    fact, then the fields of a derivation in `why --format json`, with the body
    facts written out.

    >>> from sparkdedalus import Program
    >>> from sparkdedalus.reference import run
    >>> trace = run(Program.parse('q("a", 1)@1;\\np(L, X)@next :- q(L, X), notin r(L);'), ticks=2, provenance=True)
    >>> derivation_records(trace.program, tick_derivations(trace, 2, ["p"]))  # doctest: +NORMALIZE_WHITESPACE
    [{'relation': 'p', 'row': ['a', 1], 'tick': 2, 'kind': 'next', 'rule': 0, 'pos': '<string>:2',
      'text': 'p(L, X)@next :- q(L, X), notin r(L);', 'absent': [{'relation': 'r', 'pattern': ['a'], 'tick': 1}],
      'message': None, 'body': [{'relation': 'q', 'row': ['a', 1], 'tick': 1}]}]
    """
    return [{**_fact_json(fact), **_derivation_json(program, d), "body": [_fact_json(f) for f in d.body]}
            for fact, d in found]


def derivations_text(program, found: list) -> str:
    """The same as `derivation_records`, as text (`run --provenance --format
    table`): each fact, each derivation under it as `why` labels it, and its body
    facts and absent atoms under that, one level deep.

    >>> from sparkdedalus import Program
    >>> from sparkdedalus.reference import run
    >>> trace = run(Program.parse('q("a", 1)@1;\\np(L, X)@next :- q(L, X), notin r(L);'), ticks=2, provenance=True)
    >>> print(derivations_text(trace.program, tick_derivations(trace, 2, ["p"])))
    derivations (1)
      p("a", 1)@2
        @next from tick 1 by rule <string>:2: p(L, X)@next :- q(L, X), notin r(L);
          q("a", 1)@1
          r("a") was absent at 1
    """
    lines = [f"derivations ({len(found)})"]
    for i, (fact, d) in enumerate(found):
        if i == 0 or found[i - 1][0] != fact:
            lines.append(f"  {_fact_text(fact)}")
        lines.append(f"    {_label(program, fact, d)}")
        lines += [f"      {_fact_text(f)}" for f in d.body] + [f"      {_absent_text(a)}" for a in d.absent]
    return "\n".join(lines)


def tick_derivations(trace, tick: int, names) -> list:
    """(FactAt, Derivation) of every fact of `names` at `tick`, in output order:
    relations by name, rows sorted, derivations in `Provenance.derivations` order."""
    return [(FactAt(name, row, tick), d) for name in sorted(names)
            for row in sorted(trace.relation(name, tick), key=sort_key)
            for d in trace.provenance.derivations(name, row, tick)]
