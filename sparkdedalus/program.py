"""The checked program: relations with arities and types, normalised rules,
facts, strata and components. Immutable; analyses read it, rewrites return a
new one. Built by `sparkdedalus.checks.build_program`.

>>> from sparkdedalus import Program
>>> p = Program.parse('log(N, P)@next :- log(N, P); log("a", "hi")@1;')
>>> p.relations["log"].types, sorted(p.persisted)
(('string', 'string'), ['log'])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sparkdedalus.syntax import ast
from sparkdedalus.syntax.diagnostics import Sources
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


@dataclass(frozen=True, eq=False)
class Program:
    relations: dict  # name -> Relation, in order of first appearance
    rules: tuple
    facts: tuple
    inputs: tuple  # ast.InputDecl
    outputs: tuple  # relation names a run exports
    strata: tuple
    components: tuple  # component names in order of appearance
    persisted: frozenset  # relations carried by identity @next rules
    warnings: tuple = ()
    homes: tuple = ()  # location suffixes a rewrite introduced (`// @home "/x"`, docs/rewrites.md)
    gc_annotations: tuple = ()  # `// @gc rel(args) when cond` (checks/gc_directives.py, docs/gc.md)
    sources: Sources = field(default_factory=Sources, repr=False)

    # -- construction
    @staticmethod
    def parse(text: str, file: str = "<string>", strict: bool = False) -> "Program":
        """Parse and check program text; raises `DiagnosticError` when invalid."""
        from sparkdedalus.checks import build_program
        from sparkdedalus.syntax.loader import load_text
        return build_program(load_text(text, file), strict=strict)

    @staticmethod
    def from_files(*paths: str, strict: bool = False) -> "Program":
        """Read, include, check: several files form one program."""
        from sparkdedalus.checks import build_program
        from sparkdedalus.syntax.loader import load_files
        return build_program(load_files(list(paths)), strict=strict)

    # -- queries
    def rules_of(self, delivery: str) -> list[Rule]:
        return [r for r in self.rules if r.delivery == delivery]

    def defining_rules(self, relation: str) -> list[Rule]:
        return [r for r in self.rules if r.head.name == relation]

    @property
    def idb(self) -> frozenset:
        """Relations derived by at least one rule."""
        return frozenset(r.head.name for r in self.rules)

    @property
    def edb(self) -> frozenset:
        """Relations no rule derives: facts, inputs, built-ins, undefined ones."""
        return frozenset(self.relations) - self.idb

    @property
    def declared_outputs(self) -> tuple:
        """The `.output` relations (none: outputs default to every relation)."""
        every = tuple(name for name, r in self.relations.items() if not r.auxiliary)
        return () if tuple(self.outputs) == every else tuple(self.outputs)

    def render_warnings(self) -> str:
        return "\n".join(w.render(self.sources) for w in self.warnings)

