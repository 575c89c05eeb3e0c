"""Values of the dialect's types as Python holds them (both engines' inputs,
the reference evaluator's facts): int/long are Python ints within 64 bits,
double a float (ints widen), bool a bool, string a str.

>>> convert(3, "double")
3.0
>>> convert(True, "int")
Traceback (most recent call last):
  ...
sparkdedalus.values.TypeMismatch: True is not a value of type int
"""

from __future__ import annotations

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
