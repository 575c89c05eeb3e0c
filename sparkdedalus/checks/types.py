"""Column types, inferred by unification over columns and rule variables.

Types: int < long < double are numeric and widen into each other; string and
bool are apart. A column used both as a number and as a string (or bool) is an
error. A column nothing constrains is a string. `count` gives long, `avg`
double, `sum`/`min`/`max` the aggregated variable's type.
"""

from __future__ import annotations

from sparkdedalus.checks.parts import BUILTIN_RELATIONS
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.diagnostics import Diagnostic
from udfs.registry import FUNCTIONS

NUMERIC = ("int", "long", "double")
_FAMILY = {"int": "number", "long": "number", "double": "number", "number": "number",
           "string": "string", "bool": "bool"}
DEFAULT_TYPE = "string"


def _join(a: str | None, b: str | None) -> str | None:
    """The common type of a and b, or raises TypeError when they conflict."""
    if a is None or a == b:
        return b if a is None else a
    if b is None:
        return a
    if _FAMILY[a] != _FAMILY[b]:
        raise TypeError
    if a == "number":
        return b
    if b == "number":
        return a
    return max(a, b, key=NUMERIC.index)


def const_type(value) -> str:
    """The dialect type of a constant."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    return "string"


def _describe(t: str) -> str:
    return {"number": "a number"}.get(t, t)


class _Unifier:
    def __init__(self) -> None:
        self.parent: dict = {}
        self.type: dict = {}
        self.errors: list[Diagnostic] = []

    def find(self, key):
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def constrain(self, key, typ: str | None, pos: ast.Pos, what: str) -> None:
        root = self.find(key)
        try:
            self.type[root] = _join(self.type.get(root), typ)
        except TypeError:
            self.errors.append(Diagnostic(pos, "error",
                                          f"type conflict: {what} is used as {_describe(self.type[root])} "
                                          f"and as {_describe(typ)}"))

    def union(self, a, b, pos: ast.Pos, what: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        self.parent[rb] = ra
        tb = self.type.pop(rb, None)
        self.constrain(ra, tb, pos, what)

    def resolved(self, key) -> str:
        t = self.type.get(self.find(key))
        return DEFAULT_TYPE if t is None else ("long" if t == "number" else t)


def infer_types(norm, arities: dict) -> tuple[dict, list[Diagnostic]]:
    """Returns relation -> tuple of column types, and the conflicts found."""
    u = _Unifier()
    for name, decl in norm.decls.items():
        for i, column in enumerate(decl.columns):
            u.constrain(("col", name, i), column.type, column.pos, _column(name, i))
    for name, (_columns, types) in BUILTIN_RELATIONS.items():
        for i, t in enumerate(types):
            u.constrain(("col", name, i), t, ast.NOWHERE, _column(name, i))
    for fact in norm.facts:
        for i, arg in enumerate(fact.atom.args):
            u.constrain(("col", fact.atom.name, i), const_type(arg.value), arg.pos, _column(fact.atom.name, i))
    for rule in norm.rules:
        _rule_types(u, rule)
    types = {name: tuple(u.resolved(("col", name, i)) for i in range(arity))
             for name, arity in arities.items() if name not in FUNCTIONS}
    return types, u.errors


def _column(rel: str, i: int) -> str:
    return f"column {i + 1} of '{rel}'"


def _rule_types(u: _Unifier, rule) -> None:
    def var_key(name: str):
        return ("var", rule.index, name)

    def term(expr) -> object:
        """A unification key for an expression's type."""
        if isinstance(expr, ast.Var):
            return var_key(expr.name)
        key = ("expr", rule.index, id(expr))
        if isinstance(expr, ast.Const):
            u.constrain(key, const_type(expr.value), expr.pos, "a constant")
        elif isinstance(expr, ast.Neg):
            u.union(key, term(expr.operand), expr.pos, "an operand of '-'")
            u.constrain(key, "number", expr.pos, "an operand of '-'")
        elif isinstance(expr, ast.BinOp):
            # + concatenates strings and adds numbers; the others are numeric
            u.union(key, term(expr.left), expr.pos, f"an operand of '{expr.op}'")
            u.union(key, term(expr.right), expr.pos, f"an operand of '{expr.op}'")
            if expr.op != "+":
                u.constrain(key, "number", expr.pos, f"an operand of '{expr.op}'")
        return key

    def atom(a: ast.Atom) -> None:
        if a.name in FUNCTIONS:
            function = FUNCTIONS[a.name]
            n_in = function.inputs
            for i, arg in enumerate(a.args):
                declared = function.input_types[i] if i < n_in else function.output_types[i - n_in]
                what = f"argument {i + 1} of '{a.name}'"
                if declared == "same":
                    u.union(term(arg), term(a.args[0]), getattr(arg, "pos", a.pos), what)
                elif declared != "any":
                    u.constrain(term(arg), declared, getattr(arg, "pos", a.pos), what)
            return
        for i, arg in enumerate(a.args):
            u.union(("col", a.name, i), term(arg), getattr(arg, "pos", a.pos), _column(a.name, i))
        if isinstance(a.time, ast.VarTime):
            u.constrain(var_key(a.time.var.name), "int", a.time.pos, f"tick variable '{a.time.var.name}'")

    for lit in rule.body:
        if isinstance(lit, ast.Atom):
            atom(lit)
        elif isinstance(lit, ast.Negated):
            atom(lit.atom)
        elif isinstance(lit, ast.Comparison):
            u.union(term(lit.left), term(lit.right), lit.pos, f"the operands of '{lit.op}'")
    head = rule.head
    for i, arg in enumerate(head.args):
        col = ("col", head.name, i)
        what = _column(head.name, i)
        if isinstance(arg, ast.Aggregate):
            if arg.func == "count":
                u.constrain(col, "long", arg.pos, what)
            elif arg.func == "avg":
                u.constrain(var_key(arg.var.name), "number", arg.pos, f"the variable of avg<{arg.var.name}>")
                u.constrain(col, "double", arg.pos, what)
            else:
                if arg.func == "sum":
                    u.constrain(var_key(arg.var.name), "number", arg.pos, f"the variable of sum<{arg.var.name}>")
                u.union(col, var_key(arg.var.name), arg.pos, what)
        else:
            u.union(col, term(arg), getattr(arg, "pos", head.pos), what)
