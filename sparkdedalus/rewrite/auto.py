"""Every rewrite the analyses allow for some components (`rewrite --auto`,
docs/rewrites.md), in this order:

1. *decouple*: for each component named, in turn, move the largest candidate
   of `analysis.decoupling.decouplings` that a coordination-free rewrite of
   `DECOUPLINGS` applies to (ties: the analysis's order; the first rewrite
   that applies, as `--decouple` picks it) to a new component `C_2` (`C_3`,
   .. when taken), and again on what stays, until no candidate applies. The
   state machine and asymmetric decouplings are left to `--decouple`: the
   sequencing they add leaves parts that cannot be partitioned. Candidates
   are sets of the component's own rules: the forwarding rules a decoupling
   adds (`rewrite.decouple`) do not move. The parts split off are not split
   again.
2. *partition*: each component named, then its parts, on `n` partitions
   when the partitioning rewrite takes it (co-hashing or dependencies;
   partial partitioning adds a coordinator: `--partition` applies it).

Each rewrite applied, and each component not partitioned, gets a note; a
component named that nothing applies to gets "nothing to apply".

>>> from sparkdedalus import Program
>>> p = Program.parse('component k { a(L, X)@async :- in(L, X); b(L, X) :- in2(L, X), c(L); }\\n'
...                   'component s { in2(D, X)@async :- go(L, D, X); }\\nin("n", 1)@1; go("s", "n", 2)@1;')
>>> q, notes = auto(p, ["k"], 2)
>>> print("\\n".join(notes))
k -> k_2: mutually independent decoupling of a (independent part)
k not partitioned: component 'k' has a partial policy: it cannot be partitioned without coordination (partial_partition)
k_2 on 2 partitions (co-hashing): in by c1
"""

from __future__ import annotations

from sparkdedalus.analysis.decoupling import decouplings
from sparkdedalus.analysis.roles import component_rules
from sparkdedalus.rewrite import applicable, partitioning
from sparkdedalus.rewrite.decouplings import new_name
from sparkdedalus.rewrite.rule import Target


def auto(program, components, n: int) -> tuple:
    """(the rewritten program, the notes); a `ValueError` names an unknown component."""
    for component in components:
        component_rules(program, component)
    notes, parts = [], {}
    for component in components:
        parts[component] = []
        own = {program.rules[i].head.name for i in component_rules(program, component)}
        while step := _decouple_largest(program, component, own):
            program, name, note = step
            parts[component].append(name)
            notes.append(note)
    for component in components:
        applied = bool(parts[component])
        for name in (component, *parts[component]):
            verdict = partitioning.precondition(program, Target(name, partitions=n))
            if not verdict.applies:
                notes.append(f"{name} not partitioned: {verdict.reasons[0] if verdict.reasons else 'no policy'}")
                continue
            program, done = partitioning.apply(program, Target(name, partitions=n))
            applied = True
            notes += done
        if not applied:
            notes.append(f"{component}: nothing to apply")
    return program, notes


def _decouple_largest(program, component: str, own: set):
    """(program, new component, note) of the largest candidate deriving
    relations of `own` only that a decoupling applies to, or None."""
    name = new_name(program, component)
    candidates = [c for c in decouplings(program, component) if set(c.heads) <= own]
    for candidate in sorted(candidates, key=lambda c: -len(c.rules)):
        for rewrite in [r for r in applicable(program, component, candidate.rules, name) if not r.coordinated][:1]:
            rewritten, notes = rewrite.apply(program, Target(component, candidate.rules, name))
            return rewritten, name, f"{notes[0]} ({candidate.found_by})"
    return None
