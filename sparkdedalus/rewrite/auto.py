"""Every rewrite the analyses allow for some components (`rewrite --auto`,
docs/rewrites.md), in this order:

1. *decouple*: for each component named, in turn, move the largest candidate
   of `analysis.decoupling.decouplings` that a coordination-free rewrite of
   `DECOUPLINGS` applies to (ties: the analysis's order; the first rewrite
   that applies, as `--decouple` picks it) to a new component named by its
   role (`rewrite.naming`; `C_2`, `C_3`, .. when it has none), and again on
   what stays, until no candidate applies. The
   state machine and asymmetric decouplings are left to `--decouple`: the
   sequencing they add leaves parts that cannot be partitioned. Candidates
   are sets of the component's own rules: the forwarding rules a decoupling
   adds (`rewrite.decouple`) do not move. The parts split off are not split
   again. A decoupling that would leave the component forwarding only what
   other components but clients send is not taken (`rewrite.relays`): the
   rules stay where they are. Then, when the rules of the component that
   remain (but those over constant relations) read what a client sends, or
   events, they move to one more part, and the component relays that to it
   (the paper's voting leader). What other components send does not count:
   the decoupling redirects and the partitioning routes them
   (`rewrite.scope`), not the clients.
2. *partition*: each component named, then its parts, on `n` partitions
   when the partitioning rewrite takes it (co-hashing or dependencies;
   partial partitioning adds a coordinator: `--partition` applies it).

The scope (`rewrite.scope`) is the components named and their parts: no
rewrite changes the rules of another component nor the events, but a
decoupling redirects the senders of what the moved rules read and a
partitioning routes the senders of the component it partitions, unless one
is a client (`rewrite.scope.clients`): a component that gets a client's
requests or events is not partitioned.

Each rewrite applied, and each component not partitioned, gets a note; a
component named that nothing applies to gets "nothing to apply".

>>> from sparkdedalus import Program
>>> p = Program.parse('component k { a(L, X)@async :- in(L, X); b(L, X) :- in2(L, X), c(L); }\\n'
...                   'component s { in2(D, X)@async :- go(L, D, X); }\\nin("n", 1)@1; go("s", "n", 2)@1;')
>>> q, notes = auto(p, ["k"], 2)
>>> print("\\n".join(notes))
k -> in_handlers: mutually independent decoupling of a (independent part; relayed: in)
k -> in2_handlers: mutually independent decoupling of b (independent part; relayed: in2)
k not partitioned: it would rewrite the rule 'in2(D, X)@async :- go(L, D, X);' of the client 's', outside the scope (k, in_handlers, in2_handlers)
in_handlers on 2 partitions (co-hashing): in_in_handlers by c1
in2_handlers not partitioned: component 'in2_handlers' has a partial policy: it cannot be partitioned without coordination (partial_partition)
"""

from __future__ import annotations

from sparkdedalus.analysis.decoupling import decouplings
from sparkdedalus.analysis.roles import component_rules, constant_relations
from sparkdedalus import rewrite as table
from sparkdedalus.rewrite import partitioning
from sparkdedalus.rewrite.naming import name_part
from sparkdedalus.rewrite.rule import Target
from sparkdedalus.rewrite.scope import relayed


def auto(program, components, n: int) -> tuple:
    """(the rewritten program, the notes); a `ValueError` names an unknown component."""
    for component in components:
        component_rules(program, component)
    notes, parts, scope = [], {}, list(components)
    for component in components:
        parts[component] = []
        own = {program.rules[i].head.name for i in component_rules(program, component)}
        while step := _decouple_largest(program, component, own, scope):
            program, name, note = step
            parts[component].append(name)
            scope.append(name)
            notes.append(note)
        if step := _relay_rest(program, component, own, scope):
            program, name, note = step
            parts[component].append(name)
            scope.append(name)
            notes.append(note)
    for component in components:
        applied = bool(parts[component])
        for name in (component, *parts[component]):
            target = Target(name, partitions=n, scope=tuple(scope))
            verdict = partitioning.precondition(program, target)
            if not verdict.applies:
                notes.append(f"{name} not partitioned: {verdict.reasons[0] if verdict.reasons else 'no policy'}")
                continue
            program, done = partitioning.apply(program, target)
            applied = True
            notes += done
        if not applied:
            notes.append(f"{component}: nothing to apply")
    return program, notes


def _decouple_largest(program, component: str, own: set, scope: list):
    """(program, new component, note) of the largest candidate deriving
    relations of `own` only that a decoupling within `scope` applies to, or None."""
    candidates = [c for c in decouplings(program, component) if set(c.heads) <= own]
    for candidate in sorted(candidates, key=lambda c: -len(c.rules)):
        if done := _decouple(program, component, candidate.rules, scope, candidate.found_by):
            return done
    return None


def _relay_rest(program, component: str, own: set, scope: list):
    """(program, new component, note) of decoupling every rule of
    `component` deriving relations of `own` over more than constant relations
    when they read what a client outside `scope` sends, or events, which the
    component then relays, or None."""
    constant = constant_relations(program)
    rest = tuple(i for i in component_rules(program, component)
                 if program.rules[i].head.name in own - constant)
    if not rest or not relayed(program, scope, rest, reroutes=True):
        return None
    return _decouple(program, component, rest, scope, "the rest")


def _decouple(program, component: str, rules: tuple, scope: list, found_by: str):
    """(program, new component, note) of the first coordination-free
    rewrite of `DECOUPLINGS` whose precondition holds on moving `rules` to
    a part named by its role (`rewrite.naming`; as `--decouple` picks it),
    or None."""
    name = name_part(program, component, rules)
    target = Target(component, rules, name, scope=tuple(scope) + (name,))
    relay = sorted(relayed(program, scope, rules, reroutes=True))
    for rewrite in table.DECOUPLINGS:
        if not rewrite.coordinated and rewrite.precondition(program, target).applies:
            program, notes = rewrite.apply(program, target)
            return program, name, f"{notes[0]} ({found_by}" + (f"; relayed: {', '.join(relay)})" if relay else ")")
    return None
