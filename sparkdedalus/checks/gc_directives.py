"""`// @gc rel(args) when condition` comments: the user's garbage-collection
conditions on persisted relations (docs/gc.md, docs/language.md section 12).

The directive says: at the end of a tick, a fact of the persisted relation
`rel` that matches `rel(args)` is not carried to the next tick when the
condition (body literals, as in a rule body, over the state of that tick)
holds. The front end checks it like a rule, with file:line:col errors.

>>> from sparkdedalus import Program
>>> p = Program.parse('''.persist vote
... // @gc vote(L, B, P) when done(L, B)
... .persist done
... done(L, B) :- vote(L, B, _);''')
>>> [(a.target.name, len(a.condition), str(a.pos)) for a in p.gc_annotations]
[('vote', 1, '<string>:2:8')]
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass

from sparkdedalus.checks.normalize import is_wildcard
from sparkdedalus.checks.safety import assignment_target
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.diagnostics import Diagnostic, DiagnosticError
from sparkdedalus.syntax.parser import parse_text

_GC = re.compile(r"//(\s*)@gc\b")
_WHEN = re.compile(r"\bwhen\b")


@dataclass(frozen=True)
class GcAnnotation:
    """`// @gc target when condition`: `condition` is a tuple of body literals
    (atoms, negated atoms, comparisons); wildcards are fresh `_#gcK` variables."""

    target: ast.Atom
    condition: tuple
    pos: ast.Pos


def gc_directives(units, relations: dict, persisted, given=()) -> tuple[tuple, list[Diagnostic]]:
    """The `// @gc` annotations of `units`, then the `GcAnnotation`s `given`
    (a rewritten program's), and the errors found in them."""
    found, errors = [], []
    for annotation in given:
        problems = _check(annotation, relations, persisted)
        errors += problems
        found += [] if problems else [annotation]
    fresh = itertools.count(1)
    for unit in units:
        for comment in unit.comments:
            if _GC.match(comment.text):
                try:
                    annotation = _parse(comment, fresh)
                except DiagnosticError as exc:
                    errors += exc.diagnostics
                    continue
                problems = _check(annotation, relations, persisted)
                errors += problems
                if not problems:
                    found.append(annotation)
    return tuple(found), errors


def _parse(comment: ast.Comment, fresh) -> GcAnnotation:
    """Parse the directive as the rule `target :- condition;`, keeping columns:
    `//...@gc` becomes blanks and `when` becomes `:-  `."""
    pos, text = comment.pos, comment.text
    match = _GC.match(text)
    rest = text[match.end():]
    when = _WHEN.search(rest)
    if when is None:
        raise _error(pos, "@gc: expected '// @gc rel(args) when condition'")
    rest = rest[:when.start()] + ":-  " + rest[when.end():]
    source = " " * (pos.col - 1 + match.end()) + rest + ";"
    try:
        unit = parse_text(source, pos.file)
    except DiagnosticError as exc:
        raise DiagnosticError([Diagnostic(ast.Pos(pos.file, pos.line, d.pos.col), d.severity, f"@gc: {d.message}")
                               for d in exc.diagnostics]) from None
    rule = unit.statements[0] if len(unit.statements) == 1 else None
    if not isinstance(rule, ast.Rule) or rule.delivery != "now":
        raise _error(pos, "@gc: expected '// @gc rel(args) when condition'")
    at = ast.Pos(pos.file, pos.line, rule.head.pos.col)
    renamed = _rename_wildcards((rule.head,) + rule.body, fresh)
    return GcAnnotation(renamed[0], renamed[1:], at)


def _check(annotation: GcAnnotation, relations: dict, persisted) -> list[Diagnostic]:
    pos, target = annotation.pos, annotation.target
    if target.name not in relations:
        return [Diagnostic(pos, "error", f"@gc: unknown relation '{target.name}'")]
    if target.name not in persisted:
        return [Diagnostic(pos, "error", f"@gc: '{target.name}' is not persisted: only facts that a "
                                         f"persistence rule carries can be collected")]
    if target.time is not None or not all(isinstance(a, (ast.Var, ast.Const)) for a in target.args):
        return [Diagnostic(pos, "error", "@gc: the collected atom takes variables and constants only")]
    atoms = [target]
    for literal in annotation.condition:
        if isinstance(literal, ast.Choose):
            return [Diagnostic(pos, "error", "@gc: choose is not allowed in a condition")]
        atom = literal.atom if isinstance(literal, ast.Negated) else literal
        if isinstance(atom, ast.Atom):
            if atom.time is not None:
                return [Diagnostic(pos, "error", "@gc: a condition reads the current tick only (no '@')")]
            if atom.name not in relations:
                return [Diagnostic(pos, "error", f"@gc: unknown relation '{atom.name}'")]
            atoms.append(atom)
    for atom in atoms:
        if atom.arity != relations[atom.name].arity:
            return [Diagnostic(pos, "error", f"@gc: '{atom.name}' has {relations[atom.name].arity} "
                                             f"column(s), not {atom.arity}")]
    bound = {v.name for a in [target] + [lit for lit in annotation.condition if isinstance(lit, ast.Atom)]
             for v in ast.atom_vars(a)}
    for literal in annotation.condition:
        if isinstance(literal, ast.Negated):
            used = [v for v in ast.atom_vars(literal.atom) if not is_wildcard(v)]
        elif isinstance(literal, ast.Comparison):
            used = ast.expr_vars(literal.left) + ast.expr_vars(literal.right)
        else:
            continue
        unbound = [v.name for v in used if v.name not in bound]
        if unbound and not (isinstance(literal, ast.Comparison) and assignment_target(literal, bound)):
            return [Diagnostic(pos, "error", f"@gc: variable '{unbound[0]}' is not bound by the collected "
                                             f"atom or a positive atom of the condition")]
    return []


def _rename_wildcards(nodes, fresh):
    """Replace every `_` by a fresh variable `_#gcK` (a wildcard to the evaluator)."""
    def walk(node):
        if isinstance(node, ast.Wildcard):
            return ast.Var(f"_#gc{next(fresh)}", node.pos)
        if isinstance(node, tuple):
            return tuple(walk(n) for n in node)
        if dataclasses.is_dataclass(node):
            return dataclasses.replace(node, **{f.name: walk(getattr(node, f.name))
                                                for f in dataclasses.fields(node) if f.name != "pos"})
        return node
    return tuple(walk(n) for n in nodes)


def _error(pos: ast.Pos, message: str) -> DiagnosticError:
    return DiagnosticError([Diagnostic(pos, "error", message)])
