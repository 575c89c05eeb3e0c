"""The scope of a rewrite (scaling paper, 5.1: "the client is outside the
scope of our rewrites, and any rewrite that requires modifying the client
cannot be applied"): the components whose rules it may change. A rewrite
with a scope leaves the rules of every other component as they are written
(`outside_change` names the first rule it changes otherwise), and a decoupling relays through the
component what they send to the moved rules (`relayed`) instead of
redirecting their messages.

>>> from sparkdedalus import Program
>>> p = Program.parse('component c { q(L, X)@async :- ask(C, L, X); }\\n'
...                   'component k { a(L, X)@async :- q(L, X), to(L, D); }')
>>> sorted(relayed(p, ("k",), [1]))
['q']
>>> outside_change(p, p, ("k",)) is None
True
"""

from __future__ import annotations

from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.syntax.printer import format_rule


def _written(program, scope) -> list:
    return [(s.component, format_rule(s.rule)) for s in source_rules(program) if s.component not in scope]


def outside_change(program, rewritten, scope) -> str | None:
    """Why `rewritten` leaves the scope: the first rule of a component
    outside `scope` (None: no scope) that it changes, adds or drops."""
    if scope is None:
        return None
    before, after = _written(program, scope), _written(rewritten, scope)
    for (component, rule) in [b for b in before if b not in after] + [a for a in after if a not in before]:
        return (f"it would rewrite the rule '{rule}' of component {component!r}, outside the scope "
                f"({', '.join(scope)})")
    return None


def relayed(program, scope, rules) -> set:
    """The relations the `rules` (indices) read that an `@async` rule of a
    component outside `scope` sends: a decoupling forwards them."""
    read = {a.name for i in rules for a in program.rules[i].positive_atoms + program.rules[i].negated_atoms}
    return {r.head.name for r in program.rules if r.delivery == "async" and r.component not in scope
            and r.head.name in read}
