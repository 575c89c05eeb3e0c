"""Rule-driven rewrites of the scaling paper (section 3, appendix A):
program-to-program transformations, each a module with `precondition` (the
analyses' verdict with its reasons) and `apply` returning a new checked
`Program`. docs/rewrites.md describes them.

>>> from sparkdedalus import Program
>>> p = Program.parse('component k { a(L, X) :- in(L, X); b(L, X) :- in2(L, X); }\\n'
...                   'in("n", 1)@1; in2("n", 2)@1;')
>>> [r.REWRITE for r in applicable(p, "k", (1,))]  # in2 is not persisted: not monotonic
['mutually independent', 'functional']
"""

from sparkdedalus.rewrite import functional, monotonic, mutually_independent

#: the decoupling rewrites, the one with the least machinery first
DECOUPLINGS = (mutually_independent, functional, monotonic)


def applicable(program, component: str, split) -> list:
    """The decoupling rewrites whose precondition holds for moving `split`."""
    return [r for r in DECOUPLINGS if r.precondition(program, component, split).applies]
