"""The checked program: relations with arities and types, normalised rules,
facts, strata and components. Immutable; analyses read it, rewrites return a
new one. Built by `Program.build` from the fields `sparkdedalus.checks.pipeline`
checks; its parts are those of `sparkdedalus.checks.parts`.

>>> from sparkdedalus import Program
>>> p = Program.parse('log(N, P)@next :- log(N, P); log("a", "hi")@1;')
>>> p.relations["log"].types, sorted(p.persisted)
(('string', 'string'), ['log'])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sparkdedalus.checks.parts import BUILTIN_RELATIONS, CRASH, Fact, Lattice, Relation, Rule, Stratum
from sparkdedalus.syntax.diagnostics import Sources

__all__ = ["BUILTIN_RELATIONS", "CRASH", "Fact", "Lattice", "Program", "Relation", "Rule", "Stratum"]

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
    #: results of pure functions of this program, keyed by their callers (`rewrite.rule`: the
    #: rewrites' verdicts and mechanisms): the program never changes, so they hold while it lives
    memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    # -- construction
    @staticmethod
    def build(loaded, strict: bool = False) -> "Program":
        """Check `loaded` (from `syntax.loader`); raise `DiagnosticError` with all
        errors and warnings, or return the Program (its warnings attached)."""
        from sparkdedalus.checks.pipeline import check
        from sparkdedalus.syntax.parser import gc_paused
        with gc_paused():  # the checks of 100,000 facts: 1.5 s less
            return Program(**check(loaded, strict))

    @staticmethod
    def parse(text: str, file: str = "<string>", strict: bool = False) -> "Program":
        """Parse and check program text; raises `DiagnosticError` when invalid."""
        from sparkdedalus.syntax.loader import load_text
        from sparkdedalus.syntax.parser import gc_paused
        with gc_paused():  # one pause for parsing and checking
            return Program.build(load_text(text, file), strict=strict)

    @staticmethod
    def from_files(*paths: str, strict: bool = False) -> "Program":
        """Read, include, check: several files form one program."""
        from sparkdedalus.syntax.loader import load_files
        from sparkdedalus.syntax.parser import gc_paused
        with gc_paused():  # one pause for parsing and checking
            return Program.build(load_files(list(paths)), strict=strict)

    # -- queries
    def rules_of(self, delivery: str) -> list[Rule]:
        return [r for r in self.rules if r.delivery == delivery]

    def defining_rules(self, relation: str) -> list[Rule]:
        return [r for r in self.rules if r.head.name == relation]

    @property
    def lattices(self) -> dict:
        """{relation: Lattice} for the relations that take min or max over their
        own recursion (checks/lattices.py)."""
        return {lattice.relation: lattice for stratum in self.strata for lattice in stratum.lattices}

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

