"""The mechanism of the decoupling rewrites (scaling paper, 3.1-3.3 and A.1-A.3):
move rules C2 of a component to a new component NEW at new locations.

A location L of the component becomes `L + "/NEW"` for the moved rules (the
program gets the directive `// @home "/NEW"`; `home(L2, L)` gives L back
where a moved rule uses its location as data). For every relation C2 reads:

- *redirected* (3.1, Redirection): read by C2 only and derived by C2 or by
  `@async` rules: every `@async` rule deriving it sends to `D + "/NEW"`
  instead of D (the forwarding relation is this function of the address), its
  facts move to the new location;
- *forwarded* (A.3.1, Decoupling): read by the rules that stay too, or derived
  by a same-node rule that stays: C2 reads a copy `r_NEW` which the rule
  `r_NEW(L2, ..)@async :- r(L, ..), L2 == L + "/NEW";` sends from the
  component; with `persist` (3.2, Redirection With Persistence) `r_NEW` is
  persisted;
- *constant* (EDB, and rules over EDB only, see `analysis.roles`): both nodes
  hold it: its facts and rules are copied to the new location.

A persisted relation's garbage-collection condition follows it
(`rewrite.gc_follow`): a guarded persistence rule (GC'd persistence,
`analysis.guarded`) goes where its relation's persistence goes
(`guarded.follow`), renamed with a forwarded relation whose copy it keeps,
and `// @gc` annotations are rewritten for the node that holds the relation.

The state machine decoupling (A.4) forwards every relation C2 reads from the
component instead, in sequenced batches, and the asymmetric one (A.5) sends
what C2 derives and the rules that stay read back to the component in
batches, holding C2's messages until the batch is acknowledged:
`rewrite.batching` gives the rules of both (`MECHANISMS`).

A rewrite refuses (`RewriteError`) what this mechanism cannot express: rules
that stay reading what C2 derives (but in the asymmetric rewrite), a rule
that would run on the other side too and derive other facts there (a rule
that stays reading only constant relations the new node holds too, a moved
rule reading only constant relations, either negating what changes, or the
rule that stays using its location as data, `uses_location`), a location
that is not a string, global observer rules, `.input` relations C2 reads.

>>> from sparkdedalus import Program
>>> p = Program.parse('component k { a(L, X) :- in(L, X); b(L, X) :- in2(L, X); }\\n'
...                   'in("n", 1)@1; in2("n", 2)@1;')
>>> q = decouple(p, "k", select(p, "k", ["b"]), "kb")
>>> from sparkdedalus.rewrite.source import source_rules
>>> from sparkdedalus.rewrite.text import program_text
>>> print(program_text(q, source_rules(q)), end="")
// @home "/kb"
<BLANKLINE>
component k {
    a(L, X) :- in(L, X);
}
<BLANKLINE>
component kb {
    b(L2, X) :- in2(L2, X);
    in2("n/kb", 2)@1;
}
<BLANKLINE>
in("n", 1)@1;
"""

from __future__ import annotations

from dataclasses import replace

from sparkdedalus.analysis.functional import functional
from sparkdedalus.analysis.guarded import follow, guard_rules
from sparkdedalus.analysis.roles import component_rules, constant_relations
from sparkdedalus.analysis.state_machine import state_machine
from sparkdedalus.checks.locations import location_terms
from sparkdedalus.checks.normalize import AUXILIARY_MARK, is_auxiliary
from sparkdedalus.program import Program
from sparkdedalus.rewrite import batching
from sparkdedalus.rewrite.gc_follow import follow_gc, staying_guards
from sparkdedalus.rewrite.rule import RewriteError
from sparkdedalus.rewrite.source import SourceRule, assemble, source_rules
from sparkdedalus.syntax import ast
from sparkdedalus.syntax import build
from sparkdedalus.syntax.ast import atom_vars, expr_vars
from sparkdedalus.syntax.loader import DEFAULT_COMPONENT
from udfs.registry import FUNCTIONS


def select(program, component: str, selectors) -> tuple:
    """Indices of the rules of `component` named by `selectors`: a head
    relation (every rule deriving it) or a line number (the rule there)."""
    try:
        rules = [program.rules[i] for i in component_rules(program, component)]
    except ValueError as exc:
        raise RewriteError(str(exc)) from None
    chosen: list = []
    for selector in selectors:
        if selector.isdigit():
            found = [r.index for r in rules if r.pos.line == int(selector) and not is_auxiliary(r.head.name)]
            what = f"no rule of component {component!r} at line {selector}"
        else:
            found = [r.index for r in rules if r.head.name == selector]
            what = f"no rule of component {component!r} derives {selector!r}"
        if not selector or not found:
            raise RewriteError(what if selector else "empty rule selector")
        chosen += [i for i in found if i not in chosen]
    negated = {a.name for i in chosen for a in program.rules[i].negated_atoms}
    chosen += [r.index for r in rules if r.head.name in negated and is_auxiliary(r.head.name)]
    if len(follow(program, [r.index for r in rules], chosen)) == len(rules):  # with the persistence they take
        raise RewriteError(f"the rules selected are all the rules of component {component!r}: nothing stays")
    return tuple(sorted(chosen))


def check_name(program, name: str) -> None:
    """A `RewriteError` unless `name` can name a new component."""
    if not name.isidentifier() or name in program.components:
        raise RewriteError(f"new component name {name!r} is taken or not an identifier")


def own_facts(program, component: str) -> set:
    """The facts at the nodes of `component`, as far as the text tells: those
    written in its block and, of the relations it has none written of, the
    top-level ones. A fact written in another component's block (a
    decoupling's copy at the new node) is that component's."""
    own = {f.atom.name for f in program.facts if f.component == component}
    return {f for f in program.facts if f.component == component
            or f.component == DEFAULT_COMPONENT and f.atom.name not in own}


def reads(rule) -> set:
    """The relations a rule reads (positive and negated atoms), an auxiliary
    projection (`checks.normalize`) as the relation it projects: the rule as
    written reads that one."""
    return {a.name.split(AUXILIARY_MARK)[0] for a in rule.positive_atoms + rule.negated_atoms}


#: how the moved rules get their inputs: "redirect" (3.1, 3.3), "persist"
#: (3.2: forwarded copies persisted), "batch" (A.4.2: every input forwarded
#: by the component in sequenced batches), "acknowledge" (A.5.1: the rules
#: that stay may read what the moved rules derive, sent back in batches;
#: the moved rules' messages wait for the acknowledgement of their batch)
MECHANISMS = ("redirect", "persist", "batch", "acknowledge")


def decouple(program, component: str, split, name: str, mechanism: str = "redirect", relay=frozenset()) -> Program:
    """`program` with the rules `split` of `component` moved to the new
    component `name` (see the module docstring) by `mechanism`; the
    relations of `relay` are forwarded, never redirected."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism {mechanism!r} is not one of {', '.join(MECHANISMS)}")
    check_name(program, name)
    suffix = "/" + name
    split = set(follow(program, component_rules(program, component), split))
    every_guard = guard_rules(program)  # a guard that stays and reads what moves: gc_follow says why
    guards = {i: relation for i, relation in every_guard.items() if i in split}
    constant = constant_relations(program)
    live = [r for r in program.rules if not r.persistence]
    moved = [r for r in live if r.index in split]
    # rules over constant relations that C2 needs: copied to the new node (the component's own, if it has any)
    needed, todo = set(), [r for r in moved]
    while todo:
        for name_read in reads(todo.pop()) & constant:
            defining = program.defining_rules(name_read)
            for rule in [r for r in defining if r.component == component] or defining:
                if not rule.persistence and rule.index not in needed and rule.index not in split:
                    needed.add(rule.index)
                    todo.append(rule)
    copied = [r for r in live if r.index in needed]
    stay = [r for r in live if r.index not in split]
    c2_reads = set().union(*(reads(r) for r in moved + copied)) - set(FUNCTIONS)
    outside_reads = set().union(*(reads(r) for r in stay))
    derived_moved = {r.head.name for r in moved if r.index not in guards}
    staying_guards(program, component, name, split, derived_moved)  # refused before another reason
    fed_back = {r.head.name for r in moved if r.delivery != "async"} & outside_reads \
        if mechanism == "acknowledge" else set()
    for rule in stay if mechanism != "acknowledge" else ():  # it sends them back, in batches or as messages
        for atom in (rule.positive_atoms + rule.negated_atoms) if rule.component == component \
                and rule.index not in every_guard else ():
            if atom.name in derived_moved:
                raise RewriteError(f"{atom.pos}: the rule for {rule.head.name} reads {atom.name}, "
                                   f"which the moved rules derive")
    # a rule runs wherever its positive atoms hold: a rule that stays, at the new node when it
    # reads only the constant relations copied there; a moved rule, at the component's node when
    # it reads only constant relations. There it derives other facts when it negates what
    # changes, or (a rule that stays, read without `home`) uses its location as data.
    held = constant & c2_reads
    for rule, where, on in [(r, "the new node", held) for r in stay] + [(r, "the component's node", constant)
                                                                       for r in moved]:
        negates = sorted({a.name for a in rule.negated_atoms} - constant)
        if rule.positive_atoms and all(a.name in on for a in rule.positive_atoms) and (
                negates or rule in stay and uses_location(rule)):
            why = f"negates {negates[0]}" if negates else "uses its location as data"
            raise RewriteError(f"{rule.pos}: the rule for {rule.head.name} reads only "
                               f"{', '.join(sorted({a.name for a in rule.positive_atoms}))}, which {where} "
                               f"holds too, and {why}: it would derive other facts there")
    for rule in moved + copied:
        if len(location_terms(rule)) > 1:
            raise RewriteError(f"{rule.pos}: a global observer rule cannot move")
    inputs = {i.name for i in program.inputs}
    if c2_reads & inputs:
        raise RewriteError(f"the moved rules read the .input relation {sorted(c2_reads & inputs)[0]!r}")
    if mechanism == "batch":
        forwarded = sorted(c2_reads - constant - derived_moved)
        shared = {r.head.name for r in stay if r.head.name in derived_moved}
    else:
        forwarded = sorted(r for r in c2_reads - constant - fed_back if r in outside_reads or r in relay or any(
            d.delivery != "async" for d in program.defining_rules(r) if d.index not in split and not d.persistence))
        shared = set(forwarded) & derived_moved
    carried = {i for i, relation in guards.items() if relation in forwarded}  # they keep the copy
    derived_moved |= {relation for i, relation in guards.items() if i not in carried}
    if mechanism == "acknowledge":
        shared |= {r.head.name for r in stay} & derived_moved
    if shared:
        raise RewriteError(f"the moved rules derive {sorted(shared)[0]!r}, "
                           f"which the rules that stay derive or read too")
    redirected = c2_reads - constant - set(forwarded)
    arity = {r: program.relations[r].arity for r in program.relations}
    if mechanism == "batch":
        batch = batching.channel(name, {r: arity[r] for r in forwarded}, forwarded,
                                 build.cmp("==", "Lr", build.plus("L", ast.Const(suffix))))
        renames = dict(batch.sealed)
    else:
        renames = {r: f"{r}_{name}" for r in forwarded}
        batch = batching.channel(name, {r: arity[r] for r in sorted(fed_back)}, {
            renames.get(r, r): arity[r] for r in sorted(c2_reads - constant - derived_moved)},
            build.atom("home", "L", "Lr"),
            held=fed_back - state_machine(program, sorted(split)).existence) if fed_back else None
    outputs = {r.head.name: arity[r.head.name] for r in moved
               if r.delivery == "async" and r.head.name not in c2_reads} if fed_back else {}
    taken = set(program.relations) & set((batch.relations if batch else ()) + tuple(renames.values()) + tuple(
        batching.held(name, r) for r in outputs) + ((f"ack_{name}",) if outputs else ()))
    if taken:
        raise RewriteError(f"the rewrite needs the relation name {sorted(taken)[0]!r}, which the program uses")

    rules = []
    for src in source_rules(program):
        rule = src.rule
        if src.index in split:
            rule = relocate(rule, suffix, renames, redirected)
            if src.index in carried:
                rule = replace(rule, head=replace(rule.head, name=renames[rule.head.name]))
            if rule.head.name in outputs:
                rule = _held(rule, name)
            rules.append(SourceRule(rule, name, src.index))
            continue
        if rule.delivery == "async" and rule.head.name in redirected:
            rule = redirect(rule, suffix)
        if fed_back:
            rule = _rename(rule, batch.sealed)
        rules.append(SourceRule(rule, src.component, src.index))
        if src.index in needed:
            rules.append(SourceRule(relocate(rule, suffix, {}, set()), name))
    if mechanism == "batch":
        rules += [SourceRule(r, component) for r in batch.sender]
        rules += [SourceRule(r, name) for r in batch.receiver]
    else:
        for relation in forwarded:
            xs = tuple(ast.Var(f"X{i}") for i in range(1, arity[relation]))
            head = ast.Atom(renames[relation], (ast.Var("L2"), *xs))
            body = (ast.Atom(relation, (ast.Var("L"), *xs)),
                    ast.Comparison("==", ast.Var("L2"), ast.BinOp("+", ast.Var("L"), ast.Const(suffix))))
            rules.append(SourceRule(ast.Rule(head, "async", body), component))
    if fed_back:
        back = build.cmp("==", "Ls", build.plus("L", ast.Const(suffix)))
        acks = batching.acknowledgement(name, back, outputs) if outputs else ((), ())
        rules += [SourceRule(r, name) for r in batch.sender + acks[1]]
        rules += [SourceRule(r, component) for r in batch.receiver + acks[0]]

    facts, own = [], own_facts(program, component)
    for fact in program.facts:
        relation = fact.atom.name
        if relation in redirected or relation in constant and relation in c2_reads and fact in own:
            location = fact.atom.args[0]
            if not isinstance(location.value, str):
                raise RewriteError(f"{fact.pos}: location {location.value!r} is not a string: cannot add {suffix!r}")
            copy = replace(fact, atom=replace(fact.atom, args=(ast.Const(location.value + suffix),
                                                               *fact.atom.args[1:])), component=name)
            if relation in outside_reads or relation in constant:
                facts.append(fact)
            facts.append(copy)
        else:
            facts.append(fact)

    persisted = {r.head.name: r.component for r in program.rules if r.persistence}
    for relation in derived_moved & set(persisted):
        if persisted[relation] == component and not any(r.head.name == relation for r in stay):
            persisted[relation] = name
    if mechanism == "persist" or mechanism == "acknowledge" and not functional(program, sorted(split)).functional:
        persisted.update({renames[r]: name for r in forwarded if r not in {guards[i] for i in carried}})
    if batch:
        persisted.update({r: name if mechanism == "batch" else component for r in batch.persisted})
    persisted.update({batching.held(name, r): name for r in outputs})
    persisted, annotations, copies = follow_gc(
        program, component, name, split, persisted, mechanism=mechanism, stay_reads=outside_reads, moved=derived_moved,
        at_new=c2_reads | derived_moved, renames=renames if mechanism != "batch" else dict.fromkeys(forwarded))
    rules += [SourceRule(r, name) for r in copies]
    sent = set(batch.sealed) if batch else set()
    decls = [ast.Decl(renames[r], _columns(program, r)) for r in forwarded
             if program.relations[r].declared and r not in sent]
    for r in sorted(sent):
        if program.relations[r].declared:
            decls += [ast.Decl(f"{r}_{name}", _columns(program, r) + (ast.Column("tick", "int"),)),
                      ast.Decl(batch.sealed[r], _columns(program, r))]
    return assemble(program, rules, facts, persisted, decls, homes=(suffix,), gc_annotations=annotations)


def _columns(program, relation: str) -> tuple:
    r = program.relations[relation]
    return tuple(ast.Column(c, t) for c, t in zip(r.columns, r.types))


def _rename(rule: ast.Rule, renames: dict) -> ast.Rule:
    """`rule` reading `renames[r]` for every body atom over r."""
    def renamed(atom: ast.Atom) -> ast.Atom:
        return replace(atom, name=renames.get(atom.name, atom.name))
    body = tuple(renamed(lit) if isinstance(lit, ast.Atom) else
                 ast.Negated(renamed(lit.atom), lit.pos) if isinstance(lit, ast.Negated) else lit for lit in rule.body)
    return replace(rule, body=body)


def _held(rule: ast.Rule, tag: str) -> ast.Rule:
    """An `@async` rule of the moved rules holding its facts, with the tick
    of their derivation, until their batch is acknowledged (A.5.1)."""
    if any(isinstance(a, ast.Aggregate) for a in rule.head.args):
        raise RewriteError(f"{rule.pos}: a message with an aggregate cannot wait for its acknowledgement")
    tick = fresh_variable(rule, "T")
    at = next((i for i, lit in enumerate(rule.body) if isinstance(lit, ast.Atom)
               and lit.name not in FUNCTIONS and lit.time is None), None)
    if at is None:
        raise RewriteError(f"{rule.pos}: no body atom to take the tick of the message from")
    stored = rule.body[at]
    body = rule.body[:at] + (replace(stored, time=ast.VarTime(tick)),) + rule.body[at + 1:]
    head = ast.Atom(batching.held(tag, rule.head.name), (stored.args[0], *rule.head.args, tick))
    return ast.Rule(head, "now", body, rule.pos)


def _names(rule: ast.Rule) -> set:
    found = [v for a in rule.head.args for v in expr_vars(a)]
    for lit in rule.body:
        if isinstance(lit, ast.Atom):
            found += atom_vars(lit)
        elif isinstance(lit, ast.Negated):
            found += atom_vars(lit.atom)
        elif isinstance(lit, ast.Comparison):
            found += expr_vars(lit.left) + expr_vars(lit.right)
        elif isinstance(lit, ast.Choose):
            found += list(lit.keys) + list(lit.values)
    return {v.name for v in found}


def fresh_variable(rule: ast.Rule, base: str) -> ast.Var:
    """A variable named `base` (numbered) that `rule` does not use yet."""
    used, k = _names(rule), 2
    while f"{base}{k}" in used:
        k += 1
    return ast.Var(f"{base}{k}")


def uses_location(rule) -> bool:
    """Whether `rule` uses its location (that of its first stored atom) as
    data: anywhere but as the location of its stored atoms and its head (an
    `@async` head's is its destination).

    >>> from sparkdedalus import Program
    >>> p = Program.parse('a(L, X) :- b(L, X); c(L) :- b(L, _), L != "n"; d(D)@async :- b(L, D);')
    >>> [uses_location(r) for r in p.rules]
    [False, True, False]
    """
    stored = [lit for lit in rule.body if isinstance(lit, ast.Atom) and lit.name not in FUNCTIONS]
    if not stored or not isinstance(stored[0].args[0], ast.Var):
        return False
    loc, hole = stored[0].args[0], ast.Var("_")

    def strip(atom: ast.Atom) -> ast.Atom:
        return replace(atom, args=(hole, *atom.args[1:])) if atom.name not in FUNCTIONS and atom.args[0] == loc \
            else atom
    body = tuple(strip(lit) if isinstance(lit, ast.Atom) else ast.Negated(strip(lit.atom), lit.pos)
                 if isinstance(lit, ast.Negated) else lit for lit in rule.body)
    head = rule.head if rule.delivery == "async" else strip(rule.head)
    return loc.name in _names(ast.Rule(head, rule.delivery, body, rule.pos))


def _moved_location(loc, rule: ast.Rule, suffix: str):
    if isinstance(loc, ast.Const):
        if not isinstance(loc.value, str):
            raise RewriteError(f"{rule.pos}: location {loc.value!r} is not a string: cannot add {suffix!r}")
        return ast.Const(loc.value + suffix)
    return fresh_variable(rule, loc.name)


def redirect(rule: ast.Rule, suffix: str) -> ast.Rule:
    """An @async rule sending to `D + suffix` instead of D."""
    dest = rule.head.args[0]
    new = _moved_location(dest, rule, suffix)
    body = rule.body
    if isinstance(new, ast.Var):
        body = body + (ast.Comparison("==", new, ast.BinOp("+", dest, ast.Const(suffix))),)
    return ast.Rule(replace(rule.head, args=(new, *rule.head.args[1:])), rule.delivery, body, rule.pos)


def relocate(rule: ast.Rule, suffix: str, renames: dict, redirected: set) -> ast.Rule:
    """A rule of C2 at the new location: its atoms at `L + suffix`, forwarded
    relations renamed, `home(L2, L)` where L is used as data."""
    stored = [lit for lit in rule.body if isinstance(lit, ast.Atom) and lit.name not in FUNCTIONS]
    loc = stored[0].args[0]
    new = _moved_location(loc, rule, suffix)

    def moved(atom: ast.Atom) -> ast.Atom:
        if atom.name in FUNCTIONS or atom.args[0] != loc:
            return atom
        return ast.Atom(renames.get(atom.name, atom.name), (new, *atom.args[1:]), atom.time, atom.pos)

    body = tuple(moved(lit) if isinstance(lit, ast.Atom) else
                 ast.Negated(moved(lit.atom), lit.pos) if isinstance(lit, ast.Negated) else lit for lit in rule.body)
    head = rule.head
    if rule.delivery != "async":
        head = replace(head, args=(new, *head.args[1:]))
    result = ast.Rule(head, rule.delivery, body, rule.pos)
    if isinstance(loc, ast.Var) and loc.name in _names(result):
        result = ast.Rule(head, rule.delivery, body + (ast.Atom("home", (new, loc)),), rule.pos)
    if rule.delivery == "async" and rule.head.name in redirected:
        result = redirect(result, suffix)
    return result
