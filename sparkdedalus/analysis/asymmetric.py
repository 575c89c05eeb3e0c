"""Asymmetric decoupling's precondition (scaling paper, A.5): the rules C2
split off from C1 may feed C1 (C1 reads what C2 derives) if C2 does not
depend on C1 — C2 is independent of C1 — and C2 is (1) a state machine and
(2) monotonic or functional. The rewrite batches C2's facts to C1 and holds
C2's outputs until C1 has acknowledged the batch they came from. (The paper's
Paxos uses it for the p2b proxy leaders, section 5.2.)

`Precondition` is the verdict of any decoupling rewrite's precondition
(`decoupling` uses it for all of them).

>>> from sparkdedalus import Program
>>> p = Program.parse('.persist acks\\nacks(L, N) :- ack(L, N);\\nok(L) :- acks(L, "a");'
...                   'ack("l", "a")@1;')
>>> asymmetric(p, [1], [0]).applies
True
>>> asymmetric(p, [0], [1]).applies
False
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.analysis.functional import functional
from sparkdedalus.analysis.independence import independence
from sparkdedalus.analysis.monotonicity import monotonicity
from sparkdedalus.analysis.state_machine import state_machine


@dataclass(frozen=True)
class Precondition:
    rewrite: str
    applies: bool
    reasons: tuple  # why it fails, or (when it applies) what it relies on

    def to_json(self) -> dict:
        return {"rewrite": self.rewrite, "applies": self.applies, "reasons": [r.to_json() for r in self.reasons]}


def precondition(rewrite: str, *parts) -> Precondition:
    """`parts`: (holds, reasons) pairs that must all hold."""
    failing = [reasons for holds, reasons in parts if not holds]
    chosen = failing or [reasons for _, reasons in parts]
    return Precondition(rewrite, not failing, tuple(r for reasons in chosen for r in reasons))


def asymmetric(program, stay, split) -> Precondition:
    """Whether the rules `split` may be decoupled from the rules `stay`
    asymmetrically (see the module docstring)."""
    ind = independence(program, split, stay)
    sm = state_machine(program, split)
    mono, func = monotonicity(program, split), functional(program, split)
    either = (mono.monotone or func.functional,
              mono.reasons if mono.monotone else func.reasons if func.functional else mono.reasons + func.reasons)
    return precondition("asymmetric", (ind.independent, ind.reasons), (sm.state_machine, sm.reasons), either)
