"""The decoupling rewrites (scaling paper, section 3 and A.1-A.5) as rules of
the table `rewrite.REWRITES`: each moves the rules `target.rules` of
`target.component` to the new component `target.name` by the mechanism of
`rewrite.decouple` it names, when the analysis of its name
(`analysis.decoupling`) holds; what components outside `target.scope` send
to the moved rules is relayed (`rewrite.scope`). A decoupling that leaves
the component forwarding only what other components send is refused
(`rewrite.relays`).

>>> from sparkdedalus import Program
>>> p = Program.parse('component k { a(L, X) :- in(L, X); b(L, X) :- in2(L, X); }\\n'
...                   'in("n", 1)@1; in2("n", 2)@1;')
>>> q, notes = functional.apply(p, Target("k", (1,), "kb"))
>>> notes
['k -> kb: functional decoupling of b']
"""

from __future__ import annotations

from sparkdedalus.analysis.decoupling import decoupling
from sparkdedalus.rewrite.decouple import decouple
from sparkdedalus.rewrite.naming import name_part
from sparkdedalus.rewrite.relays import emptied
from sparkdedalus.rewrite.rule import Rule, RewriteError, Target, Verdict
from sparkdedalus.rewrite.scope import relayed


class Decoupling(Rule):
    """A decoupling rewrite: its name in the analyses and its mechanism. It
    redirects the senders of the moved rules' inputs outside the scope too,
    but for the clients' (`rewrite.scope`), which it relays."""

    REROUTES = True

    def __init__(self, rewrite: str, mechanism: str):
        self.REWRITE, self.mechanism_name = rewrite, mechanism

    @property
    def coordinated(self) -> bool:
        """Whether it sequences the moved rules' inputs (batches, seals,
        acknowledgements): the parts it makes cannot be co-hashed."""
        return self.mechanism_name in ("batch", "acknowledge")

    def analysis(self, program, target: Target) -> Verdict:
        found = decoupling(program, target.component, target.rules).preconditions
        verdict = next(p for p in found if p.rewrite == self.REWRITE)
        return Verdict(verdict.applies, verdict.reasons)

    def mechanism(self, program, target: Target) -> tuple:
        name = target.name or name_part(program, target.component, target.rules)
        heads = ", ".join(dict.fromkeys(program.rules[i].head.name for i in target.rules))
        relay = relayed(program, target.scope, target.rules, reroutes=True) if target.scope is not None else set()
        rewritten = decouple(program, target.component, target.rules, name, self.mechanism_name, relay)
        if through := emptied(program, rewritten, target.component, target.rules):
            raise RewriteError(f"component {target.component!r} would only forward {', '.join(through)}, which "
                               f"its senders could send to the new nodes themselves: nothing stays")
        return rewritten, [f"{target.component} -> {name}: {self.REWRITE} decoupling of {heads}"]


mutually_independent = Decoupling("mutually independent", "redirect")  # 3.1, A.1
functional = Decoupling("functional", "redirect")  # 3.3, A.3
monotonic = Decoupling("monotonic", "persist")  # 3.2, A.2
state_machine = Decoupling("state machine", "batch")  # A.4
asymmetric = Decoupling("asymmetric", "acknowledge")  # A.5
