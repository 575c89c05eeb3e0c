"""A rewrite plan: decouplings and partitionings in order, applied with a
scope (`rewrite.scope`), so that the clients' rules stay as written and a
decoupled component relays what the clients send it.

A `Step` decouples the rules deriving some relations (or at some lines) of a
component into a new one, with the first coordination-free decoupling of
`rewrite.DECOUPLINGS` whose precondition holds (as `rewrite --decouple`
picks it), or runs a component on K partitions as `rewrite --partition` does:
the partitioning rewrite (co-hashing or dependencies), or partial partitioning
with a coordinator where the policy asks for it (`rewrite.partition_by_policy`).
`Step.option` is the `rewrite` option that names the step. The scope grows
with each component a step creates: a decoupling's, a coordinator.

>>> from sparkdedalus import Program
>>> p = Program.parse('component c { q(S, X, C)@async :- go(C, S, X); }\\n'
...     'component k { a(L, X)@async :- q(L, X, C), to(L, D); b(C, X)@async :- q(L, X, C); }\\n'
...     'go("c", "n", 1)@1; to("n", "d");')
>>> plan = (Step("decouple", "k", ("a",), "sender"), Step("partition", "sender", partitions=2))
>>> q, notes = apply_plan(p, plan, ("k",))
>>> [s.option() for s in plan]
['--decouple k:a:sender', '--partition sender:2']
>>> sorted(q.components)  # c still sends q to k, which relays it to the sender
['c', 'k', 'main', 'sender']
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.rewrite import DECOUPLINGS, RewriteError, Target, partition_by_policy
from sparkdedalus.rewrite.decouple import check_name, select


@dataclass(frozen=True)
class Step:
    kind: str  # "decouple" or "partition"
    component: str
    rules: tuple = ()  # decouple: head relations or line numbers (as text)
    name: str | None = None  # decouple: the new component
    partitions: int = 1  # partition: K

    def option(self) -> str:
        if self.kind == "decouple":
            return f"--decouple {self.component}:{','.join(self.rules)}:{self.name}"
        return f"--partition {self.component}:{self.partitions}"

    def to_json(self) -> dict:
        if self.kind == "decouple":
            return {"decouple": self.component, "rules": list(self.rules), "name": self.name}
        return {"partition": self.component, "partitions": self.partitions}


def apply_step(program, step: Step, scope: tuple) -> tuple:
    """(program, notes, scope) after `step`; a `RewriteError` when no
    rewrite applies (or the step names what the program lacks)."""
    if step.kind == "partition":
        rewritten, notes = partition_by_policy(program, step.component, step.partitions, scope)
        return rewritten, notes, scope + tuple(c for c in rewritten.components if c not in program.components)
    check_name(program, step.name)
    scope = scope + (step.name,)
    target = Target(step.component, select(program, step.component, list(step.rules)), step.name, scope=scope)
    verdicts = {r.REWRITE: r.precondition(program, target) for r in DECOUPLINGS if not r.coordinated}
    for rewrite in DECOUPLINGS:
        if rewrite.REWRITE in verdicts and verdicts[rewrite.REWRITE].applies:
            return (*rewrite.apply(program, target), scope)
    reasons = "; ".join(f"{name}: {reason}" for name, v in verdicts.items() for reason in v.reasons)
    raise RewriteError(f"cannot decouple {','.join(step.rules)} from {step.component}: {reasons}")


def apply_plan(program, steps, scope: tuple) -> tuple:
    """(the program, the notes) after `steps` in order; `scope`: the
    components the first step may change (the clients are outside it)."""
    notes = []
    for step in steps:
        program, done, scope = apply_step(program, step, tuple(scope))
        notes += done
    return program, notes
