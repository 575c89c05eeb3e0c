"""Comparisons and rows of the reference evaluator (its expressions: sparkdedalus.values).

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
sparkdedalus.values.NoValue: division by zero
"""

from __future__ import annotations

import operator

from sparkdedalus.values import (EvaluationError, NoValue, TypeMismatch, arith, convert, evaluate,  # noqa: F401
                                 is_number)

_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
            "==": operator.eq, "!=": operator.ne}


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
