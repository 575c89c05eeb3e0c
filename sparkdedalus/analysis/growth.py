"""Relations that only grow from tick to tick, and the rules an engine may
evaluate on a tick's new facts only (semi-naive across ticks).

A relation *grows* when its facts at tick t-1 are among its facts at tick t,
for every t: it is persisted (an identity `@next` rule carries it), or every
source of it grows: facts true at every tick, EDB, and `now` or `@next` rules
without negation, aggregation or `choose` whose body atoms all read growing
relations at the current tick (no `@T` or `@k`: a rule reading the clock can
derive something new from old facts). Messages and facts of one tick do not grow,
nor does a relation that takes min or max over its own recursion (checks/lattices.py):
a better value replaces a fact.
A persisted relation that garbage collection thins (analysis/gc.py: facts are
dropped at the end of a tick) does not grow either, nor what is derived from it.

A `now` rule is *differential* when its head grows and every atom of its body,
positive or negated, reads a growing relation at the current tick, with no
aggregation and no `choose`. At tick t such a rule derives nothing new from
the facts of tick t-1 (they were derived then and the head kept them), so
evaluating it with one positive atom reading only the atom's new facts, for
each positive atom in turn, finds everything new. A negated growing relation
is allowed: a fact it blocks now was either blocked or derived at t-1, and the
head keeps it; this holds only when the head is carried, which growing heads
are (see `carried_relations`).

A persisted lattice (min or max over its own recursion) starts tick t with its
best rows of t-1, a fixpoint of the rules over the facts of t-1: a candidate
they derive from old facts only is no better than those rows, so the rules of
the lattice that read only growing relations and the lattice itself are
differential too (shortest distances kept up to date as edges arrive).

>>> from sparkdedalus import Program
>>> p = Program.parse('''edge("a", 1, 2); .persist seen
... path(L, X, Y) :- edge(L, X, Y); path(L, X, Z) :- path(L, X, Y), edge(L, Y, Z);
... seen(L, X)@next :- path(L, X, _); ping(L, X)@async :- seen(L, X);''')
>>> sorted(growing_relations(p))
['edge', 'path', 'seen']
>>> sorted(carried_relations(p, growing_relations(p)))
['path', 'seen']
>>> [p.rules[i].head.name for i in sorted(differential_rules(p, growing_relations(p)))]
['path', 'path']
>>> sorted(growing_relations(p, collected={"seen"}))
['edge', 'path']
"""

from __future__ import annotations


def _reads_growing_now(atoms, growing) -> bool:
    return all(atom.time is None and atom.name in growing for atom in atoms)


def _grows_from(rule, growing) -> bool:
    """Whether `rule`'s output at tick t includes its output at t-1 when the
    relations in `growing` grow."""
    return (rule.delivery in ("now", "next") and not rule.is_aggregate and rule.choose is None
            and not rule.negated_atoms and _reads_growing_now(rule.positive_atoms, growing))


def growing_relations(program, stamped=frozenset(), collected=frozenset()) -> frozenset:
    """The relations that only grow (see the module docstring). `stamped`:
    relations with rows of one tick only from `.input` files (a tick column);
    `collected`: persisted relations whose facts garbage collection drops."""
    one_tick = {f.atom.name for f in program.facts if f.tick is not None} | set(stamped)
    growing = set(program.relations) - set(collected) - set(program.lattices)  # a better value replaces a fact
    changed = True
    while changed:  # the greatest set closed under the conditions
        changed = False
        for name in sorted(growing - program.persisted):
            rules = [r for r in program.defining_rules(name) if not r.persistence]
            if name in one_tick or not all(_grows_from(r, growing) for r in rules):
                growing.discard(name)
                changed = True
    return frozenset(growing)


def carried_relations(program, growing) -> frozenset:
    """Relations whose final state at tick t-1 an engine may start tick t with:
    the persisted ones and the growing relations some rule derives."""
    return frozenset(program.persisted | (growing & program.idb))


def differential_rules(program, growing, collected=frozenset()) -> frozenset:
    """Indices of the `now` rules an engine may evaluate on new facts only:
    those of the module docstring, and those of a persisted lattice
    (checks/lattices.py) that GC does not thin, without negation, whose body
    atoms read growing relations or that lattice itself at the current tick."""
    kept = {n for n in program.lattices if n in program.persisted and n not in collected}
    return frozenset(
        r.index for r in program.rules
        if r.delivery == "now" and r.choose is None and (
            (r.head.name in growing and not r.is_aggregate
             and _reads_growing_now(r.positive_atoms + r.negated_atoms, growing))
            or (r.head.name in kept and not r.negated_atoms
                and _reads_growing_now(r.positive_atoms, growing | {r.head.name}))))
