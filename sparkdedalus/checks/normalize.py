"""Turn loaded statements into program rules and facts: desugar `seal` heads
(checks/seal.py), rename wildcards,
project existential variables out of negated atoms, expand `.persist`, collect
declarations, reject what the later checks assume away (expressions inside body
atoms, wildcards in heads, redefined built-ins)."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field, replace

from sparkdedalus.checks.seal import desugar_seals
from sparkdedalus.checks.parts import BUILTIN_RELATIONS, Fact, Rule
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.ast import atom_vars, expr_vars
from sparkdedalus.syntax.diagnostics import Diagnostic
from udfs.registry import FUNCTIONS


@dataclass
class Normalized:
    rules: list[Rule] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    decls: dict = field(default_factory=dict)  # name -> ast.Decl
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    persist_decls: list = field(default_factory=list)  # (ast.PersistDecl, component)
    components: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # and the warnings about existential variables
    sealed: dict = field(default_factory=dict)  # position of a seal rule -> the sealed relation
    auxiliary: dict = field(default_factory=dict)  # relation made by a seal -> what it is for


def normalize(placed, strict: bool = False, sealed=None) -> Normalized:
    """`strict`: a variable that occurs in negated atoms only is an error, not
    a warning; `sealed` (position -> relation) adds to the seals desugared here."""
    desugared = desugar_seals(placed)
    out = Normalized(errors=desugared.errors, sealed={**(sealed or {}), **desugared.sealed},
                     auxiliary=desugared.auxiliary)
    fresh = itertools.count(1)
    projections = itertools.count(1)
    for item in desugared.placed:
        stmt, component = item.statement, item.component
        if component not in out.components:
            out.components.append(component)
        if isinstance(stmt, ast.Rule):
            _check_head(stmt.head, out.errors)
            body = tuple(_rename_wildcards(lit, fresh, out.errors) for lit in stmt.body)
            body, auxiliary = _project_existentials(stmt.head, body, fresh, projections,
                                                    "error" if strict else "warning", out.errors)
            out.rules.append(Rule(stmt.head, stmt.delivery, body, component, len(out.rules), stmt.pos,
                                  sealed=out.sealed.get(stmt.pos, "")))
            for head, atom in auxiliary:
                out.rules.append(Rule(head, "now", (atom,), component, len(out.rules), head.pos))
        elif isinstance(stmt, ast.Fact):
            _check_defined_name(stmt.atom, out.errors)
            out.facts.append(Fact(stmt.atom, stmt.tick, component, stmt.pos))
        elif isinstance(stmt, ast.Decl):
            previous = out.decls.get(stmt.name)
            if previous is not None and previous != stmt:
                out.errors.append(Diagnostic(stmt.pos, "error",
                                             f"relation '{stmt.name}' is declared differently at {previous.pos}"))
            out.decls.setdefault(stmt.name, stmt)
        elif isinstance(stmt, ast.InputDecl):
            out.inputs.append(stmt)
        elif isinstance(stmt, ast.OutputDecl):
            out.outputs.append(stmt)
        elif isinstance(stmt, ast.PersistDecl):
            out.persist_decls.append((stmt, component))
    return out


def expand_persist(norm: Normalized, arities: dict) -> list[Diagnostic]:
    """Add `r(X1..Xn)@next :- r(X1..Xn);` for every `.persist r` (once per relation)."""
    errors = []
    done = {r.head.name for r in norm.rules if is_identity_next(r)}
    for decl, component in norm.persist_decls:
        if decl.name in done:
            continue
        arity = arities.get(decl.name)
        if arity is None:
            errors.append(Diagnostic(decl.pos, "error",
                                     f"'.persist {decl.name}': relation '{decl.name}' is never used or declared"))
            continue
        done.add(decl.name)
        args = tuple(ast.Var(f"X{i}", decl.pos) for i in range(1, arity + 1))
        atom = ast.Atom(decl.name, args, None, decl.pos)
        norm.rules.append(Rule(atom, "next", (atom,), component, len(norm.rules), decl.pos, persistence=True,
                               sealed=norm.sealed.get(decl.pos, "")))
    norm.rules[:] = [_mark_persistence(r) for r in norm.rules]
    return errors


def is_identity_next(rule: Rule) -> bool:
    """`r(X1..Xn)@next :- r(X1..Xn);` with distinct variables in the same order."""
    if rule.delivery != "next" or len(rule.body) != 1 or not isinstance(rule.body[0], ast.Atom):
        return False
    body = rule.body[0]
    if body.name != rule.head.name or body.time is not None or body.arity != rule.head.arity:
        return False
    names = [a.name if isinstance(a, ast.Var) else None for a in body.args]
    heads = [a.name if isinstance(a, ast.Var) else None for a in rule.head.args]
    return None not in names and names == heads and len(set(names)) == len(names)


def _mark_persistence(rule: Rule) -> Rule:
    if rule.persistence or not is_identity_next(rule):
        return rule
    return replace(rule, persistence=True)


def _check_defined_name(atom: ast.Atom, errors: list) -> None:
    if atom.name in FUNCTIONS:
        errors.append(Diagnostic(atom.pos, "error",
                                 f"'{atom.name}' is a built-in function relation and cannot be defined"))
    elif atom.name in BUILTIN_RELATIONS:
        errors.append(Diagnostic(atom.pos, "error",
                                 f"'{atom.name}' is filled by the failure model and cannot be defined"))


def _check_head(head: ast.Atom, errors: list) -> None:
    _check_defined_name(head, errors)
    for arg in head.args:
        if isinstance(arg, ast.Wildcard):
            errors.append(Diagnostic(arg.pos, "error", "'_' cannot appear in a rule head"))
    if head.args and isinstance(head.args[0], ast.Aggregate):
        errors.append(Diagnostic(head.args[0].pos, "error", "the location (first argument) cannot be an aggregate"))


def _rename_wildcards(lit, fresh, errors: list):
    if isinstance(lit, ast.Atom):
        return _atom_args(lit, fresh, errors)
    if isinstance(lit, ast.Negated):
        return ast.Negated(_atom_args(lit.atom, fresh, errors), lit.pos)
    if isinstance(lit, ast.Comparison):
        for side in (lit.left, lit.right):
            if _has_wildcard(side):
                errors.append(Diagnostic(lit.pos, "error", "'_' cannot appear in a comparison"))
                break
    return lit


def _atom_args(atom: ast.Atom, fresh, errors: list) -> ast.Atom:
    args = []
    for arg in atom.args:
        if isinstance(arg, ast.Wildcard):
            arg = _wildcard(fresh, arg.pos)
        elif not isinstance(arg, (ast.Var, ast.Const)):
            errors.append(Diagnostic(getattr(arg, "pos", atom.pos), "error",
                                     f"an argument of body atom '{atom.name}' must be a variable or a constant; "
                                     f"bind the expression with a comparison, e.g. Z == X + 1"))
        args.append(arg)
    return ast.Atom(atom.name, tuple(args), atom.time, atom.pos)


def _has_wildcard(expr) -> bool:
    if isinstance(expr, ast.Wildcard):
        return True
    if isinstance(expr, ast.BinOp):
        return _has_wildcard(expr.left) or _has_wildcard(expr.right)
    if isinstance(expr, ast.Neg):
        return _has_wildcard(expr.operand)
    return False


def is_wildcard(var: ast.Var) -> bool:
    return var.name.startswith("_#")


def unwild(atom: ast.Atom) -> ast.Atom:
    """`atom` with its renamed wildcards (`_#k`) written `_` again."""
    args = tuple(ast.Wildcard(a.pos) if isinstance(a, ast.Var) and is_wildcard(a) else a for a in atom.args)
    return ast.Atom(atom.name, args, atom.time, atom.pos)


def unwild_literal(lit):
    """A body literal with its renamed wildcards written `_` again."""
    if isinstance(lit, ast.Negated):
        return ast.Negated(unwild(lit.atom), lit.pos)
    return unwild(lit) if isinstance(lit, ast.Atom) else lit


#: Auxiliary relations are named `rel-existsK`: `-` cannot occur in a source name.
AUXILIARY_MARK = "-exists"


def is_auxiliary(relation: str) -> bool:
    """A projection relation made by `_project_existentials`."""
    return AUXILIARY_MARK in relation


def _project_existentials(head, body: tuple, fresh, projections, severity: str, diagnostics: list):
    """Variables in negated atoms only (nowhere else in the rule) are existential:
    one diagnostic per variable at its first occurrence. In a negated atom where
    each occurs once, they become wildcards; an atom repeating one (`!s(X, P, P)`)
    is negated through an auxiliary projection `s-existsK(X) :- s(X, P, P);`
    whose location is the atom's. Returns the new body and the (head, body atom)
    pairs of the auxiliary rules."""
    elsewhere = {v.name for v in _vars_outside_negation(head, body)}
    reported: set = set()
    new_body, auxiliary = [], []
    for lit in body:
        if not isinstance(lit, ast.Negated):
            new_body.append(lit)
            continue
        atom = lit.atom
        found = [a for a in atom.args if isinstance(a, ast.Var) and not is_wildcard(a) and a.name not in elsewhere]
        for var in found:
            if var.name not in reported:
                reported.add(var.name)
                diagnostics.append(Diagnostic(var.pos, severity,
                                              f"variable '{var.name}' occurs only in negated atoms, so it is "
                                              f"existential (it matches any value); a typo?"))
        counts = Counter(v.name for v in found)

        def existential(arg) -> bool:
            return isinstance(arg, ast.Var) and (is_wildcard(arg) or arg.name in counts)

        if all(n == 1 for n in counts.values()):
            args = tuple(_wildcard(fresh, a.pos) if existential(a) else a for a in atom.args)
            new_body.append(ast.Negated(ast.Atom(atom.name, args, atom.time, atom.pos), lit.pos))
            continue
        location = atom.args[0]
        kept: list = []  # the atom's other bound variables, once each
        for var in atom_vars(atom):
            if not existential(var) and var != location and var not in kept:
                kept.append(var)
        name = f"{atom.name}{AUXILIARY_MARK}{next(projections)}"
        auxiliary.append((ast.Atom(name, (location, *kept), None, atom.pos), atom))
        negated_location = _wildcard(fresh, location.pos) if existential(location) else location
        new_body.append(ast.Negated(ast.Atom(name, (negated_location, *kept), None, atom.pos), lit.pos))
    return tuple(new_body), auxiliary


def _vars_outside_negation(head, body: tuple) -> list:
    """The variables of a rule outside negated atoms' arguments (a negated atom's
    `@T` counts as outside)."""
    found = [v for arg in head.args for v in expr_vars(arg)]
    for lit in body:
        if isinstance(lit, ast.Atom):
            found += atom_vars(lit)
        elif isinstance(lit, ast.Negated) and isinstance(lit.atom.time, ast.VarTime):
            found.append(lit.atom.time.var)
        elif isinstance(lit, ast.Comparison):
            found += expr_vars(lit.left) + expr_vars(lit.right)
        elif isinstance(lit, ast.Choose):
            found += list(lit.keys) + list(lit.values)
    return found


def _wildcard(fresh, pos: ast.Pos) -> ast.Var:
    return ast.Var(f"_#{next(fresh)}", pos)
