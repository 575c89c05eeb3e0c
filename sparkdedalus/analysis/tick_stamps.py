"""Relations whose every fact holds the tick that derived it.

A rule *stamps* its head at position p when it delivers now and the head's
argument p is the variable of one of its positive atoms' `@T` (entanglement:
T is the current tick). A relation that only such rules derive (persistence
aside), all at the same position, and that has no facts in the program nor an
`.input`, gains at tick t facts holding t only: none of them held before t (a
log or history: `log(L, X, T) :- in(L, X)@T;`). An engine that appends a
relation's new facts to its carried state need not compare these with it
(spark/appended.py). Facts a run is given for such a relation (an `edb=`
frame) are the caller's to leave out.

>>> from sparkdedalus import Program
>>> p = Program.parse('.persist log\\n.persist seen\\n.persist late\\nlog(L, K, T) :- seed(L, K)@T;\\n'
...                   'seen(L, K) :- seed(L, K);\\nlate(L, T) :- seed(L, _)@T;\\nlate(L, 0) :- seed(L, _);')
>>> sorted(stamped_by_tick(p))
['log']
"""

from __future__ import annotations

from sparkdedalus.syntax import ast


def stamp_positions(rule) -> set:
    """The head positions at which `rule` puts the tick that derives it.

    >>> from sparkdedalus import Program
    >>> [stamp_positions(r) for r in Program.parse('h(L, T, X, T) :- a(L, X)@T; g(L, T)@next :- a(L, _)@T;').rules]
    [{1, 3}, set()]
    """
    if rule.delivery != "now":
        return set()
    ticks = {atom.time.var.name for atom in rule.positive_atoms if isinstance(atom.time, ast.VarTime)}
    return {i for i, arg in enumerate(rule.head.args) if isinstance(arg, ast.Var) and arg.name in ticks}


def stamped_by_tick(program) -> frozenset:
    """The relations whose facts each hold the tick that derived them (see the module)."""
    given = {f.atom.name for f in program.facts} | {decl.name for decl in program.inputs}
    found = set()
    for name in program.idb - given:
        rules = [r for r in program.defining_rules(name) if not r.persistence]
        positions = set.intersection(*(stamp_positions(r) for r in rules)) if rules else set()
        if positions:
            found.add(name)
    return frozenset(found)
