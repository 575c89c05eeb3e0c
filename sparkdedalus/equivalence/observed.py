"""The relations an observer of two programs sees, and why those.

In order: the relations `observe` names; else the `.output` relations program
A (the original) declares, which B must have too (outputs only B declares are
not A's contract, so they are not compared); else, when A declares none, every
relation the two programs share. Every observed relation is a relation of
both programs, or a `UsageError`.

>>> from sparkdedalus import Program
>>> a = Program.parse('.output p\\np(X) :- q(X); q(1);')
>>> observed_relations(a, Program.parse('p(X) :- q(X); q(1);')).describe()
'the .output relations of A'
>>> observed_relations(a, a, ("q",)).relations
('q',)
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.errors import UsageError

#: why the relations were chosen -> how the output says it
REASONS = {"observe": "named by --observe", "output": "the .output relations of A",
           "shared": "every relation both programs have (A declares no .output)"}


@dataclass(frozen=True)
class Observed:
    relations: tuple  # sorted names
    reason: str  # a key of REASONS

    def describe(self) -> str:
        return REASONS[self.reason]

    def to_json(self) -> dict:
        return {"reason": self.reason, "relations": list(self.relations)}


def observed_relations(a, b, observe: tuple = ()) -> Observed:
    """The observed relations of Programs `a` and `b`: `observe` when given."""
    if observe:
        chosen = Observed(tuple(sorted(set(observe))), "observe")
    elif a.declared_outputs:
        chosen = Observed(tuple(sorted(a.declared_outputs)), "output")
    else:
        return Observed(tuple(sorted(n for n, r in a.relations.items() if n in b.relations and not r.auxiliary)),
                        "shared")
    what = "observed" if chosen.reason == "observe" else "output"
    for name in chosen.relations:
        for label, program in (("A", a), ("B", b)):
            if name not in program.relations:
                raise UsageError(f"{what} relation '{name}' is not a relation of program {label}")
    return chosen
