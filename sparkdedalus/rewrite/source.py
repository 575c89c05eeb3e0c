"""A `Program` as the statements a user writes, and a checked `Program`
assembled from such statements and the program's metadata (its `// @home`
suffixes and `// @gc` annotations) with no text step: what a rewrite edits.

`source_rules` undoes the front end's normalisation (wildcards `_#k` become
`_` again, a negated auxiliary projection becomes the atom it projects,
`.persist` rules become declarations); `assemble` checks such rules, with
facts, persistence and declarations, into a new `Program` that keeps the
original's GC annotations (valid in the new program) and homes.

>>> from sparkdedalus import Program
>>> from sparkdedalus.syntax.printer import format_rule
>>> p = Program.parse('.persist s\\n// @gc s(L, X) when q(L, X, _)\\ns(L, X) :- q(L, X, _), notin r(L, X, Y, Y);')
>>> q = assemble(p, source_rules(p))
>>> [format_rule(r.rule) for r in source_rules(q)], len(q.gc_annotations)
(['s(L, X) :- q(L, X, _), notin r(L, X, Y, Y);'], 1)
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.checks.normalize import is_auxiliary, unwild, unwild_literal
from sparkdedalus.program import Program
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.loader import DEFAULT_COMPONENT, Loaded, Placed


@dataclass(frozen=True)
class SourceRule:
    """A rule as written (an `ast.Rule`), its component, and the index of the
    program rule it comes from (None for a rule a rewrite added)."""

    rule: ast.Rule
    component: str
    index: int | None = None


def source_rules(program) -> list[SourceRule]:
    """The program's rules as written, persistence and auxiliary rules left out."""
    projected = {r.head.name: r.body[0] for r in program.rules if is_auxiliary(r.head.name)}
    out = []
    for rule in program.rules:
        if rule.persistence or is_auxiliary(rule.head.name):
            continue
        body = tuple(_written(lit, projected) for lit in rule.body)
        out.append(SourceRule(ast.Rule(rule.head, rule.delivery, body, rule.pos), rule.component, rule.index))
    return out


def _written(lit, projected: dict):
    if isinstance(lit, ast.Negated):
        return ast.Negated(unwild(projected.get(lit.atom.name, lit.atom)), lit.pos)
    return unwild_literal(lit)


def _identity(relation: str, arity: int, pos) -> ast.Rule:
    """`relation(X1, ..)@next :- relation(X1, ..);`"""
    atom = ast.Atom(relation, tuple(ast.Var(f"X{i}") for i in range(1, arity + 1)))
    return ast.Rule(atom, "next", (atom,), pos) if pos else ast.Rule(atom, "next", (atom,))


def layout(program, rules, facts=None, persisted=None, decls=()) -> tuple:
    """(top-level statements, [(component, statements)], default-component
    facts): the declared relations, `decls`, inputs and declared outputs;
    per component its `.persist` declarations (`persisted`: relation ->
    component; default the program's), its `rules` (SourceRule) and facts
    (default the program's)."""
    facts = program.facts if facts is None else facts
    if persisted is None:
        persisted = {r.head.name: r.component for r in program.rules if r.persistence}
    where = {r.head.name: r.pos for r in program.rules if r.persistence}
    declared = [ast.Decl(r.name, tuple(ast.Column(c, t) for c, t in zip(r.columns, r.types)))
                for r in program.relations.values() if r.declared]
    top = declared + list(decls) + list(program.inputs)
    derived = [name for name, r in program.relations.items() if not r.auxiliary]
    if list(program.outputs) != derived:
        top += [ast.OutputDecl(name) for name in program.outputs]
    components = list(dict.fromkeys([DEFAULT_COMPONENT, *program.components,
                                     *(r.component for r in rules), *persisted.values()]))
    mentioned = {a.name for r in rules for a in (r.rule.head, *r.rule.body) if isinstance(a, ast.Atom)}
    mentioned |= {lit.atom.name for r in rules for lit in r.rule.body if isinstance(lit, ast.Negated)}
    mentioned |= {f.atom.name for f in facts} | {d.name for d in top if isinstance(d, ast.Decl)}
    blocks = []
    for name in components:
        # a relation only its persistence mentions: `.persist` alone would name nothing, so its rule
        inner = [ast.PersistDecl(r, where[r]) if r in where else ast.PersistDecl(r)
                 for r, c in persisted.items() if c == name and r in mentioned]
        inner += [_identity(r, program.relations[r].arity, where.get(r)) for r, c in persisted.items()
                  if c == name and r not in mentioned]
        inner += [r.rule for r in rules if r.component == name]
        if name != DEFAULT_COMPONENT:
            inner += [ast.Fact(f.atom, f.tick, f.pos) for f in facts if f.component == name]
        blocks.append((name, inner))
    main_facts = [ast.Fact(f.atom, f.tick, f.pos) for f in facts if f.component == DEFAULT_COMPONENT]
    return top, blocks, main_facts


def assemble(program, rules, facts=None, persisted=None, decls=(), homes=(), gc_annotations=None) -> Program:
    """The checked `Program` of `layout(program, rules, facts, persisted,
    decls)`, with `program.homes + homes` and `gc_annotations` (default the
    program's); the rules and `.persist` declarations that keep the position
    of a rule a `seal` head stands for stay marked (`Rule.sealed`). Raises
    `DiagnosticError` as the front end does."""
    top, blocks, main_facts = layout(program, rules, facts, persisted, decls)
    placed = [Placed(s, DEFAULT_COMPONENT) for s in top]
    placed += [Placed(s, name) for name, inner in blocks for s in inner]
    placed += [Placed(s, DEFAULT_COMPONENT) for s in main_facts]
    annotations = program.gc_annotations if gc_annotations is None else gc_annotations
    loaded = Loaded(placed, program.sources, [], homes=tuple(dict.fromkeys(program.homes + tuple(homes))),
                    gc_annotations=tuple(annotations), sealed={r.pos: r.sealed for r in program.rules if r.sealed})
    return Program.build(loaded)
