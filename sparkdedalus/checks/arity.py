"""A relation has one arity everywhere; every relation has a location argument."""

from __future__ import annotations

from sparkdedalus.checks.parts import BUILTIN_RELATIONS
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.diagnostics import Diagnostic
from udfs.registry import FUNCTIONS


def atom_occurrences(norm) -> list[ast.Atom]:
    """Every atom of the program (facts, heads, body atoms), in source order."""
    atoms = [f.atom for f in norm.facts]
    for rule in norm.rules:
        atoms.append(rule.head)
        for lit in rule.body:
            if isinstance(lit, ast.Atom):
                atoms.append(lit)
            elif isinstance(lit, ast.Negated):
                atoms.append(lit.atom)
    return sorted(atoms, key=lambda a: a.pos)


def check_arities(norm) -> tuple[dict, list[Diagnostic]]:
    """Returns relation -> (arity, where it was fixed), and the mismatches."""
    errors: list[Diagnostic] = []
    fixed: dict[str, tuple[int, ast.Pos | None]] = {}
    for name, decl in norm.decls.items():
        if not decl.columns:
            errors.append(Diagnostic(decl.pos, "error", f"relation '{name}' needs at least a location column"))
        fixed[name] = (len(decl.columns), decl.pos)
    for name, (columns, _types) in BUILTIN_RELATIONS.items():
        fixed.setdefault(name, (len(columns), None))
    for name, function in FUNCTIONS.items():
        fixed[name] = (function.arity, None)
    for atom in atom_occurrences(norm):
        if atom.arity == 0 and atom.name not in FUNCTIONS:
            errors.append(Diagnostic(atom.pos, "error",
                                     f"relation '{atom.name}' needs at least one argument: its location"))
            continue
        known = fixed.get(atom.name)
        if known is None:
            fixed[atom.name] = (atom.arity, atom.pos)
        elif known[0] != atom.arity:
            where = f"at {known[1]}" if known[1] else "(built-in)"
            errors.append(Diagnostic(atom.pos, "error",
                                     f"relation '{atom.name}' has {atom.arity} argument(s) here but {known[0]} {where}"))
    return {name: arity for name, (arity, _) in fixed.items()}, errors
