"""Functional rule sets (scaling paper, 3.3 and A.3): rules that act like a
"map" on individual facts, so they may run on another node with no state.
The paper's condition: (1) no aggregation or negation (nor `choose`, nor a
read at a given tick, which this dialect adds), and (2) each rule body reads
at most one IDB relation. Here "IDB" means non-constant (`roles`): constant
relations and function relations (`sign`, `hash`) are like the paper's EDB.

>>> from sparkdedalus import Program
>>> p = Program.parse('signed(L, V, S) :- request(L, V), sign(V, S);'
...                   'both(L, V) :- request(L, V), seen(L, V); request("l", "x")@1; seen("l", "x")@1;')
>>> functional(p, [0]).functional
True
>>> [str(r) for r in functional(p, [1]).reasons]
['<string>:1:75: the rule for both (line 1) reads a second IDB relation, seen (after request)']
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.analysis.independence import rule_label
from sparkdedalus.analysis.monotonicity import nonmonotone_constructs
from sparkdedalus.analysis.reasons import Reason
from sparkdedalus.analysis.roles import constant_relations, rule_set_roles


@dataclass(frozen=True)
class Functional:
    functional: bool
    reasons: tuple

    def to_json(self) -> dict:
        return {"functional": self.functional, "reasons": [r.to_json() for r in self.reasons]}


def functional(program, rules) -> Functional:
    """Whether the rules `rules` (indices) are functional (see the module docstring)."""
    constant = constant_relations(program)
    reasons = []
    for i in rule_set_roles(program, rules, constant=constant).rules:
        rule = program.rules[i]
        reasons += nonmonotone_constructs(rule)
        idb = [(a.name, a.pos) for a in rule.positive_atoms if a.name not in constant]
        reasons += [Reason(f"{rule_label(rule)} reads a second IDB relation, {name} (after {idb[0][0]})", pos)
                    for name, pos in idb[1:]]
    if reasons:
        return Functional(False, tuple(reasons))
    return Functional(True, (Reason("no aggregation or negation; at most one IDB relation per body"),))
