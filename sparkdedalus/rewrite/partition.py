"""The partitioning rewrite (scaling paper, 4.1-4.2 and B.1-B.2): a component
runs on N nodes per location, each fact routed by its key under the
component's distribution policy (`analysis.partitioning`, method co-hashing
or dependencies; `partial_partition` adds B.3's coordination for partial
policies on top of `spread`).

A location L of the component becomes `L + "/p0"` .. `L + "/p{N-1}"` (the
program gets one `// @home "/pI"` directive per partition). The component's
rules run unchanged at each partition, their atoms at the partition's
location; where a rule uses its location as data it reads the original back
with `home(L2, L)`. Every `@async` rule that sends a keyed relation of the
component to D sends to `D + "/p" + S` instead, where S is the text of
`pmod(hash(key), N)` (`key` is the policy's column through its `via`
functions and arithmetic, `K2 == V % 10`):

    toStorage(N2, L, Id, V, Sig)@async :- signed(L, Id, V, Sig), storageNode(L, N),
        hash(V, K2), hash(K2, H2), P2 == (H2 % 2 + 2) % 2, tostring(P2, S2), N2 == N + "/p" + S2;

Facts of keyed relations move to their partition; facts of static relations
at the component's nodes (`decouple.own_facts`) are copied to every
partition. A keyed relation with no key column goes to partition 0.

>>> from sparkdedalus import Program
>>> from sparkdedalus.rewrite.source import source_rules
>>> from sparkdedalus.rewrite.text import program_text
>>> p = Program.parse('component k { n(L, B, count<X>) :- v(L, X, B); }\\n'
...                   'component s { v(D, X, B)@async :- go(L, D, X, B); }\\ngo("s", "k", 1, "b")@1;')
>>> print(program_text(q := partition(p, "k", 2), source_rules(q)).split("component s")[1], end="")
 {
    v(D2, X, B)@async :- go(L, D, X, B), hash(B, H2), P2 == (H2 % 2 + 2) % 2, tostring(P2, S2), D2 == D + "/p" + S2;
}
<BLANKLINE>
go("s", "k", 1, "b")@1;
"""

from __future__ import annotations

from dataclasses import replace

from sparkdedalus.analysis.functional_dependencies import Arith, apply_via
from sparkdedalus.analysis.partition_keys import keyed_policy
from sparkdedalus.analysis.partitioning import distribution_policy
from sparkdedalus.analysis.reasons import Reason
from sparkdedalus.analysis.roles import component_rules
from sparkdedalus.checks.locations import location_terms
from sparkdedalus.program import Program
from sparkdedalus.rewrite.decouple import fresh_variable, own_facts, reads, relocate
from sparkdedalus.rewrite.rule import RewriteError, Rule, Target, Verdict
from sparkdedalus.rewrite.sealing import sealed_outputs
from sparkdedalus.rewrite.source import SourceRule, assemble, source_rules
from sparkdedalus.syntax import ast
from udfs.registry import FUNCTIONS

#: the policy methods this rewrite implements
METHODS = ("co-hashing", "dependencies")


def policy(program, component: str, key=None, rules=None):
    """The component's `DistributionPolicy` (of the rule indices `rules`, if
    given), keyed by `key` (`analysis.partition_keys.Key`) if given; the
    rewrite applies when its method is in METHODS. A `ValueError` (not a
    `RewriteError`: the input is wrong) names an unknown component, or says
    why `key` cannot key it."""
    component_rules(program, component)
    if key is None:
        return distribution_policy(program, component, rules)
    found = keyed_policy(program, component, key, rules)
    if not found.partitioned:
        raise ValueError(f"{key} cannot key {component}: {found.verdict[0]}")
    return found


def note(component: str, n: int, policy) -> str:
    """The note of a partitioning by `policy`."""
    keys = ", ".join(f"{r} by {k}" for r, k in policy.keys().items())
    return f"{component} on {n} partitions ({policy.method}): {keys}"


class Partitioning(Rule):
    """The rule of the table `rewrite.REWRITES`: `partition` when the
    policy's method is in METHODS and the component sends no sealed output
    (which `partial_partition` counts per partition)."""

    REWRITE = "partitioning"
    REROUTES = True

    def analysis(self, program, target: Target) -> Verdict:
        found = policy(program, target.component, target.key)
        if sealed_outputs(program, target.component):
            return Verdict(False, (Reason(f"component {target.component!r} sends sealed outputs, which only "
                                          f"partial partitioning counts per partition"),))
        if found.method not in METHODS:
            return Verdict(False, (Reason(f"component {target.component!r} has a {found.method} policy: it cannot "
                                          f"be partitioned without coordination (partial_partition)"),
                                   *found.reasons))
        return Verdict(True, found.reasons)

    def mechanism(self, program, target: Target) -> tuple:
        found = policy(program, target.component, target.key)
        return partition(program, target.component, target.partitions, target.key), \
            [note(target.component, target.partitions, found)]


partitioning = Partitioning()


def partition_of(value, via: tuple, n: int) -> int:
    """The partition of a key column's value: pmod(hash(via(value)), n)."""
    (h,) = FUNCTIONS["hash"].python(apply_via(via, value))
    return h % n  # Python's % is the pmod the rules compute as (H % N + N) % N


def suffixes(n: int) -> tuple:
    return tuple(f"/p{i}" for i in range(n))


def partition(program, component: str, n: int, key=None) -> Program:
    """`program` with `component` on `n` partitions per location, keyed by
    `key` if given (`policy`; module docstring)."""
    if n < 1:
        raise RewriteError(f"the number of partitions must be at least 1, got {n}")
    found = policy(program, component, key)
    if found.method not in METHODS:
        raise RewriteError(f"component {component!r} has a {found.method} policy: "
                           f"it cannot be partitioned without coordination (partial_partition)")
    rules, facts = spread(program, component, n, found)
    return assemble(program, rules, facts, homes=suffixes(n))


def spread(program, component: str, n: int, policy, renames=None) -> tuple:
    """The rules (SourceRule) and facts of `program` with `component` on `n`
    partitions by `policy`: senders of keyed relations routed, their facts
    moved; static relations, and the replicated ones of a partial policy,
    copied to every partition. The inputs a partial policy broadcasts are left
    as they are (`partial_partition` sends them through a coordinator);
    `renames`: relations the component's rules read under another name."""
    replicated = set(policy.replicate)
    keys = {rp.relation: (rp.column, rp.via) for rp in policy.relations if rp.relation not in replicated}
    static = set(policy.static) | (replicated - set(policy.broadcast))  # copied to every partition
    held = set(keys) | replicated
    inputs = {i.name for i in program.inputs} & held
    if inputs:
        raise RewriteError(f"component {component!r} reads the .input relation {sorted(inputs)[0]!r}")
    outside = [r for r in program.rules if r.component != component and not r.persistence]
    for rule in outside:
        if reads(rule) & held:
            raise RewriteError(f"{rule.pos}: component {rule.component!r} reads {sorted(reads(rule) & held)[0]}, "
                               f"which the partitions of {component!r} hold")

    rules = []
    for src in source_rules(program):
        rule = src.rule
        if src.component == component:
            if len(location_terms(program.rules[src.index])) > 1:
                raise RewriteError(f"{rule.pos}: a global observer rule cannot be partitioned")
            stored = [a for a in rule.body if isinstance(a, ast.Atom) and a.name not in FUNCTIONS]
            if not stored or isinstance(stored[0].args[0], ast.Const):
                raise RewriteError(f"{rule.pos}: a rule at a constant location cannot be partitioned")
            if rule.delivery == "async" and rule.head.name in replicated:
                raise RewriteError(f"{rule.pos}: the partitions would each send the replicated relation "
                                   f"{rule.head.name}")
            rule = relocate(rule, "", renames or {}, set())
        if rule.delivery == "async" and rule.head.name in keys:
            rule = _route(rule, *keys[rule.head.name], n)
        rules.append(SourceRule(rule, src.component, src.index))

    facts, own = [], own_facts(program, component)
    for fact in program.facts:
        relation = fact.atom.name
        if relation not in keys and (relation not in static or fact not in own):
            facts.append(fact)
            continue
        location = fact.atom.args[0].value
        if not isinstance(location, str):
            raise RewriteError(f"{fact.pos}: location {location!r} is not a string: cannot partition it")
        if relation in static:
            places = suffixes(n)
            if fact.component != component and any(relation in reads(r) for r in outside):
                facts.append(fact)
        else:
            column, via = keys[relation]
            places = ("/p0",) if column is None else \
                (f"/p{partition_of(fact.atom.args[column].value, via, n)}",)
        facts += [replace(fact, atom=replace(fact.atom, args=(ast.Const(location + s), *fact.atom.args[1:])))
                  for s in places]
    return rules, facts


def _route(rule: ast.Rule, column, via: tuple, n: int) -> ast.Rule:
    """An @async rule sending to `D + "/p" + S`, S the partition of its key."""
    dest, body = rule.head.args[0], list(rule.body)

    def fresh(base: str) -> ast.Var:
        return fresh_variable(ast.Rule(rule.head, rule.delivery, tuple(body), rule.pos), base)

    suffix = ast.Const("/p0")
    if column is not None:
        key = rule.head.args[column]
        if not isinstance(key, ast.Var):
            var = fresh("K")
            body.append(ast.Comparison("==", var, key))
            key = var
        for step in via + ("hash",):
            var = fresh("H" if step == "hash" else "K")
            body.append(ast.Comparison("==", var, step.of(key)) if isinstance(step, Arith)
                        else ast.Atom(step, (key, var)))
            key = var
        p, nc = fresh("P"), ast.Const(n)
        body.append(ast.Comparison("==", p, ast.BinOp("%", ast.BinOp("+", ast.BinOp("%", key, nc), nc), nc)))
        s = fresh("S")
        body.append(ast.Atom("tostring", (p, s)))
        suffix = ast.BinOp("+", ast.BinOp("+", dest, ast.Const("/p")), s)
    else:
        suffix = ast.BinOp("+", dest, suffix)
    new = fresh(dest.name if isinstance(dest, ast.Var) else "D")
    body.append(ast.Comparison("==", new, suffix))
    return ast.Rule(replace(rule.head, args=(new, *rule.head.args[1:])), rule.delivery, tuple(body), rule.pos)
