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

>>> c = channel("kb", {"r": 2}, ("r",), 'Lr == L + "/kb"')
>>> print("\\n".join(c.receiver[-2:]))
sealed_kb(L, T)@next :- can_seal_kb(L, T);
r_kb_sealed(L, X1) :- r_kb(L, X1, T), can_seal_kb(L, T);
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.rewrite.rule import RewriteError
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.parser import parse_text


@dataclass(frozen=True)
class Channel:
    sender: tuple  # rule texts at the sender
    receiver: tuple  # rule texts at the receiver
    persisted: tuple  # relations persisted at the receiver
    relations: tuple  # every relation the channel introduces
    sealed: dict  # relation sent -> the relation the receiver reads


def _xs(arity: int) -> str:
    return "".join(f", X{i}" for i in range(1, arity))


def channel(tag: str, relations: dict, ticks, to: str, held=frozenset()) -> Channel:
    """The batching rules for `relations` (name -> arity) from a sender at
    L to a receiver at Lr; a batch at every tick where one of `ticks` (name
    -> arity, or names of `relations`) holds at the sender. `to` binds Lr
    from L; the receiver reads a relation in `held` until the next batch.
    A `RewriteError` when two of the relations it introduces have one name
    (a relation `seal` sent over the channel `K` is `seal_K`, its seal)."""
    ticks = ticks if isinstance(ticks, dict) else {r: relations[r] for r in ticks}
    names = list(relations)
    sizes = "".join(f", N{i}" for i in range(1, len(names) + 1))
    sender = [f"batch_{tag}(L, T) :- {r}(L{_xs(n)})@T;" for r, n in ticks.items()]
    sender += [f"last_{tag}(L, T)@next :- batch_{tag}(L, T);",
               f"last_{tag}(L, P)@next :- last_{tag}(L, P), notin batch_{tag}(L, _);",
               f"prev_{tag}(L, P) :- batch_{tag}(L, _), last_{tag}(L, P);",
               f"prev_{tag}(L, 0) :- batch_{tag}(L, _), notin last_{tag}(L, _);"]
    receiver = []
    for i, (r, n) in enumerate(relations.items(), 1):
        sender += [f"{r}_{tag}(Lr{_xs(n)}, T)@async :- {r}(L{_xs(n)})@T, {to};",
                   f"count_{r}_{tag}(L, T, count<*>) :- {r}(L{_xs(n)})@T;",
                   f"size_{r}_{tag}(L, T, N) :- count_{r}_{tag}(L, T, N);",
                   f"size_{r}_{tag}(L, T, 0) :- batch_{tag}(L, T), notin count_{r}_{tag}(L, T, _);"]
        receiver += [f"got_{r}_{tag}(L, T, count<*>) :- {r}_{tag}(L{_xs(n)}, T);",
                     f"short_{tag}(L, T) :- seal_{tag}(L, T, _{', _' * (i - 1)}, N{', _' * (len(names) - i)}), "
                     f"N > 0, notin got_{r}_{tag}(L, T, N);"]
    sender.append(f"seal_{tag}(Lr, T, P{sizes})@async :- batch_{tag}(L, T), prev_{tag}(L, P), "
                  + "".join(f"size_{r}_{tag}(L, T, N{i}), " for i, r in enumerate(names, 1)) + f"{to};")
    any_sizes = ", _" * len(names)
    receiver += [f"can_seal_{tag}(L, T) :- seal_{tag}(L, T, P{any_sizes}), sealed_{tag}(L, P), "
                 f"notin short_{tag}(L, T), notin sealed_{tag}(L, T);",
                 f"can_seal_{tag}(L, T) :- seal_{tag}(L, T, 0{any_sizes}), "
                 f"notin short_{tag}(L, T), notin sealed_{tag}(L, T);",
                 f"sealed_{tag}(L, T)@next :- can_seal_{tag}(L, T);"]
    if held:
        receiver += [f"current_{tag}(L, T) :- can_seal_{tag}(L, T);",
                     f"current_{tag}(L, T) :- shown_{tag}(L, T), notin can_seal_{tag}(L, _);",
                     f"shown_{tag}(L, T)@next :- current_{tag}(L, T);"]
    for r, n in relations.items():
        now = f"current_{tag}" if r in held else f"can_seal_{tag}"
        receiver.append(f"{r}_{tag}_sealed(L{_xs(n)}) :- {r}_{tag}(L{_xs(n)}, T), {now}(L, T);")
    introduced = [f"{p}_{tag}" for p in ("batch", "last", "prev", "seal", "short", "can_seal", "sealed")]
    introduced += [f"{p}_{tag}" for p in ("current", "shown") if held]
    introduced += [f"{p}_{r}_{tag}" for r in names for p in ("count", "size", "got")]
    introduced += [f"{r}_{tag}{s}" for r in names for s in ("", "_sealed")]
    twice = sorted({r for r in introduced if introduced.count(r) > 1})
    if twice:
        raise RewriteError(f"the batches need the relation name {twice[0]!r} for two relations")
    return Channel(tuple(sender), tuple(receiver), (*(f"{r}_{tag}" for r in names), f"seal_{tag}", f"sealed_{tag}"),
                   tuple(introduced), {r: f"{r}_{tag}_sealed" for r in names})


def acknowledgement(tag: str, back: str, outputs: dict) -> tuple:
    """(receiver rules, sender rules) of A.5.1: the receiver acknowledges
    each batch it seals (`back` binds the sender Ls from L); the sender
    releases the facts of each relation in `outputs` (name -> arity), held
    in `NAME_K_held(L, .., T)`, once batch T is acknowledged."""
    receiver = (f"ack_{tag}(Ls, T)@async :- can_seal_{tag}(L, T), {back};",)
    sender = []
    for r, n in outputs.items():
        vs = ", ".join(f"V{i}" for i in range(1, n + 1))
        sender.append(f"{r}({vs})@async :- {held(tag, r)}(L, {vs}, T), ack_{tag}(L, T);")
    return receiver, tuple(sender)


def held(tag: str, relation: str) -> str:
    """The relation holding the facts of `relation` until their batch is acknowledged."""
    return f"{relation}_{tag}_held"


def rules(texts) -> list:
    """The `ast.Rule`s of rule texts."""
    return [s for s in parse_text("\n".join(texts)).statements if isinstance(s, ast.Rule)]
