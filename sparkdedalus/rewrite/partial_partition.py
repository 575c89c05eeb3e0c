"""Partial partitioning with coordination (scaling paper, 4.3 and B.3-B.4): a
component whose distribution policy is "partial" runs on N partitions per
location like `partition` (keyed relations routed by their key), and every
partition holds the replicated relations in full. The inputs that feed them
(the policy's `broadcast`) go through a coordinator at `L + "/coord"`, which
orders them, so that every partition applies them in the same order relative
to its partitioned inputs.

The coordinator (component `C_coord`) takes the replicated inputs that arrive
in one tick T as batch T (T: its tick, unique and increasing), remembers the
batch before it (Prev, 0 for none) and sends each fact to every partition as
`r_voteReq(Lp, T, Prev, ..)`. A partition holds the facts (`r_held`), is
*frozen* while it holds a batch it has not applied, and votes for each fact
(`r_vote`). When every partition has voted for every fact of batch T, the
coordinator sends `C_commit(Lp, T)`. A partition applies batch T (derives `r`
from `r_held`, `C_ready`) once it is committed and batch Prev is applied: one
batch a tick, in the coordinator's order. A partitioned input `q` is read as
`q_sealed`: at once when the partition is not frozen, else from `q_buffer`
after it thaws (a persisted `q` is read as the persisted `q_sealed`).

A sealed output of the component (`sealing`, B.4) is sent by every partition
as its fraction with its count, and the receiver waits for all N partitions.

Refused (`RewriteError`): a policy that is not partial (unless the component
has sealed outputs), a persisted replicated input or `crash` (the failure
model fills it), a name the rewrite needs
that is taken, and what `partition.spread` refuses.

>>> from sparkdedalus import Program
>>> from sparkdedalus.rewrite.source import source_rules
>>> from sparkdedalus.rewrite.text import program_text
>>> p = Program.parse('''component k { .persist conf .persist log
...   conf(L, C) :- set(L, C);
...   log(L, K, V) :- put(L, K, V), conf(L, C), V <= C; }
... set("k", 5)@1; put("k", "a", 3)@9;''')
>>> q = partial_partition(p, "k", 2)
>>> q.homes, sorted(r for r in q.relations if r.startswith("set_"))
(('/p0', '/p1', '/coord'), ['set_coord', 'set_held', 'set_order', 'set_vote', 'set_voteReq'])
>>> [(f.atom.name, f.atom.args[0].value, f.tick) for f in q.facts if f.atom.name.startswith("set")]
[('set_coord', 'k/coord', 1)]
"""

from __future__ import annotations

from dataclasses import replace

from sparkdedalus.analysis.roles import component_roles
from sparkdedalus.program import Program
from sparkdedalus.rewrite import partition
from sparkdedalus.rewrite.decouple import redirect
from sparkdedalus.rewrite.partition import note, spread, suffixes
from sparkdedalus.rewrite.rule import RewriteError, Rule, Target, Verdict
from sparkdedalus.rewrite.sealing import NEW, policy_rules, seal_partitions, sealed_outputs
from sparkdedalus.rewrite.source import SourceRule, assemble
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.build import agg, atom, cmp, neg, plus, rule

#: the policy method this rewrite implements
METHOD = "partial"
#: the coordinator's location: L + COORD
COORD = "/coord"


def coordinator_of(component: str) -> str:
    """The component of `component`'s coordinator (one node per location).

    >>> coordinator_of("acceptor")
    'acceptor_coord'
    """
    return f"{component}_coord"


def policy(program, component: str, key=None):
    """The component's `DistributionPolicy`, the counting rules of its sealed
    outputs left out (`sealing`, B.4.2), keyed by `key` if given; a
    `ValueError` names an unknown component or says why `key` cannot key it
    (`partition.policy`)."""
    sealed = sealed_outputs(program, component)
    return partition.policy(program, component, key, policy_rules(program, component, sealed) if sealed else None)


class PartialPartitioning(Rule):
    """The rule of the table `rewrite.REWRITES`: `partial_partition` when
    the policy is partial, or partitions and the component sends sealed outputs."""

    REWRITE = "partial partitioning"
    REROUTES = True

    def analysis(self, program, target: Target) -> Verdict:
        found = policy(program, target.component, target.key)
        applies = found.method == METHOD or found.partitioned and bool(sealed_outputs(program, target.component))
        return Verdict(applies, found.reasons)

    def mechanism(self, program, target: Target) -> tuple:
        component, n = target.component, target.partitions
        found, sealed = policy(program, component, target.key), sealed_outputs(program, component)
        notes = [note(component, n, found)]
        if sealed:
            notes.append(f"{component} seals {', '.join(s.out for s in sealed)} per partition (B.4)")
        if found.replicate:
            notes.append(f"{component} replicates {', '.join(found.replicate)} on every partition"
                         + (f"; {', '.join(found.broadcast)} ordered by a coordinator at L + "
                            f'"{COORD}" (B.3)' if found.broadcast else ""))
        return partial_partition(program, component, n, target.key), notes


partial_partitioning = PartialPartitioning()


def partial_partition(program, component: str, n: int, key=None) -> Program:
    """`program` with `component` on `n` partitions per location (keyed by
    `key` if given, `policy`), its replicated inputs ordered by a
    coordinator and its sealed outputs counted per partition (module docstring)."""
    if n < 1:
        raise RewriteError(f"the number of partitions must be at least 1, got {n}")
    found, sealed = policy(program, component, key), sealed_outputs(program, component)
    if found.method != METHOD and not (sealed and found.partitioned):
        raise RewriteError(f"component {component!r} has a {found.method} policy, not a partial one, "
                           f"and no sealed output")
    roles = next(r for r in component_roles(program) if r.name == component)
    broadcast = sorted(found.broadcast)
    buffered = sorted(roles.referenced_inputs - set(found.replicate)) if broadcast else []
    persisted = {r.head.name: r.component for r in program.rules if r.persistence}
    for name in broadcast:
        if name == "crash":
            raise RewriteError("the replicated input crash is filled by the failure model: the coordinator "
                               "cannot order it")
        if name in persisted:
            raise RewriteError(f"the replicated input {name} is persisted: the coordinator orders arrivals only")
    coordinator = coordinator_of(component)
    rules, facts = spread(program, component, n, found, {q: f"{q}_sealed" for q in buffered})
    rules, receiving = seal_partitions(rules, component, sealed, n)
    for s in sealed:
        persisted.pop(f"{s.out}Count", None)
    persisted.update(receiving)
    rules = [replace(s, rule=_to_coordinator(s.rule)) if s.rule.delivery == "async"
             and s.rule.head.name in broadcast else s for s in rules]
    facts = [replace(f, atom=_to_coordinator(f.atom), component=coordinator) if f.atom.name in broadcast else f
             for f in facts]

    arity = {name: program.relations[name].arity for name in broadcast + buffered}
    added = {}
    for owner, stmt in _coordinator(component, broadcast, arity, n) + \
            _partition_side(component, broadcast, buffered, arity, persisted):
        if isinstance(stmt, ast.PersistDecl):
            added[stmt.name] = owner
        else:
            rules.append(SourceRule(stmt, owner))
            added.setdefault(stmt.head.name, None)
    introduced = set(added) - set(broadcast) | {s.out + suffix for s in sealed for suffix in NEW}
    taken = sorted(introduced & set(program.relations))
    if taken or broadcast and coordinator in program.components:
        name = taken[0] if taken else coordinator
        raise RewriteError(f"the rewrite needs the name {name!r}, which the program uses")
    persisted.update({name: owner for name, owner in added.items() if owner is not None})
    return assemble(program, rules, facts, persisted, homes=suffixes(n) + ((COORD,) if broadcast else ()))


def _to_coordinator(item):
    """A sender of a replicated input r (a rule or a fact's atom): `r_coord`
    at `L + COORD` instead of r at L (the component's rules would run on r
    at the coordinator)."""
    if isinstance(item, ast.Rule):
        rule = redirect(item, COORD)
        return replace(rule, head=replace(rule.head, name=f"{rule.head.name}_coord"))
    location = item.args[0].value
    if not isinstance(location, str):
        raise RewriteError(f"{item.pos}: location {location!r} is not a string: cannot add {COORD!r}")
    return replace(item, name=f"{item.name}_coord", args=(ast.Const(location + COORD), *item.args[1:]))


def _columns(k: int) -> list:
    return [f"X{i}" for i in range(1, k)]


def _coordinator(c: str, broadcast, arity: dict, n: int) -> list:
    """(component, rule or `.persist` declaration) of the coordinator."""
    if not broadcast:
        return []
    seen, index, done, inbatch, prev, part = (f"{c}_{p}" for p in ("seen", "index", "done", "inbatch", "prev", "part"))
    missing, last, open_, commit = (f"{c}_{p}" for p in ("missing", "last", "open", "commit"))
    out = [ast.PersistDecl(seen), ast.PersistDecl(index), ast.PersistDecl(done)]
    for r in broadcast:
        xs = _columns(arity[r])
        out += [ast.PersistDecl(f"{r}_order"), ast.PersistDecl(f"{r}_vote"),
                rule(atom(inbatch, "Lc", "T"), atom(f"{r}_coord", "Lc", *xs, at="T")),
                rule(atom(f"{r}_order", "Lc", "T", *xs), atom(f"{r}_coord", "Lc", *xs, at="T")),
                rule(atom(f"{r}_voteReq", "Lp", "T", "Prev", *xs), atom(f"{r}_coord", "Lc", *xs, at="T"),
                     atom(prev, "Lc", "Prev"), atom(part, "Lc", "Lp"), delivery="async"),
                rule(atom(missing, "Lc", "T"), atom(f"{r}_order", "Lc", "T", *xs), atom(part, "Lc", "Lp"),
                     neg(atom(f"{r}_vote", "Lc", "Lp", "T", *xs)))]
    out += [rule(atom(seen, "Lc", "T"), atom(inbatch, "Lc", "T"), delivery="next"),
            rule(atom(last, "Lc", agg("max", "T")), atom(seen, "Lc", "T")),
            rule(atom(prev, "Lc", "Prev"), atom(inbatch, "Lc", "T"), atom(last, "Lc", "Prev")),
            rule(atom(prev, "Lc", 0), atom(inbatch, "Lc", "T"), neg(atom(seen, "Lc", "_"))),
            rule(atom(index, "Lc", 0), atom(inbatch, "Lc", "T")),
            rule(atom(index, "Lc", "J"), atom(index, "Lc", "I"), cmp("==", "J", plus("I", 1)), cmp("<", "J", n)),
            rule(atom(part, "Lc", "Lp"), atom(index, "Lc", "I"), atom("home", "Lc", "L"), atom("tostring", "I", "S"),
                 cmp("==", "Lp", plus("L", ast.Const("/p"), "S"))),
            rule(atom(open_, "Lc", "T"), atom(seen, "Lc", "T"), neg(atom(done, "Lc", "T"))),
            rule(atom(commit, "Lp", "T"), atom(open_, "Lc", "T"), neg(atom(missing, "Lc", "T")),
                 atom(part, "Lc", "Lp"), delivery="async"),
            rule(atom(done, "Lc", "T"), atom(open_, "Lc", "T"), neg(atom(missing, "Lc", "T")), delivery="next")]
    return [(coordinator_of(c), stmt) for stmt in out]


def _partition_side(c: str, broadcast, buffered, arity: dict, persisted: dict) -> list:
    """(component, rule or `.persist` declaration) of what the partitions
    add: hold, vote, apply in order, freeze; buffer the partitioned inputs."""
    if not broadcast:
        return []
    committed, processed, batch, ready, frozen = (f"{c}_{p}" for p in
                                                  ("committed", "processed", "batch", "ready", "frozen"))
    out = [ast.PersistDecl(committed), ast.PersistDecl(processed)]
    for r in broadcast:
        xs = _columns(arity[r])
        out += [ast.PersistDecl(f"{r}_held"),
                rule(atom(f"{r}_held", "Lp", "T", "Prev", *xs), atom(f"{r}_voteReq", "Lp", "T", "Prev", *xs)),
                rule(atom(f"{r}_vote", "Lc", "Lp", "T", *xs), atom(f"{r}_voteReq", "Lp", "T", "Prev", *xs),
                     atom("home", "Lp", "L"), cmp("==", "Lc", plus("L", ast.Const(COORD))), delivery="async"),
                rule(atom(batch, "Lp", "T", "Prev"), atom(f"{r}_held", "Lp", "T", "Prev", *xs)),
                rule(atom(r, "Lp", *xs), atom(f"{r}_held", "Lp", "T", "Prev", *xs), atom(ready, "Lp", "T"))]
    out += [rule(atom(committed, "Lp", "T"), atom(f"{c}_commit", "Lp", "T")),
            rule(atom(ready, "Lp", "T"), atom(committed, "Lp", "T"), atom(batch, "Lp", "T", 0),
                 neg(atom(processed, "Lp", "T"))),
            rule(atom(ready, "Lp", "T"), atom(committed, "Lp", "T"), atom(batch, "Lp", "T", "Prev"),
                 atom(processed, "Lp", "Prev"), neg(atom(processed, "Lp", "T"))),
            rule(atom(processed, "Lp", "T"), atom(ready, "Lp", "T"), delivery="next"),
            rule(atom(frozen, "Lp"), atom(batch, "Lp", "T", "_"), neg(atom(processed, "Lp", "T")))]
    for q in buffered:
        xs = _columns(arity[q])
        out.append(rule(atom(f"{q}_sealed", "Lp", *xs), atom(q, "Lp", *xs), neg(atom(frozen, "Lp"))))
        if q in persisted:
            out.append(ast.PersistDecl(f"{q}_sealed"))
            continue
        out += [rule(atom(f"{q}_sealed", "Lp", *xs), atom(f"{q}_buffer", "Lp", *xs), neg(atom(frozen, "Lp"))),
                rule(atom(f"{q}_buffer", "Lp", *xs), atom(q, "Lp", *xs), atom(frozen, "Lp"), delivery="next"),
                rule(atom(f"{q}_buffer", "Lp", *xs), atom(f"{q}_buffer", "Lp", *xs), atom(frozen, "Lp"),
                     delivery="next")]
    return [(c, stmt) for stmt in out]
