"""Dialect expressions as Spark SQL expression text over a rule's columns.

Variables live in columns named by the rule compiler (`v0`, `v1`, ...: Spark
resolves column names case-insensitively, Dedalus variables are case-sensitive).
Semantics follow docs/semantics.md: int / int truncates toward zero (`div`),
`%` takes the dividend's sign, division by zero yields NULL (the binding is then
dropped), `+` on strings concatenates.

>>> sql_expr(ast.BinOp("/", ast.Var("X"), ast.Const(2)), {"X": "v0"}, {"X": "int"})
'(CASE WHEN 2L = 0 THEN NULL ELSE `v0` div 2L END)'
"""

from __future__ import annotations

from sparkdedalus.checks.types import const_type
from sparkdedalus.syntax import ast


def sql_literal(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}L"
    if isinstance(value, float):
        return f"CAST('{value!r}' AS DOUBLE)"
    escaped = value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    return f"'{escaped}'"


def expr_type(expr, var_types: dict) -> str:
    """The dialect type of an expression, given its variables' types."""
    if isinstance(expr, ast.Var):
        return var_types[expr.name]
    if isinstance(expr, ast.Const):
        return const_type(expr.value)
    if isinstance(expr, ast.Neg):
        return expr_type(expr.operand, var_types)
    left, right = expr_type(expr.left, var_types), expr_type(expr.right, var_types)
    if "string" in (left, right):
        return "string"
    return "double" if "double" in (left, right) else "int"


def sql_expr(expr, columns: dict, var_types: dict) -> str:
    """SQL text of `expr`; `columns` maps variable names to column names."""
    if isinstance(expr, ast.Var):
        return f"`{columns[expr.name]}`"
    if isinstance(expr, ast.Const):
        return sql_literal(expr.value)
    if isinstance(expr, ast.Neg):
        return f"(- {sql_expr(expr.operand, columns, var_types)})"
    left = sql_expr(expr.left, columns, var_types)
    right = sql_expr(expr.right, columns, var_types)
    if expr.op == "+" and expr_type(expr, var_types) == "string":
        return f"concat({left}, {right})"
    if expr.op in ("/", "%"):
        integral = expr_type(expr, var_types) == "int"
        op = "div" if expr.op == "/" and integral else expr.op
        return f"(CASE WHEN {right} = 0 THEN NULL ELSE {left} {op} {right} END)"
    return f"({left} {expr.op} {right})"


_COMPARISON = {"==": "=", "!=": "<>"}


def sql_comparison(cmp: ast.Comparison, columns: dict, var_types: dict) -> str:
    op = _COMPARISON.get(cmp.op, cmp.op)
    return f"({sql_expr(cmp.left, columns, var_types)} {op} {sql_expr(cmp.right, columns, var_types)})"
