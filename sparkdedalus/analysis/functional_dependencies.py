"""Functional dependencies (FDs) and co-partition dependencies (CDs) between
attributes, as the scaling paper derives them (sections 4.2 and B.2.1).

Every dependency here has the form `target = via(source)`: `via` is a chain
of steps applied left to right, each a function relation's name (`("hash",)`:
target is the hash of source) or an `Arith` expression of one variable
(`V % 10`), or `()` when both hold the same value. An FD relates two
attributes of one relation, for every fact; a CD relates attributes of two
relations, for every pair of facts joined in one rule. They come from
- function relations: `hash(V, H)` has the FD V -> H (EDB annotation);
- arithmetic: `H == V % 10`, or a head term `V % 10`, an expression whose only
  variable is V, has the FD V -> H (not H -> V; `V % W` is no function of V);
- variable sharing and `X == Y`: attributes bound to one value are equal;
- inheritance: a rule's head gets the FDs that its body's function atoms,
  equalities and relation FDs give between the head's variables, chained
  transitively; an FD of a relation holds when every rule deriving it (and
  every fact of it) gives it (the union, then intersection step of B.2.1).
A CD is what the same reasoning gives between the attributes of two atoms of
one rule, kept when every rule where both relations appear gives it.

>>> from sparkdedalus.program import Program
>>> p = Program.parse('''e("a", "x");
... h(L, V, H) :- e(L, V), hash(V, H);
... j(L, V, W) :- e(L, V), hash(V, H), h(L, W, H);''')
>>> [str(d) for d in functional_dependencies(p)]
['hash.H = hash(hash.V)', 'h.c2 = hash(h.c1)']
>>> [str(d) for d in co_partition_dependencies(p)]
['h.c2 = hash(e.c1)', 'h.c2 = hash(j.c1)', 'h.c2 = hash(j.c2)']
>>> [str(d) for d in functional_dependencies(Program.parse('m(L, V, V % 10) :- e(L, V);'))]
['m.c2 = m.c1 % 10']
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import count

from sparkdedalus.analysis.reasons import Reason
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.printer import format_expr
from sparkdedalus.values import evaluate
from udfs.registry import FUNCTIONS

#: The longest chain of functions a dependency may follow.
MAX_CHAIN = 2


@dataclass(frozen=True)
class Arith:
    """A step of a `via` chain that is arithmetic: `expr`, whose only variable
    is `_`, the value the step applies to."""

    expr: object

    def of(self, operand):
        """`expr` with `operand` (an expression) for `_`."""
        return _substitute(self.expr, operand)

    def __str__(self) -> str:
        return format_expr(self.of(ast.Var("_")))


def _substitute(expr, operand):
    if isinstance(expr, ast.Var):
        return operand
    if isinstance(expr, ast.BinOp):
        return ast.BinOp(expr.op, _substitute(expr.left, operand), _substitute(expr.right, operand))
    if isinstance(expr, ast.Neg):
        return ast.Neg(_substitute(expr.operand, operand))
    return expr


def arith_step(expr):
    """(variable, `Arith`) when `expr` is arithmetic over constants and one
    variable, a function of it (with a value: no division by the constant 0);
    else None."""
    names = {v.name for v in ast.expr_vars(expr)}
    if isinstance(expr, (ast.BinOp, ast.Neg)) and len(names) == 1 and not _by_zero(expr):
        (name,) = names
        return name, Arith(_substitute(expr, ast.Var("_")))
    return None


def _by_zero(expr) -> bool:
    if isinstance(expr, ast.BinOp):
        zero = expr.op in "/%" and isinstance(expr.right, ast.Const) and expr.right.value == 0
        return zero or _by_zero(expr.left) or _by_zero(expr.right)
    return isinstance(expr, ast.Neg) and _by_zero(expr.operand)


def apply_via(via: tuple, value):
    """`via(value)`: each step applied in turn."""
    for step in via:
        value = evaluate(step.expr, {"_": value}) if isinstance(step, Arith) else FUNCTIONS[step].python(value)[0]
    return value


def via_text(via: tuple, name: str) -> str:
    """`via(name)` as text: `hash(v)`, `v % 10`, `hash(v % 10)`."""
    term = ast.Var(name)
    for step in via:
        term = step.of(term) if isinstance(step, Arith) else ast.Var(f"{step}({format_expr(term)})")
    return format_expr(term)


@dataclass(frozen=True)
class Attr:
    """Column `column` (named `name`) of `relation`; column 0 is the location."""

    relation: str
    column: int
    name: str

    def __str__(self) -> str:
        return f"{self.relation}.{self.name}"

    def to_json(self) -> dict:
        return {"relation": self.relation, "column": self.column, "name": self.name}


@dataclass(frozen=True)
class Dependency:
    """`target = via(source)`: an FD (one relation) or a CD (two relations)."""

    kind: str  # "fd" or "cd"
    source: Attr
    target: Attr
    via: tuple  # function names, applied left to right; () = equal values
    reasons: tuple = ()

    def __str__(self) -> str:
        return f"{self.target} = {via_text(self.via, str(self.source))}"

    def to_json(self) -> dict:
        return {"kind": self.kind, "source": self.source.to_json(), "target": self.target.to_json(),
                "via": [str(step) for step in self.via], "reasons": [r.to_json() for r in self.reasons]}


def function_columns(name: str) -> tuple:
    """A function relation's column names, from its documented signature."""
    return tuple(a.strip() for a in FUNCTIONS[name].doc.split(")")[0].split("(")[1].split(","))


class RuleTerms:
    """Which variables of one rule's body denote the same value, and which are
    functions of which: union-find over variables plus function edges, closed
    under congruence (equal inputs give equal outputs). `fds` maps a relation
    to its FDs {(source col, target col, via): reasons}; with `dependencies`
    False, only the rule's own variables count (plain co-hashing, 4.1)."""

    def __init__(self, rule, fds: dict, dependencies: bool = True):
        self.rule = rule = flattened(rule)
        self._parent: dict = {}
        self._edges: list = []  # (source node, function name, target node, reasons)
        self._fresh = count()
        if dependencies:
            self._build(fds)
        self._close()

    def find(self, node):
        while self._parent.get(node, node) != node:
            node = self._parent[node]
        return node

    def _union(self, a, b) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self._parent[max(ra, rb, key=str)] = min(ra, rb, key=str)
        return ra != rb

    def _build(self, fds: dict) -> None:
        for lit in self.rule.body:
            if isinstance(lit, ast.Comparison) and lit.op == "==" and \
                    isinstance(lit.left, ast.Var) and isinstance(lit.right, ast.Var):
                self._union(lit.left.name, lit.right.name)
            elif isinstance(lit, ast.Comparison) and lit.op == "==":
                for var, expr in ((lit.left, lit.right), (lit.right, lit.left)):
                    step = arith_step(expr)
                    if isinstance(var, ast.Var) and step and step[0] != var.name:
                        why = Reason(f"{format_expr(expr)} is a function of {step[0]}", lit.pos)
                        self._edges.append((step[0], step[1], var.name, (why,)))
        for atom in self.rule.function_atoms:
            fn = FUNCTIONS[atom.name]
            source, *outs = atom.args
            if fn.inputs == 1 and isinstance(source, ast.Var):
                why = Reason(f"{atom.name}({', '.join(function_columns(atom.name))}) is a function", atom.pos)
                for out in outs:
                    if isinstance(out, ast.Var):
                        self._edges.append((source.name, atom.name, out.name, (why,)))
        for atom in self.rule.positive_atoms:
            for (i, j, via), why in fds.get(atom.name, {}).items():
                x, y = atom.args[i], atom.args[j]
                if isinstance(x, ast.Var) and isinstance(y, ast.Var):
                    self._chain(x.name, via, y.name, why)

    def _chain(self, x, via, y, why) -> None:
        if not via:
            self._union(x, y)
            return
        for name in via[:-1]:
            step = ("#", next(self._fresh))
            self._edges.append((x, name, step, why))
            x = step
        self._edges.append((x, via[-1], y, why))

    def _close(self) -> None:
        """Congruence: one output per (input, function)."""
        changed = True
        while changed:
            changed, seen = False, {}
            for source, name, target, _ in self._edges:
                key = (self.find(source), name)
                if key in seen:
                    changed |= self._union(seen[key], target)
                else:
                    seen[key] = target
        self._step = {}
        for source, name, target, why in self._edges:
            self._step.setdefault((self.find(source), name), (self.find(target), why))

    def term(self, var: str, via: tuple = ()):
        """A canonical name for the value `via(var)`: equal names, equal values."""
        node = self.find(var)
        for k, name in enumerate(via):
            if (node, name) not in self._step:
                return (node, via[k:])
            node = self._step[(node, name)][0]
        return (node, ())

    def chains(self, var: str) -> list:
        """(via, node, reasons) for every value reachable from `var` by at most
        MAX_CHAIN function steps, `()` (the variable itself) first."""
        out, frontier = [], [((), self.find(var), ())]
        while frontier:
            via, node, why = frontier.pop(0)
            out.append((via, node, why))
            if len(via) < MAX_CHAIN:
                frontier += [(via + (name,), target, why + extra)
                             for (source, name), (target, extra) in self._step.items() if source == node]
        return out


def flattened(rule):
    """`rule` with each arithmetic argument of its head and atoms a variable
    (`#1`, no name the dialect allows) equal to it: `h(L, V % 10)` reads
    `h(L, #1), #1 == V % 10`."""
    extra, fresh = [], count(1)

    def flat(atom):
        args = list(atom.args)
        for c, arg in enumerate(args):
            if isinstance(arg, (ast.BinOp, ast.Neg)):
                args[c] = ast.Var(f"#{next(fresh)}", arg.pos)
                extra.append(ast.Comparison("==", args[c], arg, arg.pos))
        return replace(atom, args=tuple(args)) if args != list(atom.args) else atom

    head = flat(rule.head)
    body = [flat(lit) if isinstance(lit, ast.Atom) else lit for lit in rule.body]
    return replace(rule, head=head, body=tuple(body) + tuple(extra)) if extra else rule


def _attr(program, relation: str, column: int) -> Attr:
    return Attr(relation, column, program.relations[relation].columns[column])


def _var_columns(atom) -> list:
    """(column, variable name) of an atom's non-location variable arguments."""
    return [(c, a.name) for c, a in enumerate(atom.args) if c > 0 and isinstance(a, ast.Var)]


def _dependencies_between(terms: RuleTerms, a, b) -> dict:
    """{(col of a, col of b, via): reasons}: b's column = via(a's column), in
    this rule. Within one atom (an FD) a shared variable counts; between two
    (a CD) it does not: that is a shared key."""
    found = {}
    for i, x in _var_columns(a):
        reach = terms.chains(x)
        for j, y in _var_columns(b):
            if (i == j) if a is b else (x == y):
                continue
            for via, node, why in reach:
                if node == terms.find(y):
                    found.setdefault((i, j, via), why)
                    break
    return found


def _generated(rule, fds: dict) -> dict:
    """The FDs of the head that this rule gives, with their reasons."""
    terms = RuleTerms(rule, fds)
    found = _dependencies_between(terms, terms.rule.head, terms.rule.head)
    return {k: (Reason(f"rule derives {rule.head.name}", rule.pos),) + why for k, why in found.items()}


def _holds_on_facts(program, relation: str, fd) -> bool:
    i, j, via = fd
    for fact in program.facts:
        if fact.atom.name == relation:
            if apply_via(via, fact.row[i]) != fact.row[j]:
                return False
    return True


def relation_fds(program) -> dict:
    """{relation: {(source col, target col, via): reasons}} for every derived
    relation: the greatest set that every rule deriving it gives (B.2.1)."""
    rules = [r for r in program.rules if not r.persistence]
    unknown = {d.name for d in program.inputs}  # rows from files: no dependency known
    heads = {r.head.name for r in rules} - unknown
    fds = {name: {} for name in heads}
    changed = True
    while changed:  # union step: everything some rule gives
        changed = False
        for rule in rules:
            if rule.head.name in heads:
                for key, why in _generated(rule, fds).items():
                    if key not in fds[rule.head.name]:
                        fds[rule.head.name][key] = why
                        changed = True
    changed = True
    while changed:  # intersection step: only what every rule (and every fact) gives
        changed = False
        for name in sorted(heads):
            kept = {k: why for k, why in fds[name].items() if _holds_on_facts(program, name, k)}
            for rule in program.defining_rules(name):
                if not rule.persistence:
                    generated = _generated(rule, fds)
                    kept = {k: why for k, why in kept.items() if k in generated}
            if kept.keys() != fds[name].keys():
                fds[name] = kept
                changed = True
    return fds


def functional_dependencies(program) -> tuple:
    """The FDs of the function relations the program uses and of its derived
    relations, each with the rules and function atoms that establish it."""
    out = []
    used = {}
    for rule in program.rules:
        for atom in rule.function_atoms:
            used.setdefault(atom.name, atom.pos)
    for name, pos in used.items():
        fn = FUNCTIONS[name]
        if fn.inputs == 1:
            cols = function_columns(name)
            for j in range(1, fn.arity):
                out.append(Dependency("fd", Attr(name, 0, cols[0]), Attr(name, j, cols[j]), (name,),
                                      (Reason(f"{name} is a function of its input", pos),)))
    for name, fds in relation_fds(program).items():
        for (i, j, via), why in sorted(fds.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
            out.append(Dependency("fd", _attr(program, name, i), _attr(program, name, j), via, why))
    return tuple(out)


def co_partition_dependencies(program, rules=None) -> tuple:
    """The CDs between the attributes of the relations the given rules (rule
    indices; default: every rule) join, head included: the ones every rule
    where both relations appear gives."""
    chosen = [program.rules[i] for i in rules] if rules is not None else list(program.rules)
    chosen = [r for r in chosen if not r.persistence]
    fds = relation_fds(program)
    given: dict = {}  # (relation a, relation b) -> {(i, j, via): reasons}, one dict per rule
    for rule in chosen:
        terms = RuleTerms(rule, fds)
        atoms = [terms.rule.head] + terms.rule.positive_atoms
        per_rule: dict = {}
        for a in atoms:
            for b in atoms:
                if a.name != b.name:
                    for key, why in _dependencies_between(terms, a, b).items():
                        per_rule.setdefault((a.name, b.name), {}).setdefault(
                            key, (Reason(f"rule joins {a.name} and {b.name}", rule.pos),) + why)
        for pair in {(a.name, b.name) for a in atoms for b in atoms if a.name != b.name}:
            found = per_rule.get(pair, {})
            if pair in given:
                given[pair] = {k: given[pair][k] + found[k] for k in given[pair] if k in found}
            else:
                given[pair] = found
    out = []
    for (a, b), deps in given.items():
        for (i, j, via), why in deps.items():
            out.append(Dependency("cd", _attr(program, a, i), _attr(program, b, j), via, tuple(dict.fromkeys(why))))
    return tuple(sorted(out, key=str))
