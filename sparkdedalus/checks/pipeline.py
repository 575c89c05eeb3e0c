"""The checks in order, from loaded source to the fields of a checked
`Program` (`check`); `Program.build` makes the Program of them. See
`sparkdedalus.checks` for the order."""

from __future__ import annotations

import json
import re

from sparkdedalus.checks.dependencies import dependency_graph
from sparkdedalus.checks.stratification import stratify
from sparkdedalus.checks.lattices import recursive_aggregates
from sparkdedalus.checks.aggregates import check_aggregates
from sparkdedalus.checks.arity import atom_occurrences, check_arities
from sparkdedalus.checks.gc_directives import gc_directives
from sparkdedalus.checks.locations import check_locations
from sparkdedalus.checks.normalize import expand_persist, is_auxiliary, normalize
from sparkdedalus.checks.parts import BUILTIN_RELATIONS, Relation
from sparkdedalus.checks.safety import check_safety
from sparkdedalus.checks.types import infer_types
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.diagnostics import Diagnostic, DiagnosticError
from udfs.registry import FUNCTIONS


def check(loaded, strict: bool = False) -> dict:
    """Check `loaded` (from `syntax.loader`); raise `DiagnosticError` with all
    errors and warnings, or return the fields of the `Program` (its warnings
    among them) that `Program.build` makes."""
    norm = normalize(loaded.statements, strict, loaded.sealed)
    diagnostics: list[Diagnostic] = list(norm.errors)
    arities, errors = check_arities(norm)
    diagnostics += errors
    diagnostics += expand_persist(norm, arities)
    diagnostics += check_safety(norm.rules)
    diagnostics += check_aggregates(norm.rules)
    types, errors = infer_types(norm, arities)
    diagnostics += errors
    diagnostics += check_locations(norm.rules, strict)
    diagnostics += _undefined(norm)
    for inp in norm.inputs:
        if inp.name not in arities:
            diagnostics.append(Diagnostic(inp.pos, "error",
                                          f"'.input {inp.name}': declare its columns with .decl {inp.name}(...)"))
    relations = _relations(norm, arities, types)
    lattices, edges, errors = recursive_aggregates(list(relations), norm.rules, dependency_graph(norm.rules))
    diagnostics += errors
    strata, errors = stratify(list(relations), norm.rules, edges, lattices)
    diagnostics += errors
    persisted = frozenset(r.head.name for r in norm.rules if r.persistence)
    annotations, errors = gc_directives(loaded.units, relations, persisted, loaded.gc_annotations)
    diagnostics += errors
    if any(d.is_error for d in diagnostics):
        raise DiagnosticError(_unique(diagnostics), loaded.sources)
    outputs = tuple(o.name for o in norm.outputs) or tuple(r for r in relations if not relations[r].auxiliary)
    return dict(
        relations=relations, rules=tuple(norm.rules), facts=tuple(norm.facts), inputs=tuple(norm.inputs),
        outputs=outputs, strata=strata, components=tuple(norm.components),
        persisted=persisted, warnings=tuple(sorted(_unique(diagnostics))),
        homes=tuple(dict.fromkeys(home_directives(loaded.units) + loaded.homes)), gc_annotations=annotations, sources=loaded.sources)


_HOME = re.compile(r'//\s*@home\s+("(?:\\.|[^"\\])*")\s*$')


def home_directives(units) -> tuple:
    """The suffixes of the `// @home "/x"` comments: a location ending in
    "/x" was split off its home (`home(L2, L)`) by a rewrite."""
    found = []
    for unit in units:
        for comment in unit.comments:
            match = _HOME.match(comment.text)
            if match and json.loads(match[1]) not in found:
                found.append(json.loads(match[1]))
    return tuple(found)


def _unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(set(diagnostics))


def _relations(norm, arities: dict, types: dict) -> dict:
    first_use = {}
    for atom in atom_occurrences(norm):
        first_use.setdefault(atom.name, atom.pos)
    relations = {}
    for name in list(norm.decls) + [n for n in first_use if n not in norm.decls] + list(BUILTIN_RELATIONS):
        if name in FUNCTIONS or name in relations or name not in arities:
            continue
        decl = norm.decls.get(name)
        if decl is not None:
            columns = tuple(c.name for c in decl.columns)
        elif name in BUILTIN_RELATIONS:
            columns = BUILTIN_RELATIONS[name][0]
        else:
            columns = ("loc",) + tuple(f"c{i}" for i in range(1, arities[name]))
        if name in BUILTIN_RELATIONS and name not in first_use:
            continue
        relations[name] = Relation(name, columns, types[name], decl.pos if decl else first_use.get(name, ast.NOWHERE),
                                   declared=decl is not None, auxiliary=_auxiliary(norm, name, first_use))
    return relations


def _auxiliary(norm, name: str, first_use: dict) -> str:
    """What a relation the front end made is for ("" for the user's)."""
    if is_auxiliary(name):
        return f"what the negated atom at {first_use.get(name, ast.NOWHERE)} reads"
    return norm.auxiliary.get(name, "")


def _undefined(norm) -> list[Diagnostic]:
    """Relations read but never defined are empty; say so once per relation."""
    defined = {r.head.name for r in norm.rules} | {f.atom.name for f in norm.facts} \
        | {i.name for i in norm.inputs} | set(BUILTIN_RELATIONS) | set(FUNCTIONS)
    warned: set = set()
    found = []
    for rule in sorted(norm.rules, key=lambda r: r.pos):
        for atom in rule.positive_atoms + rule.negated_atoms:
            if atom.name not in defined and atom.name not in warned:
                warned.add(atom.name)
                found.append(Diagnostic(atom.pos, "warning",
                                        f"relation '{atom.name}' is used but never defined; it is empty"))
    return found
