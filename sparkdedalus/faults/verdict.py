"""Molly's invariant: a scenario is a counterexample when some `pre` fact at
EOT has no equal `post` fact at EOT (location included); `check_invariant`
says whether a program and nodes can be checked at all.

>>> from sparkdedalus.faults.space import Scenario
>>> missing({("a", 1), ("b", 1)}, {("a", 1)})
(('b', 1),)
>>> Counterexample(Scenario(crashes=(("b", 2),)), (("b", 1),)).to_json()
{'omissions': [], 'crashes': [['b', 2]], 'missing': [['b', 1]]}
>>> from sparkdedalus import Program
>>> check_invariant(Program.parse('pre(L) :- go(L); post(L) :- go(L); go("a");'), ("a",))
>>> check_invariant(Program.parse('pre(L) :- go(L); go("a");'), ("a",))
Traceback (most recent call last):
ValueError: the program defines no 'post' relation: faults checks the invariant pre => post (rules or facts of pre and post, read at EOT)
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.faults.space import Scenario
from udfs.registry import spark_string

PRE, POST = "pre", "post"


def check_invariant(program, nodes) -> None:
    """A `ValueError` unless the invariant can be checked on `program` with
    failures at `nodes`: `pre` and `post` are defined (rules or facts) with
    one arity, and every node is a location of the program (the first
    argument of one of its facts)."""
    defined = program.idb | {fact.atom.name for fact in program.facts}
    absent = [name for name in (PRE, POST) if name not in defined]
    if absent:
        raise ValueError(f"the program defines no '{absent[0]}' relation: faults checks the invariant "
                         f"pre => post (rules or facts of pre and post, read at EOT)")
    if program.relations[PRE].arity != program.relations[POST].arity:
        raise ValueError(f"pre and post must have one arity, got pre/{program.relations[PRE].arity} "
                         f"and post/{program.relations[POST].arity}")
    known = {spark_string(fact.row[0]) for fact in program.facts}
    unknown = [node for node in nodes if node not in known]
    if unknown:
        raise ValueError(f"--nodes: unknown node '{unknown[0]}' (the locations of the program's facts: "
                         f"{', '.join(sorted(known)) or 'none'})")


def missing(pre, post) -> tuple:
    """The `pre` facts (tuples) with no equal `post` fact, sorted."""
    return tuple(sorted(set(pre) - set(post), key=repr))


@dataclass(frozen=True, order=True)
class Counterexample:
    scenario: Scenario
    missing: tuple  # the pre facts without a post fact, as tuples (location first)

    def to_json(self) -> dict:
        return {**self.scenario.to_json(), "missing": [list(fact) for fact in self.missing]}


def smallest_first(counterexamples) -> list:
    """Counterexamples ordered by their number of failures, then by their failures."""
    return sorted(counterexamples, key=lambda c: (c.scenario.size, c.scenario, c.missing))


@dataclass(frozen=True)
class Checked:
    """What a fault check found: the number of scenarios its verdict covers (the
    space, or the sample), the counterexamples (smallest first), the runs made
    and the search ("all": every scenario; "ldfi": stops at the first
    counterexample)."""

    scenarios: int
    counterexamples: list
    executions: int
    search: str = "all"
