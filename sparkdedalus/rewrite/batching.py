"""Sequenced batches between two nodes (scaling paper, A.4.2 "Batching" and
A.5.1 "Batch Acknowledgement"): the rules a decoupling adds so that the
receiver processes the sender's facts in the sender's batches and order.

A *batch* is a tick T of the sender at which one of the `ticks` relations
holds. For every relation r sent (suffix `_K`, K the new component):

- the sender stamps each fact with its tick, `r_K(Lr, .., T)@async :-
  r(L, ..)@T, ...` (entanglement binds T), and announces the batch once:
  `seal_K(Lr, T, P, N1, ..)`: it follows the batch P (0: the first) and holds
  Ni facts of the i-th relation;
- the receiver keeps what arrives (persisted) and seals batch T when batch P
  is sealed (at an earlier tick: one batch per tick) and all Ni facts are
  there: `can_seal_K(Lr, T)` (the paper's canSeal), `sealed_K` (sealed);
- it reads `r_K_sealed` (rSealed): the facts of the batch sealed at this
  tick, or, for a relation `held` (a no-change relation, A.4), of the batch
  sealed last, until the next one.

`acknowledgement` (A.5.1) adds the receiver's `ack_K(Ls, T)` for each sealed
batch and, at the sender, holds the facts of an `@async` rule as
`out_K_held(Ls, .., T)` (derivation tick T) until batch T is acknowledged.

>>> from sparkdedalus.syntax.build import plus
>>> from sparkdedalus.syntax import ast
>>> from sparkdedalus.syntax.printer import format_rule
>>> c = channel("kb", {"r": 2}, ("r",), cmp("==", "Lr", plus("L", ast.Const("/kb"))))
>>> print("\\n".join(map(format_rule, c.receiver[-2:])))
sealed_kb(L, T)@next :- can_seal_kb(L, T);
r_kb_sealed(L, X1) :- r_kb(L, X1, T), can_seal_kb(L, T);
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.rewrite.rule import RewriteError
from sparkdedalus.syntax.build import agg, atom, cmp, neg, rule


@dataclass(frozen=True)
class Channel:
    sender: tuple  # ast.Rules at the sender
    receiver: tuple  # ast.Rules at the receiver
    persisted: tuple  # relations persisted at the receiver
    relations: tuple  # every relation the channel introduces
    sealed: dict  # relation sent -> the relation the receiver reads


def _xs(arity: int) -> list:
    return [f"X{i}" for i in range(1, arity)]


def channel(tag: str, relations: dict, ticks, to, held=frozenset()) -> Channel:
    """The batching rules for `relations` (name -> arity) from a sender at
    L to a receiver at Lr; a batch at every tick where one of `ticks` (name
    -> arity, or names of `relations`) holds at the sender. `to` (a body
    literal) binds Lr from L; the receiver reads a relation in `held` until
    the next batch. A `RewriteError` when two of the relations it introduces
    have one name (a relation `seal` sent over the channel `K` is `seal_K`,
    its seal)."""
    ticks = ticks if isinstance(ticks, dict) else {r: relations[r] for r in ticks}
    names = list(relations)
    sizes = [f"N{i}" for i in range(1, len(names) + 1)]
    batch, last, prev, seal = (f"{p}_{tag}" for p in ("batch", "last", "prev", "seal"))
    short, can_seal, sealed = (f"{p}_{tag}" for p in ("short", "can_seal", "sealed"))
    sender = [rule(atom(batch, "L", "T"), atom(r, "L", *_xs(n), at="T")) for r, n in ticks.items()]
    sender += [rule(atom(last, "L", "T"), atom(batch, "L", "T"), delivery="next"),
               rule(atom(last, "L", "P"), atom(last, "L", "P"), neg(atom(batch, "L", "_")), delivery="next"),
               rule(atom(prev, "L", "P"), atom(batch, "L", "_"), atom(last, "L", "P")),
               rule(atom(prev, "L", 0), atom(batch, "L", "_"), neg(atom(last, "L", "_")))]
    receiver = []
    for i, (r, n) in enumerate(relations.items(), 1):
        count, size, got = f"count_{r}_{tag}", f"size_{r}_{tag}", f"got_{r}_{tag}"
        sender += [rule(atom(f"{r}_{tag}", "Lr", *_xs(n), "T"), atom(r, "L", *_xs(n), at="T"), to, delivery="async"),
                   rule(atom(count, "L", "T", agg("count")), atom(r, "L", *_xs(n), at="T")),
                   rule(atom(size, "L", "T", "N"), atom(count, "L", "T", "N")),
                   rule(atom(size, "L", "T", 0), atom(batch, "L", "T"), neg(atom(count, "L", "T", "_")))]
        receiver += [rule(atom(got, "L", "T", agg("count")), atom(f"{r}_{tag}", "L", *_xs(n), "T")),
                     rule(atom(short, "L", "T"), atom(seal, "L", "T", "_", *["_"] * (i - 1), "N",
                                                      *["_"] * (len(names) - i)),
                          cmp(">", "N", 0), neg(atom(got, "L", "T", "N")))]
    sender.append(rule(atom(seal, "Lr", "T", "P", *sizes), atom(batch, "L", "T"), atom(prev, "L", "P"),
                       *(atom(f"size_{r}_{tag}", "L", "T", f"N{i}") for i, r in enumerate(names, 1)), to,
                       delivery="async"))
    any_sizes = ["_"] * len(names)
    receiver += [rule(atom(can_seal, "L", "T"), atom(seal, "L", "T", "P", *any_sizes), atom(sealed, "L", "P"),
                      neg(atom(short, "L", "T")), neg(atom(sealed, "L", "T"))),
                 rule(atom(can_seal, "L", "T"), atom(seal, "L", "T", 0, *any_sizes),
                      neg(atom(short, "L", "T")), neg(atom(sealed, "L", "T"))),
                 rule(atom(sealed, "L", "T"), atom(can_seal, "L", "T"), delivery="next")]
    if held:
        current, shown = f"current_{tag}", f"shown_{tag}"
        receiver += [rule(atom(current, "L", "T"), atom(can_seal, "L", "T")),
                     rule(atom(current, "L", "T"), atom(shown, "L", "T"), neg(atom(can_seal, "L", "_"))),
                     rule(atom(shown, "L", "T"), atom(current, "L", "T"), delivery="next")]
    for r, n in relations.items():
        now = f"current_{tag}" if r in held else can_seal
        receiver.append(rule(atom(f"{r}_{tag}_sealed", "L", *_xs(n)), atom(f"{r}_{tag}", "L", *_xs(n), "T"),
                             atom(now, "L", "T")))
    introduced = [f"{p}_{tag}" for p in ("batch", "last", "prev", "seal", "short", "can_seal", "sealed")]
    introduced += [f"{p}_{tag}" for p in ("current", "shown") if held]
    introduced += [f"{p}_{r}_{tag}" for r in names for p in ("count", "size", "got")]
    introduced += [f"{r}_{tag}{s}" for r in names for s in ("", "_sealed")]
    twice = sorted({r for r in introduced if introduced.count(r) > 1})
    if twice:
        raise RewriteError(f"the batches need the relation name {twice[0]!r} for two relations")
    return Channel(tuple(sender), tuple(receiver), (*(f"{r}_{tag}" for r in names), f"seal_{tag}", f"sealed_{tag}"),
                   tuple(introduced), {r: f"{r}_{tag}_sealed" for r in names})


def acknowledgement(tag: str, back, outputs: dict) -> tuple:
    """(receiver rules, sender rules) of A.5.1: the receiver acknowledges
    each batch it seals (`back`, a body literal, binds the sender Ls from
    L); the sender releases the facts of each relation in `outputs` (name ->
    arity), held in `NAME_K_held(L, .., T)`, once batch T is acknowledged."""
    receiver = (rule(atom(f"ack_{tag}", "Ls", "T"), atom(f"can_seal_{tag}", "L", "T"), back, delivery="async"),)
    sender = []
    for r, n in outputs.items():
        vs = [f"V{i}" for i in range(1, n + 1)]
        sender.append(rule(atom(r, *vs), atom(held(tag, r), "L", *vs, "T"), atom(f"ack_{tag}", "L", "T"),
                           delivery="async"))
    return receiver, tuple(sender)


def held(tag: str, relation: str) -> str:
    """The relation holding the facts of `relation` until their batch is acknowledged."""
    return f"{relation}_{tag}_held"
