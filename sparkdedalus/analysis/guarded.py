"""GC'd persistence written as a rule (scaling paper, A.2.1): a relation kept
until a monotone condition holds,

    allVotes(L, V, R)@next :- allVotes(L, V, R), notin committed(L, V);

is a persisted relation with a garbage-collection condition, as if written
`.persist allVotes` with `// @gc allVotes(L, V, R) when committed(L, V)`.
The rule is a *guarded persistence rule* of r when it is an `@next` rule
whose body is the head's own atom (distinct variables, the current tick) and
`notin` atoms only, each over a *stable* relation c (persisted by an identity
rule, and not collected by an annotation: once `c(ȳ)` holds it holds
forever) on variables of the head or wildcards; r has no identity
persistence and no other such rule. The analyses read r as persisted
(monotonicity) and the rule as its persistence, not as a negation.

Where the rule goes when its component is split (`follow`): with the
relation's persistence. That is the new node when the moved rules derive r
and the rules that stay do not, or when the moved rules read r and, but for
the guard, the rules that stay do not (the component then only forwards r,
and the moved rules keep it, guard and all); else the component.

>>> from sparkdedalus import Program
>>> p = Program.parse('''.persist committed
... allVotes(L, V, R) :- vote(L, R, V);
... allVotes(L, V, R)@next :- allVotes(L, V, R), notin committed(L, V);
... n(L, V, count<R>) :- allVotes(L, V, R);
... committed(L, V) :- n(L, V, 3);''')
>>> g = guarded_persistence(p)["allVotes"]
>>> g.rule, g.text()
(1, 'allVotes(L, V, R) until committed(L, V)')
>>> follow(p, [0, 1, 2, 3], [2, 3]), follow(p, [0, 1, 2, 3], [0, 2])
((1, 2, 3), (0, 1, 2))
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.checks.normalize import is_wildcard
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.printer import format_literal


@dataclass(frozen=True)
class GuardedPersistence:
    """The guarded persistence rule `rule` (index) of `relation`: its facts
    matching `target` are carried while no atom of `condition` holds."""

    relation: str
    rule: int
    target: ast.Atom
    condition: tuple  # the atoms negated, over stable relations

    def text(self) -> str:
        """`r(x̄) until c(ȳ), ...`."""
        return f"{format_literal(self.target)} until {', '.join(format_literal(c) for c in self.condition)}"


def guarded_persistence(program) -> dict:
    """relation -> `GuardedPersistence`, for every guarded persistence rule
    of `program` (module docstring)."""
    stable = program.persisted - {a.target.name for a in program.gc_annotations}
    found: dict = {}
    for rule in program.rules:
        if rule.delivery == "next" and not rule.persistence and rule.head.name not in program.persisted:
            condition = _guard(rule, stable)
            if condition is not None:
                found.setdefault(rule.head.name, []).append(GuardedPersistence(rule.head.name, rule.index,
                                                                               rule.head, condition))
    return {name: rules[0] for name, rules in found.items() if len(rules) == 1}


def _guard(rule, stable):
    """The negated atoms of `rule` when it is a guarded persistence rule, else None."""
    head, positive = rule.head, rule.positive_atoms
    names = [a.name for a in head.args if isinstance(a, ast.Var)]
    if len(names) != len(head.args) or len(set(names)) != len(names) or any(is_wildcard(a) for a in head.args):
        return None
    if len(positive) != 1 or positive[0].name != head.name or positive[0].args != head.args \
            or positive[0].time is not None or rule.choose is not None:
        return None
    negated = rule.negated_atoms
    if not negated or len(rule.body) != 1 + len(negated):
        return None
    for atom in negated:
        own = {v.name for v in ast.atom_vars(atom) if not is_wildcard(v)}
        if atom.name not in stable or atom.name == head.name or atom.time is not None or not own <= set(names):
            return None
    return tuple(negated)


def guard_rules(program) -> dict:
    """rule index -> relation, for the guarded persistence rules."""
    return {g.rule: name for name, g in guarded_persistence(program).items()}


def follow(program, rules, split) -> tuple:
    """`split` (indices, among `rules`: a component's) with each guarded
    persistence rule of `rules` put where its relation's persistence goes
    (module docstring), sorted."""
    guards = {i: name for i, name in guard_rules(program).items() if i in set(rules)}
    split = set(split) - set(guards)
    stay = set(rules) - split - set(guards)

    def reads(indices, name):
        return any(name in {a.name for a in program.rules[i].positive_atoms + program.rules[i].negated_atoms}
                   for i in indices)

    for index, name in guards.items():
        deriving = {r.index for r in program.defining_rules(name)} & set(rules) - {index}
        moves = deriving and deriving <= split
        forwarded = not deriving & split and reads(split, name) and not reads(stay, name)
        if moves or forwarded:
            split.add(index)
    return tuple(sorted(split))
