"""Location discipline: a rule whose body atoms (positive and negated) and
non-async head share one location term is local; any other rule is a global
observer rule (a warning; an error under `check --strict`)."""

from __future__ import annotations

from sparkdedalus.checks.normalize import is_wildcard
from sparkdedalus.checks.parts import Rule
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.diagnostics import Diagnostic
from sparkdedalus.syntax.printer import format_expr


def location_terms(rule: Rule) -> list[str]:
    """The distinct location terms a rule touches within its tick, in order."""
    atoms = rule.positive_atoms + rule.negated_atoms
    if rule.delivery != "async":
        atoms = [rule.head] + atoms
    terms: list[str] = []
    for atom in atoms:
        if atom.args and not isinstance(atom.args[0], ast.Aggregate):
            arg = atom.args[0]
            term = "_" if isinstance(arg, ast.Var) and is_wildcard(arg) else format_expr(arg)
            if term not in terms:
                terms.append(term)
    return terms


def check_locations(rules: list[Rule], strict: bool) -> list[Diagnostic]:
    found = []
    for rule in rules:
        terms = location_terms(rule)
        if len(terms) > 1:
            found.append(Diagnostic(
                rule.pos, "error" if strict else "warning",
                f"rule reads or writes several locations in one tick ({', '.join(terms)}): "
                f"a global observer rule, never decoupled or partitioned"))
    return found
