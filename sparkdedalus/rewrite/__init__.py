"""Rule-driven rewrites of the scaling paper (section 3, appendix A) and the
coordination rewrite: program-to-program transformations, one rule per
module, in one ordered table, `REWRITES`. Every rule has the interface of
`rewrite.rule`: `precondition(program, target) -> Verdict` (with reasons)
and `apply(program, target) -> (Program, notes)`; `explain` reads the same
preconditions that `rewrite` applies. docs/rewrites.md describes them.

>>> from sparkdedalus import Program
>>> p = Program.parse('component k { a(L, X) :- in(L, X); b(L, X) :- in2(L, X); }\\n'
...                   'in("n", 1)@1; in2("n", 2)@1;')
>>> [r.REWRITE for r in REWRITES]
['mutually independent', 'functional', 'monotonic', 'state machine', 'asymmetric', 'partitioning', \
'partial partitioning', 'coordination']
>>> [r.REWRITE for r in applicable(p, "k", (1,))]  # in2 is not persisted: not monotonic
['mutually independent', 'functional', 'state machine', 'asymmetric']
"""

from __future__ import annotations

from sparkdedalus.rewrite.coordinate import coordination
from sparkdedalus.rewrite.decouplings import asymmetric, functional, monotonic, mutually_independent, state_machine
from sparkdedalus.rewrite.partial_partition import partial_partitioning
from sparkdedalus.rewrite.partition import partitioning
from sparkdedalus.rewrite.rule import RewriteError, Rule, Target, Verdict

__all__ = ["DECOUPLINGS", "PARTITIONINGS", "REWRITES", "RewriteError", "Rule", "Target", "Verdict", "applicable",
           "asymmetric", "coordination", "decouple_first", "functional", "monotonic", "mutually_independent",
           "partial_partitioning", "partition_by_policy", "partitioning", "refusals", "state_machine"]

#: the decoupling rewrites, the one with the least machinery first
DECOUPLINGS = (mutually_independent, functional, monotonic, state_machine, asymmetric)
#: the partitioning rewrites, the coordination-free one first
PARTITIONINGS = (partitioning, partial_partitioning)
#: every rewrite, in the order `rewrite --auto` and `explain` consider them
REWRITES = DECOUPLINGS + PARTITIONINGS + (coordination,)


def applicable(program, component: str, split, name: str | None = None) -> list:
    """The decoupling rewrites whose precondition holds for moving `split`."""
    target = Target(component, tuple(split), name)
    return [r for r in DECOUPLINGS if r.precondition(program, target).applies]


def refusals(program, component: str, split, rewrite: str) -> tuple:
    """Why the rewrite named `rewrite` refuses to move the rules `split` of
    `component` (its precondition's reasons; none: it applies; a
    partitioning takes no rules). What `explain` asks of each rewrite the
    analyses offer (shell/explain.py).

    >>> from sparkdedalus import Program
    >>> p = Program.parse('component c { seal(L, X)@next :- in(L, X); out(L, X) :- seal(L, X), go(L); }')
    >>> state_machine.analysis(p, Target("c", (1,))).applies
    True
    >>> [str(r) for r in refusals(p, "c", (1,), "state machine")]
    ["the batches need the relation name 'seal_seal_handlers' for two relations"]
    """
    rule = next(r for r in REWRITES if r.REWRITE == rewrite)
    verdict = rule.precondition(program, Target(component, tuple(split)))
    return () if verdict.applies else verdict.reasons


def decouple_first(program, target: Target, force: bool = False, coordinated: bool = True) -> tuple:
    """(the program, notes) of the first decoupling of `DECOUPLINGS`, in the
    table's order, whose precondition holds for `target`: the one decoupling
    chooser (`rewrite --decouple`, `--auto` and `optimize` take it through
    `rewrite.plan`). Without `coordinated`, the decouplings that sequence the
    moved rules' inputs (state machine, asymmetric: last in the table) are
    not tried, so that the choice differs only where no coordination-free
    one holds. With none, a `RewriteError` with every tried rewrite's
    reasons, or with `force` the monotonic mechanism and notes marking the
    output unchecked."""
    tried = [r for r in DECOUPLINGS if coordinated or not r.coordinated]
    for rewrite in tried:
        if rewrite.precondition(program, target).applies:
            return rewrite.apply(program, target)
    reasons = [f"{r.REWRITE}: {reason}" for r in tried for reason in r.precondition(program, target).reasons]
    if not force:
        raise RewriteError("no precondition holds\n" + "\n".join(f"  {reason}" for reason in reasons))
    program, _ = monotonic.mechanism(program, target)
    return program, [f"UNCHECKED: {target.component} -> {target.name} forced with the {monotonic.REWRITE} "
                     f"mechanism; its precondition fails:"] + reasons


def partition_by_policy(program, component: str, n: int, scope: tuple | None = None, key=None) -> tuple:
    """(the program, notes) of `component` on `n` partitions:
    `partitioning` when its analysis holds, else `partial_partitioning`
    (which refuses a component without a policy, with the reasons); `scope`:
    the components whose rules it may change (None: all); `key`: the
    partition key to use (`analysis.partition_keys.Key`; a `ValueError`
    says why it cannot be one)."""
    target = Target(component, partitions=n, scope=scope, key=key)
    rule = partitioning if partitioning.verdict(program, target).applies else partial_partitioning
    return rule.apply(program, target)
