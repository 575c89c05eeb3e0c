"""Monotonicity of a set of rules (scaling paper, 3.2 and A.2.1): whether
their outputs only grow as their inputs grow, so that they may run on another
node behind asynchronous channels (CALM).

- *Strict* test (3.2): every input (a non-constant relation the rules read
  and do not derive, `roles`) is persisted, and no rule negates, aggregates,
  chooses or reads a relation at a given tick (`@5`, `@T`).
- *Relaxed* tests (A.2.1): an input may instead be *logically persisted*
  (its facts at tick t-1 are among its facts at t: `growth.growing_relations`,
  e.g. a relation derived without negation from persisted ones); and an
  aggregate is allowed when it is a *threshold* over a monotone lattice:
  `count<X>` or `max<X>` read only as `V >= e` or `V > e` (`min<X>` as
  `V <= e` or `V < e`), where V, the aggregate's column, appears nowhere else
  in the reading rule, and every reader of the aggregate is among the rules;
  `count<X>` may also be read as `V == e`, or with V shared with an atom,
  when it counts members of a fixed set no larger than the least value e
  (or the atom's column) may take (`bounded`: the count reaches e only as a
  threshold does). A relation kept by GC'd persistence (`guarded`:
  `r(..)@next :- r(..), notin c(..)`) counts as persisted, and its
  guarded persistence rule as persistence, not as a negation.

A failing verdict names each construct at fault (rule and `file:line:col`).

>>> from sparkdedalus import Program
>>> p = Program.parse('.persist acks\\nacks(L, N) :- ack(L, N);\\n'
...                   'n(L, count<N>) :- acks(L, N);\\nquorum(L) :- n(L, K), K >= 2;\\nack("l", 1)@1;')
>>> m = monotonicity(p, [1, 2])
>>> m.monotone, m.test
(True, 'relaxed')
>>> m = monotonicity(p, [0])
>>> m.monotone, [str(r) for r in m.reasons]
(False, ['<string>:2:15: the rule for acks (line 2) reads ack, which is not persisted, not even logically'])
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.analysis.bounded import count_bound, floor
from sparkdedalus.analysis.growth import growing_relations
from sparkdedalus.analysis.guarded import guarded_persistence
from sparkdedalus.analysis.independence import body_reads, rule_label
from sparkdedalus.analysis.reasons import Reason
from sparkdedalus.analysis.roles import constant_relations, rule_set_roles
from sparkdedalus.program import BUILTIN_RELATIONS
from sparkdedalus.syntax import ast

#: aggregate -> the comparisons `V op e` that make a threshold over it
THRESHOLDS = {"count": (">=", ">"), "max": (">=", ">"), "min": ("<=", "<")}
_FLIPPED = {">=": "<=", ">": "<", "<=": ">=", "<": ">", "==": "==", "!=": "!="}


@dataclass(frozen=True)
class Monotonicity:
    monotone: bool
    test: str | None  # "strict" or "relaxed": the test that passed; None when none did
    reasons: tuple

    def to_json(self) -> dict:
        return {"monotone": self.monotone, "test": self.test, "reasons": [r.to_json() for r in self.reasons]}


def logically_persisted(program) -> frozenset:
    """Relations whose facts at tick t-1 are among their facts at tick t
    (`.input` relations and `crash` counted as changing)."""
    return growing_relations(program, frozenset(i.name for i in program.inputs) | set(BUILTIN_RELATIONS))


def nonmonotone_constructs(rule, allowed_aggregates=False) -> list[Reason]:
    """Negation, `choose`, reads at a given tick and (unless allowed) aggregates of `rule`."""
    out = [Reason(f"{rule_label(rule)} negates {lit.atom.name}", lit.pos)
           for lit in rule.body if isinstance(lit, ast.Negated)]
    if rule.choose is not None:
        out.append(Reason(f"{rule_label(rule)} chooses", rule.choose.pos))
    out += [Reason(f"{rule_label(rule)} reads {a.name} at a given tick", a.pos)
            for a in rule.positive_atoms + rule.negated_atoms if a.time is not None]
    if not allowed_aggregates:
        out += [Reason(f"{rule_label(rule)} aggregates with {a.func}<{a.var.name if a.var else '*'}>", a.pos)
                for a in rule.aggregates]
    return out


def _vars(expr) -> set:
    if isinstance(expr, ast.Var):
        return {expr.name}
    if isinstance(expr, ast.BinOp):
        return _vars(expr.left) | _vars(expr.right)
    if isinstance(expr, ast.Neg):
        return _vars(expr.operand)
    return set()


def _at_least(program, reader, bound, term) -> bool:
    """Whether `term` of `reader` (a constant, or a variable a positive atom
    binds) is never less than `bound` (`bounded.floor`)."""
    if bound is None:
        return False
    if isinstance(term, ast.Const):
        return isinstance(term.value, int) and term.value >= bound
    floors = [floor(program, a.name, j) for a in reader.positive_atoms for j, x in enumerate(a.args)
              if isinstance(term, ast.Var) and x == term]
    return any(f is not None and f >= bound for f in floors)


def _threshold_use(program, reader, relation, column, func, bound=None) -> bool:
    """Whether every read of `relation` by `reader` uses its aggregate column
    only in threshold comparisons; with `bound` (the most a count can be),
    also in an equality with a value never less than it."""
    for atom in reader.positive_atoms:
        if atom.name != relation:
            continue
        arg = atom.args[column]
        if not isinstance(arg, ast.Var):
            return False
        shared = [a for other in reader.positive_atoms if other is not atom for a in other.args if a == arg]
        elsewhere = [a for other in reader.negated_atoms + [reader.head] for a in other.args if a == arg]
        if elsewhere or shared and not _at_least(program, reader, bound, arg):
            return False
        for c in reader.comparisons:
            left, right = _vars(c.left), _vars(c.right)
            if arg.name in left and arg.name in right:
                return False
            op = c.op if arg.name in left else _FLIPPED[c.op] if arg.name in right else None
            if op is None:
                continue
            other = c.right if c.left == arg else c.left if c.right == arg else None
            if other is None or op not in THRESHOLDS[func] and not (
                    op == "==" and _at_least(program, reader, bound, other)):
                return False
    return True


def _aggregate_reasons(program, indices, rule) -> list[Reason]:
    """Why the aggregates of `rule` are not thresholds (empty when they are)."""
    out = []
    for agg in rule.aggregates:
        column = rule.head.args.index(agg)
        if agg.func not in THRESHOLDS:
            out.append(Reason(f"{rule_label(rule)} aggregates with {agg.func}, not a monotone lattice", agg.pos))
            continue
        readers = [r for r in program.rules if not r.persistence
                   and rule.head.name in {name for name, _ in body_reads(r)}]
        if not readers:
            out.append(Reason(f"{rule_label(rule)}: {agg.func}<> of {rule.head.name} is an output, "
                              "not a threshold test", agg.pos))
        for reader in readers:
            if reader.index not in indices:
                out.append(Reason(f"{rule_label(reader)}, not among the rules, reads {agg.func}<> of "
                                  f"{rule.head.name}", agg.pos))
            elif not _threshold_use(program, reader, rule.head.name, column, agg.func, count_bound(program, rule, agg)):
                ops = " or ".join(THRESHOLDS[agg.func])
                pos = next(a.pos for a in reader.positive_atoms if a.name == rule.head.name)
                out.append(Reason(f"{rule_label(reader)} uses {agg.func}<> of {rule.head.name} other than "
                                  f"in a threshold test ({ops})", pos))
    return out


def _input_reasons(program, roles, allowed) -> list[Reason]:
    out, seen = [], set()
    for i in roles.rules:
        rule = program.rules[i]
        for name, pos in body_reads(rule):
            if name in roles.referenced_inputs and name not in allowed and name not in seen:
                seen.add(name)
                out.append((rule, name, pos))
    return out


def monotonicity(program, rules) -> Monotonicity:
    """Whether the rules `rules` (indices) are monotone (see the module docstring)."""
    roles = rule_set_roles(program, rules, constant=constant_relations(program))
    guarded = guarded_persistence(program)
    guards = {g.rule: g for g in guarded.values() if g.rule in roles.rules}
    persisted = program.persisted | set(guarded)
    chosen = [program.rules[i] for i in roles.rules if i not in guards]
    kept = [Reason(f"{rule_label(program.rules[i])}: GC'd persistence, {g.text()} (A.2.1), "
                   f"not a negation", program.rules[i].pos) for i, g in guards.items()]
    strict = [Reason(f"{rule_label(r)} reads {n}, which is not persisted", p)
              for r, n, p in _input_reasons(program, roles, persisted)]
    strict += [reason for r in chosen for reason in nonmonotone_constructs(r)]
    if not strict:
        names = ", ".join(sorted(roles.referenced_inputs)) or "none"
        return Monotonicity(True, "strict", (Reason(f"inputs persisted ({names}); "
                                                    "no negation or aggregation"), *kept))
    relaxed = [Reason(f"{rule_label(r)} reads {n}, which is not persisted, not even logically", p)
               for r, n, p in _input_reasons(program, roles, logically_persisted(program) | persisted)]
    for r in chosen:
        relaxed += nonmonotone_constructs(r, allowed_aggregates=True) + _aggregate_reasons(program, roles.rules, r)
    if relaxed:
        return Monotonicity(False, None, tuple(relaxed))
    why = [Reason(f"{rule_label(r)}: {a.func}<> read only in threshold tests", a.pos)
           for r in chosen for a in r.aggregates]
    if roles.referenced_inputs - persisted:
        names = ", ".join(sorted(roles.referenced_inputs - persisted))
        why.insert(0, Reason(f"inputs logically persisted ({names})"))
    return Monotonicity(True, "relaxed", tuple(why + kept))
