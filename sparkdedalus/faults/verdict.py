"""Molly's invariant: a scenario is a counterexample when some `pre` fact at
EOT has no equal `post` fact at EOT (location included).

>>> from sparkdedalus.faults.space import Scenario
>>> missing({("a", 1), ("b", 1)}, {("a", 1)})
(('b', 1),)
>>> Counterexample(Scenario(crashes=(("b", 2),)), (("b", 1),)).to_json()
{'omissions': [], 'crashes': [['b', 2]], 'missing': [['b', 1]]}
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.faults.space import Scenario

PRE, POST = "pre", "post"


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
