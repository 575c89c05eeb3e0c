"""The scope of a rewrite (scaling paper, 5.1: "the client is outside the
scope of our rewrites, and any rewrite that requires modifying the client
cannot be applied"): the components whose rules it may change. A rewrite
with a scope leaves the rules of every other component as they are written,
and the *events* as they are given (`outside_change` names the first rule
or event it changes otherwise), and a decoupling relays through the
component what the clients and events give the moved rules (`relayed`)
instead of redirecting it.

An event is a fact given at a tick of a relation that is not persisted:
something the environment (a client the program does not spell out) sends
a node at that tick, like 2PC's `begin("coord", "t1")@1`. A persisted
relation given at a tick is a node's own state that changes (voting's
`opinion("p3", "b1", "yes")@4`), which a rewrite may move with its node.

A partitioning (`reroutes`) routes every sender of the component by the key
of what it sends (B.1), and a decoupling redirects the senders of the moved
rules' inputs to the new node (3.1): both may rewrite the sending rules of
components outside the scope, but not those of a *client* (`clients`), which
the paper leaves outside every rewrite (5.1): voting's leader is not
partitioned, as its client would have to pick a partition, and relays the
client's requests to the broadcasters.

>>> from sparkdedalus import Program
>>> p = Program.parse('component c { q(L, X)@async :- ask(C, L, X); }\\n'
...                   'component k { a(L, X)@async :- q(L, X), to(L, D); b(L, X)@async :- go(L, X), to(L, D); }\\n'
...                   'go("k", 1)@2;')
>>> sorted(relayed(p, ("k",), [1, 2]))
['go', 'q']
>>> outside_change(p, p, ("k",)) is None
True
>>> sorted(clients(p))  # k's rule b sends what the event go gives; no fact of ask is given
['k']
>>> sorted(clients(Program.parse('component c { q(L, X)@async :- ask(C, L, X); }\\nask("c", "k", 1)@1;')))
['c']
"""

from __future__ import annotations

from sparkdedalus.analysis.roles import constant_relations
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.syntax.printer import format_atom, format_rule


def events(program) -> list:
    """The facts given at a tick of relations that are not persisted, as written (`rel(..)@T`)."""
    return [f"{format_atom(f.atom)}@{f.tick}" for f in program.facts
            if f.tick is not None and f.atom.name not in program.persisted]


def clients(program) -> frozenset:
    """The components that send requests of their own: an `@async` rule of
    theirs reads only relations no rule derives, one of them given at ticks
    (an event, a timed fact, an `.input`) or read at a time `@T` (voting's
    `request(L, C, B)@async :- ask(C, L, B)`, `ask` given at ticks; a
    closed-loop client's `client(C, L, K)@T`)."""
    derived = {r.head.name for r in program.rules if not r.persistence}
    constant = constant_relations(program)

    def origin(rule) -> bool:
        atoms = rule.positive_atoms
        return rule.delivery == "async" and bool(atoms) and all(a.name not in derived for a in atoms) and \
            any(a.time is not None or a.name not in constant for a in atoms)
    return frozenset(r.component for r in program.rules if origin(r))


def _written(program, scope, whose="component") -> list:
    return [f"rewrite the rule '{format_rule(s.rule)}' of {whose} {s.component!r}"
            for s in source_rules(program) if s.component not in scope] + \
        [f"change the event '{event}'" for event in events(program)]


def outside_change(program, rewritten, scope, reroutes=False) -> str | None:
    """Why `rewritten` leaves the scope: the first rule of a component
    outside `scope` (None: no scope), or the first event, that it changes,
    adds or drops. A component the rewrite creates (partial partitioning's
    coordinator) is in its scope; with `reroutes`, every component but the
    `clients` too (module docstring)."""
    if scope is None:
        return None
    scope = (*scope, *sorted(set(rewritten.components) - set(program.components)))
    allowed, whose = scope, "component"
    if reroutes:
        allowed, whose = (*scope, *(c for c in program.components if c not in clients(program))), "the client"
    before, after = _written(program, allowed, whose), _written(rewritten, allowed, whose)
    for what in [b for b in before if b not in after] + [a for a in after if a not in before]:
        return f"it would {what}, outside the scope ({', '.join(scope)})"
    return None


def relayed(program, scope, rules, reroutes=False) -> set:
    """The relations the `rules` (indices) read that come from outside
    `scope`: sent by an `@async` rule of a component outside it, or given as
    events: a decoupling forwards them. With `reroutes`, only what the
    `clients` send and the events: a partitioning routes the other senders."""
    read = {a.name for i in rules for a in program.rules[i].positive_atoms + program.rules[i].negated_atoms}
    outside = clients(program) if reroutes else None
    sent = {r.head.name for r in program.rules if r.delivery == "async" and r.component not in scope
            and (outside is None or r.component in outside)}
    return (sent | {f.atom.name for f in program.facts if f.tick is not None and f.atom.name not in program.persisted}) \
        & read
