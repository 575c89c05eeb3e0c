"""The parts of a checked program: relations, rules, facts and strata, and
the built-in relations. The checks build them; `sparkdedalus.program`
assembles them into a `Program` and re-exports them."""

from __future__ import annotations

from dataclasses import dataclass, field

from sparkdedalus.syntax import ast
from udfs.registry import FUNCTIONS

#: The built-in relation the failure model fills: crash(L, N, T) holds at every
#: location L when node N crashes at tick T.
CRASH = "crash"
BUILTIN_RELATIONS = {CRASH: (("loc", "node", "tick"), ("string", "string", "int"))}


@dataclass(frozen=True)
class Relation:
    name: str
    columns: tuple  # column names; the first is the location
    types: tuple  # one of ast.TYPES per column
    pos: ast.Pos  # the declaration, or the first use
    declared: bool = False
    auxiliary: str = ""  # not in the source, made by the front end: what it is for (checks/normalize.py, seal.py)

    @property
    def arity(self) -> int:
        return len(self.columns)


@dataclass(frozen=True)
class Rule:
    """A rule of the program. Wildcards are renamed to fresh variables `_#k`
    (unusable in source), `.persist` is expanded into an identity `@next` rule,
    a negated atom repeating an existential variable reads an auxiliary
    projection relation defined by a rule of its own."""

    head: ast.Atom
    delivery: str  # "now", "next" or "async"
    body: tuple
    component: str
    index: int
    pos: ast.Pos = field(compare=False)
    persistence: bool = False  # an identity rule `r(X..)@next :- r(X..);`
    sealed: str = ""  # the relation of the `seal` head this rule desugars (checks/seal.py)

    @property
    def positive_atoms(self) -> list[ast.Atom]:
        """Positive atoms over stored relations (function relations excluded)."""
        return [lit for lit in self.body if isinstance(lit, ast.Atom) and lit.name not in FUNCTIONS]

    @property
    def function_atoms(self) -> list[ast.Atom]:
        return [lit for lit in self.body if isinstance(lit, ast.Atom) and lit.name in FUNCTIONS]

    @property
    def negated_atoms(self) -> list[ast.Atom]:
        return [lit.atom for lit in self.body if isinstance(lit, ast.Negated)]

    @property
    def comparisons(self) -> list[ast.Comparison]:
        return [lit for lit in self.body if isinstance(lit, ast.Comparison)]

    @property
    def choose(self) -> ast.Choose | None:
        found = [lit for lit in self.body if isinstance(lit, ast.Choose)]
        return found[0] if found else None

    @property
    def aggregates(self) -> list[ast.Aggregate]:
        return [a for a in self.head.args if isinstance(a, ast.Aggregate)]

    @property
    def is_aggregate(self) -> bool:
        return bool(self.aggregates)

    def text(self) -> str:
        from sparkdedalus.syntax.printer import format_rule
        return format_rule(ast.Rule(self.head, self.delivery, self.body))


@dataclass(frozen=True)
class Fact:
    atom: ast.Atom
    tick: int | None  # None: an EDB fact, true at every tick
    component: str
    pos: ast.Pos = field(compare=False)

    @property
    def row(self) -> tuple:
        return tuple(arg.value for arg in self.atom.args)


@dataclass(frozen=True)
class Stratum:
    """Same-tick relations evaluated together: every relation a rule here
    negates or aggregates lives in an earlier stratum."""

    index: int
    relations: frozenset
    rules: tuple  # indices into Program.rules of the "now" rules deriving these relations
    recursive: bool  # some rule here reads a relation of this stratum
    lattices: tuple = ()  # Lattice per relation here that aggregates over its own recursion


@dataclass(frozen=True)
class Lattice:
    """A relation whose rules take min<X> or max<X> over its own same-tick
    recursion (checks/lattices.py): it holds, per group of its other columns,
    only the best value, `func` ("min" or "max") at argument `position`.

    >>> sorted(Lattice("dist", "min", 2).best([("a", 1, 5), ("a", 1, 3), ("a", 2, 9)]))
    [('a', 1, 3), ('a', 2, 9)]
    """

    relation: str
    func: str
    position: int

    def key(self, row: tuple) -> tuple:
        """The row's group: every column but the aggregated one."""
        return row[:self.position] + row[self.position + 1:]

    def best(self, rows) -> set:
        """The best row of every group of `rows`."""
        chosen: dict = {}
        pick = min if self.func == "min" else max
        for row in rows:
            group = self.key(row)
            chosen[group] = row if group not in chosen else pick(chosen[group], row, key=self._value)
        return set(chosen.values())

    def _value(self, row: tuple):
        return row[self.position]
