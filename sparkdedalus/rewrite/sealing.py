"""Partitioning sealing (scaling paper, B.4) over the desugared form of a
sealed output: a batch of facts sent with their number, which the receiver
treats as complete once it has them all. This module works on the rules a
`seal<..>` head stands for (checks/seal.py desugars it; names as in the paper),
written by hand or by the sugar:

    out(D, K.., X..)@async :- ...;              // sender: the facts of batch K
    outCount(D, K.., count<*>)@async :- ...;    // sender: their number (also a
    outCount(D, K.., 0)@async :- ...;           //   rule sending 0 for none)
    outReceived(L, K.., count<*>) :- out(L, K.., X..);
    outSealed(L, K.., X..) :- out(L, K.., X..), outCount(L, K.., N), outReceived(L, K.., N);

The counting rules do not constrain the sender's distribution policy (B.4.2:
each partition counts its own fraction), so `policy_rules` leaves them and
the relations only they read out. After partial partitioning every partition
sends its fraction and its count tagged with its location, `outPart(D, K..,
Lp, X..)` and `outCountPart(D, K.., Lp, N)`; the receiver counts per partition
and seals when all `n` partitions are complete (the paper's numPartitions):

    out(L, K.., X..) :- outPart(L, K.., P, X..);
    outReceivedPart(L, K.., P, count<*>) :- outPart(L, K.., P, X..);
    outDone(L, K.., P) :- outCountPart(L, K.., P, N), outReceivedPart(L, K.., P, N);
    outDone(L, K.., P) :- outCountPart(L, K.., P, 0);
    outParts(L, K.., count<P>) :- outDone(L, K.., P);
    outSealed(L, K.., X..) :- outPart(L, K.., P, X..), outParts(L, K.., M), M == n;

>>> from sparkdedalus import Program
>>> p = Program.parse('''component s { .persist v
...   v(L, X) :- put(L, X);
...   o(D, B, X)@async :- ask(L, D, B), v(L, X);
...   oCount(D, B, count<*>)@async :- ask(L, D, B), v(L, X); }
... component r { .persist o .persist oCount
...   oReceived(L, B, count<*>) :- o(L, B, X);
...   oSealed(L, B, X) :- o(L, B, X), oCount(L, B, N), oReceived(L, B, N); }''')
>>> [(s.out, s.keys) for s in sealed_outputs(p, "s")]
[('o', 1)]
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sparkdedalus.analysis.roles import component_rules
from sparkdedalus.rewrite.rule import RewriteError
from sparkdedalus.rewrite.source import SourceRule
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.build import agg, atom, cmp, rule
from udfs.registry import FUNCTIONS


#: what the rewrite names the relations of a sealed output `out`: out + suffix
NEW = ("Part", "CountPart", "ReceivedPart", "Done", "Parts")


@dataclass(frozen=True)
class Sealed:
    """A sealed output of a component: relation `out`, `keys` batch columns
    after the location, then `values` columns; `counts`: indices of the
    sender's `outCount` rules."""

    out: str
    keys: int
    values: int
    counts: tuple


def sealed_outputs(program, component: str) -> tuple:
    """The sealed outputs `component` sends (module docstring): an `@async`
    relation `out` of the component with `outCount` sent by it too and an
    `outSealed` derived elsewhere."""
    rules = [program.rules[i] for i in component_rules(program, component)]
    sent = {r.head.name for r in rules if r.delivery == "async"}
    found = []
    for out in sorted(sent):
        if f"{out}Count" in sent and f"{out}Sealed" in program.relations:
            counts = tuple(r.index for r in rules if r.head.name == f"{out}Count")
            keys = program.relations[f"{out}Count"].arity - 2
            found.append(Sealed(out, keys, program.relations[out].arity - 1 - keys, counts))
    return tuple(found)


def policy_rules(program, component: str, sealed) -> list:
    """The component's rules that constrain its distribution policy: all but
    the counting rules and the rules deriving what only they read."""
    rules = list(component_rules(program, component))
    left = set(rules) - {i for s in sealed for i in s.counts}
    changed = True
    while changed:
        read = {a.name for i in left for a in program.rules[i].positive_atoms + program.rules[i].negated_atoms}
        unread = {i for i in left if program.rules[i].delivery != "async" and program.rules[i].head.name not in read}
        changed = bool(unread)
        left -= unread
    return sorted(left)


def seal_partitions(rules: list, component: str, sealed, n: int) -> tuple:
    """`rules` (SourceRule, after partitioning `component`) with each sealed
    output tagged by partition at the sender and counted per partition at
    the receiver; also the relations the receiver now persists."""
    persisted = {}
    for s in sealed:
        senders = {s.out: f"{s.out}Part", f"{s.out}Count": f"{s.out}CountPart"}
        receiver = {f"{s.out}Received", f"{s.out}Sealed"}
        owners = {src.component for src in rules if src.rule.head.name in receiver}
        if len(owners) != 1:
            raise RewriteError(f"the sealed output {s.out} has no single receiving component")
        owner = owners.pop()
        kept = []
        for src in rules:
            head = src.rule.head
            if src.component == component and src.rule.delivery == "async" and head.name in senders:
                kept.append(replace(src, rule=_tagged(src.rule, senders[head.name], s.keys)))
            elif head.name not in receiver:
                kept.append(src)
        rules = kept + [SourceRule(stmt, owner) for stmt in _receiver(s, n)]
        persisted.update({f"{s.out}Part": owner, f"{s.out}CountPart": owner})
    return rules, persisted


def _tagged(rule: ast.Rule, name: str, keys: int) -> ast.Rule:
    """A sender rule sending `name` with the partition's location after the keys."""
    stored = [a for a in rule.body if isinstance(a, ast.Atom) and a.name not in FUNCTIONS]
    args = rule.head.args
    tagged = (*args[:1 + keys], stored[0].args[0], *args[1 + keys:])
    return replace(rule, head=replace(rule.head, name=name, args=tagged))


def _receiver(s: Sealed, n: int) -> list:
    """The receiver's rules counting `s` per partition (module docstring)."""
    o = s.out
    ks = [f"K{i}" for i in range(1, s.keys + 1)]
    xs = [f"X{i}" for i in range(1, s.values + 1)]
    return [rule(atom(o, "L", *ks, *xs), atom(f"{o}Part", "L", *ks, "P", *xs)),
            rule(atom(f"{o}ReceivedPart", "L", *ks, "P", agg("count")), atom(f"{o}Part", "L", *ks, "P", *xs)),
            rule(atom(f"{o}Done", "L", *ks, "P"), atom(f"{o}CountPart", "L", *ks, "P", "N"),
                 atom(f"{o}ReceivedPart", "L", *ks, "P", "N")),
            rule(atom(f"{o}Done", "L", *ks, "P"), atom(f"{o}CountPart", "L", *ks, "P", 0)),
            rule(atom(f"{o}Parts", "L", *ks, agg("count", "P")), atom(f"{o}Done", "L", *ks, "P")),
            rule(atom(f"{o}Sealed", "L", *ks, *xs), atom(f"{o}Part", "L", *ks, "P", *xs),
                 atom(f"{o}Parts", "L", *ks, "M"), cmp("==", "M", n))]
