"""Confluence (the confluence notes, seed 004): does the program's ultimate
model -- the facts that hold at every tick from some tick on -- stay the same
whatever the delays of its `@async` messages? Confluence is undecidable; this
is a sufficient test, and every place where it fails is a *point of order*.

A relation is *fed* when an `@async` rule derives it or a fed relation reaches
it in the dependency graph (`checks/dependencies.py`, every edge: positive,
negated, aggregated; now, next, async). A rule *reads a fed relation* when an
atom of its body, positive or negated, is over one (identity persistence
rules excepted: they only carry state). The points of order:

- ``unpersisted``: an `@async` rule derives a relation that is not persisted,
  so its facts hold only at their arrival tick (the notes' guarded asynchrony:
  every async relation is persisted);
- in a rule that reads a fed relation:
  ``negation``: a negated atom over a relation that changes over time (a fed
  relation, or any other that is not constant) -- a fact that has not arrived
  yet counts as absent;
  ``aggregation``: an aggregate head over a fed atom -- it counts what arrived;
  ``choice``: `choose` over a fed atom -- it picks among what arrived;
  ``tick``: a time-qualified atom (`r(..)@k`, entanglement `@T`) -- the tick at
  which a message arrives is the delay itself;
  ``transient``: a positive atom over a relation that neither only grows
  (`analysis/growth.py`) nor is constant, joined with another atom that is not
  constant -- whether the two meet depends on when the messages arrive.

With none of these (and no `choose`), every relation holds the same facts from
some tick on, and the same facts at some tick, under every delay. Sketch: the
rest of the program does not read the network, so it is the same in every run;
a fed relation holds at tick t a part that only grows, with the same limit in
every run (positive joins of growing or constant relations, negating constant
ones only, fed by persisted messages), plus a part that rules reading no fed
relation derive, the same in every run. A `choose` anywhere makes the program
non-confluent (a nondeterministic choice, seeded by the run's seed), though it
is a point of order only where it reads a fed relation. A constant relation has
no `.input` (its rows may be stamped with ticks), no fact at a tick (but tick 1
when persisted) and only `now` rules over constant relations. The test assumes
reliable delivery: omissions and crashes lose messages, which changes the
result of any program that sends some (the built-in `crash` relation itself is
constant, the same at every tick).

A negated relation's *guards* are the positive atoms of the rule (other than
its head) over relations derived from it through an aggregate, such as a
hand-written count of its facts: the analysis names them but never trusts them.
What it trusts is *counted completion* (`analysis/coordination.py`, the
pattern `rewrite --coordinate` adds): when the program holds that pattern for
a relation p exactly, its rules are no points of order, and a negation or
aggregation of p (or of a relation computed from p and constant relations at
the same tick) is none in a local rule that waits with `notin p_incomplete(L)`.

>>> from sparkdedalus import Program
>>> p = Program.parse('''.persist got
... got(M, X)@async :- e(L, X), peer(L, M);
... fresh(L, X) :- seen(L, X), notin got(L, X);
... e("a", 1); peer("a", "b"); seen("b", 1);''')
>>> verdict = confluence(p)
>>> verdict.confluent, [(x.async_relation, x.relation, x.kind) for x in verdict.points_of_order]
(False, [('got', 'got', 'negation')])
>>> print(verdict.points_of_order[0].rule_where)
<string>:3
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.analysis import coordination
from sparkdedalus.analysis.coordination import complete_with, part
from sparkdedalus.analysis.growth import growing_relations
from sparkdedalus.analysis.reasons import Reason
from sparkdedalus.analysis.roles import constant_relations
from sparkdedalus.checks.dependencies import dependency_graph
from sparkdedalus.checks.locations import location_terms
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.ast import Pos

KINDS = ("unpersisted", "negation", "aggregation", "choice", "tick", "transient")


@dataclass(frozen=True)
class PointOfOrder:
    """Where the arrival order of `async_relation`'s messages can change the
    result: `kind` (one of KINDS) applied to `relation` in rule `rule`."""

    async_relation: str
    relation: str
    kind: str
    rule: int  # index into Program.rules
    rule_pos: Pos
    pos: Pos  # the construct: the atom, the aggregate or the choose
    guards: tuple = ()  # relations of the rule's positive atoms derived from `relation`
    message: str = ""

    @property
    def rule_where(self) -> str:
        """The rule's `file:line`."""
        return f"{self.rule_pos.file}:{self.rule_pos.line}"

    @property
    def reason(self) -> Reason:
        return Reason(self.message, self.pos)

    def to_json(self) -> dict:
        return {"async_relation": self.async_relation, "relation": self.relation, "kind": self.kind,
                "rule": self.rule_where, "where": str(self.pos), "guards": list(self.guards),
                "message": self.message}


@dataclass(frozen=True)
class Confluence:
    confluent: bool
    points_of_order: tuple
    reasons: tuple

    def to_json(self) -> dict:
        return {"confluent": self.confluent, "points_of_order": [p.to_json() for p in self.points_of_order],
                "reasons": [r.to_json() for r in self.reasons]}


def confluence(program) -> Confluence:
    """The confluence verdict of `program` (see the module docstring)."""
    edges = dependency_graph(program.rules)
    successors: dict = {}
    for e in edges:
        successors.setdefault(e.source, set()).add(e.target)
    reach = {name: _reachable(name, successors) for name in program.relations}
    async_relations = sorted({r.head.name for r in program.rules_of("async")})
    sources = {name: tuple(a for a in async_relations if name in reach[a]) for name in program.relations}
    fed = {name for name, found in sources.items() if found}
    # relation -> the relations derived from it through an aggregate (candidate guards)
    counted = {name: frozenset().union(*[reach[r.head.name] for r in program.rules if r.is_aggregate
                                         and any(a.name in reach[name] for a in r.positive_atoms)])
               for name in program.relations}
    growing = growing_relations(program, frozenset(i.name for i in program.inputs))
    constant = constant_relations(program)
    counts = coordination.counted(program)
    pattern = set().union(*(indices for _, indices in counts.values()))

    points = []
    for rule in program.rules_of("async"):
        name = rule.head.name
        if name not in program.persisted:
            points.append(PointOfOrder(
                name, name, "unpersisted", rule.index, rule.pos, rule.head.pos, (),
                f"{name} is sent by an async rule but not persisted: its facts hold only at the tick they "
                f"arrive (guarded asynchrony: persist every async relation)"))
    for rule in program.rules:
        if rule.persistence or rule.index in pattern or not any(a.name in fed for a in
                                                                   rule.positive_atoms + rule.negated_atoms):
            continue
        points += [p for p in _rule_points(rule, fed, sources, counted, growing, constant)
                   if not _waits(p, rule, program, counts)]
    points = tuple(sorted(set(points), key=lambda p: (p.rule, p.pos, KINDS.index(p.kind), p.async_relation,
                                                      p.relation)))

    choices = [r for r in program.rules if r.choose is not None]
    reasons = [p.reason for p in points]
    reasons += [Reason(f"{r.head.name} uses choose: a nondeterministic choice, so the program may have "
                       f"several ultimate models", r.choose.pos)
                for r in choices if not any(p.rule == r.index and p.kind == "choice" for p in points)]
    if not reasons:
        reasons.append(Reason("no @async rule: the run does not depend on message delays" if not async_relations
                              else f"the async relations ({', '.join(async_relations)}) are persisted, and the "
                                   f"rules that read what they feed are positive joins of relations that "
                                   f"only grow"
                                   + "".join(f"; {p} is counted: the rules negating or aggregating what it feeds "
                                             f"wait for {part(p, 'incomplete')} to end" for p in sorted(counts))))
    return Confluence(not points and not choices, points, tuple(reasons))


def _waits(point, rule, program, counts) -> bool:
    """Whether `point` (negation or aggregation) is over a relation complete
    with a counted relation p whose messages it names, in a rule that waits
    with `notin p_incomplete(L)`, L the location of the (local) rule
    (analysis/coordination.py)."""
    owner = next((p for p in counts if point.async_relation in (part(p, "send"), part(p, "count_send"))), None)
    if (owner is None or point.kind not in ("negation", "aggregation") or not rule.positive_atoms
            or len(location_terms(rule)) != 1):
        return False
    gate = ast.Atom(part(owner, "incomplete"), (rule.positive_atoms[0].args[0],))
    return gate in rule.negated_atoms and (point.relation in complete_with(program, owner)
                                           or point.relation == gate.name)


def _reachable(start: str, successors: dict) -> frozenset:
    seen, todo = {start}, [start]
    while todo:
        for nxt in successors.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return frozenset(seen)


def _rule_points(rule, fed, sources, counted, growing, constant) -> list:
    """The points of order of one rule that reads a fed relation."""
    fed_atoms = [a for a in rule.positive_atoms + rule.negated_atoms if a.name in fed]
    via = ", ".join(sorted({a.name for a in fed_atoms}))
    rule_sources = sorted({s for a in fed_atoms for s in sources[a.name]})
    out = []

    def add(relation, kind, pos, message, guards=()):
        for s in (sources[relation] if relation in fed else rule_sources):
            out.append(PointOfOrder(s, relation, kind, rule.index, rule.pos, pos, guards,
                                    f"{rule.head.name} {message} (messages of {s})"))

    for literal in rule.body:
        if not isinstance(literal, ast.Negated):
            continue
        atom = literal.atom
        if atom.name in fed:
            message = f"negates {atom.name}, fed by an async rule: a fact that has not arrived yet counts as absent"
        elif atom.name not in constant:
            message = (f"negates {atom.name}, which changes over time, in a rule that reads {via}: "
                       f"what the negation sees depends on when the messages arrive")
        else:
            continue
        guards = tuple(sorted({a.name for a in rule.positive_atoms
                               if a.name not in (atom.name, rule.head.name) and a.name in counted[atom.name]}))
        if guards:
            message += (f"; {', '.join(guards)}, derived from {atom.name}, may be meant to guard it, but a "
                        f"hand-written completeness test cannot be verified: not trusted")
        add(atom.name, "negation", literal.pos, message, guards)
    changing = [a for a in rule.positive_atoms if a.name not in constant]
    for atom in rule.positive_atoms:
        if atom.name in fed and rule.is_aggregate:
            add(atom.name, "aggregation", rule.aggregates[0].pos,
                f"aggregates over {atom.name}: the aggregate sees only the facts that have arrived")
        if atom.name in fed and rule.choose is not None:
            add(atom.name, "choice", rule.choose.pos,
                f"chooses among facts of {atom.name}: the choice depends on which facts have arrived")
        others = sorted({a.name for a in changing if a is not atom})
        if atom.name not in growing and atom.name not in constant and others:
            add(atom.name, "transient", atom.pos,
                f"joins {atom.name}, which does not only grow (e.g. not persisted), with {', '.join(others)}: "
                f"whether they meet depends on when the messages arrive")
    for atom in rule.positive_atoms + rule.negated_atoms:
        if atom.time is not None:
            add(atom.name, "tick", atom.pos,
                f"reads {atom.name} at a tick (@) in a rule that reads {via}: "
                f"the tick at which a message arrives depends on the delays")
    return out
