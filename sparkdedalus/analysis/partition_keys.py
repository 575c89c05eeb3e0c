"""Partition keys a user may choose (`rewrite --partition COMPONENT:N:KEY`,
`explain`): a *key* names one relation of a component and the attribute its
facts are hashed by, through functions as the policies print it:
`request(id)`, `toStorage(hash(v))`, `voteToReplica(v % 10)`. A component's policy
(`analysis.partitioning`) picks one key per relation; where several are
valid, the scaling paper's artifact may key by another (its co-hashing
microbenchmark keys the replica by the request id, where any attribute of
the request would do).

`keyed_policy` is the component's policy with one relation keyed as asked:
of the same kind as its own (co-hashing or dependencies when it has one of
these, partial with the same replicated relations when it is partial), or
method "none" with the reasons when the key breaks it. `valid_keys` lists
every key of the relations the component receives (its inputs that the
policy keys) that `keyed_policy` takes.

>>> from sparkdedalus.program import Program
>>> p = Program.parse('''component k { .persist seen
...   seen(L, V)@next :- req(L, C, Id, V);
...   dup(C, Id)@async :- req(L, C, Id, V), seen(L, V); }''')
>>> [str(k) for k in valid_keys(p, "k")]  # a request meets the values seen on V
['req(c3)']
>>> str(keyed_policy(p, "k", parse_key(p, "req(c2)")).verdict[0])
'<string>:2:3: here req and seen share no key equal to req(c2) even through dependencies'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sparkdedalus.analysis.functional_dependencies import Arith
from sparkdedalus.analysis.partitioning import COHASHING, DEPENDENCIES, PolicySearch, key_term, solved
from sparkdedalus.analysis.reasons import Reason
from sparkdedalus.syntax import ast
from udfs.registry import FUNCTIONS


@dataclass(frozen=True)
class Key:
    """`relation` hashed by `via(fact[column])`; `name` is the column's name."""

    relation: str
    column: int
    name: str
    via: tuple = ()

    def __str__(self) -> str:
        return f"{self.relation}({key_term(self.name, self.via)})"

    def to_json(self) -> dict:
        return {"relation": self.relation, "column": self.column, "name": self.name, "via": [str(step) for step in self.via],
                "key": str(self)}


def parse_key(program, text: str) -> Key:
    """`RELATION(ATTRIBUTE)`, the attribute a column name of the relation
    (`.decl`, else c1, c2, ..) or functions of one (`hash(v)`, `v % 10`,
    `hash(v % 10)`: an operator and an integer); a
    `ValueError` says what is wrong with it."""
    found = re.fullmatch(r"\s*(\w+)\s*\((.*)\)\s*", text)
    if not found:
        raise ValueError(f"a key is RELATION(ATTRIBUTE), like request(id), not '{text}'")
    relation, term, via = found.group(1), found.group(2).replace(" ", ""), []
    if relation not in program.relations:
        raise ValueError(f"no relation '{relation}'")
    while inner := re.fullmatch(r"(\w+)\((.*)\)", term):
        if inner.group(1) not in FUNCTIONS:
            raise ValueError(f"'{inner.group(1)}' is no function relation ({', '.join(sorted(FUNCTIONS))})")
        via.insert(0, inner.group(1))
        term = inner.group(2)
    if arith := re.fullmatch(r"(\w+)([-+*/%])(-?\d+)", term):  # `v % 10`: arithmetic, applied first
        term = arith.group(1)
        via.insert(0, Arith(ast.BinOp(arith.group(2), ast.Var("_"), ast.Const(int(arith.group(3))))))
    columns = program.relations[relation].columns
    if "," in term:
        raise ValueError(f"{text}: the partitioning hashes one attribute, not {len(term.split(','))}")
    if term == columns[0]:
        raise ValueError(f"{text}: the location is never a key")
    if term not in columns:
        raise ValueError(f"{relation} has no attribute '{term}' (its attributes: {', '.join(columns[1:])})")
    return Key(relation, columns.index(term), term, tuple(via))


def keyed_policy(program, component: str, key: Key, rules=None):
    """The component's `DistributionPolicy` (of the rule indices `rules`,
    if given) with `key.relation` keyed by `key` (module docstring); a
    `ValueError` names an unknown component."""
    search = PolicySearch(program, component, rules)
    found = search.policy()
    why = _unkeyable(search, found, key)
    if why:
        return search.make("none", None, None, frozenset(), [], [Reason(why)])
    pin = {key.relation: (key.column, key.via)}
    replicated = frozenset(found.replicate)
    methods = ((True, "partial"),) if found.method == "partial" else \
        ((False, "co-hashing"), (True, "dependencies"))
    for dependencies, method in methods:
        problem, solution = search.attempt(replicated, dependencies, pin)
        if solved(solution):
            verdict = {"co-hashing": [COHASHING], "dependencies": [DEPENDENCIES]}.get(method, found.verdict)
            return search.make(method, solution, problem, replicated, [], verdict)
    why = problem.explain(pin) if solution is None else (Reason("search budget exhausted"),)
    return search.make("none", None, None, frozenset(), [], list(why))


def _unkeyable(search, found, key: Key) -> str | None:
    """Why no policy of the component's kind can key `key.relation`, before any search."""
    if not found.partitioned:
        return f"component {search.name!r} has no distribution policy"
    if key.relation in search.static:
        return f"{key.relation} is known at every partition: it needs no key"
    if key.relation not in search.keyed:
        return f"component {search.name!r} does not hold {key.relation}"
    if key.relation in found.replicate:
        return f"{key.relation} is replicated on every partition (4.3): it has no key"
    return None


def valid_keys(program, component: str, found=None) -> tuple:
    """Every `Key` of a relation the component receives (else of every
    relation it keys) that `keyed_policy` takes, in the order of the
    relations, the policy's own key first, then the others in the order of
    its preference (address columns last); `found`: the component's policy,
    if known."""
    search = PolicySearch(program, component)
    found = found or search.policy()
    if not found.partitioned:
        return ()
    keyed = [rp.relation for rp in found.relations if rp.column is not None]
    relations = [r for r in keyed if r in search.inputs] or keyed
    replicated = frozenset(found.replicate)
    modes = (True,) if found.method == "partial" else (False, True)
    problems = [search.problem(replicated, dependencies) for dependencies in modes]
    columns = program.relations
    out = []
    own = {rp.relation: (rp.column, rp.via) for rp in found.relations}
    for relation in relations:
        for candidate in sorted(problems[-1].candidates[relation], key=lambda c: c != own[relation]):
            pin = {relation: candidate}
            if any(solved(problem.solve(pinned=pin)) for problem in problems
                   if candidate in problem.candidates[relation]):
                out.append(Key(relation, candidate[0], columns[relation].columns[candidate[0]], candidate[1]))
    return tuple(out)
