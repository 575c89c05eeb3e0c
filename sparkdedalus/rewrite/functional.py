"""The functional decoupling (scaling paper, 3.3 and A.3): its precondition from
`analysis.decoupling`, and `apply` by `rewrite.decouple` (Redirection, and
forwarding where the rules that stay read the same relation)."""

from __future__ import annotations

from sparkdedalus.analysis.decoupling import decoupling
from sparkdedalus.rewrite.decouple import decouple

REWRITE = "functional"


def precondition(program, component: str, split):
    """The analyses' verdict (`Precondition`: applies, reasons)."""
    return next(p for p in decoupling(program, component, split).preconditions if p.rewrite == REWRITE)


def apply(program, component: str, split, name: str):
    """`program` with the rules `split` of `component` moved to the new component `name`."""
    return decouple(program, component, split, name, persist=False)
