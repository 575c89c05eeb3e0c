"""`run --provenance`: the derivations of the printed facts, from either engine,
printed one way (docs/provenance.md).

The reference's are its records (`reference.why.tick_derivations`); the Spark
engine's (`run.provenance`, spark/provenance.py) are read back into the same
records (`spark_derivations`), so that `with_provenance` prints both alike:
JSON records, or a text section after a table.
"""

from __future__ import annotations

import json

from sparkdedalus.derivations import Derivation
from sparkdedalus.output import sort_key
from sparkdedalus.reference.why import derivation_records, derivations_text
from sparkdedalus.spark.provenance import read_back

#: a fact's derivations in the order the reference lists them: leaves, then
#: the `@next` ones (recorded at the tick before), the rules', the messages'
KINDS = ("fact", "input", "crash", "next", "rule", "message")


def with_provenance(fmt: str, text: str, program, found: list) -> str:
    """The output `text` with the derivations `found` of its facts ((FactAt,
    Derivation), either engine's): JSON gains a `"provenance"` key, a table a
    section after it."""
    if fmt == "json":
        return json.dumps({**json.loads(text), "provenance": derivation_records(program, found)})
    return f"{text}\n\n{derivations_text(program, found)}"


def spark_derivations(run, tick: int, facts: dict) -> list:
    """(FactAt, Derivation) of the Spark run's `facts` ({relation: rows} at
    `tick`, as `Run.facts` gives them) from `run.provenance`, one job: facts
    in output order (relations by name, rows sorted), a fact's derivations by
    `KINDS`, then rule, then body."""
    program = run.program
    if not facts:
        return []
    names = ", ".join(f"'{name}'" for name in facts)
    found: dict = {}
    for record in run.provenance.where(f"tick = {tick} AND relation IN ({names})").collect():
        fact, derivation = read_back(program, record)
        if fact.row in facts[fact.relation]:
            found.setdefault(fact, []).append(derivation)
    return [(fact, d) for fact in sorted(found, key=lambda f: (f.relation, sort_key(f.row)))
            for d in sorted(found[fact], key=_order)]


def _order(d: Derivation) -> tuple:
    return (KINDS.index(d.kind), -1 if d.rule is None else d.rule, d.pos, repr(d.body), repr(d.absent),
            repr(d.message))
