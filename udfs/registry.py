"""Function relations: relations with an infinite extension, computed, not stored.

`hash(V, H)` holds when H is the hash of V. In a rule body a function relation's
inputs must be bound by other atoms; its outputs are bound (or checked) by it.
One registry serves the front end (names, arities, types), the reference
evaluator (`python`) and the Spark engine (`spark`, Spark SQL text), so both
engines compute the same values. Both print a value the same way: `spark_string`
in Python, `spark_string_sql` in Spark SQL.

>>> FUNCTIONS["hash"].python("hi") == FUNCTIONS["hash"].python("hi")
True
>>> FUNCTIONS["strlen"].python("héllo")
(5,)
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Callable

import xxhash

_SPARK_HASH_SEED = 42  # the seed of Spark's xxhash64()
_SIGNING_PREFIX = "sig:"


def spark_string(value) -> str:
    """The text of a value, the same in both engines: `true`/`false`, integers in
    decimal, strings as they are, doubles in the canonical form: Python's `repr`
    (the shortest decimal that reads back as the same double, the closest to it
    if several), `0.0` for both zeros, `NaN`, `Infinity`, `-Infinity`.

    >>> [spark_string(v) for v in (True, 7, 2.5, 1e7, 5e-4, 1e16, -0.0, float("-inf"))]
    ['true', '7', '2.5', '10000000.0', '0.0005', '1e+16', '0.0', '-Infinity']
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return "0.0" if value == 0 else repr(value)
    return str(value)


def _let(value: str, name: str, body: str) -> str:
    """SQL binding `name` to `value` once inside `body` (a one-element `transform`)."""
    return f"element_at(transform(array({value}), {name} -> {body}), 1)"


def _double_sql(sql: str) -> str:
    """`spark_string` of a double in Spark SQL, without a Python UDF.

    Spark's own cast prints Java 17's `Double.toString`, which is not always the
    shortest decimal, so the digits are derived from the double's exact decimal
    value (Scala's `BigDecimal.exact`, called with `reflect`): for the smallest k
    (1..17) at which one reads back as the double, the exact value rounded to k
    significant digits (half to even), or else its other k-digit neighbour; then
    laid out as `repr` does (positional for 1e-4 <= |x| < 1e16). This is `repr`'s
    choice: the decimals that read back as x form an interval around x, so it
    holds a k-digit one exactly when it holds one of x's two k-digit neighbours,
    and the nearest of those that reads back is the closest to x."""
    exact = "reflect('scala.math.BigDecimal', 'exact', abs(x))"  # plain or 1.23E-7
    parts = ("named_struct('i', substring_index(substring_index(e, 'E', 1), '.', 1), "
             "'a', replace(substring_index(e, 'E', 1), '.', ''), "
             "'x', IF(instr(e, 'E') > 0, CAST(substring_index(e, 'E', -1) AS INT), 0))")
    # significant digits s and exponent p: |x| = s[0].s[1:] * 10^p (before rounding)
    digits = ("named_struct('s', TRIM(BOTH '0' FROM m.a), "
              "'p', length(m.i) - 1 - (length(m.a) - length(TRIM(LEADING '0' FROM m.a))) + m.x)")
    rounded = ("named_struct('l', CAST(rpad(substr(d.s, 1, k), k, '0') AS BIGINT), "
               "'up', substr(d.s, k + 1) > '5' OR (substr(d.s, k + 1) = '5' "
               "AND substr(d.s, k, 1) IN ('1', '3', '5', '7', '9')))")

    def reads_back(n: str) -> str:
        return f"CAST(concat(CAST({n} AS STRING), 'e', CAST(d.p - k + 1 AS STRING)) AS DOUBLE) = abs(x)"

    nearest, other = "(r.l + IF(r.up, 1, 0))", "(r.l + IF(r.up, 0, 1))"
    candidate = _let(rounded, "r", f"CASE WHEN {reads_back(nearest)} THEN named_struct('n', {nearest}, 'k', k) "
                                   f"WHEN {reads_back(other)} THEN named_struct('n', {other}, 'k', k) END")
    shortest = f"element_at(filter(transform(sequence(1, 17), k -> {candidate}), c -> c IS NOT NULL), 1)"
    # the chosen digits t (no trailing zeros) and exponent q: |x| = t[0].t[1:] * 10^q
    chosen = ("named_struct('t', TRIM(TRAILING '0' FROM CAST(c.n AS STRING)), "
              "'q', d.p - c.k + length(CAST(c.n AS STRING)))")
    layout = ("CASE WHEN f.q >= 16 OR f.q < -4 THEN concat(substr(f.t, 1, 1), "
              "IF(length(f.t) > 1, concat('.', substr(f.t, 2)), ''), 'e', IF(f.q < 0, '-', '+'), "
              "IF(abs(f.q) < 10, '0', ''), CAST(abs(f.q) AS STRING)) "
              "WHEN f.q < 0 THEN concat('0.', repeat('0', -f.q - 1), f.t) "
              "WHEN length(f.t) <= f.q + 1 THEN concat(f.t, repeat('0', f.q + 1 - length(f.t)), '.0') "
              "ELSE concat(substr(f.t, 1, f.q + 1), '.', substr(f.t, f.q + 2)) END")
    finite = _let(exact, "e", _let(parts, "m", _let(digits, "d", _let(shortest, "c", _let(chosen, "f", layout)))))
    return _let(f"CAST({sql} AS DOUBLE)", "x",
                "CASE WHEN isnan(x) THEN 'NaN' WHEN x = CAST('Infinity' AS DOUBLE) THEN 'Infinity' "
                "WHEN x = CAST('-Infinity' AS DOUBLE) THEN '-Infinity' WHEN x = 0 THEN '0.0' "
                f"ELSE concat(IF(x < 0, '-', ''), {finite}) END")


def spark_string_sql(sql: str, dialect_type: str) -> str:
    """Spark SQL text computing `spark_string` of the SQL expression `sql`, a
    value of the given dialect type."""
    return _double_sql(sql) if dialect_type == "double" else f"CAST({sql} AS STRING)"


def _signed64(n: int) -> int:
    return n - (1 << 64) if n >= 1 << 63 else n


def xxhash64_string(s: str) -> int:
    """Spark's `xxhash64(s)` of a string: xxHash64 with seed 42 of its UTF-8
    bytes, as a signed 64-bit integer (Spark's LongType).

    >>> xxhash64_string("hi") == xxhash64_string("hi") and -2**63 <= xxhash64_string("hi") < 2**63
    True
    """
    return _signed64(xxhash.xxh64_intdigest(s.encode("utf-8"), seed=_SPARK_HASH_SEED))


def _hash(value) -> tuple:
    return (xxhash64_string(spark_string(value)),)


def _sha256(value) -> tuple:
    return (hashlib.sha256(spark_string(value).encode("utf-8")).hexdigest(),)


def _sign(value) -> tuple:
    return _sha256(_SIGNING_PREFIX + spark_string(value))


def _spark_hash(value) -> tuple:
    return (f"xxhash64({spark_string_sql(*value)})",)


def _spark_sha256(value) -> tuple:
    return (f"sha2({spark_string_sql(*value)}, 256)",)


def _spark_sign(value) -> tuple:
    return (f"sha2(concat('{_SIGNING_PREFIX}', {spark_string_sql(*value)}), 256)",)


def _spark_tostring(value) -> tuple:
    return (spark_string_sql(*value),)


def _spark_strlen(value) -> tuple:
    return (f"CAST(char_length({value[0]}) AS BIGINT)",)


def _home(location) -> tuple:
    text = spark_string(location)
    return (text.rpartition("/")[0] if "/" in text else text,)


def _spark_home(value) -> tuple:
    text = spark_string_sql(*value)
    return (f"CASE WHEN instr({text}, '/') > 0 THEN regexp_extract({text}, '^(.*)/[^/]*$', 1) ELSE {text} END",)


def _spark_abs(value) -> tuple:
    return (f"abs({value[0]})",)


@dataclass(frozen=True)
class FunctionRelation:
    """`name(in1, ..., out1, ...)`: inputs first, then outputs."""

    name: str
    input_types: tuple  # "any", "number", or a dialect type
    output_types: tuple  # a dialect type, or "same" (the first input's type)
    python: Callable[..., tuple]
    #: the inputs as (SQL text, dialect type) pairs -> the outputs' SQL text
    spark: Callable[..., tuple]
    doc: str

    @property
    def arity(self) -> int:
        return len(self.input_types) + len(self.output_types)

    @property
    def inputs(self) -> int:
        return len(self.input_types)


FUNCTIONS: dict[str, FunctionRelation] = {f.name: f for f in (
    FunctionRelation("hash", ("any",), ("long",), _hash, _spark_hash,
                     "hash(V, H): H is Spark's xxhash64 of the text of V"),
    FunctionRelation("sha256", ("any",), ("string",), _sha256, _spark_sha256,
                     "sha256(V, H): H is the hex SHA-256 of the text of V"),
    FunctionRelation("sign", ("any",), ("string",), _sign, _spark_sign,
                     "sign(V, S): S is a signature of V (hex SHA-256 of \"sig:\" + the text of V)"),
    FunctionRelation("tostring", ("any",), ("string",), lambda v: (spark_string(v),), _spark_tostring,
                     "tostring(V, S): S is the text of V (`spark_string`)"),
    FunctionRelation("strlen", ("string",), ("long",), lambda s: (len(s),), _spark_strlen,
                     "strlen(S, N): N is the number of characters of S"),
    FunctionRelation("home", ("string",), ("string",), _home, _spark_home,
                     "home(L2, L): L is L2 up to its last '/' (L2 itself without one): the node a rewrite split L2 off"),
    FunctionRelation("abs", ("number",), ("same",), lambda v: (abs(v),), _spark_abs,
                     "abs(V, A): A is the absolute value of V"),
)}
