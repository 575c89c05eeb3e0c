"""Function relations: relations with an infinite extension, computed, not stored.

`hash(V, H)` holds when H is the hash of V. In a rule body a function relation's
inputs must be bound by other atoms; its outputs are bound (or checked) by it.
One registry serves the front end (names, arities, types), the reference
evaluator (`python`) and the Spark engine (`spark`, built from Spark SQL
functions, imported only when called), so both engines compute the same values.

>>> FUNCTIONS["hash"].python("hi") == FUNCTIONS["hash"].python("hi")
True
>>> FUNCTIONS["strlen"].python("héllo")
(5,)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable

import xxhash

_SPARK_HASH_SEED = 42  # the seed of Spark's xxhash64()
_SIGNING_PREFIX = "sig:"


def spark_string(value) -> str:
    """A value as Spark's `cast(value as string)` prints it (for int, bool, str)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


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


def _spark_hash(col):
    from pyspark.sql import functions as F
    return (F.xxhash64(col.cast("string")),)


def _spark_sha256(col):
    from pyspark.sql import functions as F
    return (F.sha2(col.cast("string"), 256),)


def _spark_sign(col):
    from pyspark.sql import functions as F
    return (F.sha2(F.concat(F.lit(_SIGNING_PREFIX), col.cast("string")), 256),)


def _spark_tostring(col):
    return (col.cast("string"),)


def _spark_strlen(col):
    from pyspark.sql import functions as F
    return (F.char_length(col).cast("long"),)


def _home(location) -> tuple:
    text = spark_string(location)
    return (text.rpartition("/")[0] if "/" in text else text,)


def _spark_home(col):
    from pyspark.sql import functions as F
    text = col.cast("string")
    return (F.when(F.instr(text, "/") > 0, F.regexp_extract(text, r"^(.*)/[^/]*$", 1)).otherwise(text),)


def _spark_abs(col):
    from pyspark.sql import functions as F
    return (F.abs(col),)


@dataclass(frozen=True)
class FunctionRelation:
    """`name(in1, ..., out1, ...)`: inputs first, then outputs."""

    name: str
    input_types: tuple  # "any", "number", or a dialect type
    output_types: tuple  # a dialect type, or "same" (the first input's type)
    python: Callable[..., tuple]
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
                     "hash(V, H): H is Spark's xxhash64 of V cast to a string"),
    FunctionRelation("sha256", ("any",), ("string",), _sha256, _spark_sha256,
                     "sha256(V, H): H is the hex SHA-256 of V cast to a string"),
    FunctionRelation("sign", ("any",), ("string",), _sign, _spark_sign,
                     "sign(V, S): S is a signature of V (hex SHA-256 of \"sig:\" + V)"),
    FunctionRelation("tostring", ("any",), ("string",), lambda v: (spark_string(v),), _spark_tostring,
                     "tostring(V, S): S is V cast to a string"),
    FunctionRelation("strlen", ("string",), ("long",), lambda s: (len(s),), _spark_strlen,
                     "strlen(S, N): N is the number of characters of S"),
    FunctionRelation("home", ("string",), ("string",), _home, _spark_home,
                     "home(L2, L): L is L2 up to its last '/' (L2 itself without one): the node a rewrite split L2 off"),
    FunctionRelation("abs", ("number",), ("same",), lambda v: (abs(v),), _spark_abs,
                     "abs(V, A): A is the absolute value of V"),
)}
