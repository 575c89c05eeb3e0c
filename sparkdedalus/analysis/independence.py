"""Independence of two rule sets of a component (scaling paper, 3.1 and A.1).

The paper: C1 is independent of C2 when (a) they reference mutually exclusive
relations and (b) C1 does not reference C2's outputs; mutual independence is
independence both ways, and lets C2 move to another node with no message
between the two (Redirection rewrite). References are the non-constant
relations read (`roles.rule_set_roles`).

For one-way independence this module keeps (b) and relaxes (a) to what the
paper's rewrites need: C1 reads nothing C2 derives. A relation both read is
fine when C2 does not derive it: C1 forwards it to C2 (the Decoupling rewrite,
A.3.1), as in the paper's own examples (3.2: the inconsistency rule reads
`acks` like the certificate rules do; 5.2: the voting leader relays requests
to the broadcasters). Mutual independence is the paper's, exactly: neither
reads what the other derives, and no relation is read by both (an input can
be redirected to one node only).

>>> from sparkdedalus import Program
>>> p = Program.parse('a(N, X) :- in(N, X); b(N, X)@async :- a(N, X); c(N, X) :- in(N, X);'
...                   'in("n", 1)@1;')
>>> independence(p, [0, 1], [2]).independent, independence(p, [2], [0, 1]).independent
(True, True)
>>> m = mutual_independence(p, [0, 1], [2])
>>> m.independent, str(m.reasons[0])
(False, '<string>:1:59: both read in: an input can be redirected to one of them only')
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.analysis.reasons import Reason
from sparkdedalus.analysis.roles import rule_set_roles
from sparkdedalus.syntax import ast
from udfs.registry import FUNCTIONS


@dataclass(frozen=True)
class Independence:
    independent: bool
    reasons: tuple

    def to_json(self) -> dict:
        return {"independent": self.independent, "reasons": [r.to_json() for r in self.reasons]}


def rule_label(rule) -> str:
    """How reasons name a rule: its head relation and line."""
    return f"the rule for {rule.head.name} (line {rule.pos.line})"


def body_reads(rule) -> list[tuple]:
    """(relation, position) of every stored relation the rule's body reads,
    positive or negated, in order."""
    out = []
    for lit in rule.body:
        if isinstance(lit, ast.Negated):
            out.append((lit.atom.name, lit.pos))
        elif isinstance(lit, ast.Atom) and lit.name not in FUNCTIONS:
            out.append((lit.name, lit.pos))
    return out


def _reads(program, indices, relations) -> list[tuple]:
    """(rule, relation, position) of every read of `relations` by the rules `indices`."""
    return [(program.rules[i], name, pos) for i in sorted(indices)
            for name, pos in body_reads(program.rules[i]) if name in relations]


def _dependence(program, first, second) -> list[Reason]:
    one = rule_set_roles(program, first)
    two = rule_set_roles(program, second)
    return [Reason(f"{rule_label(rule)} reads {name}, which the other rules derive", pos)
            for rule, name, pos in _reads(program, one.rules, one.references & two.derived)]


def independence(program, first, second) -> Independence:
    """Whether the rules `first` (indices) are independent of the rules
    `second`: they read nothing `second` derives."""
    reasons = _dependence(program, first, second)
    if reasons:
        return Independence(False, tuple(reasons))
    return Independence(True, (Reason("the rules read nothing the other rules derive"),))


def mutual_independence(program, first, second) -> Independence:
    """Whether the two rule sets are mutually independent (paper, 3.1)."""
    shared = rule_set_roles(program, first).references & rule_set_roles(program, second).references
    reasons = _dependence(program, first, second) + _dependence(program, second, first)
    seen = set()
    for rule, name, pos in _reads(program, second, shared):
        if name not in seen:
            seen.add(name)
            reasons.append(Reason(f"both read {name}: an input can be redirected to one of them only", pos))
    if reasons:
        return Independence(False, tuple(reasons))
    return Independence(True, (Reason("neither reads what the other derives, and no relation is read by both"),))
