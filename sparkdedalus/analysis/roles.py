"""Relation roles: EDB / IDB for the program, and for each component (in the
sense of the scaling paper, section 2.4) or any set of its rules: the rules,
the relations derived, the *references* (the non-constant relations read),
the inputs — relations read but not derived — and the outputs — relations
derived but not read. Identity persistence rules (`r@next :- r`) neither read
nor derive for this purpose: they carry state, they do not connect rules.

*Constant* relations hold the same facts at every tick and location: no
`.input`, no fact at a tick (tick 1 allowed when the relation is persisted),
and only same-tick rules over constant relations (like `numStorage(L,
count<N>) :- storageNode(L, N)`); `crash` is constant within a run. Like the paper's EDB and function relations, any node
may hold or recompute them, so they are no references: the decoupling
analyses ignore them.

>>> from sparkdedalus import Program
>>> p = Program.parse('peer("a", "b"); n(L, count<P>) :- peer(L, P); '
...                   'out(P, X)@async :- in(L, X), peer(L, P), n(L, K); in("a", 1)@1;')
>>> sorted(constant_relations(p))
['n', 'peer']
>>> r = rule_set_roles(p, [1])
>>> sorted(r.references), sorted(r.inputs), sorted(r.outputs)
(['in'], ['in', 'n', 'peer'], ['out'])
"""

from __future__ import annotations

from dataclasses import dataclass



@dataclass(frozen=True)
class ComponentRoles:
    name: str
    derived: frozenset
    inputs: frozenset  # read, not derived (constant relations included)
    outputs: frozenset  # derived, not read
    rules: tuple = ()  # indices of the rules, persistence rules excluded
    references: frozenset = frozenset()  # non-constant relations read (paper, 2.4)

    @property
    def referenced_inputs(self) -> frozenset:
        """The paper's inputs: referenced relations the rules do not derive."""
        return self.references - self.derived


def constant_relations(program, outside=frozenset()) -> frozenset:
    """Relations with the same facts at every tick (see the module docstring);
    relations in `outside` are taken to change, like inputs."""
    inputs = {i.name for i in program.inputs} | set(outside)
    timed = {f.atom.name for f in program.facts
             if f.tick is not None and not (f.tick == 1 and f.atom.name in program.persisted)}
    constant = set(program.relations) - inputs - timed
    changed = True
    while changed:  # the greatest set closed under the conditions
        changed = False
        for name in sorted(constant):
            for rule in program.defining_rules(name):
                atoms = rule.positive_atoms + rule.negated_atoms
                if not rule.persistence and (rule.delivery != "now" or any(
                        a.time is not None or a.name not in constant for a in atoms)):
                    constant.discard(name)
                    changed = True
                    break
    return frozenset(constant)

def rule_set_roles(program, indices, name: str = "", constant=None) -> ComponentRoles:
    """The roles of the rules `indices` (persistence rules among them are
    skipped); `constant`: `constant_relations(program)`, if already known."""
    constant = constant_relations(program) if constant is None else constant
    rules = [program.rules[i] for i in sorted(set(indices)) if not program.rules[i].persistence]
    derived = frozenset(r.head.name for r in rules)
    read = frozenset(a.name for r in rules for a in r.positive_atoms + r.negated_atoms)
    return ComponentRoles(name, derived, read - derived, derived - read,
                          tuple(r.index for r in rules), read - constant)


def component_rules(program, component: str) -> tuple:
    """Indices of the component's rules, persistence rules excluded; a
    `ValueError` names an unknown component."""
    if component not in program.components:
        raise ValueError(f"no component {component!r} (components: {', '.join(program.components)})")
    return tuple(r.index for r in program.rules if r.component == component and not r.persistence)


def component_roles(program) -> list[ComponentRoles]:
    constant = constant_relations(program)
    return [rule_set_roles(program, component_rules(program, name), name, constant)
            for name in program.components]
