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

Each decision is a step of `rewrite.plan` applied by `apply_step` without
the coordinated decouplings (`auto_plan` returns the steps too). Each rewrite
applied, and each component not partitioned, gets a note; a component named
that nothing applies to gets "nothing to apply".

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
from sparkdedalus.rewrite import RewriteError, partitioning
from sparkdedalus.rewrite.naming import name_part
from sparkdedalus.rewrite.plan import Step, apply_step, selectors
from sparkdedalus.rewrite.rule import Target
from sparkdedalus.rewrite.scope import relayed


def auto(program, components, n: int) -> tuple:
    """(the rewritten program, the notes); a `ValueError` names an unknown component."""
    program, notes, _ = auto_plan(program, components, n)
    return program, notes


def auto_plan(program, components, n: int) -> tuple:
    """(the rewritten program, the notes, the steps it applied): the
    decisions are `rewrite.plan` steps, each applied with `apply_step` (the
    decouplings without `coordinated`) as it is decided, since the next
    depends on the program it leaves; the steps applied again with
    `apply_plan(program, steps, components, coordinated=False)` give the same
    program."""
    for component in components:
        component_rules(program, component)
    notes, parts, scope, steps = [], {}, tuple(components), []
    for component in components:
        parts[component] = []
        own = {program.rules[i].head.name for i in component_rules(program, component)}
        while found := _decouple_largest(program, component, own, scope):
            program, step, scope, note = found
            parts[component].append(step.name)
            steps.append(step)
            notes.append(note)
        if found := _relay_rest(program, component, own, scope):
            program, step, scope, note = found
            parts[component].append(step.name)
            steps.append(step)
            notes.append(note)
    for component in components:
        applied = bool(parts[component])
        for name in (component, *parts[component]):
            verdict = partitioning.precondition(program, Target(name, partitions=n, scope=scope))
            if not verdict.applies:
                notes.append(f"{name} not partitioned: {verdict.reasons[0] if verdict.reasons else 'no policy'}")
                continue
            step = Step("partition", name, partitions=n)  # the partitioning rewrite: its precondition holds
            program, done, scope = apply_step(program, step, scope)
            steps.append(step)
            applied = True
            notes += done
        if not applied:
            notes.append(f"{component}: nothing to apply")
    return program, notes, steps


def _decouple_largest(program, component: str, own: set, scope: tuple):
    """(program, step, scope, note) of the largest candidate deriving
    relations of `own` only that a decoupling within `scope` applies to, or None."""
    candidates = [c for c in decouplings(program, component) if set(c.heads) <= own]
    for candidate in sorted(candidates, key=lambda c: -len(c.rules)):
        if done := _decouple(program, component, candidate.rules, scope, candidate.found_by):
            return done
    return None


def _relay_rest(program, component: str, own: set, scope: tuple):
    """(program, step, scope, note) of decoupling every rule of
    `component` deriving relations of `own` over more than constant relations
    when they read what a client outside `scope` sends, or events, which the
    component then relays, or None."""
    constant = constant_relations(program)
    rest = tuple(i for i in component_rules(program, component)
                 if program.rules[i].head.name in own - constant)
    if not rest or not relayed(program, scope, rest, reroutes=True):
        return None
    return _decouple(program, component, rest, scope, "the rest")


def _decouple(program, component: str, rules: tuple, scope: tuple, found_by: str):
    """(program, step, scope, note) of the step moving `rules` to a part
    named by its role (`rewrite.naming`) with the first coordination-free
    decoupling of `DECOUPLINGS` whose precondition holds (`rewrite.plan`),
    or None."""
    step = Step("decouple", component, selectors(program, component, rules), name_part(program, component, rules))
    try:
        rewritten, notes, grown = apply_step(program, step, scope, coordinated=False)
    except RewriteError:
        return None
    relay = sorted(relayed(program, scope, rules, reroutes=True))
    return rewritten, step, grown, f"{notes[0]} ({found_by}" + (f"; relayed: {', '.join(relay)})" if relay else ")")
