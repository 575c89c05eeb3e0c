"""Terse constructors of the rules a rewrite adds (`sparkdedalus/rewrite/`)
or an analysis builds (`analysis.coordination.counting`), as AST nodes
(`syntax/ast.py`), with no text step: an argument that is a string is a
variable (`"_"`: a wildcard), an int a constant, an AST node itself.

>>> from sparkdedalus.syntax.printer import format_rule
>>> format_rule(rule(atom("n", "L", agg("count")), atom("q", "L", "X", at="T"), neg(atom("r", "L", "_")),
...                  cmp("==", "Lp", plus("L", ast.Const("/p"), "S")), delivery="next"))
'n(L, count<*>)@next :- q(L, X)@T, notin r(L, _), Lp == L + "/p" + S;'
"""

from __future__ import annotations

from sparkdedalus.syntax import ast


def term(x):
    """A variable for a string (`"_"`: a wildcard), a constant for an int, else `x`."""
    if isinstance(x, str):
        return ast.Wildcard() if x == "_" else ast.Var(x)
    return ast.Const(x) if isinstance(x, int) else x


def atom(name: str, *args, at: str | None = None) -> ast.Atom:
    """`name(args..)`, or `name(args..)@at` (entanglement: `at` binds the tick)."""
    return ast.Atom(name, tuple(term(a) for a in args), ast.VarTime(ast.Var(at)) if at else None)


def neg(positive: ast.Atom) -> ast.Negated:
    """`notin positive`."""
    return ast.Negated(positive)


def cmp(op: str, left, right) -> ast.Comparison:
    """`left op right`."""
    return ast.Comparison(op, term(left), term(right))


def plus(first, *rest):
    """`first + rest..`, left to right."""
    out = term(first)
    for x in rest:
        out = ast.BinOp("+", out, term(x))
    return out


def agg(func: str, var: str | None = None) -> ast.Aggregate:
    """`func<var>`; without `var`, `func<*>`."""
    return ast.Aggregate(func, ast.Var(var) if var else None)


def rule(head: ast.Atom, *body, delivery: str = "now") -> ast.Rule:
    """`head@delivery :- body..;`."""
    return ast.Rule(head, delivery, tuple(body))
