"""Values, expressions and comparisons of the reference evaluator.

Values are Python `int` (the dialect's int and long, both 64-bit), `float`
(double), `str` and `bool`.

>>> from sparkdedalus.syntax import ast
>>> arith("/", -7, 2), arith("%", -7, 2), arith("%", 7, -2), arith("/", 7, 2.0)
(-3, -1, 1, 3.5)
>>> arith("+", "ab", "c")
'abc'
>>> arith("/", 1, 0)
Traceback (most recent call last):
  ...
sparkdedalus.reference.values.NoValue: division by zero
"""

from __future__ import annotations

import math
import operator

from sparkdedalus.errors import UserError
from sparkdedalus.values import INT_MAX, INT_MIN, TypeMismatch, convert, is_int, is_number
from sparkdedalus.syntax import ast

_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
            "==": operator.eq, "!=": operator.ne}


class NoValue(Exception):
    """An expression has no value for this binding (division or modulo by
    zero): the binding produces nothing."""


class EvaluationError(UserError, ValueError):
    """A run cannot go on (integer overflow, a value of the wrong type)."""


def evaluate(expr, binding: dict):
    """The value of `expr` under `binding`; raises `NoValue`."""
    if isinstance(expr, ast.Const):
        return expr.value
    if isinstance(expr, ast.Var):
        return binding[expr.name]
    if isinstance(expr, ast.Neg):
        return arith("-", 0, evaluate(expr.operand, binding))
    if isinstance(expr, ast.BinOp):
        return arith(expr.op, evaluate(expr.left, binding), evaluate(expr.right, binding))
    raise EvaluationError(f"cannot evaluate {expr!r}")


def arith(op: str, a, b):
    """`a op b`: + - * / % on numbers (int op int stays int: / truncates toward
    zero, % takes the sign of the dividend), + on two strings concatenates."""
    if op == "+" and isinstance(a, str) and isinstance(b, str):
        return a + b
    if not (is_number(a) and is_number(b)):
        raise EvaluationError(f"'{op}' needs two numbers (or two strings for '+'), got {a!r} and {b!r}")
    if op in "/%" and b == 0:
        raise NoValue("division by zero" if op == "/" else "modulo by zero")
    if is_int(a) and is_int(b):
        if op == "/":
            result = _int_div(a, b)
        elif op == "%":
            result = a - b * _int_div(a, b)
        else:
            result = {"+": operator.add, "-": operator.sub, "*": operator.mul}[op](a, b)
        if not INT_MIN <= result <= INT_MAX:
            raise EvaluationError(f"integer overflow: {a} {op} {b} does not fit in 64 bits")
        return result
    a, b = float(a), float(b)
    if op == "%":
        return math.fmod(a, b)
    return {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}[op](a, b)


def _int_div(a: int, b: int) -> int:
    """Integer division truncating toward zero (exact, no float)."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b > 0) else -quotient


def compare(op: str, a, b) -> bool:
    """Numbers compare numerically (1 == 1.0), strings by code point, bools false < true."""
    if not (is_number(a) and is_number(b)) and type(a) is not type(b):
        raise EvaluationError(f"cannot compare {a!r} and {b!r}")
    return _COMPARE[op](a, b)


def convert_row(row: tuple, types: tuple) -> tuple:
    """`row` with each value converted to its column's type (`EvaluationError` when one does not fit)."""
    try:
        return tuple(convert(value, typ) for value, typ in zip(row, types))
    except TypeMismatch as exc:
        raise EvaluationError(str(exc)) from None
