"""Distribution policies (scaling paper, sections 4.1-4.3 and B.1-B.3): how the
data of one node running a component may be split across many nodes running
the same rules, each relation hashed by one of its attributes.

A policy gives each relation the component references or derives locally a
*key*: `via(fact[column])`, where `via` is a chain of function relations
and arithmetic of one variable (`()`: the column's value itself). Facts go to the partition of their key's
hash. The policy is correct when, in every rule, the atoms of partitioned
relations (body atoms, and the head of a `now` or `@next` rule) have keys of
equal value for every binding, so that facts joined, grouped or negated
together are on one partition:
- co-hashing (4.1): each atom's key column is bound to one shared variable;
- dependencies (4.2): keys are equal through the functional and co-partition
  dependencies of `functional_dependencies` (`hash(V, H)`, or `H == V % 10`,
  makes hash(V) and H one key, so a relation holding V and one holding H are
  co-hashed);
- partial partitioning (4.3, B.3): when no policy exists, the fewest
  relations to *replicate* (every partition holds all their facts) so that
  the rest has one. The rules deriving them read only replicated or static
  relations (independent of the rest); inputs that feed them are broadcast
  through a coordinator that orders them. Both parts, the rules deriving
  replicated relations and the others, must behave like state machines
  (A.4, `state_machine`): the coordinator changes when each partition sees
  its inputs, not their order. A set whose parts are not is passed over.
Static relations (facts true at every tick, and what `now` rules derive from
them alone) are known at every partition and need no key; a rule reading
only them and replicated relations derives on every partition, which keeps
the facts of its own keys. The location column is never a key, and columns
holding node addresses come last among the candidates (few distinct values).

>>> from sparkdedalus.program import Program
>>> p = Program.parse('''component c {
...   n(L, B, count<P>) :- vote(L, P, B);
...   done(L, B)@async :- n(L, B, N), want(L, N); }
... want("l", 3);''')
>>> policy = distribution_policy(p, "c")
>>> policy.method, policy.keys()
('co-hashing', {'n': 'c1', 'vote': 'c2'})
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from sparkdedalus.analysis.functional_dependencies import RuleTerms, relation_fds, via_text
from sparkdedalus.analysis.reasons import Reason
from sparkdedalus.analysis.roles import component_roles, constant_relations
from sparkdedalus.analysis.state_machine import state_machine
from sparkdedalus.program import CRASH
from sparkdedalus.syntax import ast

#: Search budget (assignments tried) for one policy.
BUDGET = 100_000


@dataclass(frozen=True)
class RelationPolicy:
    """Where the facts of `relation` go: hashed by `via(fact[column])`, or
    (column None) replicated to every partition."""

    relation: str
    column: int | None
    name: str | None
    via: tuple = ()
    reasons: tuple = ()

    def to_json(self) -> dict:
        return {"column": self.column, "name": self.name, "via": [str(step) for step in self.via],
                "key": None if self.name is None else key_term(self.name, self.via),
                "reasons": [r.to_json() for r in self.reasons]}


@dataclass(frozen=True)
class DistributionPolicy:
    """`method`: "co-hashing", "dependencies", "partial" or "none" (no policy;
    every relation has column None)."""

    component: str
    rules: tuple  # rule indices
    method: str
    relations: tuple  # RelationPolicy, one per partitioned or replicated relation
    replicate: tuple  # relations every partition must hold in full (4.3)
    broadcast: tuple  # inputs that feed them: sent to every partition, ordered
    static: tuple  # known at every partition, no key needed
    reasons: tuple = ()  # why the methods tried before failed, then `verdict`
    verdict: tuple = ()  # the reasons of the method found (or of none)

    @property
    def partitioned(self) -> bool:
        return self.method != "none"

    def keys(self) -> dict:
        """{relation: key column name, `via` applied as `f(name)`} of the keyed relations."""
        return {rp.relation: key_term(rp.name, rp.via) for rp in self.relations if rp.column is not None}

    def to_json(self) -> dict:
        return {"component": self.component, "rules": list(self.rules), "method": self.method,
                "partitioned": self.partitioned,
                "relations": {rp.relation: rp.to_json() if rp.column is not None else None
                              for rp in self.relations},
                "replicate": list(self.replicate), "broadcast": list(self.broadcast),
                "static": list(self.static), "reasons": [r.to_json() for r in self.reasons],
                "verdict": [r.to_json() for r in self.verdict]}


def key_term(name: str, via: tuple) -> str:
    """A key as text: the column's name with the steps of `via` applied, `hash(v)`, `(v % 10)`."""
    return via_text(via, name)


def static_relations(program) -> frozenset:
    """Relations known in full at every tick that the program itself fills:
    constant relations (`roles.constant_relations`) with facts or rules, `crash`
    excepted. A relation with neither facts nor rules comes from outside."""
    filled = {f.atom.name for f in program.facts} | program.idb
    return constant_relations(program, outside=(set(program.relations) - filled) | {CRASH})

def address_columns(program) -> frozenset:
    """(relation, column) pairs that hold node addresses: bound to a rule's
    location variable, or to a variable another address column binds, or
    that an address is made of (`D2 == D + "/p" + S`: D, the leftmost
    operand; `home(L2, L)`: either, given the other), as the rewrites route
    messages."""
    found: set = set()
    changed = True
    while changed:
        changed = False
        for rule in program.rules:
            atoms = [rule.head] + rule.positive_atoms + rule.negated_atoms
            names = {a.args[0].name for a in atoms if a.args and isinstance(a.args[0], ast.Var)}
            names |= {a.args[c].name for a in atoms for c in range(1, a.arity)
                      if (a.name, c) in found and isinstance(a.args[c], ast.Var)}
            names |= _bases(rule, names)
            for a in atoms:
                for c in range(1, a.arity):
                    if isinstance(a.args[c], ast.Var) and a.args[c].name in names and (a.name, c) not in found:
                        found.add((a.name, c))
                        changed = True
    return frozenset(found)


def _bases(rule, names) -> set:
    """The variables the addresses `names` of a rule are made of (`address_columns`)."""
    out, grown = set(names), True
    while grown:
        before = len(out)
        for lit in rule.comparisons:
            for var, expr in ((lit.left, lit.right), (lit.right, lit.left)):
                if lit.op == "==" and isinstance(var, ast.Var) and var.name in out:
                    while isinstance(expr, ast.BinOp) and expr.op == "+":
                        expr = expr.left
                    out |= {expr.name} if isinstance(expr, ast.Var) else set()
        for a in rule.function_atoms:
            pair = {x.name for x in a.args if isinstance(x, ast.Var)} if a.name == "home" else set()
            out |= pair if len(pair) == 2 and pair & out else set()
        grown = len(out) > before
    return out - set(names)


class _Problem:
    """The constraints of one policy search: the relations to key, the rules
    that relate them, each relation's candidate keys (column, via). With
    `heads`, the head of every `now`/`@next` rule is keyed like its body,
    placed or not (`_placed`): stricter, the keys of derived relations then
    tell those of the inputs (the search tries it first)."""

    def __init__(self, program, rules, keyed, dependencies, fds, addresses, heads=False):
        self.program, self.keyed, self.dependencies = program, keyed, dependencies
        self.rules = []  # (rule, terms, [(relation, atom)]) for rules relating two keyed atoms or more
        placed = keyed if heads else _placed(rules, keyed)
        for rule in rules:
            terms = RuleTerms(rule, fds, dependencies)
            rule = terms.rule  # arithmetic arguments as variables
            atoms = [a for a in rule.positive_atoms + rule.negated_atoms if a.name in keyed]
            if atoms and rule.delivery != "async" and rule.head.name in placed:
                atoms.append(rule.head)
            if len(atoms) > 1:
                self.rules.append((rule, terms, [(a.name, a) for a in atoms]))
        vias = {()}  # the key functions a rule follows
        if dependencies:  # every function chain some rule follows, for every relation
            vias |= {via for _, terms, atoms in self.rules for _, atom in atoms for arg in atom.args[1:]
                     if isinstance(arg, ast.Var) for via, _, _ in terms.chains(arg.name)}
        self.vias, self.candidates = vias, {r: self._candidates(r, vias, addresses) for r in keyed}

    def _candidates(self, relation, vias, addresses) -> list:
        arity = self.program.relations[relation].arity
        found = sorted(((c, via) for c in range(1, arity) for via in vias),
                       key=lambda cv: ((relation, cv[0]) in addresses, len(cv[1]), cv[0], [str(s) for s in cv[1]]))
        return [cv for cv in found if all(self.term(k, relation, cv) is not None for k in self._rules_of(relation))]

    def _rules_of(self, relation) -> list:
        return [k for k, (_, _, atoms) in enumerate(self.rules) if any(n == relation for n, _ in atoms)]

    def term(self, k, relation, candidate):
        """The key's value in rule k, if every occurrence of `relation` there
        gives the same one; else None."""
        _, terms, atoms = self.rules[k]
        column, via = candidate
        values = set()
        for name, atom in atoms:
            if name == relation:
                arg = atom.args[column]
                if isinstance(arg, ast.Var):
                    values.add(terms.term(arg.name, via))
                elif isinstance(arg, ast.Const) and not via:
                    values.add(("const", type(arg.value).__name__, arg.value))
                else:
                    return None
        return values.pop() if len(values) == 1 else None

    def solve(self, rule_subset=None, pinned=None):
        """{relation: (column, via)} satisfying the rules (all, or the given
        indices into self.rules), each relation of `pinned` ({relation:
        (column, via)}) keyed as it says, or None; False when the budget ran out."""
        ks = range(len(self.rules)) if rule_subset is None else rule_subset
        pinned = pinned or {}
        relations = sorted({n for k in ks for n, _ in self.rules[k][2]} | set(pinned))
        budget = [BUDGET]

        def search(domains, chosen):
            if budget[0] <= 0:
                return False
            open_ = [r for r in relations if r not in chosen]
            if not open_:
                return chosen
            relation = min(open_, key=lambda r: (len(domains[r]), relations.index(r)))
            for cand in domains[relation]:
                budget[0] -= 1
                narrowed = self._narrow(domains, chosen, relation, cand, ks)
                if narrowed is not None:
                    found = search(narrowed, {**chosen, relation: cand})
                    if found is not None:
                        return found
            return None

        return search({r: [c for c in self.candidates[r] if r not in pinned or c == pinned[r]]
                       for r in relations}, {})

    def _narrow(self, domains, chosen, relation, cand, ks):
        """Domains after keying `relation` by `cand`, or None if one empties."""
        domains = dict(domains)
        for k in ks:
            atoms = self.rules[k][2]
            if all(n != relation for n, _ in atoms):
                continue
            value = self.term(k, relation, cand)
            for other in {n for n, _ in atoms} - {relation}:
                if other in chosen:
                    if self.term(k, other, chosen[other]) != value:
                        return None
                else:
                    domains[other] = [c for c in domains[other] if self.term(k, other, c) == value]
                    if not domains[other]:
                        return None
        return domains

    def explain(self, pinned=None) -> tuple:
        """Reasons why no policy exists (keying `pinned` as it says): a
        relation with no candidate key, a rule whose atoms share no key, or
        two rules that need different keys."""
        mode = "even through dependencies" if self.dependencies else "(co-hashing, 4.1)"
        for relation, cand in (pinned or {}).items():
            if cand[1] not in self.vias:
                return (Reason(f"no rule joins on {key_term('X', cand[1])} of an attribute {mode}"),)
            if cand not in self.candidates[relation]:
                rules = self._rules_of(relation)
                where = self.rules[rules[0]][0].pos if rules else None
                return (Reason(f"{self._key(relation, cand)} is not bound to one variable in every rule that "
                               f"joins {relation} {mode}", where),)
            for k in self._rules_of(relation):
                if self.solve([k], pinned) is None:
                    others = sorted({n for n, _ in self.rules[k][2]} - {relation})
                    return (Reason(f"here {relation} and {', '.join(others)} share no key equal to "
                                   f"{self._key(relation, cand)} {mode}", self.rules[k][0].pos),)
        for relation in sorted(self.keyed):
            if not self.candidates[relation]:
                rel = self.program.relations[relation]
                if rel.arity == 1:
                    return (Reason(f"{relation} has no attribute besides its location to partition by", rel.pos),)
                return (Reason(f"no attribute of {relation} is bound to a variable in every rule that joins it"
                               f" {mode}", self.rules[self._rules_of(relation)[0]][0].pos),)
        for k, (rule, _, atoms) in enumerate(self.rules):
            if self.solve([k], pinned) is None:
                names = sorted({n for n, _ in atoms})
                for a, b in combinations(names, 2):
                    if self.solve_pair(k, a, b) is None:
                        return (Reason(f"{a} and {b} share no key {mode}", rule.pos),)
                return (Reason(f"{', '.join(names)} share no key {mode}", rule.pos),)
        for k1, k2 in combinations(range(len(self.rules)), 2):
            if self.solve([k1, k2], pinned) is None:
                common = sorted({n for n, _ in self.rules[k1][2]} & {n for n, _ in self.rules[k2][2]})
                if common:
                    why = f"these rules need different keys of {', '.join(common)} {mode}"
                    return (Reason(why, self.rules[k1][0].pos), Reason(why, self.rules[k2][0].pos))
        return (Reason(f"no key assignment satisfies every rule together {mode}"),)

    def _key(self, relation, candidate) -> str:
        column, via = candidate
        return f"{relation}({key_term(self.program.relations[relation].columns[column], via)})"

    def solve_pair(self, k, a, b):
        """A key of a and one of b with equal values in rule k, or None."""
        for ca in self.candidates[a]:
            value = self.term(k, a, ca)
            if any(self.term(k, b, cb) == value for cb in self.candidates[b]):
                return ca
        return None


def _placed(rules, keyed) -> set:
    """The keyed relations whose facts must be on the partition of their
    key: read by a rule with another keyed atom, negated, or read or derived
    by a rule that aggregates or chooses (a group on one partition), and what
    the `now`/`@next` rules deriving these read. The others are only read
    alone and positively, by rules that neither aggregate nor choose: each
    partition derives from its facts what the one node derived from them
    (the paper's co-hashing constrains the relations of a rule's body, 4.1),
    so they may stay on the partition that derives them."""
    placed = set()
    for rule in rules:
        body = [a.name for a in rule.positive_atoms + rule.negated_atoms if a.name in keyed]
        grouped = rule.is_aggregate or rule.choose is not None
        placed |= set(body) if len(body) > 1 or grouped else {a.name for a in rule.negated_atoms if a.name in keyed}
        if rule.delivery != "async" and grouped and rule.head.name in keyed:
            placed.add(rule.head.name)
    local = [r for r in rules if r.delivery != "async"]
    while grown := {a.name for r in local if r.head.name in placed
                    for a in r.positive_atoms + r.negated_atoms if a.name in keyed} - placed:
        placed |= grown
    return placed


def _keyed_relations(rules, static) -> set:
    """Relations read, or derived by `now`/`@next` rules, that are not static."""
    read = {a.name for r in rules for a in r.positive_atoms + r.negated_atoms}
    local = {r.head.name for r in rules if r.delivery != "async"}
    return (read | local) - static


def _closure(seed, rules, static) -> frozenset:
    """`seed` plus every non-static relation the rules deriving it read."""
    out, todo = set(), list(seed)
    while todo:
        name = todo.pop()
        if name not in out:
            out.add(name)
            todo += [a.name for r in rules if r.head.name == name
                     for a in r.positive_atoms + r.negated_atoms if a.name not in static]
    return frozenset(out)


#: the verdicts of the coordination-free methods
COHASHING = Reason("every rule joins, groups and negates its partitioned relations on their keys (co-hashing, 4.1)")
DEPENDENCIES = Reason("keys of equal value through functional and co-partition dependencies (4.2)")


def distribution_policy(program, component: str | None = None, rules=None) -> DistributionPolicy:
    """The policy for a component (by name), or for a set of rule indices
    treated as one (`component` then only names it)."""
    return PolicySearch(program, component, rules).policy()


class PolicySearch:
    """The search for a component's policy (or a set of rule indices'):
    `attempt` one method, `make` the `DistributionPolicy` of a solution,
    `policy` the first method that finds one (`partition_keys` pins keys)."""

    def __init__(self, program, component: str | None = None, rules=None):
        if rules is None:
            rules = [r.index for r in program.rules if r.component == component]
            roles = [c for c in component_roles(program) if c.name == component]
            if not roles:
                raise ValueError(f"no component {component!r}")
            inputs = roles[0].inputs
        else:
            chosen = [program.rules[i] for i in rules if not program.rules[i].persistence]
            inputs = ({a.name for r in chosen for a in r.positive_atoms + r.negated_atoms}
                      - {r.head.name for r in chosen})
        self.program, self.rules, self.inputs = program, tuple(sorted(rules)), frozenset(inputs)
        self.chosen = [program.rules[i] for i in self.rules if not program.rules[i].persistence]
        self.name = component or "rules " + ", ".join(str(i) for i in self.rules)
        self.static = static_relations(program)
        self.fds, self.addresses = relation_fds(program), address_columns(program)
        self.keyed = _keyed_relations(self.chosen, self.static)

    def attempt(self, replicated, dependencies: bool, pinned=None) -> tuple:
        """(the problem, its solution: see `_Problem.solve`) of keying all
        but the `replicated` relations, through dependencies or not: keyed
        like the heads they derive if that solves (`_Problem`), else with
        only the placed heads."""
        for heads in (True, False):
            problem = self.problem(replicated, dependencies, heads)
            solution = problem.solve(pinned=pinned)
            if solved(solution):
                break
        return problem, solution

    def problem(self, replicated, dependencies: bool, heads: bool = False):
        """The `_Problem` of keying all but the `replicated` relations."""
        return _Problem(self.program, self.chosen, self.keyed - replicated, dependencies, self.fds, self.addresses,
                        heads)

    def make(self, method, solution, problem, replicated, failed, verdict) -> DistributionPolicy:
        read = {a.name for r in self.chosen for a in r.positive_atoms + r.negated_atoms}
        return DistributionPolicy(
            self.name, self.rules, method,
            _relation_policies(self.program, self.keyed, solution, problem, replicated),
            tuple(sorted(replicated)), tuple(sorted(replicated & self.inputs)), tuple(sorted(self.static & read)),
            tuple(dict.fromkeys(list(failed) + list(verdict))), tuple(verdict))

    def policy(self) -> DistributionPolicy:
        """Co-hashing, else dependencies, else partial, else none (module docstring)."""
        problem, solution = self.attempt(frozenset(), False)
        if solved(solution):
            return self.make("co-hashing", solution, problem, frozenset(), [], [COHASHING])
        failed = list(problem.explain() if solution is None else [Reason("co-hashing: search budget exhausted")])
        problem, solution = self.attempt(frozenset(), True)
        if solved(solution):
            return self.make("dependencies", solution, problem, frozenset(), failed, [DEPENDENCIES])
        failed += problem.explain() if solution is None else [Reason("dependencies: search budget exhausted")]
        return self._partial(failed)

    def _partial(self, failed) -> DistributionPolicy:
        chosen, static, keyed = self.chosen, self.static, self.keyed
        seeds = sorted({_closure({r}, chosen, static) for r in keyed}, key=lambda s: (len(s), sorted(s)))
        sets = seeds + sorted({a | b for a, b in combinations(seeds, 2)} - set(seeds),
                              key=lambda s: (len(s), sorted(s)))
        not_machines: dict = {}  # per replicated set passed over, why its parts are not state machines
        for heads, replicated in [(heads, r) for heads in (True, False) for r in sets if r < keyed]:
            problem = self.problem(replicated, True, heads)  # keyed like the heads first, for every set
            solution = problem.solve()
            if not solved(solution):
                continue
            names = ", ".join(sorted(replicated))
            machines = _not_state_machines(self.program, chosen, replicated, static)
            if machines:
                not_machines.setdefault(replicated, [Reason(f"replicating {names}: {r.message}", r.pos)
                                                     for r in machines])
                continue
            feeds = sorted(replicated & self.inputs)
            return self.make("partial", solution, problem, replicated, failed, [
                Reason(f"replicating {names} on every partition lets the rest partition (4.3)"),
                Reason("inputs " + ", ".join(feeds) + " must reach every partition through a coordinator "
                       "that orders them (B.3)" if feeds else "the replicated relations get no input"),
                Reason("both parts, the rules deriving the replicated relations and the others, behave like "
                       "state machines (A.4)")])
        if not not_machines:
            return self.make("none", None, None, frozenset(), failed, [
                Reason("no set of replicated relations leaves the rest partitionable")])
        first, *others = not_machines.values()
        larger = [Reason(f"and {len(others)} larger set(s) of replicated relations whose parts are not "
                         f"state machines either")] if others else []
        return self.make("none", None, None, frozenset(), failed, first + larger + [
            Reason("no set of replicated relations leaves the rest partitionable with both parts state machines "
                   "(A.4)")])


def _not_state_machines(program, chosen, replicated, static) -> list:
    """Why the two parts of a partial partitioning, the rules deriving
    `replicated` relations and the others, do not both behave like state
    machines (A.4, with the `static` relations as constant: a relation
    nothing fills comes from outside; what the other part reads is
    referenced, not an output; the first reason of each part that does not)."""
    found, parts = [], {"replicated": [r for r in chosen if r.head.name in replicated],
                         "partitioned": [r for r in chosen if r.head.name not in replicated]}
    for part, rules in parts.items():
        others = {a.name for other, rs in parts.items() if other != part
                  for r in rs for a in r.positive_atoms + r.negated_atoms}
        verdict = state_machine(program, [r.index for r in rules], static, frozenset(others))
        if rules and not verdict.state_machine:
            reason = verdict.reasons[0]
            found.append(Reason(f"the {part} part is not a state machine (A.4): {reason.message}", reason.pos))
    return found


def solved(solution) -> bool:
    """A search result is a policy (possibly empty), None (none exists) or False (budget)."""
    return solution is not None and solution is not False


def _relation_policies(program, keyed, solution, problem, replicated) -> tuple:
    out = []
    for relation in [r for r in program.relations if r in keyed]:
        columns = program.relations[relation].columns
        if solution is not None and relation in solution:
            column, via = solution[relation]
            why = tuple(Reason(f"{relation} is joined, grouped or derived on its key here", rule.pos)
                        for rule, _, atoms in problem.rules if any(n == relation for n, _ in atoms))
            out.append(RelationPolicy(relation, column, columns[column], via, why))
        elif relation in replicated:
            why = Reason("replicated: every partition holds all its facts (4.3)")
            out.append(RelationPolicy(relation, None, None, (), (why,)))
        elif solution is not None and problem.candidates[relation]:  # no rule relates it: any key will do
            column, via = problem.candidates[relation][0]
            out.append(RelationPolicy(relation, column, columns[column], via,
                                      (Reason(f"no rule joins {relation} with another partitioned relation"),)))
        else:  # no policy, or nothing to key by and nothing to join with: any one partition
            out.append(RelationPolicy(relation, None, None))
    return tuple(out)
