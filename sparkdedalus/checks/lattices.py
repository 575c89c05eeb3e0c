"""min and max inside their own recursion: which rules may, and what they mean.

Within a tick an aggregate reads a complete relation, so a rule may not
aggregate over a relation of its own same-tick recursion (checks/stratification.py)
with one exception: `min<X>` and `max<X>` when the recursion is monotone in the
aggregate's order. The relation is then a *lattice* (`parts.Lattice`): per
group of its other columns it holds only the best value, and the tick computes
the least fixpoint in that order (docs/language.md, section 9; docs/semantics.md,
section 5). The fixpoint exists and is reached when, in every rule of the
recursion, the value read from a lattice atom (say D1 for `min`)

- flows only to the head's aggregated argument, unchanged or plus a term known
  to be >= 0 for min (<= 0 for max): `D == D1 + W` with `W >= 0` in the body,
  `D == D1 + 1`, or `D1` itself; a derived fact is then never better than the
  fact it comes from, so improvements stop;
- is otherwise only compared with a bound in the direction the order keeps:
  `D1 < 100` for min (an improved value still passes), never `D1 > 100`;
- is not a group key of the head, not joined, negated, passed to a function
  or combined with another lattice value.

Rules of a lattice relation without an aggregate (a base case such as
`dist(L, X, 0) :- source(L, X)`) add candidates. count, sum and avg are not
allowed over their own recursion: as a set aggregate a count derived at one
iteration is wrong at the next, and the monotone variants (BigDatalog's
mcount, msum) mean something other than what `count<X>` means elsewhere.

>>> from sparkdedalus import Program
>>> p = Program.parse('''.decl edge(l: string, x: int, y: int, w: int)
... dist(L, X, 0) :- edge(L, X, _, _), X == 1;
... dist(L, Y, min<D>) :- dist(L, X, D1), edge(L, X, Y, W), W >= 0, D == D1 + W;''')
>>> p.lattices["dist"]
Lattice(relation='dist', func='min', position=2)
>>> Program.parse('''.decl edge(l: string, x: int, y: int, w: int)
... dist(L, X, 0) :- edge(L, X, _, _), X == 1;
... dist(L, Y, min<D>) :- dist(L, X, D1), edge(L, X, Y, W), D == D1 + W;''')
Traceback (most recent call last):
...
sparkdedalus.syntax.diagnostics.DiagnosticError: <string>:3:16: error: min<D> over its own recursion could improve on the value it reads: D is D1 plus W, not known to be >= 0; add a bound such as `W >= 0` to the body (docs/language.md, section 9)
"""

from __future__ import annotations

from dataclasses import replace

from sparkdedalus.checks.dependencies import Edge, strongly_connected
from sparkdedalus.checks.normalize import is_wildcard
from sparkdedalus.checks.parts import Lattice
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.ast import expr_vars
from sparkdedalus.syntax.diagnostics import Diagnostic
from sparkdedalus.syntax.printer import format_literal

LATTICE_FUNCTIONS = ("min", "max")
SECTION = "(docs/language.md, section 9)"
# signs of an expression: exactly zero, >= 0, <= 0, unknown
ZERO, NONNEG, NONPOS, UNKNOWN = "0", ">= 0", "<= 0", "?"
#: `a op b` is `b FLIPPED[op] a`
FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def recursive_aggregates(relations, rules, edges: list[Edge]) -> tuple[dict, list[Edge], list[Diagnostic]]:
    """The lattice relations ({name: Lattice}); the edges with those of the
    aggregates over their own recursion made positive (for stratification:
    the checks here replace its error); and the errors."""
    now = [e for e in edges if e.time == "now"]
    component = {rel: i for i, comp in enumerate(strongly_connected(relations, now)) for rel in comp}

    def recursive(rule) -> bool:  # other aggregates stay cycles stratification reports
        return rule.delivery == "now" and rule.is_aggregate \
            and all(a.func in LATTICE_FUNCTIONS for a in rule.aggregates) and any(
                component.get(atom.name) == component.get(rule.head.name) for atom in rule.positive_atoms)

    found = [r for r in rules if recursive(r)]
    lattices: dict = {}
    errors = []
    for rule in found:
        errors += _lattice_of(rule, lattices)
    for rule in rules:
        if rule.delivery == "now" and rule.head.name in lattices and rule.is_aggregate and rule not in found:
            errors += _lattice_of(rule, lattices)
    in_recursion = {component[name] for name in lattices}
    for rule in rules:
        if rule.delivery == "now" and component.get(rule.head.name) in in_recursion:
            errors += _flow_errors(rule, {n: lat for n, lat in lattices.items()
                                          if component[n] == component[rule.head.name]})
    handled = {r.index for r in found}
    edges = [replace(e, polarity="positive") if e.rule in handled and e.polarity == "aggregated"
             and e.time == "now" and component.get(e.source) == component.get(e.target) else e for e in edges]
    return lattices, edges, errors


def _lattice_of(rule, lattices: dict) -> list[Diagnostic]:
    """Record the lattice `rule`'s head aggregate makes; an error when it
    cannot make one or disagrees with another rule of the relation."""
    agg, *more = rule.aggregates
    if more or agg.func not in LATTICE_FUNCTIONS:
        bad = more[0] if more else agg
        return [Diagnostic(bad.pos, "error",
                           f"{_text(bad)} aggregates over its own recursion ('{rule.head.name}' is read within the "
                           f"same tick by the rules it feeds): only one min<X> or max<X> per head may {SECTION}")]
    lattice = Lattice(rule.head.name, agg.func, rule.head.args.index(agg))
    known = lattices.setdefault(rule.head.name, lattice)
    if known != lattice:
        return [Diagnostic(agg.pos, "error",
                           f"'{rule.head.name}' keeps {known.func}<> at argument {known.position + 1} in its "
                           f"recursion: every rule that aggregates it must take the same {SECTION}")]
    return []


def _flow_errors(rule, lattices: dict) -> list[Diagnostic]:
    """Where the values `rule` reads from lattice atoms of its own recursion go
    somewhere the order is not kept (see the module docstring)."""
    values: dict = {}  # variable -> (the lattice atom's relation, its function, offset sign from the value read)
    for atom in rule.positive_atoms:
        lattice = lattices.get(atom.name)
        if lattice is None:
            continue
        arg = atom.args[lattice.position]
        if isinstance(arg, ast.Const):
            return [Diagnostic(arg.pos, "error",
                               f"a constant where '{atom.name}' keeps its {lattice.func} in its own recursion: "
                               f"a better value would make the fact disappear {SECTION}")]
        if not is_wildcard(arg):
            if arg.name in values:
                return [_misused(arg, values[arg.name][0], "combined with another value of the recursion")]
            values[arg.name] = (atom.name, lattice.func, ZERO)
    if not values:
        return []
    read_at = {(id(atom), lattice.position) for atom in rule.positive_atoms
               for lattice in [lattices.get(atom.name)] if lattice is not None}
    for atom in rule.positive_atoms + rule.function_atoms + rule.negated_atoms:
        for i, arg in enumerate(atom.args):
            for var in expr_vars(arg):
                if var.name in values and (id(atom), i) not in read_at:
                    return [_misused(var, values[var.name][0], f"used in '{atom.name}'")]
    if rule.choose is not None:
        for var in rule.choose.keys + rule.choose.values:
            if var.name in values:
                return [_misused(var, values[var.name][0], "used by choose")]
    guards = _guards(rule)
    pending = list(rule.comparisons)
    progress = True
    while progress:  # assignments from a value in dependency order
        progress = False
        for cmp in list(pending):
            assigned = _assignment(cmp, values)
            if assigned is None:
                continue
            target, source = assigned
            sources = [v for v in expr_vars(source) if v.name in values]
            if len(sources) > 1:
                return [_misused(sources[1], values[sources[1].name][0], "combined with another value of the recursion")]
            relation, func, sign = values[sources[0].name]
            offset = _offset(source, sources[0].name, guards)
            if offset is None:
                return [_misused(sources[0], relation, f"in `{_text(cmp)}`: only `{sources[0].name} + ...` keeps the order")]
            values[target.name] = (relation, func, _plus(sign, offset))
            pending.remove(cmp)
            progress = True
    for cmp in pending:
        error = _filter_error(cmp, values)
        if error is not None:
            return [error]
    return _head_errors(rule, lattices, values)


def _head_errors(rule, lattices: dict, values: dict) -> list[Diagnostic]:
    head = lattices.get(rule.head.name)
    for i, arg in enumerate(rule.head.args):
        term = arg.var if isinstance(arg, ast.Aggregate) else arg
        for var in ([] if term is None else expr_vars(term)):
            if var.name not in values:
                continue
            relation, func, sign = values[var.name]
            if head is None or i != head.position or head.func != func or term != var:
                return [_misused(var, relation, f"in the head of '{rule.head.name}' other than as its {func}")]
            if sign not in (ZERO, NONNEG if func == "min" else NONPOS):
                want = ">= 0" if func == "min" else "<= 0"
                return [Diagnostic(var.pos, "error",
                                   f"{func}<{var.name}> over its own recursion could improve on the value it reads: "
                                   f"{var.name} is {_origin(rule, var.name, values)}, not known to be {want}; add a "
                                   f"bound such as `W {'>=' if func == 'min' else '<='} 0` to the body {SECTION}")]
    return []


def _origin(rule, name: str, values: dict) -> str:
    """`D1 plus W` for the assignment of `name` (the value read, plus the rest)."""
    for cmp in rule.comparisons:
        for target, source in ((cmp.left, cmp.right), (cmp.right, cmp.left)):
            if cmp.op == "==" and target == ast.Var(name, target.pos) and name not in {v.name for v in expr_vars(source)}:
                read = next(v.name for v in expr_vars(source) if v.name in values)
                others = sorted({v.name for v in expr_vars(source)} - {read})
                return f"{read} plus {', '.join(others) or 'a constant'}"
    return "derived from the value it reads"


def _misused(var: ast.Var, relation: str, how: str) -> Diagnostic:
    return Diagnostic(var.pos, "error",
                      f"'{var.name}', the value '{relation}' aggregates within its own recursion, is {how}: it may "
                      f"only reach the head's aggregate or be bounded by a comparison {SECTION}")


def _assignment(cmp: ast.Comparison, values: dict):
    """(target, source) when `cmp` is `Z == expr` with a lattice value in expr and Z new."""
    if cmp.op != "==":
        return None
    for target, source in ((cmp.left, cmp.right), (cmp.right, cmp.left)):
        if isinstance(target, ast.Var) and target.name not in values \
                and any(v.name in values for v in expr_vars(source)):
            return target, source
    return None


def _filter_error(cmp: ast.Comparison, values: dict) -> Diagnostic | None:
    """An error unless `cmp` bounds a lattice value the way its order keeps
    (min: `V < t`, `V <= t`; max: `V > t`, `V >= t`), or reads none."""
    used = [v for v in expr_vars(cmp.left) + expr_vars(cmp.right) if v.name in values]
    if not used:
        return None
    var = used[0]
    relation, func, _ = values[var.name]
    if len(used) == 1 and cmp.left == var and cmp.op in FLIPPED:
        op = cmp.op
    elif len(used) == 1 and cmp.right == var and cmp.op in FLIPPED:
        op = FLIPPED[cmp.op]
    else:
        return _misused(var, relation, f"compared in `{_text(cmp)}`")
    if op in (("<", "<=") if func == "min" else (">", ">=")):
        return None
    return _misused(var, relation, f"bounded the wrong way in `{_text(cmp)}` (a better {func} would fail it)")


def _guards(rule) -> dict:
    """Variables the body bounds by a constant: {name: NONNEG or NONPOS}."""
    out = {}
    for cmp in rule.comparisons:
        for var, op, const in ((cmp.left, cmp.op, cmp.right), (cmp.right, FLIPPED.get(cmp.op, cmp.op), cmp.left)):
            if isinstance(var, ast.Var) and isinstance(const, ast.Const) and _number(const.value):
                if op in (">", ">=") and const.value >= 0:
                    out[var.name] = NONNEG
                elif op in ("<", "<=") and const.value <= 0:
                    out[var.name] = NONPOS
    return out


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _offset(expr, name: str, guards: dict) -> str | None:
    """The sign of `expr - name` when expr is `name` plus or minus other terms
    (name once, with coefficient +1); None otherwise."""
    if isinstance(expr, ast.Var) and expr.name == name:
        return ZERO
    if isinstance(expr, ast.BinOp) and expr.op in "+-":
        inside_left = any(v.name == name for v in expr_vars(expr.left))
        inside_right = any(v.name == name for v in expr_vars(expr.right))
        if inside_left and not inside_right:
            rest = _sign(expr.right, guards)
            offset = _offset(expr.left, name, guards)
            return None if offset is None else _plus(offset, rest if expr.op == "+" else _negated(rest))
        if inside_right and not inside_left and expr.op == "+":
            offset = _offset(expr.right, name, guards)
            return None if offset is None else _plus(offset, _sign(expr.left, guards))
    return None


def _sign(expr, guards: dict) -> str:
    """What is known of the sign of `expr` (no lattice value in it)."""
    if isinstance(expr, ast.Const):
        if not _number(expr.value):
            return UNKNOWN
        return ZERO if expr.value == 0 else NONNEG if expr.value > 0 else NONPOS
    if isinstance(expr, ast.Var):
        return guards.get(expr.name, UNKNOWN)
    if isinstance(expr, ast.Neg):
        return _negated(_sign(expr.operand, guards))
    if isinstance(expr, ast.BinOp):
        left, right = _sign(expr.left, guards), _sign(expr.right, guards)
        if expr.op == "+":
            return _plus(left, right)
        if expr.op == "-":
            return _plus(left, _negated(right))
        if expr.op in "*/":
            if ZERO in (left, right):
                return ZERO if UNKNOWN not in (left, right) or expr.op == "*" else UNKNOWN
            if UNKNOWN in (left, right):
                return UNKNOWN
            return NONNEG if left == right else NONPOS
        if expr.op == "%":
            return left
    return UNKNOWN


def _plus(a: str, b: str) -> str:
    if a == ZERO:
        return b
    if b == ZERO:
        return a
    return a if a == b and a != UNKNOWN else UNKNOWN


def _negated(sign: str) -> str:
    return {NONNEG: NONPOS, NONPOS: NONNEG}.get(sign, sign)


def _text(node) -> str:
    if isinstance(node, ast.Aggregate):
        return f"{node.func}<{node.var.name if node.var else '*'}>"
    return format_literal(node)
