"""Strict equivalence: both programs run under the same seeds, and under each
seed their observed relations agree.

Per observed relation and seed, two views are compared: the set of its facts
over ticks 1..N and its facts at tick N (so a rewrite's extra hops, which move
a fact in time, are allowed). The first difference is reported.

>>> from sparkdedalus import Program
>>> from sparkdedalus.network import Network
>>> a = Program.parse('p(L, X)@next :- q(L, X); q("n", 1)@1;')
>>> d = compare(a, Program.parse('p(L, X)@next :- q(L, X); q("m", 1)@1;'), 3, 1, Network()).difference
>>> d.relation, d.view, d.only_a, d.only_b
('p', 'over all ticks', (('n', 1),), (('m', 1),))
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sparkdedalus.equivalence.observed import Observed, observed_relations
from sparkdedalus.equivalence.views import views
from sparkdedalus.network import Network
from sparkdedalus.output import sort_key


@dataclass(frozen=True)
class Difference:
    seed: int
    relation: str
    view: str  # "over all ticks" or "at tick N"
    tick: int  # the first tick at which a differing fact holds
    only_a: tuple  # rows, sorted
    only_b: tuple

    def to_json(self) -> dict:
        return {"seed": self.seed, "relation": self.relation, "view": self.view, "tick": self.tick,
                "only_a": [list(r) for r in self.only_a], "only_b": [list(r) for r in self.only_b]}


@dataclass(frozen=True)
class Comparison:
    observed: Observed
    ticks: int
    seeds: tuple
    network: str
    difference: Difference | None

    def to_json(self) -> dict:
        return {"mode": "strict", "equivalent": self.difference is None, "relations": list(self.observed.relations),
                "observed": self.observed.to_json(), "ticks": self.ticks, "seeds": list(self.seeds),
                "network": self.network, "difference": None if self.difference is None else self.difference.to_json()}


def _first_tick(rows: set, *histories) -> int:
    return min(t for history in histories for t, held in history.items() if held & rows)


def _difference(seed: int, ticks: int, relations, va: dict, vb: dict) -> Difference | None:
    for name in relations:
        ha, hb = va[name], vb[name]
        for view, sa, sb in (("over all ticks", set().union(*ha.values()), set().union(*hb.values())),
                             (f"at tick {ticks}", ha[ticks], hb[ticks])):
            if sa != sb:
                tick = _first_tick(sa ^ sb, ha, hb) if view == "over all ticks" else ticks
                return Difference(seed, name, view, tick, tuple(sorted(sa - sb, key=sort_key)),
                                  tuple(sorted(sb - sa, key=sort_key)))
    return None


def compare(a, b, ticks: int, seeds: int, network: Network, observe: tuple = ()) -> Comparison:
    """Run Programs `a` and `b` under `seeds` seeds from `network.seed`; the
    first difference in the observed relations (`observed_relations`), if any."""
    observed = observed_relations(a, b, observe)
    seed_list = tuple(range(network.seed, network.seed + seeds))
    for seed in seed_list:
        net = replace(network, seed=seed)
        found = _difference(seed, ticks, observed.relations, views(a, ticks, net, observed.relations),
                            views(b, ticks, net, observed.relations))
        if found is not None:
            return Comparison(observed, ticks, seed_list, network.spec(), found)
    return Comparison(observed, ticks, seed_list, network.spec(), None)
