"""Monotone garbage collection: persisted facts whose removal cannot change
any other relation (seed 001; the scaling paper, appendix A.2.1).

A persisted relation r carries its facts from tick to tick. A *GC rule* for r
says: at the end of tick t, a fact matching `r(x̄)` is not carried to t+1 when
a condition holds over the final state of t; the condition is a conjunction
of body literals, so a GC rule is the Datalog rule `gc_r(x̄) :- r(x̄), cond`
that either engine can evaluate. A fact may be dropped only when every rule
that reads r (its *consumers*, the persistence rule aside) can never again
derive anything from it; each consumer contributes one conjunct:

- DR+ (seed 001, 5.1): the consumer negates a persisted relation y on
  variables of the r atom: once `y(ȳ)` holds it holds forever, so the body
  `r(x̄), notin y(ȳ)` is false for this fact at every later tick. Condition `y(ȳ)`.
- punctuation (seed 001, 5.2): the consumer joins r with a partner p that is
  *sealed* by a persisted relation s: every rule deriving p is a `now` or
  `@next` rule carrying `notin s(k̄)` on head variables (and p has no facts or
  input rows), so once `s(k̄)` holds no new `p(..k̄..)` can appear. When the
  partner's key is bound by the r atom, the fact can meet no partner later:
  condition `s(k̄)`, and `notin p(..)` too when p is itself persisted.
- held (seed 001, copy GC): the consumer (a `now` or `@next` rule) derives a
  head over variables of the r atom into a persisted relation h, and `h(..)`
  already holds: whatever it would derive is there for good. Condition `h(..)`.
- annotation (the scaling paper's Paxos example): `// @gc r(x̄) when cond`
  (checks/gc_directives.py). The user vouches for it; tests compare outputs.

The relations a condition reads must be *stable*: persisted and not collected
themselves. r is never collected when it is declared `.output`, has no
consumer (a sink: its facts are the program's result), is negated or
aggregated by a consumer, is read at a fixed tick (`r(..)@5`), or a consumer
reads it with constants, repeated variables or twice.

>>> from sparkdedalus import Program
>>> p = Program.parse('''.persist req
... .persist done
... out(L, R) :- req(L, R), notin done(L, R);
... done(L, R)@next :- req(L, R), ok(L, R);
... ok("a", 1)@2; req("a", 1)@1; req("a", 2)@1;''')
>>> [rule.text() for rule in gc_rules(p)]
['req(L, R) when done(L, R)']
>>> [rule.pattern for rule in gc_rules(p)]
['DR+, held']
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from sparkdedalus.analysis.reasons import Reason
from sparkdedalus.checks.normalize import is_wildcard
from sparkdedalus.program import Rule
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.printer import format_literal


@dataclass(frozen=True)
class GcRule:
    """Delete `target` (an atom over variables) at the end of a tick when
    every literal of `condition` holds. `pattern`: the patterns that gave the
    conjuncts ("DR+", "punctuation", "held", "annotation"); `relies_on`: the
    positions of the rules (or the directive) it relies on."""

    target: ast.Atom
    condition: tuple
    pattern: str
    reasons: tuple
    relies_on: tuple

    @property
    def relation(self) -> str:
        return self.target.name

    def text(self) -> str:
        """`r(x̄) when lit, lit`."""
        return f"{format_literal(self.target)} when {', '.join(format_literal(_shown(lit)) for lit in self.condition)}"

    def body(self) -> tuple:
        """The Datalog body that finds the facts to delete: `r(x̄), cond`."""
        return (self.target,) + self.condition

    def as_rule(self, index: int) -> Rule:
        """The rule `r(x̄) :- r(x̄), cond` an engine evaluates on a tick's final
        state to find the facts to delete (`index`: one no program rule has)."""
        return Rule(self.target, "now", self.body(), "gc", index, self.relies_on[0])

    def to_json(self) -> dict:
        return {"relation": self.relation, "rule": self.text(), "pattern": self.pattern,
                "relies_on": [str(pos) for pos in self.relies_on],
                "reasons": [r.to_json() for r in self.reasons]}


def gc_rules(program) -> list[GcRule]:
    """The GC rules of `program`: its `// @gc` annotations, then one rule per
    persisted relation whose every consumer gives a condition (see above)."""
    annotated = [_annotation(a) for a in program.gc_annotations]
    collected = {rule.relation for rule in annotated}
    candidates = {}
    for name in sorted(program.persisted):
        found = _analyse(program, name, program.persisted - collected - {name})
        if isinstance(found, GcRule):
            candidates[name] = found
    while True:  # a condition must not read a relation that is collected itself
        taken = collected | set(candidates)
        unstable = [name for name, rule in candidates.items() if _reads(rule) & (taken - {name})]
        if not unstable:
            break
        for name in unstable:
            del candidates[name]
    return annotated + [candidates[name] for name in sorted(candidates)]


#: the `--gc` modes of `run`: "auto" (the default) collects only relations a
#: client does not observe, "on" every relation with a GC rule, "off" none
MODES = ("auto", "on", "off")


def rules_for(program, mode: str = "auto") -> list[GcRule]:
    """The GC rules a run applies in `mode` (MODES). "on": `gc_rules(program)`.
    "auto": those whose relation is not a declared output, and none when the
    program declares no `.output` (its every relation is then what the user
    reads, and a GC rule is sound for what a relation feeds, not for a user
    who reads it). "off": none.

    >>> from sparkdedalus import Program
    >>> text = ("wait(H, T)@next :- begin(H, T); wait(H, T)@next :- wait(H, T);"
    ...         "win(H, T) :- wait(H, T), send_token(H, _, T); win(H, T)@next :- win(H, T);")
    >>> [rule.text() for rule in rules_for(Program.parse(text), "on")]
    ['wait(H, T) when win(H, T)']
    >>> rules_for(Program.parse(text)), rules_for(Program.parse(text), "off")
    ([], [])
    >>> [rule.text() for rule in rules_for(Program.parse(".output win " + text))]
    ['wait(H, T) when win(H, T)']
    """
    if mode not in MODES:
        raise ValueError(f"gc mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "off":
        return []
    found = gc_rules(program)
    if mode == "on":
        return found
    observed = set(program.declared_outputs)
    return [rule for rule in found if rule.relation not in observed] if observed else []


def applied(program, gc) -> list[GcRule]:
    """The GC rules an engine applies given its `gc` argument: True, those of
    `gc_rules(program)`; a mode of MODES, those of `rules_for(program, gc)`;
    a list, those; False or None, none."""
    if isinstance(gc, str):
        return rules_for(program, gc)
    return gc_rules(program) if gc is True else list(gc or ())


def collected_relations(rules) -> list[str]:
    """The relations `rules` (GcRules, or their texts `r(x̄) when ...`) collect, sorted.

    >>> collected_relations(["wait(H, T) when win(H, T)", "b(X) when c(X)", "b(X) when d(X)"])
    ['b', 'wait']
    """
    return sorted({rule.split("(", 1)[0].strip() if isinstance(rule, str) else rule.relation for rule in rules})


def not_collected(program) -> dict:
    """persisted relation -> why the analysis finds no GC rule for it (a Reason)."""
    found = {rule.relation for rule in gc_rules(program)}
    out = {}
    for name in sorted(program.persisted - found):
        result = _analyse(program, name, program.persisted - {name})
        out[name] = result if isinstance(result, Reason) else \
            Reason(f"'{name}': a condition would read a relation that is collected itself")
    return out


def _annotation(annotation) -> GcRule:
    reason = Reason(f"annotation: '{annotation.target.name}' facts may go when the condition holds "
                    f"(the user's claim, not checked)", annotation.pos)
    return GcRule(annotation.target, annotation.condition, "annotation", (reason,), (annotation.pos,))


def _analyse(program, name: str, stable) -> GcRule | Reason:
    """The GC rule of persisted relation `name` given the `stable` relations,
    or the Reason there is none."""
    if name in program.declared_outputs:
        return Reason(f"'{name}' is a declared output", program.relations[name].pos)
    consumers = [r for r in program.rules if not r.persistence
                 and any(a.name == name for a in r.positive_atoms + r.negated_atoms)]
    if not consumers:
        return Reason(f"'{name}' has no consumer: its facts are the program's result", program.relations[name].pos)
    target, fresh = None, itertools.count(1)
    conditions, reasons, patterns = [], [], []
    for rule in consumers:
        atoms = [a for a in rule.positive_atoms if a.name == name]
        if any(a.name == name for a in rule.negated_atoms):
            return Reason(f"'{name}' is negated by the rule", rule.pos)
        if rule.is_aggregate or rule.choose is not None:
            return Reason(f"'{name}' is read by a rule with an aggregate or choose", rule.pos)
        if len(atoms) != 1 or atoms[0].time is not None and not isinstance(atoms[0].time, ast.VarTime):
            return Reason(f"'{name}' is read twice or at a fixed tick by the rule", rule.pos)
        atom = atoms[0]
        names = [a.name for a in atom.args if isinstance(a, ast.Var)]
        if len(names) != len(atom.args) or len(set(names)) != len(names):
            return Reason(f"'{name}' is read with a constant or a repeated variable by the rule", rule.pos)
        if target is None:
            target = ast.Atom(name, tuple(ast.Var(n) for n in names))
        found = _dead(program, rule, atom, stable)
        if found is None:
            return Reason(f"no pattern shows that the rule can never again use a '{name}' fact", rule.pos)
        pattern, literals, why = found
        rename = _renaming(atom, target, literals, fresh)
        conditions += [c for c in (_substitute(lit, rename) for lit in literals) if c not in conditions]
        patterns += [pattern] if pattern not in patterns else []
        reasons.append(Reason(why, rule.pos))
    return GcRule(target, tuple(conditions), ", ".join(patterns), tuple(reasons), tuple(r.pos for r in consumers))


def _dead(program, rule, atom: ast.Atom, stable):
    """(pattern, condition literals, message) showing that `rule` can never
    again derive anything from a fact matching `atom`, or None."""
    bound = {v.name for v in atom.args}
    for negated in rule.negated_atoms:
        own = [v.name for v in ast.atom_vars(negated) if not is_wildcard(v)]
        if negated.name in stable and negated.time is None and set(own) <= bound:
            return ("DR+", [negated], f"DR+: the rule negates {format_literal(negated)}, persisted: once it "
                                      f"holds the rule never again uses the fact")
    for partner in rule.positive_atoms:
        seal = _seal(program, partner.name, stable) if partner is not atom and partner.name != atom.name else None
        if seal is None or partner.time is not None:
            continue
        relation, positions = seal
        keys = [partner.args[i] for i in positions]
        if all(isinstance(k, ast.Var) and k.name in bound for k in keys):
            literals = [ast.Atom(relation, tuple(keys))]
            if partner.name in program.persisted:
                literals.append(ast.Negated(_keyed(partner, positions)))
            return ("punctuation", literals, f"punctuation: partner '{partner.name}' is sealed by '{relation}': "
                                             f"once {format_literal(literals[0])} holds no partner can arrive")
    head = rule.head
    if rule.delivery in ("now", "next") and head.name in stable and head.name != atom.name \
            and all(isinstance(a, ast.Const) or isinstance(a, ast.Var) and a.name in bound for a in head.args):
        return ("held", [head], f"held: the rule derives {format_literal(head)} into persisted "
                                f"'{head.name}', which already holds it for good")
    return None


def _seal(program, name: str, stable):
    """(s, key positions of `name`) when `name` is sealed by the stable relation s."""
    rules = program.defining_rules(name)
    if not rules or any(f.atom.name == name for f in program.facts) or name in {i.name for i in program.inputs}:
        return None
    found = None
    for rule in (r for r in rules if not r.persistence):
        if rule.delivery == "async":
            return None
        head_vars = {a.name: i for i, a in enumerate(rule.head.args) if isinstance(a, ast.Var)}
        seals = {(n.name, tuple(head_vars[a.name] for a in n.args)) for n in rule.negated_atoms
                 if n.name in stable and n.name != name and n.time is None
                 and all(isinstance(a, ast.Var) and a.name in head_vars for a in n.args)}
        found = seals if found is None else found & seals
    return min(found) if found else None


def _keyed(atom: ast.Atom, positions) -> ast.Atom:
    """`atom` with every argument but those at `positions` a wildcard."""
    return ast.Atom(atom.name, tuple(a if i in positions else ast.Var(f"_#gc{i}") for i, a in enumerate(atom.args)))


def _renaming(atom: ast.Atom, target: ast.Atom, literals, fresh) -> dict:
    """Variable names of one consumer -> the target's names (for the r atom's
    variables) or fresh ones (the others)."""
    rename = {a.name: t.name for a, t in zip(atom.args, target.args)}
    for literal in literals:
        for var in ast.atom_vars(literal.atom if isinstance(literal, ast.Negated) else literal):
            if var.name not in rename:
                rename[var.name] = f"_#gc{next(fresh)}" if is_wildcard(var) else f"{var.name}_{next(fresh)}"
    return rename


def _substitute(literal, rename: dict):
    if isinstance(literal, ast.Negated):
        return ast.Negated(_substitute(literal.atom, rename))
    return ast.Atom(literal.name, tuple(ast.Var(rename[a.name]) if isinstance(a, ast.Var) else a
                                        for a in literal.args))


def _shown(literal):
    """`literal` with its `_#k` variables printed as `_`."""
    if isinstance(literal, ast.Negated):
        return ast.Negated(_shown(literal.atom))
    if isinstance(literal, ast.Atom):
        return ast.Atom(literal.name, tuple(ast.Wildcard() if isinstance(a, ast.Var) and is_wildcard(a) else a
                                            for a in literal.args), literal.time)
    return literal


def _reads(rule: GcRule) -> set:
    return {(lit.atom if isinstance(lit, ast.Negated) else lit).name for lit in rule.condition
            if isinstance(lit, (ast.Atom, ast.Negated))} - {rule.relation}

