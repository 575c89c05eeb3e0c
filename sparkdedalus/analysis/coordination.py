"""Counted completion (seed 004, "Coordination"): the rules that make the
facts of an `@async` relation p *complete* at each receiver before a rule
negates or aggregates them, built here (`counting`, as AST nodes:
`syntax.build`) and recognised here (`counted`), so that the rewrite
(`rewrite/coordinate.py`) and the confluence analysis agree on one pattern.

Each `@async` rule `p(D, A..)@async :- body;` (body located at S) becomes
`p_local(S, D, A..) :- body;`, and for p the pattern adds (X.. the other
columns of p):

    p_send(L, S, X..)@async :- p_local(S, L, X..);          // the message, tagged with its sender
    p_sent(S, L, X..) :- p_local(S, L, X..);                 // persisted at the sender
    p_any(S, L) :- p_sent(S, L, X..);
    p_count_send(L, S, count<*>)@async :- p_done(S), p_sent(S, L, X..);
    p_count_send(L, S, 0)@async :- p_done(S), c(S, L, ..), notin p_any(S, L);
    p(L, X..) :- p_send(L, S, X..);                          // at the receiver
    p_count_recv(L, S, count<*>) :- p_send(L, S, X..);
    p_announced(L, S) :- p_count_send(L, S, N);
    p_incomplete(L) :- p_senders(L, S), notin p_announced(L, S);
    p_incomplete(L) :- p_count_send(L, S, N), N > 0, notin p_count_recv(L, S, N);

with `p_send`, `p_sent`, `p_count_send` persisted, and facts `p_done(S)@K`
for every sender S and `p_senders(L, S)` for every receiver L of S. The
dialect has ticks where the seed's model is timeless, so two things the seed
leaves implicit are decided statically, and `NotCountable` says why when
they cannot be:

- *when a count is final*: the bodies of p's `@async` rules read, through
  every rule they depend on, no relation fed by messages, no `.input`, no
  atom at a tick, no `choose`, no `@next` rule but identity persistence;
  then nothing new is sent after tick K = 1 + the last tick of a fact they
  depend on (the relations are the same at every tick from K on), and each
  sender announces at tick K the number of distinct facts it ever sent to
  each receiver (`p_sent` persists them);
- *who the senders are*: each rule reads, at the sender S, one *channel*
  atom c over a relation given by facts without a tick and no rule, whose
  variables include the destination: its facts name every (S, L) pair that
  can exchange p, so a sender announces 0 to a receiver it sent nothing to,
  and the receiver knows every sender before any message arrives.

`p_incomplete(L)` holds until every sender's count arrived and matches:
then p at L is final (a sender's received facts are among those it counted,
so equal counts mean all of them) and never incomplete again. A rule negating
or aggregating p, or a relation `complete_with(program, p)` computes from p
and constant relations at the same tick, waits with `notin p_incomplete(L)`.

>>> from sparkdedalus import Program
>>> p = Program.parse('''.persist got
... got(M, X)@async :- e(L, X), peer(L, M);
... e("a", 1)@2; peer("a", "b");''')
>>> c = counting(p, "got", p.rules_of("async"))
>>> c.tick, [format_statement(ast.Fact(f.atom, f.tick)) for f in c.facts]
(3, ['got_done("a")@3;', 'got_senders("b", "a");'])
>>> print(format_statement(c.rules[0]))
got_local(L, M, X) :- e(L, X), peer(L, M);
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.analysis.roles import constant_relations
from sparkdedalus.checks.locations import location_terms
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.build import agg, atom, cmp, neg, rule
from sparkdedalus.syntax.printer import format_statement
from udfs.registry import FUNCTIONS

#: the relations the pattern adds for p, as suffixes of p's name
PARTS = ("local", "send", "sent", "any", "count_send", "count_recv", "announced", "incomplete", "done", "senders")


class NotCountable(ValueError):
    """Why counted completion does not apply (one line)."""


@dataclass(frozen=True)
class Counting:
    """The pattern for `relation`: its rules (the `p_local` ones first), facts
    (`ast.Fact`), the relations it persists, and the tick of the announcements."""

    relation: str
    rules: tuple
    facts: tuple
    persisted: tuple
    tick: int

    @property
    def incomplete(self) -> str:
        return part(self.relation, "incomplete")


def part(relation: str, name: str) -> str:
    """The name of the pattern's relation `name` for `relation`."""
    return f"{relation}_{name}"


def counting(program, relation: str, send_rules) -> Counting:
    """The counted-completion pattern for the `@async` rules `send_rules`
    (ast or program rules) deriving `relation` in `program`."""
    tick = max(settle_tick(program, r) for r in send_rules)
    arity = send_rules[0].head.arity
    p, x = relation, [f"X{i}" for i in range(1, arity)]
    local, send, sent, count_send, count_recv, done, any_sent, announced, incomplete, senders = (
        part(p, n) for n in ("local", "send", "sent", "count_send", "count_recv", "done", "any", "announced",
                             "incomplete", "senders"))
    rules, zeros, channels = [], [], set()
    for send_rule in send_rules:
        source, dest = _location(send_rule), send_rule.head.args[0]
        rules.append(rule(atom(local, source, *send_rule.head.args), *send_rule.body))
        channel, found = _channel(program, send_rule, relation)
        channels |= found
        sender, receiver = (t if isinstance(t, ast.Const) else ast.Var(v) for t, v in ((source, "S"), (dest, "L")))
        zeros.append(rule(atom(count_send, receiver, sender, 0), atom(done, sender), channel,
                          neg(atom(any_sent, sender, receiver)), delivery="async"))
    rules += [rule(atom(send, "L", "S", *x), atom(local, "S", "L", *x), delivery="async"),
              rule(atom(sent, "S", "L", *x), atom(local, "S", "L", *x)),
              rule(atom(any_sent, "S", "L"), atom(sent, "S", "L", *x)),
              rule(atom(count_send, "L", "S", agg("count")), atom(done, "S"), atom(sent, "S", "L", *x),
                   delivery="async"),
              *zeros,
              rule(atom(p, "L", *x), atom(send, "L", "S", *x)),
              rule(atom(count_recv, "L", "S", agg("count")), atom(send, "L", "S", *x)),
              rule(atom(announced, "L", "S"), atom(count_send, "L", "S", "N")),
              rule(atom(incomplete, "L"), atom(senders, "L", "S"), neg(atom(announced, "L", "S"))),
              rule(atom(incomplete, "L"), atom(count_send, "L", "S", "N"), cmp(">", "N", 0),
                   neg(atom(count_recv, "L", "S", "N")))]
    facts = [ast.Fact(ast.Atom(done, (ast.Const(s),)), tick) for s in sorted({s for s, _ in channels})]
    facts += [ast.Fact(ast.Atom(senders, (ast.Const(d), ast.Const(s))), None)
              for s, d in sorted(channels)]
    return Counting(p, tuple(rules), tuple(facts), (send, sent, count_send), tick)


def settle_tick(program, rule) -> int:
    """A tick from which the body of `rule` holds the same facts at every
    tick: 1 + the last tick of a fact it depends on (see the module docstring)."""
    inputs = {i.name for i in program.inputs}
    seen, todo, last = set(), [rule], 0
    while todo:
        current = todo.pop()
        if any(isinstance(lit, ast.Choose) for lit in current.body):
            raise NotCountable(f"{current.pos}: {current.head.name} uses choose: when the sends end is unknown")
        for read in _stored(current) + [lit.atom for lit in current.body if isinstance(lit, ast.Negated)]:
            if read.time is not None:
                raise NotCountable(f"{read.pos}: {read.name} is read at a tick: when the sends end is unknown")
            if read.name in seen:
                continue
            seen.add(read.name)
            if read.name in inputs:
                raise NotCountable(f"{read.pos}: the sends read the .input {read.name}: when they end is unknown")
            for defining in program.defining_rules(read.name):
                if defining.delivery == "async":
                    raise NotCountable(f"{read.pos}: the sends read {read.name}, which messages feed: "
                                       f"when they end is unknown")
                if defining.delivery == "next" and not defining.persistence:
                    raise NotCountable(f"{defining.pos}: the sends depend on the @next rule for {read.name}: "
                                       f"they may never end")
                todo.append(defining)
            last = max([last] + [f.tick for f in program.facts if f.atom.name == read.name and f.tick is not None])
    return last + 1


def _location(rule):
    """The sender: the location of the first atom of the body."""
    if not _stored(rule):
        raise NotCountable(f"{rule.pos}: the rule for {rule.head.name} reads no relation: no sender")
    return _stored(rule)[0].args[0]


def _stored(rule) -> list:
    return [a for a in rule.body if isinstance(a, ast.Atom) and a.name not in FUNCTIONS]


def _channel(program, rule, relation: str) -> tuple:
    """(the channel read: S the sender, L the destination, fresh variables
    Yi elsewhere; the (sender, destination) values its facts give)."""
    source, dest = _location(rule), rule.head.args[0]
    if dest == source or not isinstance(dest, (ast.Var, ast.Const)):
        raise NotCountable(f"{rule.pos}: {relation} is sent to its sender or to a computed location: "
                           f"the senders are unknown")
    for read in _stored(rule):
        name = read.name
        if (read.args[0] != source or not (dest in read.args or isinstance(dest, ast.Const))
                or program.defining_rules(name) or name in {i.name for i in program.inputs}
                or any(f.tick is not None for f in program.facts if f.atom.name == name)):
            continue
        general = ast.Atom(name, tuple(a if isinstance(a, ast.Const) else ast.Var("S") if a == source else
                                       ast.Var("L") if a == dest else ast.Var(f"Y{i}")
                                       for i, a in enumerate(read.args)))
        found = set()
        for fact in program.facts:
            binding = _match(general, fact.atom) if fact.atom.name == name else None
            if binding is not None:
                found.add(tuple(binding.get(v, t.value if isinstance(t, ast.Const) else None)
                                for v, t in (("S", source), ("L", dest))))
        return general, found
    raise NotCountable(f"{rule.pos}: who sends {relation} to whom is not given by one relation of facts "
                       f"(no tick, no rule) read with the sender and the destination: the senders are unknown")


def _match(atom, fact):
    binding = {}
    for arg, value in zip(atom.args, fact.args):
        if isinstance(arg, ast.Const):
            if arg != value:
                return None
        elif binding.setdefault(arg.name, value.value) != value.value:
            return None
    return binding


def complete_with(program, relation: str) -> frozenset:
    """`relation` and the relations computed at the same tick from it and
    constant relations only (every rule deriving them): final when it is."""
    constant = constant_relations(program)
    done, changed = {relation}, True
    while changed:
        changed = False
        for name in set(program.relations) - done:
            rules = [r for r in program.defining_rules(name) if not r.persistence]
            if rules and all(r.delivery == "now" and r.choose is None and len(location_terms(r)) == 1 and any(
                    a.name in done for a in r.positive_atoms + r.negated_atoms) and all(
                    a.time is None and (a.name in done or a.name in constant)
                    for a in r.positive_atoms + r.negated_atoms) for r in rules):
                done.add(name)
                changed = True
    return frozenset(done)


def counted(program) -> dict:
    """The relations of `program` whose facts the pattern counts, exactly as
    `counting` builds it: relation -> (its `Counting`, the indices of the
    pattern's rules)."""
    found = {}
    for relation in program.relations:
        local = part(relation, "local")
        if local not in program.relations or part(relation, "incomplete") not in program.relations:
            continue
        sends = [ast.Rule(ast.Atom(relation, r.head.args[1:]), "async", r.body)
                 for r in program.defining_rules(local)]
        try:
            if not sends or any(r.delivery != "now" or r.head.args[0] != _location(r) for r in
                                program.defining_rules(local)):
                continue
            pattern = counting(program, relation, sends)
        except NotCountable:
            continue
        names = {relation} | {part(relation, n) for n in PARTS}
        mine = [r for r in program.rules if r.head.name in names and not r.persistence]
        have = [ast.Rule(r.head, r.delivery, r.body) for r in mine]
        facts = {(f.atom, f.tick) for f in program.facts if f.atom.name in names}
        if (not names & {i.name for i in program.inputs}
                and sorted(map(format_statement, have)) == sorted(map(format_statement, pattern.rules))
                and facts == {(f.atom, f.tick) for f in pattern.facts}
                and set(pattern.persisted) | {relation} <= program.persisted):
            found[relation] = (pattern, frozenset(r.index for r in mine))
    return found
