"""Values of the dialect's types as Python holds them (both engines' inputs,
the reference evaluator's facts): int/long are Python ints within 64 bits,
double a float (ints widen), bool a bool, string a str; `evaluate` gives an
expression's value (the reference evaluator's and the analyses').

>>> convert(3, "double")
3.0
>>> convert(True, "int")
Traceback (most recent call last):
  ...
sparkdedalus.values.TypeMismatch: True is not a value of type int
"""

from __future__ import annotations

import math
import operator

from sparkdedalus.errors import UserError
from sparkdedalus.syntax import ast

INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1


class TypeMismatch(ValueError):
    """A value is not of the type asked for."""


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value) -> bool:
    return is_int(value) or isinstance(value, float)


def convert(value, typ: str):
    """`value` as a value of the dialect type `typ`: ints widen to double;
    raises `TypeMismatch` when it does not fit."""
    if typ in ("int", "long"):
        if is_int(value) and INT_MIN <= value <= INT_MAX:
            return value
    elif typ == "double":
        if is_number(value):
            return float(value)
    elif typ == "bool":
        if isinstance(value, bool):
            return value
    elif isinstance(value, str):
        return value
    raise TypeMismatch(f"{value!r} is not a value of type {typ}")


def from_text(text: str, typ: str):
    """The value of dialect type `typ` that `udfs.registry.spark_string` prints as `text`.

    >>> [from_text(t, typ) for t, typ in (("7", "int"), ("-Infinity", "double"), ("true", "bool"), ("x", "string"))]
    [7, -inf, True, 'x']
    """
    if typ in ("int", "long"):
        return int(text)
    if typ == "double":
        return float(text)
    if typ == "bool":
        return text == "true"
    return text


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
