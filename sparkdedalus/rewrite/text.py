"""A `Program` as dialect text: what `rewrite` prints. The text is the
`source.layout` of the program's rules as written, after `header` comment
lines, the `// @home` directives and the `// @gc` annotations; `Program.parse`
of it checks the same program again.

>>> from sparkdedalus import Program
>>> from sparkdedalus.rewrite.source import source_rules
>>> p = Program.parse('.persist s\\n// @gc s(L, X) when q(L, X, _)\\ns(L, X) :- q(L, X, _), notin r(L, X, Y, Y);')
>>> print(program_text(p, source_rules(p)), end="")
// @gc s(L, X) when q(L, X, _)
<BLANKLINE>
.persist s
s(L, X) :- q(L, X, _), notin r(L, X, Y, Y);
"""

from __future__ import annotations

from sparkdedalus.checks.normalize import unwild, unwild_literal
from sparkdedalus.rewrite.source import layout
from sparkdedalus.syntax.loader import DEFAULT_COMPONENT
from sparkdedalus.syntax.printer import format_atom, format_const, format_literal, format_statement


def program_text(program, rules, facts=None, persisted=None, decls=(), header=()) -> str:
    """Dialect text of `source.layout(program, rules, facts, persisted,
    decls)` (module docstring); the default component's statements are not wrapped."""
    lines = [f"// {line}" if line else "//" for line in header]
    lines += [f"// @home {format_const(suffix)}" for suffix in program.homes]
    lines += [gc_comment(a) for a in program.gc_annotations]
    if lines:
        lines.append("")
    top, blocks, main_facts = layout(program, rules, facts, persisted, decls)
    if top:
        lines += [format_statement(s) for s in top] + [""]
    for name, inner in blocks:
        if name == DEFAULT_COMPONENT:
            lines += [format_statement(s) for s in inner] + ([""] if inner else [])
        elif inner:
            lines += [f"component {name} {{"] + [format_statement(s, "    ") for s in inner] + ["}", ""]
    lines += [format_statement(s) for s in main_facts]
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def gc_comment(annotation) -> str:
    """The `// @gc target when condition` comment of a `GcAnnotation`."""
    condition = ", ".join(format_literal(unwild_literal(lit)) for lit in annotation.condition)
    return f"// @gc {format_atom(unwild(annotation.target))} when {condition}"
