"""Decoupling candidates of a component (scaling paper, section 3 and A):
which sets of its rules may move to a new node, and under which rewrite.

For a split of the component's rules into C1 (stays) and C2 (moves), the
rewrites and their preconditions:

- `mutually independent` (3.1): C1 and C2 are mutually independent;
- `monotonic` (3.2): C1 is independent of C2, C2 is monotonic;
- `functional` (3.3): C1 is independent of C2, C2 is functional;
- `state machine` (A.4): C1 is independent of C2, C2 is a state machine;
- `asymmetric` (A.5): C2 is independent of C1, a state machine, and
  monotonic or functional.

Candidates follow the component's dataflow (rule a feeds rule b when b reads
what a derives), as the paper's decouplings do. In this order, each set once
(first label kept), neither empty nor the whole component:

1. the *independent parts*, when there are several: the connected groups of
   rules linked by dataflow or by a relation both read;
2. for each relation the component derives (in order of its first rule), the
   rules *downstream* of it: the rules deriving it and every rule they feed,
   transitively — C1 never reads what such a set derives;
3. likewise the rules *upstream* of it: the rules deriving it and every rule
   feeding them — such a set never reads what C1 derives.

Rules deriving constant relations (`roles`) belong to no candidate: like
EDB, both sides may compute them. Persistence rules go with the rules
deriving their relation, and so does a guarded persistence rule (GC'd
persistence, `guarded.follow`): the candidates are found without them, and
a split given or found takes them where their relation's persistence goes.

>>> from sparkdedalus import Program
>>> p = Program.parse('component c { .persist acks\\n acks(L, N) :- ack(L, N);\\n'
...                   ' bad(L)@async :- acks(L, 1), acks(L, 2); }\\nack("l", 1)@1;')
>>> [(c.found_by, c.rules, c.applicable) for c in decouplings(p, "c")]
[('downstream of bad', (1,), ('monotonic', 'state machine')), ('upstream of acks', (0,), ('asymmetric',))]
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.analysis.asymmetric import Precondition, asymmetric, precondition
from sparkdedalus.analysis.functional import functional
from sparkdedalus.analysis.guarded import follow, guard_rules
from sparkdedalus.analysis.independence import independence, mutual_independence
from sparkdedalus.analysis.monotonicity import monotonicity
from sparkdedalus.analysis.roles import component_rules, constant_relations, rule_set_roles
from sparkdedalus.analysis.state_machine import state_machine

REWRITES = ("mutually independent", "monotonic", "functional", "state machine", "asymmetric")


@dataclass(frozen=True)
class Candidate:
    component: str
    rules: tuple  # indices of the rules split off (C2), ascending
    heads: tuple  # their head relations
    wheres: tuple  # their positions, `file:line:col`
    found_by: str  # "given", "independent part", "downstream of R", "upstream of R"
    preconditions: tuple  # one Precondition per rewrite, in REWRITES order

    @property
    def applicable(self) -> tuple:
        return tuple(p.rewrite for p in self.preconditions if p.applies)

    def to_json(self) -> dict:
        return {"component": self.component, "found_by": self.found_by,
                "rules": [{"index": i, "head": h, "where": w} for i, h, w in zip(self.rules, self.heads, self.wheres)],
                "rewrites": list(self.applicable), "preconditions": [p.to_json() for p in self.preconditions]}


def decoupling(program, component: str, split, found_by: str = "given") -> Candidate:
    """The preconditions of every rewrite for moving the rules `split`
    (indices, of `component`) to a new node."""
    rules = component_rules(program, component)
    if not set(split) <= set(rules):
        raise ValueError(f"rules {sorted(set(split) - set(rules))} are not rules of component {component!r}")
    split = follow(program, rules, split)
    stay = tuple(i for i in rules if i not in split)
    stay_first = independence(program, stay, split)
    stay_first = (stay_first.independent, stay_first.reasons)
    mutual = mutual_independence(program, stay, split)
    mono, func, sm = monotonicity(program, split), functional(program, split), state_machine(program, split)
    heads = tuple(program.rules[i].head.name for i in split)
    wheres = tuple(str(program.rules[i].pos) for i in split)
    return Candidate(component, split, heads, wheres, found_by, (
        precondition("mutually independent", (mutual.independent, mutual.reasons)),
        precondition("monotonic", stay_first, (mono.monotone, mono.reasons)),
        precondition("functional", stay_first, (func.functional, func.reasons)),
        precondition("state machine", stay_first, (sm.state_machine, sm.reasons)),
        asymmetric(program, stay, split)))


def _reach(start, edges) -> set:
    seen, todo = set(start), list(start)
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _parts(rules, edges, reads) -> list[set]:
    """Connected groups of `rules` linked by `edges` or by a relation both read."""
    links = {i: set(edges.get(i, ())) for i in rules}
    for a in rules:
        for b in rules:
            if a != b and (b in links[a] or a in links[b] or reads[a] & reads[b]):
                links[a].add(b)
    parts, placed = [], set()
    for i in rules:
        if i not in placed:
            part = _reach([i], links)
            placed |= part
            parts.append(part)
    return parts


def decouplings(program, component: str) -> tuple:
    """Every candidate split of `component`, in the order of the module docstring."""
    constant = constant_relations(program)
    every = component_rules(program, component)
    guards = guard_rules(program)
    rules = [i for i in every if program.rules[i].head.name not in constant and i not in guards]
    reads = {i: rule_set_roles(program, [i], constant=constant).references for i in rules}
    heads = {i: program.rules[i].head.name for i in rules}
    feeds = {a: {b for b in rules if heads[a] in reads[b]} for a in rules}
    fed_by = {b: {a for a in rules if b in feeds[a]} for b in rules}
    found: list = []
    parts = _parts(rules, feeds, reads)
    if len(parts) > 1:
        found += [(part, "independent part") for part in parts]
    relations = list(dict.fromkeys(heads[i] for i in rules))
    for direction, edges in (("downstream", feeds), ("upstream", fed_by)):
        found += [(_reach([i for i in rules if heads[i] == name], edges), f"{direction} of {name}")
                  for name in relations]
    out, seen = [], set()
    whole = frozenset(follow(program, every, rules))
    for split, label in found:
        key = frozenset(follow(program, every, split))
        if key and key != whole and key not in seen:
            seen.add(key)
            out.append(decoupling(program, component, key, label))
    return tuple(out)
