"""Desugar `seal` heads (scaling paper, B.4.1) into counted, sealed batches.

    out(D, K.., seal<X..>)@async :- body;

sends to D, per key K.., the batch of values X.. that the body derives; the
program's other rules read `out` only once a batch is complete. The body's
literals that mention no sealed variable (its key part, which must bind L,
D and K..) say that a batch exists, so a batch without values is sealed too,
with count 0. The rules it stands for, in the shape rewrite/sealing.py
partitions (L: the body's location; `outBatch` makes `count<*>` count the
values only, not other body variables):

    out(D, K.., X..)@async :- body;
    outBatch(L, D, K.., X..) :- body;
    outCount(D, K.., count<*>)@async :- outBatch(L, D, K.., X..);
    outCount(D, K.., 0)@async :- keypart, notin outBatch(L, D, K.., _..);
    .persist out .persist outCount                       // at the receiver:
    outReceived(D, K.., count<*>) :- out(D, K.., X..);
    outSealed(D, K.., X..) :- out(D, K.., X..), outCount(D, K.., N), outReceived(D, K.., N);

and every other rule reads `outSealed` where it names `out`. The receiver
is the component whose rules read `out` (the sender's if none does).

>>> from sparkdedalus.syntax.loader import load_text
>>> from sparkdedalus.syntax.printer import format_statement
>>> d = desugar_seals(load_text('o(D, K, seal<X>)@async :- ask(L, D, K), v(L, X); '
...                             'p(D, X) :- o(D, K, X);').statements)
>>> for item in d.placed: print(format_statement(item.statement))
o(D, K, X)@async :- ask(L, D, K), v(L, X);
oBatch(L, D, K, X) :- ask(L, D, K), v(L, X);
oCount(D, K, count<*>)@async :- oBatch(L, D, K, X);
oCount(D, K, 0)@async :- ask(L, D, K), notin oBatch(L, D, K, _);
.persist o
.persist oCount
oReceived(D, K, count<*>) :- o(D, K, X);
oSealed(D, K, X) :- o(D, K, X), oCount(D, K, N), oReceived(D, K, N);
p(D, X) :- oSealed(D, K, X);
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from sparkdedalus.syntax import ast
from sparkdedalus.syntax.ast import atom_vars, expr_vars
from sparkdedalus.syntax.diagnostics import Diagnostic
from sparkdedalus.syntax.loader import Placed
from udfs.registry import FUNCTIONS

#: what the generated relations of a sealed `out` are called (out + suffix) and,
#: for the auxiliary ones (all but outSealed, which the user's rules read), are for
GENERATED = {
    "Batch": "the values of each batch of {out} sealed at {pos}, at the sender",
    "Count": "the number of values of each batch of {out} sealed at {pos}",
    "Received": "the number of values of each batch of {out} (sealed at {pos}) received so far",
    "Sealed": None,
}


@dataclass
class Desugared:
    placed: list  # Placed statements, each seal replaced by its rules
    sealed: dict = field(default_factory=dict)  # position of a seal rule -> the sealed relation
    auxiliary: dict = field(default_factory=dict)  # generated relation -> what it is for
    errors: list = field(default_factory=list)


def desugar_seals(placed: list) -> Desugared:
    """`placed` (syntax.loader.Placed) with the seal heads desugared (module
    docstring); misuse is an error at the seal."""
    out = Desugared([])
    seals = {}  # relation -> Placed seal rule
    for item in placed:
        stmt = item.statement
        if isinstance(stmt, ast.Rule) and _seal_of(stmt.head) is not None and _valid(stmt, out.errors):
            if stmt.head.name in seals:
                out.errors.append(Diagnostic(stmt.pos, "error", f"'{stmt.head.name}' is already sealed at "
                                                                f"{seals[stmt.head.name].statement.pos}"))
            else:
                seals[stmt.head.name] = item
    if not seals:
        out.placed = [p for p in placed if not (isinstance(p.statement, ast.Rule) and _seal_of(p.statement.head))]
        return out
    generated = {f"{name}{suffix}": name for name in seals for suffix in GENERATED}
    readers: dict = {name: [] for name in seals}
    for item in placed:
        _check_names(item, seals, generated, out.errors)
        if isinstance(item.statement, ast.Rule):
            for lit in item.statement.body:
                atom = lit.atom if isinstance(lit, ast.Negated) else lit
                if isinstance(atom, ast.Atom) and atom.name in readers and item.component not in readers[atom.name]:
                    readers[atom.name].append(item.component)
    for item in placed:
        stmt = item.statement
        if not isinstance(stmt, ast.Rule):
            out.placed.append(item)
        elif _seal_of(stmt.head) is None:
            out.placed.append(Placed(_reading_sealed(stmt, seals), item.component))
        elif seals.get(stmt.head.name) is item:
            rule = _reading_sealed(stmt, seals)
            components = readers[stmt.head.name] or [item.component]
            if len(components) > 1:
                out.errors.append(Diagnostic(stmt.pos, "error", f"the sealed '{stmt.head.name}' is read in components "
                                                                f"{', '.join(components)}; its receiver must be one"))
            sender, receiver = _desugar(rule, out.errors)
            out.placed += [Placed(s, item.component) for s in sender] + [Placed(s, components[0]) for s in receiver]
            out.sealed[stmt.pos] = stmt.head.name
            for suffix, text in GENERATED.items():
                if text is not None:
                    out.auxiliary[stmt.head.name + suffix] = text.format(out=stmt.head.name, pos=stmt.pos)
    return out


def _seal_of(head: ast.Atom):
    return next((a for a in head.args if isinstance(a, ast.Seal)), None)


def _valid(rule: ast.Rule, errors: list) -> bool:
    """The seal head's shape: @async, one seal, the last argument, no
    aggregate, destination and keys variables or constants, none sealed."""
    args, seal = rule.head.args, _seal_of(rule.head)
    found = []
    if rule.delivery != "async":
        found.append((seal.pos, "seal<..> needs an @async head: a sealed batch is sent to its destination"))
    elif sum(isinstance(a, ast.Seal) for a in args) > 1:
        found.append((seal.pos, "a head has at most one seal<..>; list all sealed variables in it"))
    elif any(isinstance(a, ast.Aggregate) for a in args):
        found.append((seal.pos, "seal<..> cannot be combined with an aggregate in one head"))
    elif args[0] is seal:
        found.append((seal.pos, "the location (first argument) cannot be sealed"))
    elif args[-1] is not seal:
        found.append((seal.pos, "seal<..> must be the last argument: the ones before it are the destination "
                                "and the batch key"))
    else:
        sealed = {v.name for v in seal.vars}
        for arg in args[:-1]:
            if not isinstance(arg, (ast.Var, ast.Const)):
                found.append((getattr(arg, "pos", rule.pos), "the destination and the key of a sealed head "
                                                              "must be variables or constants"))
            elif isinstance(arg, ast.Var) and arg.name in sealed:
                found.append((arg.pos, f"variable '{arg.name}' is both a batch key and sealed"))
    errors += [Diagnostic(pos, "error", message) for pos, message in found]
    return not found


def _check_names(item: Placed, seals: dict, generated: dict, errors: list) -> None:
    """A sealed relation has no rule or fact but its seal; generated names are not the user's."""
    stmt = item.statement
    atoms = []
    if isinstance(stmt, ast.Rule):
        atoms = [stmt.head] + [lit.atom if isinstance(lit, ast.Negated) else lit for lit in stmt.body]
        if stmt.head.name in seals and seals[stmt.head.name] is not item and _seal_of(stmt.head) is None:
            errors.append(Diagnostic(stmt.pos, "error", f"'{stmt.head.name}' is sealed at "
                                                        f"{seals[stmt.head.name].statement.pos}; no other rule "
                                                        f"may derive it"))
    elif isinstance(stmt, (ast.Fact, ast.InputDecl)):
        name = stmt.atom.name if isinstance(stmt, ast.Fact) else stmt.name
        if name in seals:
            errors.append(Diagnostic(stmt.pos, "error", f"'{name}' is sealed at {seals[name].statement.pos}; "
                                                        f"it cannot have facts or inputs"))
        atoms = [stmt.atom] if isinstance(stmt, ast.Fact) else []
    for atom in atoms:
        if isinstance(atom, ast.Atom) and atom.name in generated:
            owner = seals[generated[atom.name]].statement.pos
            errors.append(Diagnostic(atom.pos, "error", f"'{atom.name}' is a relation the seal at {owner} "
                                                        f"makes; use another name"))


def _reading_sealed(rule: ast.Rule, seals: dict) -> ast.Rule:
    """`rule` reading `outSealed` wherever its body names a sealed `out`."""
    def sealed(atom):
        return replace(atom, name=f"{atom.name}Sealed") if atom.name in seals else atom
    body = tuple(replace(lit, atom=sealed(lit.atom)) if isinstance(lit, ast.Negated)
                 else sealed(lit) if isinstance(lit, ast.Atom) else lit for lit in rule.body)
    return replace(rule, body=body)


def _desugar(rule: ast.Rule, errors: list) -> tuple:
    """The sender's and the receiver's statements of a valid seal rule."""
    name, pos, body = rule.head.name, rule.pos, rule.body
    *keys, seal = rule.head.args
    values = list(seal.vars)
    sealed = {v.name for v in values}
    keypart = tuple(lit for lit in body if not sealed & {v.name for v in _literal_vars(lit)})
    stored = [lit for lit in body if isinstance(lit, ast.Atom) and lit.name not in FUNCTIONS]
    location = stored[0].args[0] if stored and stored[0].args else None
    bound = {v.name for lit in keypart if isinstance(lit, (ast.Atom, ast.Comparison)) for v in _literal_vars(lit)}
    missing = [a.name for a in [location, *keys] if isinstance(a, ast.Var) and a.name not in bound]
    if location is None or not keypart or missing:
        unbound = f" ({', '.join(dict.fromkeys(missing))} unbound)" if missing else ""
        errors.append(Diagnostic(seal.pos, "error",
                                 f"the body's literals without sealed variables must bind the location, the "
                                 f"destination and the key{unbound}, so that an empty batch is sealed too: "
                                 f"e.g. ask(L, D, K), v(L, K, X) or v(L, D, K, _), v(L, D, K, X)"))
        return (), ()

    def atom(suffix, args):
        return ast.Atom(name + suffix, tuple(args), None, pos)

    batch = atom("Batch", [location, *keys, *values])
    unsealed = atom("", [*keys, *values])
    taken = sealed | {a.name for a in keys if isinstance(a, ast.Var)}
    count = ast.Var(next(n for n in (f"N{i or ''}" for i in itertools.count()) if n not in taken), pos)
    wildcards = [ast.Wildcard(pos) for _ in values]
    sender = (
        replace(rule, head=unsealed),
        ast.Rule(batch, "now", body, pos),
        ast.Rule(atom("Count", [*keys, ast.Aggregate("count", None, pos)]), "async", (batch,), pos),
        ast.Rule(atom("Count", [*keys, ast.Const(0, pos)]), "async",
                 keypart + (ast.Negated(atom("Batch", [location, *keys, *wildcards]), pos),), pos),
    )
    receiver = (
        ast.PersistDecl(name, pos),
        ast.PersistDecl(f"{name}Count", pos),
        ast.Rule(atom("Received", [*keys, ast.Aggregate("count", None, pos)]), "now", (unsealed,), pos),
        ast.Rule(atom("Sealed", [*keys, *values]), "now",
                 (unsealed, atom("Count", [*keys, count]), atom("Received", [*keys, count])), pos),
    )
    return sender, receiver


def _literal_vars(lit) -> list:
    if isinstance(lit, ast.Atom):
        return atom_vars(lit)
    if isinstance(lit, ast.Negated):
        return atom_vars(lit.atom)
    if isinstance(lit, ast.Comparison):
        return expr_vars(lit.left) + expr_vars(lit.right)
    return list(lit.keys) + list(lit.values)
