"""Relation roles: EDB / IDB for the program, and for each component (in the
sense of the scaling paper) its inputs — relations its rules read but do not
derive — and its outputs — relations it derives but does not read. Identity
persistence rules (`r@next :- r`) neither read nor derive for this purpose:
they carry state, they do not connect rules."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ComponentRoles:
    name: str
    derived: frozenset
    inputs: frozenset
    outputs: frozenset


def component_roles(program) -> list[ComponentRoles]:
    out = []
    for name in program.components:
        rules = [r for r in program.rules if r.component == name and not r.persistence]
        derived = frozenset(r.head.name for r in rules)
        read = frozenset(a.name for r in rules for a in r.positive_atoms + r.negated_atoms)
        out.append(ComponentRoles(name, derived, read - derived, derived - read))
    return out
