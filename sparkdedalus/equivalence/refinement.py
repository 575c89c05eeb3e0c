"""Refinement: every outcome B shows is one A shows under some seed.

Each program runs under K seeds of the delay model (seeds S..S+K-1), each on
its own. An outcome of a run is, per observed relation, the facts at tick N
and the facts that held at any tick 1..N (so a transient output counts, but not
when it held). B refines A when every outcome of B's K runs is among the
outcomes of A's K runs: B may be slower or take other legal delays, as long
as what it ends with is something A can end with. An outcome A did not show in
K seeds may still be one of A's (more seeds, fewer false alarms); each new
outcome of B is reported against A's closest (the fewest differing facts).

>>> from sparkdedalus import Program
>>> from sparkdedalus.network import Network
>>> a = Program.parse('p(L, X)@next :- q(L, X); q("n", 1)@1;')
>>> r = refine(a, Program.parse('p(L, X)@next :- q(L, X); q("m", 1)@1;'), 2, 2, Network())
>>> r.refines, r.new[0].differences[0]
(False, ('p', 'at tick 2', (('n', 1),), (('m', 1),)))
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sparkdedalus.equivalence.observed import Observed, observed_relations
from sparkdedalus.equivalence.views import views
from sparkdedalus.network import Network
from sparkdedalus.output import sort_key

#: the new outcomes of B a `Refinement` keeps
SHOWN = 3


@dataclass(frozen=True)
class NewOutcome:
    """An outcome of B (first under `seed_b`) that A never showed, against
    A's closest outcome (first under `seed_a`)."""

    seed_b: int
    seed_a: int
    differences: tuple  # (relation, view, only in A's, only in B's): rows sorted

    def to_json(self) -> dict:
        return {"seed_b": self.seed_b, "closest_seed_a": self.seed_a,
                "differences": [{"relation": r, "view": v, "only_a": [list(x) for x in oa],
                                 "only_b": [list(x) for x in ob]} for r, v, oa, ob in self.differences]}


@dataclass(frozen=True)
class Refinement:
    observed: Observed
    ticks: int
    seeds: tuple
    network: str
    outcomes_a: int  # distinct outcomes A showed
    outcomes_b: int
    unseen: int  # distinct outcomes of B that A never showed
    new: tuple  # the first SHOWN of them, as NewOutcome

    @property
    def refines(self) -> bool:
        return self.unseen == 0

    def to_json(self) -> dict:
        return {"mode": "refinement", "refines": self.refines, "relations": list(self.observed.relations),
                "observed": self.observed.to_json(), "ticks": self.ticks, "seeds": list(self.seeds),
                "network": self.network, "outcomes_a": self.outcomes_a, "outcomes_b": self.outcomes_b,
                "unseen_outcomes_b": self.unseen, "new_outcomes_b": [n.to_json() for n in self.new]}


def _outcomes(program, ticks: int, network: Network, seeds: tuple, relations, final: bool = True) -> dict:
    """outcome -> the first seed that showed it; an outcome is, per relation,
    (name, facts at tick N (None without `final`), facts at any tick)."""
    found = {}
    for seed in seeds:
        seen = views(program, ticks, replace(network, seed=seed), relations)
        outcome = tuple((name, frozenset(seen[name][ticks]) if final else None,
                         frozenset().union(*seen[name].values())) for name in relations)
        found.setdefault(outcome, seed)
    return found


def _differences(ticks: int, a: tuple, b: tuple) -> tuple:
    found = []
    for (name, final_a, ever_a), (_, final_b, ever_b) in zip(a, b):
        for view, sa, sb in ((f"at tick {ticks}", final_a, final_b), ("at some tick", ever_a, ever_b)):
            if sa != sb:  # None != None is False: no final view
                found.append((name, view, tuple(sorted(sa - sb, key=sort_key)), tuple(sorted(sb - sa, key=sort_key))))
    return tuple(found)


def refine(a, b, ticks: int, seeds: int, network: Network, observe: tuple = (), final: bool = True) -> Refinement:
    """Run Programs `a` and `b` each under `seeds` seeds from `network.seed`:
    does every outcome of `b` (observed relations: `observed_relations`) occur in `a`?
    Without `final` an outcome is the facts at any tick only: for programs
    whose runs do not settle by tick N, where a rewrite's extra hop changes
    what holds at N (the property test of the rewrites uses it)."""
    observed = observed_relations(a, b, observe)
    seed_list = tuple(range(network.seed, network.seed + seeds))
    of_a = _outcomes(a, ticks, network, seed_list, observed.relations, final)
    of_b = _outcomes(b, ticks, network, seed_list, observed.relations, final)
    unseen = [(outcome, seed) for outcome, seed in of_b.items() if outcome not in of_a]
    new = []
    for outcome, seed in unseen[:SHOWN]:
        closest = min(of_a, key=lambda o: sum(len(x) + len(y) for _, _, x, y in _differences(ticks, o, outcome)))
        new.append(NewOutcome(seed, of_a[closest], _differences(ticks, closest, outcome)))
    return Refinement(observed, ticks, seed_list, network.spec(), len(of_a), len(of_b), len(unseen), tuple(new))
