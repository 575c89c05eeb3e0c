"""Range restriction: every variable in the head, a negated atom, a comparison,
a function relation's inputs or a choose is bound by a positive body atom, by
`@T` entanglement, by a function relation's outputs, or by an assignment-style
equality `Z == expr` whose right side is bound. (Variables that occur in negated
atoms only are existential: normalisation has already replaced them.)"""

from __future__ import annotations

from sparkdedalus.checks.normalize import is_wildcard
from sparkdedalus.checks.parts import Rule
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.ast import atom_vars, expr_vars
from sparkdedalus.syntax.diagnostics import Diagnostic
from udfs.registry import FUNCTIONS


def bound_variables(rule: Rule) -> set[str]:
    """The variables a rule body binds, following functions and assignments."""
    bound = {v.name for atom in rule.positive_atoms for v in atom_vars(atom)}
    changed = True
    while changed:
        changed = False
        for atom in rule.function_atoms:
            n_in = FUNCTIONS[atom.name].inputs
            if all(v.name in bound for arg in atom.args[:n_in] for v in expr_vars(arg)):
                for arg in atom.args[n_in:]:
                    if isinstance(arg, ast.Var) and arg.name not in bound:
                        bound.add(arg.name)
                        changed = True
        for cmp in rule.comparisons:
            target = assignment_target(cmp, bound)
            if target is not None:
                bound.add(target.name)
                changed = True
    return bound


def assignment_target(cmp: ast.Comparison, bound: set[str]) -> ast.Var | None:
    """For `Z == expr` (or `expr == Z`) with Z unbound and expr bound: Z."""
    if cmp.op != "==":
        return None
    for target, source in ((cmp.left, cmp.right), (cmp.right, cmp.left)):
        if isinstance(target, ast.Var) and target.name not in bound \
                and all(v.name in bound for v in expr_vars(source)):
            return target
    return None


def check_safety(rules: list[Rule]) -> list[Diagnostic]:
    errors = []
    for rule in rules:
        bound = bound_variables(rule)
        reported: set[str] = set()

        def need(vars_, where: str) -> None:
            for var in vars_:
                if var.name not in bound and var.name not in reported and not is_wildcard(var):
                    reported.add(var.name)
                    errors.append(Diagnostic(var.pos, "error",
                                             f"variable '{var.name}' {where} is not bound by a positive body atom"))

        for arg in rule.head.args:
            if isinstance(arg, ast.Aggregate):
                need(expr_vars(arg), "in an aggregate")
            else:
                need(expr_vars(arg), "in the head")
        for atom in rule.negated_atoms:
            need(atom_vars(atom), "in a negated atom")
        for cmp in rule.comparisons:
            need(expr_vars(cmp.left) + expr_vars(cmp.right), "in a comparison")
        for atom in rule.function_atoms:
            n_in = FUNCTIONS[atom.name].inputs
            need([v for arg in atom.args[:n_in] for v in expr_vars(arg)],
                 f"in the input of function relation '{atom.name}'")
        if rule.choose is not None:
            need(list(rule.choose.keys) + list(rule.choose.values), "in choose")
        if not rule.positive_atoms:
            errors.append(Diagnostic(rule.pos, "error",
                                     "a rule needs at least one positive body atom over a relation"))
    return errors
