"""A `Program` as dialect text, and back: what a rewrite edits and prints.

`source_rules` undoes the front end's normalisation (wildcards `_#k` become
`_` again, a negated auxiliary projection becomes the atom it projects,
`.persist` rules become declarations), so that a rewrite works on the rules
as written; `program_text` prints a program from such rules, and
`Program.parse` of that text checks it again.

>>> from sparkdedalus import Program
>>> p = Program.parse('.persist s\\ns(L, X) :- q(L, X, _), notin r(L, X, Y, Y);')
>>> print(program_text(p, source_rules(p)), end="")
.persist s
s(L, X) :- q(L, X, _), notin r(L, X, Y, Y);
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.checks.normalize import is_auxiliary, unwild
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.loader import DEFAULT_COMPONENT
from sparkdedalus.syntax.printer import format_const, format_statement


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
        atom = projected.get(lit.atom.name, lit.atom)
        return ast.Negated(unwild(atom), lit.pos)
    if isinstance(lit, ast.Atom):
        return unwild(lit)
    return lit


def program_text(program, rules, facts=None, persisted=None, decls=(), header=()) -> str:
    """Dialect text: `header` comment lines, the `// @home` directives of
    `program.homes`, declarations (the program's declared relations, then
    `decls`), inputs, declared outputs, then per component its `.persist`
    lines (`persisted`: relation -> component; default the program's), its
    `rules` (SourceRule) and its `facts` (default the program's); the default
    component's statements are not wrapped."""
    facts = program.facts if facts is None else facts
    if persisted is None:
        persisted = {r.head.name: r.component for r in program.rules if r.persistence}
    lines = [f"// {line}" if line else "//" for line in header]
    lines += [f"// @home {format_const(suffix)}" for suffix in program.homes]
    if lines:
        lines.append("")
    declared = [ast.Decl(r.name, tuple(ast.Column(c, t) for c, t in zip(r.columns, r.types)))
                for r in program.relations.values() if r.declared]
    top = [format_statement(s) for s in declared + list(decls) + list(program.inputs)]
    derived = [name for name, r in program.relations.items() if not r.auxiliary]
    if list(program.outputs) != derived:
        top += [f".output {name}" for name in program.outputs]
    if top:
        lines += top + [""]
    components = list(dict.fromkeys([DEFAULT_COMPONENT, *program.components,
                                     *(r.component for r in rules), *persisted.values()]))
    for name in components:
        inner = [format_statement(ast.PersistDecl(r)) for r, c in persisted.items() if c == name]
        inner += [format_statement(r.rule) for r in rules if r.component == name]
        inner += [format_statement(ast.Fact(f.atom, f.tick)) for f in facts if f.component == name
                  and name != DEFAULT_COMPONENT]
        if name == DEFAULT_COMPONENT:
            lines += inner + ([""] if inner else [])
        elif inner:
            lines += [f"component {name} {{"] + ["    " + line for line in inner] + ["}", ""]
    main_facts = [format_statement(ast.Fact(f.atom, f.tick)) for f in facts if f.component == DEFAULT_COMPONENT]
    lines += main_facts
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"
