"""The abstract syntax of a Dedalus source file.

Every node is a frozen dataclass. Source positions (`pos`) are carried for
diagnostics but excluded from equality, so that ``parse(print(p)) == p`` holds
for any program ``p``.

>>> from sparkdedalus.syntax.parser import parse_text
>>> unit = parse_text('p(X)@next :- p(X);')
>>> unit.statements[0].head.name, unit.statements[0].delivery
('p', 'next')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True, order=True)
class Pos:
    """A 1-based line and column in a source file."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NOWHERE = Pos("<generated>", 0, 0)


def _pos() -> Pos:
    return field(default=NOWHERE, compare=False, repr=False)


# ---------------------------------------------------------------- expressions

@dataclass(frozen=True)
class Var:
    """A variable. `_` wildcards are `Wildcard`, not `Var`."""

    name: str
    pos: Pos = _pos()


@dataclass(frozen=True)
class Wildcard:
    """`_`: a fresh variable at every occurrence."""

    pos: Pos = _pos()


@dataclass(frozen=True)
class Const:
    """A constant: int, float, str or bool."""

    value: Union[int, float, str, bool]
    pos: Pos = _pos()

    def __eq__(self, other: object) -> bool:
        # 1 == True and 1 == 1.0 in Python; constants of different types differ.
        return (isinstance(other, Const) and type(self.value) is type(other.value)
                and self.value == other.value)

    def __hash__(self) -> int:
        return hash((type(self.value), self.value))


@dataclass(frozen=True)
class BinOp:
    """Arithmetic: op is one of + - * / %."""

    op: str
    left: "Expr"
    right: "Expr"
    pos: Pos = _pos()


@dataclass(frozen=True)
class Neg:
    """Unary minus of a non-literal expression (`-X`). `-3` is `Const(-3)`."""

    operand: "Expr"
    pos: Pos = _pos()


Expr = Union[Var, Wildcard, Const, BinOp, Neg]

AGGREGATE_FUNCTIONS = ("count", "sum", "min", "max", "avg")


@dataclass(frozen=True)
class Aggregate:
    """A head aggregate: `count<X>`, `count<*>` (var is None), `sum<X>`, ..."""

    func: str
    var: Var | None
    pos: Pos = _pos()


@dataclass(frozen=True)
class Seal:
    """A head's `seal<X1, ..., Xn>` (sugar, desugared by checks/seal.py): the
    rule sends, per destination and key, a batch of values X that the
    receiver reads only once it has all of it."""

    vars: tuple
    pos: Pos = _pos()


# ---------------------------------------------------------------- atoms and literals

@dataclass(frozen=True)
class TickTime:
    """`@5` on a body atom: read the relation as it was at tick 5."""

    tick: int
    pos: Pos = _pos()


@dataclass(frozen=True)
class VarTime:
    """`@T` on a body atom: entanglement, T is bound to the current tick."""

    var: Var
    pos: Pos = _pos()


TimeQualifier = Union[TickTime, VarTime]


@dataclass(frozen=True)
class Atom:
    """`rel(a1, ..., an)`, optionally time-qualified in a body (`@5`, `@T`)."""

    name: str
    args: tuple
    time: TimeQualifier | None = None
    pos: Pos = _pos()

    @property
    def arity(self) -> int:
        return len(self.args)


@dataclass(frozen=True)
class Negated:
    """`notin rel(...)` (also written `!rel(...)`)."""

    atom: Atom
    pos: Pos = _pos()


COMPARISON_OPS = ("<", "<=", ">", ">=", "==", "!=")


@dataclass(frozen=True)
class Comparison:
    """`left op right`; `Z == expr` binds Z when Z is otherwise unbound."""

    op: str
    left: Expr
    right: Expr
    pos: Pos = _pos()


@dataclass(frozen=True)
class Choose:
    """`choose((K1, K2), (V1))`: one binding of the values per binding of the keys."""

    keys: tuple
    values: tuple
    pos: Pos = _pos()


Literal = Union[Atom, Negated, Comparison, Choose]


# ---------------------------------------------------------------- statements

DELIVERIES = ("now", "next", "async")


@dataclass(frozen=True)
class Rule:
    """`head[@next|@async] :- body;`. delivery is "now", "next" or "async"
    (`@later` is read as "async")."""

    head: Atom
    delivery: str
    body: tuple
    pos: Pos = _pos()


@dataclass(frozen=True)
class Fact:
    """`rel(c1, ...)@T;` (tick T) or `rel(c1, ...);` (tick None: every tick)."""

    atom: Atom
    tick: int | None
    pos: Pos = _pos()


@dataclass(frozen=True)
class Include:
    path: str
    pos: Pos = _pos()


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    pos: Pos = _pos()


TYPES = ("int", "long", "double", "string", "bool")


@dataclass(frozen=True)
class Decl:
    """`.decl rel(name: type, ...)`; the first column is the location."""

    name: str
    columns: tuple
    pos: Pos = _pos()


INPUT_FORMATS = ("delta", "parquet", "csv", "json")


@dataclass(frozen=True)
class InputDecl:
    """`.input rel from "path" [format fmt]`; fmt None means: from the extension."""

    name: str
    path: str
    format: str | None
    pos: Pos = _pos()


@dataclass(frozen=True)
class OutputDecl:
    name: str
    pos: Pos = _pos()


@dataclass(frozen=True)
class PersistDecl:
    name: str
    pos: Pos = _pos()


@dataclass(frozen=True)
class Component:
    """`component NAME { ... }`: statements that run on one kind of node."""

    name: str
    statements: tuple
    pos: Pos = _pos()


Statement = Union[Rule, Fact, Include, Decl, InputDecl, OutputDecl, PersistDecl, Component]


@dataclass(frozen=True)
class Comment:
    """A `//` or `/* */` comment, kept so that `fmt` does not lose it."""

    text: str
    pos: Pos = _pos()


@dataclass(frozen=True)
class Unit:
    """One parsed source file; comments do not take part in equality."""

    statements: tuple
    file: str = field(default="<string>", compare=False)
    comments: tuple = field(default=(), compare=False, repr=False)


# ---------------------------------------------------------------- traversal helpers

def expr_vars(expr) -> list[Var]:
    """The variables of an expression, aggregate or seal, left to right (with repeats)."""
    if isinstance(expr, Var):
        return [expr]
    if isinstance(expr, BinOp):
        return expr_vars(expr.left) + expr_vars(expr.right)
    if isinstance(expr, Neg):
        return expr_vars(expr.operand)
    if isinstance(expr, Aggregate):
        return [expr.var] if expr.var is not None else []
    if isinstance(expr, Seal):
        return list(expr.vars)
    return []


def read_tick(atom: Atom, tick: int) -> int:
    """The tick a body atom reads when its rule runs at `tick`: `@k` reads k.

    >>> read_tick(Atom("p", (), TickTime(2)), 5), read_tick(Atom("p", ()), 5)
    (2, 5)
    """
    return atom.time.tick if isinstance(atom.time, TickTime) else tick


def atom_vars(atom: Atom) -> list[Var]:
    """The variables of an atom's arguments and of its `@T` qualifier."""
    found = [v for arg in atom.args for v in expr_vars(arg)]
    if isinstance(atom.time, VarTime):
        found.append(atom.time.var)
    return found
