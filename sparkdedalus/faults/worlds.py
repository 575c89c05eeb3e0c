"""Many failure scenarios in one run: the program rewritten with a world column.

Every relation whose facts can differ between scenarios (reachable from an
`@async` head or from `crash`; `pre` and `post` too) gets a world id W as its
second column; the others stay shared by all worlds. A rule deriving a
world-dependent relation carries W in each of its world-dependent atoms (so
joins, `notin`, aggregates and `choose`, whose keys get W, are per world);
without a world-dependent positive atom it joins `faults.world(W)`, the
data relation of the worlds. An `@async` rule sends its messages in every
world: which worlds lose a message is decided between ticks by the engine
(`sparkdedalus.spark.faults`, where a world is a class of scenarios that
have not diverged yet, and a class splits where its scenarios lose
different messages). The built-in `crash(L, N, T)` becomes the data relation
`faults.crash(L, W, N, T)`. A world-dependent relation's facts move to
`faults.fact.<name>` and are copied into every world. The rewritten program
runs with no failure model.

>>> from sparkdedalus import Program
>>> p = Program.parse('''
... log(N, P)@next :- log(N, P);
... log(M, P)@async :- bcast(N, P), node(N, M);
... pre(N, P) :- log(N, P);
... post(N, P) :- log(N, P), notin crash(N, N, _);
... node("a", "b"); bcast("a", "hi")@1; log("a", "hi")@1;''')
>>> w = with_worlds(p)
>>> sorted(w.dependent)
['crash', 'log', 'post', 'pre']
>>> from sparkdedalus.syntax.printer import format_rule
>>> from sparkdedalus.rewrite.source import source_rules
>>> for r in source_rules(w.program):  # the rules as written, `.persist log` left out
...     print(format_rule(r.rule))
log(M, W, P)@async :- bcast(N, P), node(N, M), faults.world(W);
pre(N, W, P) :- log(N, W, P);
post(N, W, P) :- log(N, W, P), notin faults.crash(N, W, N, _);
log(X0, W, X1) :- faults.fact.log(X0, X1), faults.world(W);
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sparkdedalus.faults.verdict import POST, PRE
from sparkdedalus.program import CRASH, Program
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.loader import DEFAULT_COMPONENT

#: the data relations a batched run fills: the worlds, and `crash` per world
WORLD, WORLD_CRASH = "faults.world", "faults.crash"
FACT_PREFIX = "faults.fact."


@dataclass(frozen=True)
class Worlds:
    """A program rewritten with a world column (see the module docstring)."""

    program: Program
    original: Program
    dependent: frozenset  # the original relations that got a world column
    location_type: str  # the dialect type of the nodes' locations


def world_dependent(program: Program) -> frozenset:
    """Relations whose facts may differ between failure scenarios: `@async`
    heads, `crash`, `pre` and `post`, and whatever a rule derives from them."""
    dependent = {r.head.name for r in program.rules if r.delivery == "async"} | {CRASH, PRE, POST}
    changed = True
    while changed:
        changed = False
        for rule in program.rules:
            reads = {a.name for a in rule.positive_atoms + rule.negated_atoms}
            if rule.head.name not in dependent and reads & dependent:
                dependent.add(rule.head.name)
                changed = True
    return frozenset(dependent & set(program.relations) | {PRE, POST})


def with_worlds(program: Program) -> Worlds:
    """The program with a world column (ValueError without `pre` and `post`).

    `rewrite.source` is imported here, not at module level: importing it loads
    the whole `rewrite` package (every rewrite and the analyses they need), and
    the Spark engine imports this module for `Engine.faults`, so a plain run
    would pay for it. Not a cycle: `rewrite` never imports `faults`."""
    from sparkdedalus.rewrite.source import SourceRule, assemble, source_rules
    if PRE not in program.relations or POST not in program.relations:
        raise ValueError("the program needs relations 'pre' and 'post' (the invariant: every pre fact "
                         "at EOT has an equal post fact)")
    taken = [name for name in program.relations if name.startswith("faults.")]
    if taken:
        raise ValueError(f"relation '{taken[0]}': names starting with 'faults.' are reserved for fault scenarios")
    dependent = world_dependent(program)
    location = _location_type(program)
    rules = [_rule(r, dependent) for r in source_rules(program)]
    facts, lifted = [], {}
    for fact in program.facts:
        if fact.atom.name in dependent:
            renamed = ast.Atom(FACT_PREFIX + fact.atom.name, fact.atom.args)
            facts.append(dataclasses.replace(fact, atom=renamed))
            lifted[fact.atom.name] = len(fact.atom.args)
        else:
            facts.append(fact)
    for name, arity in lifted.items():
        args = tuple(ast.Var(f"X{i}") for i in range(arity))
        head = ast.Atom(name, args[:1] + (ast.Var("W"),) + args[1:])
        body = (ast.Atom(FACT_PREFIX + name, args), ast.Atom(WORLD, (ast.Var("W"),)))
        rules.append(SourceRule(ast.Rule(head, "now", body), DEFAULT_COMPONENT))
    relations = {n: _widened(r) if n in dependent else r for n, r in program.relations.items() if n != CRASH}
    shell = dataclasses.replace(program, relations=relations,
                                outputs=tuple(n for n, r in relations.items() if not r.auxiliary))
    decls = [ast.Decl(WORLD, (ast.Column("world", "int"),)),
             ast.Decl(WORLD_CRASH, _columns(("loc", location), ("world", "int"), ("node", location),
                                            ("tick", "int")))]
    annotations = tuple(_annotation(a, dependent) for a in program.gc_annotations)
    return Worlds(assemble(shell, rules, facts, decls=decls, gc_annotations=annotations), program, dependent, location)


def _columns(*pairs) -> tuple:
    return tuple(ast.Column(name, typ) for name, typ in pairs)


def _widened(relation):
    """A declared relation's declaration with the world column second."""
    return dataclasses.replace(relation, columns=relation.columns[:1] + ("world",) + relation.columns[1:],
                               types=relation.types[:1] + ("int",) + relation.types[1:])


def _location_type(program: Program) -> str:
    """The type of the locations messages go to (all nodes compare as strings
    in the failure model, so one type is enough)."""
    types = {program.relations[r.head.name].types[0] for r in program.rules if r.delivery == "async"}
    if len(types) > 1:
        raise ValueError(f"messages go to locations of several types ({', '.join(sorted(types))}): "
                         f"fault scenarios need one")
    return types.pop() if types else "string"


def _rule(source, dependent: frozenset):
    """A `rewrite.source.SourceRule` with the world column in its world-dependent atoms."""
    rule = source.rule
    if rule.head.name not in dependent:
        return source
    world = ast.Var(_fresh(rule))
    body, grounded = [], False
    for lit in rule.body:
        if isinstance(lit, ast.Atom) and lit.name in dependent:
            body.append(_widen(lit, world))
            grounded = True
        elif isinstance(lit, ast.Negated) and lit.atom.name in dependent:
            body.append(ast.Negated(_widen(lit.atom, world), lit.pos))
        elif isinstance(lit, ast.Choose):
            body.append(ast.Choose(lit.keys + (world,), lit.values, lit.pos))
        else:
            body.append(lit)
    if not grounded:
        body.append(ast.Atom(WORLD, (world,)))
    return dataclasses.replace(source, rule=ast.Rule(_widen(rule.head, world), rule.delivery, tuple(body), rule.pos))


def _annotation(annotation, dependent: frozenset):
    """A `// @gc` annotation with the world column in its world-dependent
    atoms: a fact is collected in the world where the condition holds."""
    world = ast.Var(_fresh(ast.Rule(annotation.target, "now", annotation.condition)))

    def widened(lit):
        if isinstance(lit, ast.Atom) and lit.name in dependent:
            return _widen(lit, world)
        if isinstance(lit, ast.Negated) and lit.atom.name in dependent:
            return ast.Negated(_widen(lit.atom, world), lit.pos)
        return lit
    return dataclasses.replace(annotation, target=widened(annotation.target),
                               condition=tuple(widened(lit) for lit in annotation.condition))


def _widen(atom: ast.Atom, world: ast.Var) -> ast.Atom:
    name = WORLD_CRASH if atom.name == CRASH else atom.name
    return ast.Atom(name, atom.args[:1] + (world,) + atom.args[1:], atom.time, atom.pos)


def _fresh(rule: ast.Rule) -> str:
    """A variable name the rule does not use: W, W1, W2, ..."""
    used = set()

    def walk(node):
        if isinstance(node, ast.Var):
            used.add(node.name.lower())
        elif dataclasses.is_dataclass(node):
            for f in dataclasses.fields(node):
                walk(getattr(node, f.name))
        elif isinstance(node, tuple):
            for item in node:
                walk(item)

    walk(rule)
    return next(name for name in ("W", *(f"W{i}" for i in range(1, len(used) + 2))) if name.lower() not in used)
