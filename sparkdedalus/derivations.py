"""The records of why-provenance, the same for both engines: a fact at a tick
(`FactAt`), a negated atom that held (`Absent`) and one way a fact came to
hold (`Derivation`). The reference evaluator records them
(`reference.provenance`); the Spark engine's `run.provenance` rows read back
into them (`spark.provenance.read_back`).

>>> Derivation("rule", "<string>:2", 0, (FactAt("q", ("a", 1), 1),), (Absent("r", ("a",), 1),)).body[0].tick
1
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.network import Message


@dataclass(frozen=True)
class FactAt:
    """The fact `relation(row)` as it held at `tick`."""

    relation: str
    row: tuple
    tick: int


@dataclass(frozen=True)
class Absent:
    """A negated atom that held: no fact of `relation` matched `pattern` at
    `tick` (None in `pattern`: a variable bound nowhere else, any value)."""

    relation: str
    pattern: tuple
    tick: int


@dataclass(frozen=True)
class Derivation:
    """One way a fact came to hold, by `kind`: "rule", "next", "message" (with
    the `Message`), or a leaf, "fact", "input", "crash" (reference/provenance.py
    says what each is). `pos` is the rule's or the program fact's `file:line`
    ("" for inputs and crashes)."""

    kind: str
    pos: str = ""
    rule: int | None = None
    body: tuple = ()  # FactAt, in body order
    absent: tuple = ()  # Absent, in body order
    message: Message | None = None
