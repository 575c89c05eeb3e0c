"""The rewrite interface (sparkdedalus/rewrite/rule.py, issue 31 point 1):
one ordered table, a precondition verdict with reasons that matches what
apply does, and a refusal when the precondition fails."""

from __future__ import annotations

import pytest

from sparkdedalus import Program
from sparkdedalus.rewrite import REWRITES, RewriteError, Target, Verdict, partitioning, state_machine
from sparkdedalus.rewrite.decouple import select

# v is held by the partitions of k, and s reads it: co-hashing holds, the mechanism refuses
SHARED = ('component k { n(L, B, count<X>) :- v(L, X, B); }\n'
          'component s { v(D, X, B)@async :- go(L, D, X, B); seen(L, X) :- v(L, X, B); }\n'
          'go("s", "k", 1, "b")@1;')
PAIRS = '''component proposer {
    .persist gotb
    gotb(L, X) :- b(L, X);
    lonely(L, X) :- a(L, X), notin gotb(L, X);
    alarm(L, X) :- lonely(L, X);
}
a("prop", 1)@1; b("prop", 2)@1;'''


def test_the_table_is_ordered_and_every_rule_has_the_interface():
    assert [r.REWRITE for r in REWRITES] == ["mutually independent", "functional", "monotonic", "state machine",
                                             "asymmetric", "partitioning", "partial partitioning", "coordination"]
    assert all(callable(r.precondition) and callable(r.apply) for r in REWRITES)


def test_a_precondition_has_the_mechanisms_reason_and_apply_refuses_alike():
    p = Program.parse(SHARED)
    target = Target("k", partitions=2)
    assert partitioning.analysis(p, target).applies
    verdict = partitioning.precondition(p, target)
    assert isinstance(verdict, Verdict) and not verdict.applies
    assert "component 's' reads v, which the partitions of 'k' hold" in str(verdict.reasons[0])
    with pytest.raises(RewriteError, match="reads v, which the partitions of 'k' hold"):
        partitioning.apply(p, target)


def test_a_precondition_that_holds_is_applied():
    p = Program.parse(SHARED.replace(" seen(L, X) :- v(L, X, B);", ""))
    target = Target("k", partitions=2)
    assert partitioning.precondition(p, target).applies
    q, notes = partitioning.apply(p, target)
    assert q.homes == ("/p0", "/p1") and notes == ["k on 2 partitions (co-hashing): n by c1, v by c2"]


def test_apply_refuses_with_the_reasons_when_the_analysis_fails():
    p = Program.parse(PAIRS)
    target = Target("proposer", select(p, "proposer", ["lonely"]), "checker")  # alarm (stays) reads lonely
    verdict = state_machine.precondition(p, target)
    assert not verdict.applies and verdict.reasons
    with pytest.raises(RewriteError, match="the state machine precondition fails: ") as refused:
        state_machine.apply(p, target)
    assert str(verdict.reasons[0]) in str(refused.value)


def test_every_rule_agrees_with_itself_on_the_shipped_running_example():
    # what a precondition accepts, apply applies; what it refuses, apply refuses
    from pathlib import Path
    p = Program.from_files(str(Path(__file__).resolve().parent.parent / "examples" / "voting.ded"))
    for component in ("leader", "participant"):
        for rule in REWRITES[5:7]:
            target = Target(component, partitions=2)
            if rule.precondition(p, target).applies:
                rule.apply(p, target)
            else:
                with pytest.raises(RewriteError):
                    rule.apply(p, target)
