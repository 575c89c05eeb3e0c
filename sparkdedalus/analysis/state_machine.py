"""State-machine rule sets (scaling paper, A.4 and A.4.1): rules whose facts
depend on the inputs received and their order, not on how many ticks pass,
so that their inputs may be delivered in sequenced batches.

With the inputs I (the non-constant relations the rules read and do not
derive), the paper's conservative tests:

- r has an *existence dependency* on I (r is empty at a tick without input)
  when r is an input, or every rule deriving r is a same-tick rule (an
  `@async` rule too, for an output) with a positive body atom over I or over
  a relation with an existence dependency;
- r has a *no-change dependency* on I (r does not change at a tick without
  input) when no rule derives r for the next tick except its persistence
  rule, and every other rule deriving r reads only constant relations,
  persisted inputs (which change only when input arrives) and relations
  with a no-change dependency, or (r persisted) reads positively an input
  or a relation with an existence dependency.

The rules are a state machine when every relation they reference has one of
the two dependencies and every output has an existence dependency, and no
rule reads the tick itself: an atom read as it was at a given tick (`@5`),
or at the current tick bound to a variable the rule uses (`@T` with T
elsewhere), makes a fact depend on how many ticks passed (the paper's
condition (a): "insensitive to the passing of time(steps)"). A
persisted relation the rules derive is referenced, not an output: its
persistence rule, which reads it, goes with the rules deriving it.

>>> from sparkdedalus import Program
>>> p = Program.parse('.persist seen\\nseen(L, X) :- in(L, X);\\nnew(L, X)@async :- in(L, X), notin seen(L, X);'
...                   '\\nlate(L, X)@next :- in(L, X);\\nin("l", 1)@1;')
>>> state_machine(p, [0, 1]).state_machine
True
>>> [str(r) for r in state_machine(p, [2]).reasons]
['<string>:4:1: output late is derived for the next tick by the rule for late (line 4)']
>>> q = Program.parse('out(L, X)@async :- in(L, X)@2; stamp(L, T)@async :- in(L, X)@T;\\n'
...                   'ok(L, X)@async :- in(L, X)@T; in("l", 1)@1;')
>>> [str(r) for r in state_machine(q, [0, 1]).reasons]  # doctest: +NORMALIZE_WHITESPACE
['<string>:1:20: the rule for out (line 1) reads in as it was at tick 2',
 '<string>:1:53: the rule for stamp (line 1) reads the tick T']
>>> state_machine(q, [2]).state_machine  # T bound, never used
True
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.analysis.independence import rule_label
from sparkdedalus.analysis.reasons import Reason
from sparkdedalus.analysis.roles import constant_relations, rule_set_roles
from sparkdedalus.checks.normalize import is_auxiliary
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.ast import atom_vars, expr_vars


@dataclass(frozen=True)
class StateMachine:
    state_machine: bool
    existence: frozenset  # relations with an existence dependency on the inputs
    no_change: frozenset  # relations with a no-change dependency on the inputs
    reasons: tuple

    def to_json(self) -> dict:
        return {"state_machine": self.state_machine, "existence": sorted(self.existence),
                "no_change": sorted(self.no_change), "reasons": [r.to_json() for r in self.reasons]}


def _same_tick(rule, outputs) -> bool:
    return rule.delivery == "now" or (rule.delivery == "async" and rule.head.name in outputs)


def _closure(names, test) -> set:
    """The least set of `names` closed under `test(name, set_so_far)`."""
    found: set = set()
    changed = True
    while changed:
        changed = False
        for name in sorted(names - found):
            if test(name, found):
                found.add(name)
                changed = True
    return found


def _reads_tick(program, rule) -> list:
    """Why `rule` depends on the tick: an atom at a given tick, or the tick
    bound to a variable it uses elsewhere (`used` counts the qualifier too);
    a negated auxiliary projection (`checks.normalize`) as the atom it projects."""
    projected = [program.defining_rules(a.name)[0].positive_atoms[0] if is_auxiliary(a.name) else a
                 for a in rule.negated_atoms]
    used = [v.name for a in rule.head.args for v in expr_vars(a)]
    used += [v.name for lit in rule.body if isinstance(lit, ast.Comparison) for v in expr_vars(lit.left)
             + expr_vars(lit.right)]
    used += [v.name for a in rule.positive_atoms + rule.function_atoms + projected for v in atom_vars(a)]
    found = []
    for atom in rule.positive_atoms + projected:
        if isinstance(atom.time, ast.TickTime):
            found.append(Reason(f"{rule_label(rule)} reads {atom.name} as it was at tick {atom.time.tick}", atom.pos))
        elif isinstance(atom.time, ast.VarTime) and used.count(atom.time.var.name) > 1:
            found.append(Reason(f"{rule_label(rule)} reads the tick {atom.time.var.name}", atom.pos))
    return found


def _greatest(names, test) -> set:
    """The greatest subset of `names` closed under `test(name, set_so_far)`:
    a same-tick recursion over relations that do not change does not change."""
    found = set(names)
    changed = True
    while changed:
        changed = False
        for name in sorted(found):
            if not test(name, found):
                found.discard(name)
                changed = True
    return found


def state_machine(program, rules, constant=None, read=frozenset()) -> StateMachine:
    """Whether the rules `rules` (indices) behave like a state machine;
    `constant`: the relations taken as constant (default
    `constant_relations(program)`); `read`: relations other rules read,
    referenced rather than outputs when these rules derive them."""
    constant = constant_relations(program) if constant is None else constant
    roles = rule_set_roles(program, rules, constant=constant)
    inputs = roles.referenced_inputs
    outputs = roles.outputs - program.persisted - read
    references = roles.references | (roles.derived & (program.persisted | read))
    by_head: dict = {}
    for i in roles.rules:
        by_head.setdefault(program.rules[i].head.name, []).append(program.rules[i])

    def exists(name, found):
        return name not in program.persisted and all(
            _same_tick(r, outputs) and any(a.name in inputs | found for a in r.positive_atoms)
            for r in by_head[name])

    existence = inputs | _closure(set(by_head), exists)

    kept = inputs & program.persisted  # persisted inputs change only when input arrives

    def unchanged(name, found):
        return all(r.delivery != "next" and (
            all(a.name in constant | kept | found for a in r.positive_atoms + r.negated_atoms)
            or (name in program.persisted and any(a.name in existence for a in r.positive_atoms)))
            for r in by_head[name])

    no_change = _greatest(set(by_head), unchanged)
    reasons = [reason for i in roles.rules for reason in _reads_tick(program, program.rules[i])]
    for name in sorted(references - existence - no_change):
        rule = next((r for r in by_head[name] if r.delivery == "next"), by_head[name][0])
        how = "for the next tick " if rule.delivery == "next" else ""
        reasons.append(Reason(f"{name} is derived {how}by {rule_label(rule)} with neither an existence "
                              "nor a no-change dependency on the inputs", rule.pos))
    for name in sorted(outputs - existence):
        later = [r for r in by_head[name] if not _same_tick(r, outputs)]
        if later:
            reasons.append(Reason(f"output {name} is derived for the next tick by {rule_label(later[0])}",
                                  later[0].pos))
        else:
            rule = next(r for r in by_head[name] if not any(a.name in existence for a in r.positive_atoms))
            reasons.append(Reason(f"output {name} may exist at a tick without input: {rule_label(rule)} "
                                  "reads no input", rule.pos))
    if reasons:
        return StateMachine(False, frozenset(existence), frozenset(no_change), tuple(reasons))
    return StateMachine(True, frozenset(existence), frozenset(no_change), (Reason(
        "every referenced relation has an existence or no-change dependency on the inputs; "
        "every output an existence dependency"),))
