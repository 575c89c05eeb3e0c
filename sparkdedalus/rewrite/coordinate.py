"""The coordination rewrite (seed 004, "Coordination"): for every point of
order the confluence analysis finds -- an `@async` relation p whose facts a
rule negates or aggregates, directly or through relations computed from p at
the same tick -- count p's messages (`analysis/coordination.py` builds the
pattern: senders tag and count what they send per receiver, receivers count
what they received) and make the rule wait with `notin p_incomplete(L)`
until, for every sender, the counts match. The program then computes its
perfect ultimate model: every negation and aggregation sees p complete.

Refused, with a one-line reason (`RewriteError`): recursion through
negation or aggregation (the perfect ultimate model is undefined); a point of
order that counting cannot fix (`unpersisted`, `choice`, `tick`, `transient`,
a negated relation not computed from p); p derived by rules other than
`@async` ones; sends that may never end or whose senders are unknown
(`NotCountable`); a relation name the pattern needs that the program uses.

>>> from sparkdedalus import Program
>>> p = Program.parse('''.persist got
... got(M, X)@async :- e(L, X), peer(L, M);
... fresh(M, X) :- seen(M, X), notin got(M, X);
... e("a", 1)@2; peer("a", "b"); seen("b", 1); seen("b", 2);''')
>>> q, notes = coordinate(p)
>>> notes
['got: counted completion, senders announce at tick 3; fresh waits for got_incomplete']
>>> print(next(r.text() for r in q.rules if r.head.name == "fresh"))
fresh(M, X) :- seen(M, X), notin got(M, X), notin got_incomplete(M);
"""

from __future__ import annotations

from sparkdedalus.analysis.confluence import confluence
from sparkdedalus.analysis.coordination import NotCountable, complete_with, counting, part
from sparkdedalus.checks.dependencies import dependency_graph
from sparkdedalus.checks.stratification import temporal_cycles
from sparkdedalus.program import Fact
from sparkdedalus.rewrite.rule import RewriteError, Rule, Target, Verdict
from sparkdedalus.rewrite.source import SourceRule, assemble, source_rules
from sparkdedalus.syntax import ast
from udfs.registry import FUNCTIONS

#: the pattern's relations read at the receiver; the others live at the sender
RECEIVER = ("", "count_recv", "announced", "incomplete")


def coordinate(program) -> tuple:
    """(the coordinated `Program`, notes); `program` itself and a note when
    it is confluent already. A `RewriteError` says why it cannot be done."""
    cycles = temporal_cycles(list(program.relations), dependency_graph(program.rules))
    if cycles:
        raise RewriteError(f"recursion through negation or aggregation ({', '.join(cycles[0])}): "
                           f"the perfect ultimate model is not defined")
    verdict = confluence(program)
    if verdict.confluent:
        return program, [f"nothing to coordinate: {verdict.reasons[0].message}"]
    if not verdict.points_of_order:
        raise RewriteError(verdict.reasons[0].message)
    waiting: dict = {}  # p -> indices of the rules that wait for it
    for point in verdict.points_of_order:
        if point.kind not in ("negation", "aggregation"):
            raise RewriteError(f"{point.pos}: {point.message}: counting messages cannot fix a {point.kind} point")
        if point.relation not in complete_with(program, point.async_relation):
            raise RewriteError(f"{point.pos}: {point.message}: {point.relation} is not computed from "
                               f"{point.async_relation} and constant relations at the same tick")
        waiting.setdefault(point.async_relation, []).append(point.rule)
    written = {s.index: s for s in source_rules(program)}
    rules = dict(written)
    facts, persisted = list(program.facts), {r.head.name: r.component for r in program.rules if r.persistence}
    notes = []
    for p, gated in waiting.items():
        sends = [r.index for r in program.defining_rules(p) if r.delivery == "async"]
        if any(not r.persistence and r.delivery != "async" for r in program.defining_rules(p)):
            raise RewriteError(f"{p} is derived by rules other than @async ones: only messages can be counted")
        taken = sorted({part(p, n) for n in RECEIVER[1:] + ("local", "send", "sent", "any", "count_send", "done",
                                                            "senders")} & set(program.relations))
        if taken:
            raise RewriteError(f"the coordination of {p} needs the relation name {taken[0]!r}, which the program uses")
        try:
            pattern = counting(program, p, [written[i].rule for i in sends])
        except NotCountable as exc:
            raise RewriteError(f"cannot count the messages of {p}: {exc}") from None
        sender, receiver = written[sends[0]].component, written[gated[0]].component
        for i in sends:
            del rules[i]
        rules.update({("pattern", p, k): SourceRule(r, receiver if r.head.name in [part(p, n) if n else p for n in
                                                                                 RECEIVER] else sender)
                      for k, r in enumerate(pattern.rules)})
        for i in dict.fromkeys(gated):
            rule = rules[i].rule
            loc = next(lit for lit in rule.body if isinstance(lit, ast.Atom) and lit.name not in FUNCTIONS).args[0]
            gate = ast.Negated(ast.Atom(pattern.incomplete, (loc,)))
            rules[i] = SourceRule(ast.Rule(rule.head, rule.delivery, rule.body + (gate,), rule.pos),
                                  rules[i].component, i)
        facts += [Fact(f.atom, f.tick, sender if f.tick else receiver, ast.NOWHERE) for f in pattern.facts]
        persisted.update({r: receiver if r != part(p, "sent") else sender for r in pattern.persisted})
        heads = ", ".join(dict.fromkeys(program.rules[i].head.name for i in gated))
        notes.append(f"{p}: counted completion, senders announce at tick {pattern.tick}; "
                     f"{heads} wait{'s' if len(set(gated)) == 1 else ''} for {pattern.incomplete}")
    result = assemble(program, list(rules.values()), facts, persisted)
    after = confluence(result)
    if not after.confluent:
        raise RewriteError(f"the coordinated program is still not confluent: {after.reasons[0].message}")
    return result, notes


class Coordination(Rule):
    """The rule of the table `rewrite.REWRITES` for the whole program
    (`target.component` None): its verdict is the confluence analysis's
    reasons; a confluent program is returned as it is, with a note."""

    REWRITE = "coordination"

    def analysis(self, program, target: Target) -> Verdict:
        return Verdict(True, confluence(program).reasons)

    def mechanism(self, program, target: Target) -> tuple:
        return coordinate(program)


coordination = Coordination()
