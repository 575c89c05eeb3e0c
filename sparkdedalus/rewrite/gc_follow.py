"""A garbage-collection condition follows the relation it collects through a
decoupling (`rewrite.decouple`), or the decoupling is refused: a persisted
relation whose condition no node holds would grow without bound.

After the decoupling a persisted relation r lives at the component, at the
new node (its rules moved), or at both (the component forwards it to a
persisted copy `r_NEW`). For each place:

- at the component, r keeps its condition while the condition's relations
  are still derived there. When they move to the new node and the rules that
  stay do not read r (and r is no declared output), the component stops
  persisting r: it forwards r as derived, and the copy keeps it. Otherwise
  the decoupling is refused;
- at the new node (r or its copy), the condition reads the relations as the
  new node holds them (`c_NEW` for a forwarded c, located constants with the
  new suffix); a condition relation the new node does not hold refuses the
  decoupling.

The condition is either a `// @gc` annotation (the annotation is rewritten) or
GC'd persistence (`analysis.guarded`): a guarded persistence rule that moves
is rewritten by `decouple` itself; for one that stays, the copy gets a
guarded persistence rule of its own instead of `.persist`. The batch and
acknowledge mechanisms carry no condition: they refuse a GC'd relation that
crosses.

>>> from sparkdedalus import Program
>>> from sparkdedalus.rewrite.decouple import decouple, select
>>> from sparkdedalus.rewrite.text import gc_comment
>>> p = Program.parse('''component k { .persist req .persist done
... // @gc req(L, X) when done(L, X)
... req(L, X) :- ask(L, X); done(L, X) :- req(L, X), ok(L, X); out(C, X)@async :- done(L, X), req(L, X), to(L, C); }
... ask("k", 1)@1; ok("k", 1)@3; to("k", "c");''')
>>> q = decouple(p, "k", select(p, "k", ["done", "out"]), "kd", "persist")
>>> [gc_comment(a) for a in q.gc_annotations], sorted(q.persisted)
(['// @gc req_kd(L, X) when done(L, X)'], ['done', 'req_kd'])
"""

from __future__ import annotations

from dataclasses import replace

from sparkdedalus.analysis.guarded import guarded_persistence
from sparkdedalus.checks.gc_directives import GcAnnotation
from sparkdedalus.checks.normalize import unwild
from sparkdedalus.rewrite.rule import RewriteError
from sparkdedalus.syntax import ast

#: mechanisms that move the relations C2 reads in batches: they carry no condition
UNCARRIED = ("batch", "acknowledge")


def follow_gc(program, component: str, name: str, split, persisted: dict, *, mechanism: str, stay_reads,
              moved, at_new, renames) -> tuple:
    """(persisted, GC annotations, guarded persistence rules to add at the
    new node) of the decoupling that moves the rules `split` of `component`
    to `name`. `persisted`: relation -> component after the decoupling;
    `stay_reads`: the relations the rules that stay read; `moved`: those the
    moved rules derive; `at_new`: those the new node holds; `renames`: the
    forwarded relations (batches: the relations sent in batches) -> their copies."""
    if mechanism in UNCARRIED:
        _uncarried(program, component, name, mechanism, persisted, moved, renames)
        return persisted, program.gc_annotations, []
    persisted, rules, suffix = dict(persisted), [], "/" + name

    def at_new_node(atom: ast.Atom, whose: str) -> ast.Atom:
        relation = renames.get(atom.name, atom.name if atom.name in at_new else None)
        if relation is None:
            raise RewriteError(f"the GC condition of {whose} reads {atom.name}, which {name} does not hold: "
                               f"{whose} would never be collected there")
        location = atom.args[0]
        if isinstance(location, ast.Const) and isinstance(location.value, str):
            location = ast.Const(location.value + suffix)
        return replace(atom, name=relation, args=(location, *atom.args[1:]))

    def literal(lit, whose: str):
        if isinstance(lit, ast.Negated):
            return replace(lit, atom=at_new_node(lit.atom, whose))
        return at_new_node(lit, whose) if isinstance(lit, ast.Atom) else lit

    def copy_of(relation: str) -> str | None:
        copy = renames.get(relation)
        return copy if copy is not None and persisted.get(copy) == name else None

    for guard in staying_guards(program, component, name, split, moved):
        copy = copy_of(guard.relation)
        if copy is not None:
            del persisted[copy]
            head = at_new_node(guard.target, copy)
            rules.append(ast.Rule(head, "next", (head, *(ast.Negated(unwild(at_new_node(c, copy)))
                                                          for c in guard.condition))))

    annotations = []
    for annotation in program.gc_annotations:
        relation = annotation.target.name
        reads = [(lit.atom if isinstance(lit, ast.Negated) else lit).name for lit in annotation.condition
                 if isinstance(lit, (ast.Atom, ast.Negated))]
        copy = relation if persisted.get(relation) == name else copy_of(relation)
        if persisted.get(relation) == component and any(c in moved for c in reads):
            gone = next(c for c in reads if c in moved)
            if relation in stay_reads or relation in program.declared_outputs or copy is None:
                raise RewriteError(f"{annotation.pos}: the GC condition of {relation} reads {gone}, which moves "
                                   f"to {name}: {relation} would never be collected at {component}")
            del persisted[relation]  # the component forwards it as derived; the copy keeps it
        elif persisted.get(relation) != name:
            annotations.append(annotation)
        if copy is not None:
            annotations.append(GcAnnotation(at_new_node(annotation.target, copy),
                                            tuple(literal(lit, copy) for lit in annotation.condition),
                                            annotation.pos))
    return persisted, tuple(annotations), rules


def staying_guards(program, component: str, name: str, split, moved) -> list:
    """The guarded persistence rules of `component` that stay (not in
    `split`); a `RewriteError` when one reads a relation the moved rules
    derive (`moved`)."""
    out = []
    for guard in guarded_persistence(program).values():
        rule = program.rules[guard.rule]
        if rule.component != component or guard.rule in split:
            continue
        gone = [c.name for c in guard.condition if c.name in moved]
        if gone:
            raise RewriteError(f"{rule.pos}: the GC'd persistence of {guard.relation} ({guard.text()}) reads "
                               f"{gone[0]}, which moves to {name}: {guard.relation} would never be collected at "
                               f"{component}")
        out.append(guard)
    return out


def _conditions(program, component: str) -> dict:
    """GC'd relation -> the relations its condition reads: the annotated
    ones, and those of `component` with GC'd persistence."""
    found = {g.relation: {c.name for c in g.condition} for g in guarded_persistence(program).values()
             if program.rules[g.rule].component == component}
    for annotation in program.gc_annotations:
        found.setdefault(annotation.target.name, set()).update(
            (lit.atom if isinstance(lit, ast.Negated) else lit).name for lit in annotation.condition
            if isinstance(lit, (ast.Atom, ast.Negated)))
    return found


def _uncarried(program, component: str, name: str, mechanism: str, persisted: dict, moved, sent) -> None:
    """Refuse a GC'd relation that moves, is sent to the new node, or whose condition moves away."""
    for relation, reads in sorted(_conditions(program, component).items()):
        if relation in sent or persisted.get(relation) == name or relation in moved \
                or persisted.get(relation) == component and reads & set(moved):
            raise RewriteError(f"the {mechanism} mechanism carries no GC condition: {relation}'s "
                               f"({', '.join(sorted(reads))}) would not follow it")
