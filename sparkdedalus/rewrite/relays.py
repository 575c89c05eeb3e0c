"""Emptied relays: a component a decoupling leaves with nothing but
*forwarding* rules, a rule that passes the facts of one relation on, its
attributes or some of them, in any order, to another relation or location:
`r_NEW(L2, X1, X2)@async :- r(L, X1, X2), L2 == L + "/NEW"` (what
`rewrite.decouple` adds), `p(L, Y, X) :- r(L, X, Y)`, address and partition
computations aside (no comparison but one that names a new value); a rule
deriving a persisted relation keeps state (2PC's log), it does not forward. Rules over constant relations only do not count.

Such a component adds a hop and does no work: it is no decoupling (issue
49) unless it must stay the address its senders know, when they are
clients (`rewrite.scope.clients`: the paper's voting leader "only relays
commands to broadcasters", as the client cannot be changed) or events; a
decoupling redirects other senders, outside its scope too (`rewrite.scope`).
`emptied` names what it forwards that other components send, which they
could send to the new nodes themselves; the rules a decoupling adds (a
forwarding rule, a state machine's batches and seals) are no work of the
component's. The decoupling mechanism refuses a decoupling that leaves a
component so (`rewrite.decouplings`), so that
`--auto` leaves those rules where they are and two `--decouple`s that
together empty a component are refused.

>>> from sparkdedalus import Program
>>> p = Program.parse('component s { in(D, X)@async :- got(L, D, X); got(L, D, X) :- go(L, D, X); }\\n'
...     'component k { a_k2(L2, X)@async :- in(L, X), L2 == L + "/k2"; }\\n'
...     'component c { b(D, X)@async :- ask(L, D, X); }\\n'
...     'component j { b_j2(L2, X)@async :- b(L, X), L2 == L + "/j2"; }\\n'
...     'go("s", "k", 1)@1; ask("c", "j", 2)@1;')
>>> emptied(p, p, "k"), emptied(p, p, "j")  # s could send to k2; c is a client
(['in'], [])
>>> works(Program.parse('component k { n(L, count<X>) :- in(L, X); } in("k", 1)@1;'), "k")
True
"""

from __future__ import annotations

from sparkdedalus.analysis.guarded import follow
from sparkdedalus.analysis.roles import component_rules, constant_relations
from sparkdedalus.rewrite.scope import clients
from sparkdedalus.syntax import ast
from udfs.registry import FUNCTIONS

#: relations a forwarding rule may read besides the one it forwards (addresses)
ADDRESSING = frozenset(FUNCTIONS) | {"home"}


def forwarded(rule, persisted=frozenset()) -> str | None:
    """The relation `rule` forwards as it is (module docstring), or None;
    a rule deriving a relation of `persisted` keeps state, it does not forward."""
    stored = [a for a in rule.positive_atoms if a.name not in ADDRESSING]
    if rule.persistence or rule.aggregates or rule.negated_atoms or len(stored) != 1 or rule.head.name in persisted:
        return None
    given = set(stored[0].args)
    for lit in rule.body:  # comparisons only name addresses (`L2 == L + "/NEW"`): no filter
        if isinstance(lit, ast.Comparison) and not (lit.op == "==" and (lit.left not in given and isinstance(
                lit.left, ast.Var) or lit.right not in given and isinstance(lit.right, ast.Var))):
            return None
    passed = [a for a in rule.head.args[1:] if isinstance(a, ast.Var) and a in stored[0].args[1:]]
    return stored[0].name if len(passed) == len(rule.head.args) - 1 else None


def works(program, component: str, moved=()) -> bool:
    """Whether a rule of `component` that stays when the rules `moved`
    (indices) leave, with the persistence they take, does more than forward
    (module docstring), rules over constant relations only aside."""
    constant = constant_relations(program)
    rules = component_rules(program, component)
    gone = set(follow(program, rules, moved)) if moved else set()
    return any(forwarded(program.rules[i], program.persisted) is None for i in rules if i not in gone
               and not all(a.name in constant for a in program.rules[i].positive_atoms))


def emptied(program, rewritten, component: str, moved=()) -> list:
    """The relations that other components but clients send to `component`
    when, once the rules `moved` leave (`rewritten`: the program after),
    it only forwards (sorted; empty: it does work, or it relays only what
    clients and events give it, or nothing)."""
    if works(program, component, moved):
        return []
    read = {a.name for r in rewritten.rules if r.component == component and not r.persistence
            for a in r.positive_atoms}
    fixed = clients(rewritten)
    senders = {r.component for r in program.rules if r.delivery == "async" and r.component != component
               and r.component not in fixed}  # not the new ones
    return sorted(name for name in read if any(r.component in senders for r in rewritten.defining_rules(name)))
