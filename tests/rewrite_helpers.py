"""Shared steps of the decoupling tests: apply a rewrite, check that its
output prints as dialect that checks, and compare it with the original by
`equiv` over 20 random-delay seeds."""

from __future__ import annotations

from pathlib import Path

from sparkdedalus import Program
from sparkdedalus.equivalence import compare
from sparkdedalus.network import Network
from sparkdedalus.rewrite import DECOUPLINGS, Target, applicable
from sparkdedalus.rewrite.decouple import select
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.rewrite.text import program_text

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RANDOM = Network.parse("delay=uniform(1,4)")

# An inbox splits each p2b message into got and gotb at the same tick, so the
# original never sees got without gotb: lonely and alarm never hold. The
# proposer's lonely rule negates gotb; alarm reads lonely; seen reads got.
PAIRS = """
component inbox {
    got(L, A, S) :- p2b(L, A, S, B);
    gotb(L, S, B) :- p2b(L, A, S, B);
}
component proposer {
    .persist seen
    .persist alarm
    seen(L, S) :- got(L, _, S);
    lonely(L, S) :- got(L, _, S), notin gotb(L, S, _);
    alarm(L, S) :- lonely(L, S);
}
p2b("prop", "a1", 1, 5)@1;
p2b("prop", "a2", 1, 5)@1;
p2b("prop", "a1", 2, 5)@2;
p2b("prop", "a3", 3, 7)@2;
p2b("prop", "a2", 4, 9)@4;
"""


def decouple_and_compare(program, component: str, selectors, name: str, rewrite: str, ticks: int) -> list:
    """Move the rules `selectors` of `component` to `name` by the decoupling
    named `rewrite`; assert the output checks and `equiv` finds no difference.
    Returns the names of the decouplings whose precondition holds."""
    split = select(program, component, selectors)
    found = [r.REWRITE for r in applicable(program, component, split)]
    chosen = next(r for r in DECOUPLINGS if r.REWRITE == rewrite)
    rewritten = chosen.apply(program, Target(component, split, name))[0]
    again = Program.parse(program_text(rewritten, source_rules(rewritten)))  # prints as dialect that checks
    assert name in again.components and again.homes == (f"/{name}",)
    assert {program.rules[i].head.name for i in split} <= {r.head.name for r in again.rules if r.component == name}
    result = compare(program, rewritten, ticks, 20, RANDOM)
    assert result.difference is None, result.difference
    return found
