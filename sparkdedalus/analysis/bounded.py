"""Counts that only a threshold can reach: `count<X>` of the distinct members
of a fixed set, compared for equality with the set's size (the scaling
paper's `committed :- numVotes(N), numReplicas(N)`, replicas counted against
the number of replicas). The count never exceeds that size, so it equals the
size exactly when it reaches it: `N == M` is then the threshold `N >= M`.

- A relation is *fixed* when it has facts true at every tick only: no rule,
  no `.input`, no fact at a tick.
- A column of a relation is *drawn from* a column of a fixed relation S when
  each of its values is one of S's there: S itself; or every rule deriving
  the relation takes that column from a variable some positive body atom
  binds at a column drawn from S, and its facts have values of S there (the
  greatest such assignment, so a relation carried to the next tick, or sent
  on, keeps what it is drawn from).
- The *bound* of `count<X>` is the least number of distinct values of such a
  column of S, over the body atoms binding X: the count never exceeds it.
- The *floor* of a column is the least value it may hold: for a fixed
  relation, the least of its facts' integers; for a *size relation*
  `Q(K.., count<Y>) :- S(..)` over a fixed S, the count of its smallest group.

>>> from sparkdedalus import Program
>>> p = Program.parse('''replica("l", "r1"); replica("l", "r2");
... numReplicas(L, count<R>) :- replica(L, R);
... ask(R, L, V)@async :- request(L, V), replica(L, R);
... vote(L, R, V)@async :- ask(R, L, V);
... votes(L, V, R) :- vote(L, R, V);
... n(L, V, count<R>) :- votes(L, V, R);''')
>>> sorted(drawn_from(p, "votes", 2)), count_bound(p, p.rules[4], p.rules[4].head.args[2])
([('replica', 1)], 2)
>>> floor(p, "numReplicas", 1), floor(p, "votes", 2)
(2, None)
"""

from __future__ import annotations

from sparkdedalus.program import BUILTIN_RELATIONS
from sparkdedalus.syntax import ast
from udfs.registry import FUNCTIONS


def fixed_relations(program) -> frozenset:
    """Relations with facts true at every tick only (module docstring)."""
    derived = {r.head.name for r in program.rules}
    timed = {f.atom.name for f in program.facts if f.tick is not None}
    given = {f.atom.name for f in program.facts}
    return frozenset(given - derived - timed - {i.name for i in program.inputs})


def _values(program, relation: str, column: int) -> set:
    return {f.row[column] for f in program.facts if f.atom.name == relation}


def _claims(program, relation: str, column: int, fixed) -> dict:
    """(relation, column) -> (per rule deriving it: the (relation, column)s
    binding the head's variable there, the values of its facts), for every
    claim the given one reaches; a fixed relation's claims map to None."""
    out, todo = {}, [(relation, column)]
    inputs = {i.name for i in program.inputs} | set(BUILTIN_RELATIONS)
    while todo:
        claim = todo.pop()
        if claim in out:
            continue
        name, col = claim
        if name in fixed:
            out[claim] = None
            continue
        per_rule = [] if name not in inputs else [[]]
        for rule in program.defining_rules(name):
            if rule.persistence:
                continue
            arg = rule.head.args[col]
            alternatives = [(a.name, j) for a in rule.positive_atoms if a.name not in FUNCTIONS
                            for j, x in enumerate(a.args) if isinstance(arg, ast.Var) and isinstance(x, ast.Var)
                            and x.name == arg.name]
            per_rule.append(alternatives)
            todo += alternatives
        out[claim] = (per_rule, _values(program, name, col))
    return out


def drawn_from(program, relation: str, column: int) -> frozenset:
    """The (fixed relation, column)s that column `column` of `relation` is drawn from."""
    fixed = fixed_relations(program)
    claims = _claims(program, relation, column, fixed)
    every = frozenset((s, j) for s in fixed for j in range(program.relations[s].arity))
    domain = {claim: frozenset([claim]) if how is None else every for claim, how in claims.items()}
    changed = True
    while changed:  # the greatest assignment closed under the rules
        changed = False
        for claim, how in claims.items():
            if how is None:
                continue
            per_rule, values = how
            found = domain[claim]
            for alternatives in per_rule:
                found = found & frozenset().union(*(domain[a] for a in alternatives))
            found = frozenset(s for s in found if values <= _values(program, *s))
            if found != domain[claim]:
                domain[claim], changed = found, True
    return domain[(relation, column)]


def count_bound(program, rule, aggregate: ast.Aggregate) -> int | None:
    """The most `count<X>` (`aggregate`, in the head of `rule`) can count, or None."""
    if aggregate.func != "count" or aggregate.var is None:
        return None
    sizes = [len(_values(program, *source)) for atom in rule.positive_atoms if atom.name not in FUNCTIONS
             for j, x in enumerate(atom.args) if isinstance(x, ast.Var) and x.name == aggregate.var.name
             for source in drawn_from(program, atom.name, j)]
    return min(sizes) if sizes else None


def floor(program, relation: str, column: int) -> int | None:
    """The least value column `column` of `relation` may hold, or None."""
    if relation in fixed_relations(program):
        values = _values(program, relation, column)
        numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
        return min(numbers) if numbers and len(numbers) == len(values) else None
    return _size_floor(program, relation, column)


def _size_floor(program, relation: str, column: int) -> int | None:
    rules = program.defining_rules(relation)
    if len(rules) != 1 or rules[0].delivery != "now" or len(rules[0].body) != 1 or relation in \
            {f.atom.name for f in program.facts} or relation in {i.name for i in program.inputs}:
        return None
    rule, = rules
    atom, counted = rule.body[0], rule.head.args[column]
    if not isinstance(atom, ast.Atom) or atom.name not in fixed_relations(program) or atom.time is not None \
            or not isinstance(counted, ast.Aggregate) or counted.func != "count" or counted.var is None:
        return None
    names = [a.name if isinstance(a, ast.Var) else None for a in atom.args]
    keys = [a for a in rule.head.args if a is not counted]
    if None in names or len(set(names)) != len(names) or len(rule.aggregates) != 1 \
            or not all(isinstance(k, ast.Var) and k.name in names for k in keys):
        return None
    at = [names.index(k.name) for k in keys]
    groups: dict = {}
    for f in program.facts:
        if f.atom.name == atom.name:
            groups.setdefault(tuple(f.row[i] for i in at), set()).add(f.row[names.index(counted.var.name)])
    return min(len(members) for members in groups.values()) if groups else None
