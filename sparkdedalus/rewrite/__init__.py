"""Rule-driven rewrites of the scaling paper (section 3, appendix A):
program-to-program transformations. The decoupling rewrites are the entries
of one table, `DECOUPLINGS`: each a `Decoupling` with `precondition` (the
analyses' verdict with its reasons) and `apply` returning a new checked
`Program`, by the mechanism of `rewrite.decouple` its entry names.
docs/rewrites.md describes them.

>>> from sparkdedalus import Program
>>> p = Program.parse('component k { a(L, X) :- in(L, X); b(L, X) :- in2(L, X); }\\n'
...                   'in("n", 1)@1; in2("n", 2)@1;')
>>> [r.REWRITE for r in applicable(p, "k", (1,))]  # in2 is not persisted: not monotonic
['mutually independent', 'functional', 'state machine', 'asymmetric']
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.analysis.decoupling import decoupling
from sparkdedalus.rewrite.decouple import decouple


@dataclass(frozen=True)
class Decoupling:
    """A decoupling rewrite: its name in the analyses and its mechanism."""

    REWRITE: str
    mechanism: str

    @property
    def coordinated(self) -> bool:
        """Whether it sequences the moved rules' inputs (batches, seals,
        acknowledgements): the parts it makes cannot be co-hashed."""
        return self.mechanism in ("batch", "acknowledge")

    def precondition(self, program, component: str, split):
        """The analyses' verdict (`Precondition`: applies, reasons)."""
        return next(p for p in decoupling(program, component, split).preconditions if p.rewrite == self.REWRITE)

    def apply(self, program, component: str, split, name: str):
        """`program` with the rules `split` of `component` moved to the new component `name`."""
        return decouple(program, component, split, name, self.mechanism)


mutually_independent = Decoupling("mutually independent", "redirect")  # 3.1, A.1
functional = Decoupling("functional", "redirect")  # 3.3, A.3
monotonic = Decoupling("monotonic", "persist")  # 3.2, A.2
state_machine = Decoupling("state machine", "batch")  # A.4
asymmetric = Decoupling("asymmetric", "acknowledge")  # A.5

#: the decoupling rewrites, the one with the least machinery first
DECOUPLINGS = (mutually_independent, functional, monotonic, state_machine, asymmetric)


def applicable(program, component: str, split) -> list:
    """The decoupling rewrites whose precondition holds for moving `split`."""
    return [r for r in DECOUPLINGS if r.precondition(program, component, split).applies]
