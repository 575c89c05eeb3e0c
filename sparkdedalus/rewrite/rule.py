"""The interface every rewrite of the table `rewrite.REWRITES` has (sqlglot's
optimizer rules are the model): `precondition(program, target) -> Verdict`
and `apply(program, target) -> (Program, notes)`.

A rule says what the analyses require (`analysis`) and how it rewrites
(`mechanism`, which raises `RewriteError` for what it cannot express). Its
precondition holds when both agree: the analyses' verdict holds and the
mechanism takes the target, so that what `explain` offers `rewrite` applies;
`apply` refuses, with the reasons, what the precondition refuses. The
program is immutable, so the analyses' verdict and the mechanism's result
are kept on it (`Program.memo`) per rule and target: asking the
precondition again is free, and the mechanism runs once, whether
`precondition` or `apply` asks for it first.

>>> from sparkdedalus import Program
>>> from sparkdedalus.rewrite import partitioning
>>> p = Program.parse('component k { n(L, B, count<X>) :- v(L, X, B); }\\n'
...                   'component s { v(D, X, B)@async :- go(L, D, X, B); seen(L, X) :- v(L, X, B); }')
>>> target = Target("k", partitions=2)
>>> partitioning.analysis(p, target).applies  # co-hashing by B
True
>>> [str(r) for r in partitioning.precondition(p, target).reasons]
["<string>:2:51: component 's' reads v, which the partitions of 'k' hold"]
>>> partitioning.precondition(p, target) is partitioning.precondition(p, target)  # kept on p
True
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.analysis.reasons import Reason
from sparkdedalus.rewrite.scope import outside_change


class RewriteError(ValueError):
    """The rewrite cannot be applied to this input (one line)."""


@dataclass(frozen=True)
class Target:
    """What a rewrite applies to: a `component` (None: the whole program),
    the indices of its `rules` that a decoupling moves and the `name` of the
    new component (None: by the role of its rules, `rewrite.naming`), the
    number of `partitions` per location of a partitioning and the `key`
    it must use (`analysis.partition_keys.Key`; None: the policy's), the
    components in `scope` (None: all), the only ones whose rules it may
    change (`rewrite.scope`)."""

    component: str | None = None
    rules: tuple = ()
    name: str | None = None
    partitions: int = 4
    scope: tuple | None = None
    key: object = None


@dataclass(frozen=True)
class Verdict:
    """Whether a rewrite applies, and why (`analysis.reasons.Reason`s: why
    not, or what it relies on)."""

    applies: bool
    reasons: tuple = ()


class Rule:
    """A rewrite of the table: `REWRITE` names it (module docstring);
    `REROUTES`: it routes the senders of the component, outside the scope
    too, but for the clients' (`scope.outside_change`)."""

    REWRITE = ""
    REROUTES = False

    def analysis(self, program, target: Target) -> Verdict:
        raise NotImplementedError

    def mechanism(self, program, target: Target) -> tuple:
        raise NotImplementedError

    def precondition(self, program, target: Target) -> Verdict:
        """The analyses' verdict, refused with the mechanism's reason when it cannot express the target."""
        return _memo(program, (self, "precondition", target), lambda: self._precondition(program, target))

    def _precondition(self, program, target: Target) -> Verdict:
        verdict = self.verdict(program, target)
        if not verdict.applies:
            return verdict
        try:
            rewritten, _ = self._mechanism(program, target)
        except RewriteError as exc:
            return Verdict(False, (Reason(str(exc)),))
        outside = outside_change(program, rewritten, target.scope, self.REROUTES)
        return Verdict(False, (Reason(outside),)) if outside else verdict

    def apply(self, program, target: Target) -> tuple:
        """(the rewritten `Program`, notes); a `RewriteError` with the reasons when the precondition fails."""
        verdict = self.verdict(program, target)
        if not verdict.applies:
            raise RewriteError(f"the {self.REWRITE} precondition fails: " + "; ".join(map(str, verdict.reasons)))
        rewritten, notes = self._mechanism(program, target)
        if outside := outside_change(program, rewritten, target.scope, self.REROUTES):
            raise RewriteError(outside)
        return rewritten, list(notes)

    def verdict(self, program, target: Target) -> Verdict:
        """`analysis`, once per program and target (`Program.memo`)."""
        return _memo(program, (self, "analysis", target), lambda: self.analysis(program, target))

    def _mechanism(self, program, target: Target) -> tuple:
        """`mechanism` (its notes a tuple), once per program and target: `precondition` runs it, `apply`
        takes what it gave; a `RewriteError` it raised is raised again."""
        def run():
            try:
                rewritten, notes = self.mechanism(program, target)
            except RewriteError as exc:
                return exc
            return rewritten, tuple(notes)
        done = _memo(program, (self, "mechanism", target), run)
        if isinstance(done, RewriteError):
            raise RewriteError(str(done))
        return done


def _memo(program, key, compute):
    """`compute()`, kept in `program.memo` under `key`; computed each time
    for a program without a memo or a key that cannot be hashed (a target
    whose rules or scope are lists)."""
    memo = getattr(program, "memo", None)
    try:
        hash(key)
    except TypeError:
        memo = None
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]
