"""Why-provenance as data: every derivation of every fact of a run, per tick.

`run(program, ticks, provenance=True)` gives a trace whose `provenance` lists, per
fact and tick, each way it came to hold (a `Derivation`):

- `"rule"`: a deductive rule at the same tick, with the body facts its binding
  joined (`FactAt`: relation, row, the tick read) and its negated atoms (`Absent`);
- `"next"`: an `@next` rule at the previous tick (a persisted fact: its own fact
  of the previous tick);
- `"message"`: an `@async` rule at the send tick, with the `Message` (sender, send
  tick, receiver `row[0]`, arrival tick);
- leaves: `"fact"` (a fact of the program), `"input"` (`edb=` rows and `.input`
  files) and `"crash"` (a `crash` fact of the failure model).

An aggregate's fact has one derivation whose body is every fact of its group.

>>> from sparkdedalus import Program
>>> from sparkdedalus.reference import run
>>> program = Program.parse('''q("a", 1)@1;
... p(L, X)@next :- q(L, X), notin r(L);''')
>>> trace = run(program, ticks=2, provenance=True)
>>> (d,) = trace.provenance.derivations("p", ("a", 1), 2)
>>> d.kind, d.rule, d.pos, d.body, d.absent
('next', 0, '<string>:2', (FactAt(relation='q', row=('a', 1), tick=1),), (Absent(relation='r', pattern=('a',), tick=1),))
>>> trace.provenance.derivations("q", ("a", 1), 1)[0].kind
'fact'
"""

from __future__ import annotations

from collections import defaultdict

from sparkdedalus.derivations import Absent, Derivation, FactAt
from sparkdedalus.reference.values import convert_row, evaluate
from sparkdedalus.syntax import ast


class Provenance:
    """The derivations of a run (built by `Recorder`)."""

    def __init__(self, derived: dict, leaves: dict):
        self._derived = derived  # (relation, row, tick) -> [Derivation]
        self._leaves = leaves  # (relation, row) -> [(tick or None, Derivation)]

    def derivations(self, relation: str, row: tuple, tick: int) -> tuple:
        """Every derivation of `relation(row)` at `tick`: the leaves (facts of the
        program, inputs, crashes) first, then the rules' in program order."""
        leaves = [d for at, d in self._leaves.get((relation, row), ()) if at is None or at == tick]
        return tuple(leaves) + tuple(self._derived.get((relation, row, tick), ()))

    def records(self, ticks: int) -> list:
        """(FactAt, Derivation) for every derivation of every fact of ticks
        1..`ticks` (those recorded for later ticks, by `@next` rules and
        messages of the last ticks, left out), as the Spark engine's
        `run.provenance` lists them (tests/test_provenance_spark.py)."""
        facts = {FactAt(relation, row, tick) for (relation, row), found in self._leaves.items()
                 for at, _ in found for tick in (range(1, ticks + 1) if at is None else (at,)) if 1 <= tick <= ticks}
        facts |= {FactAt(*key) for key in self._derived if 1 <= key[2] <= ticks}
        return [(fact, d) for fact in facts for d in self.derivations(fact.relation, fact.row, fact.tick)]


class Recorder:
    """Collects the derivations while the evaluator runs; `finish` returns the
    `Provenance`. `base_rows` are the evaluator's (relation, tick, row): the
    program's facts first, in `program.facts` order, then the input rows."""

    def __init__(self, program, base_rows: list, crash_rows: frozenset):
        self.program = program
        self.leaves: dict = defaultdict(list)
        for i, (name, at, row) in enumerate(base_rows):
            if i < len(program.facts):
                self.leaves[name, row].append((at, Derivation("fact", _line(program.facts[i].pos))))
            else:
                self.leaves[name, row].append((at, Derivation("input")))
        for row in sorted(crash_rows):
            self.leaves["crash", row].append((None, Derivation("crash")))
        self.derived: dict = defaultdict(dict)  # (relation, row, tick) -> {Derivation: None}, in order
        self.sends: dict = defaultdict(dict)  # (relation, row, src, send tick) -> {Derivation: None}

    def deduced(self, final: dict, tick: int, derive) -> None:
        """The deductive rules' derivations at `tick`: every rule evaluated once
        more on the final state, where each one's body reads complete relations
        (those of its stratum and of earlier ones)."""
        for rule in self.program.rules_of("now"):
            for row, bindings in derive(rule, final, tick).items():
                for derivation in self._derivations(rule, bindings, tick, "rule"):
                    self.derived[rule.head.name, row, tick][derivation] = None

    def carried(self, rule, derived: dict, rows: set, tick: int) -> None:
        """An `@next` rule at `tick` derived `derived` (row -> bindings); `rows`
        of them reach tick + 1 (the others were garbage-collected)."""
        for row in rows:
            for derivation in self._derivations(rule, derived[row], tick, "next"):
                self.derived[rule.head.name, row, tick + 1][derivation] = None

    def sent(self, rule, derived: dict, tick: int) -> None:
        """An `@async` rule at `tick` sent `derived` (row -> bindings)."""
        sender = rule.positive_atoms[0].args[0]
        for row, bindings in derived.items():
            for binding in bindings:
                for derivation in self._derivations(rule, [binding], tick, "message"):
                    self.sends[rule.head.name, row, evaluate(sender, binding), tick][derivation] = None

    def finish(self, messages: list) -> Provenance:
        """The `Provenance`, with the delivered `messages` as derivations at their arrival."""
        derived = {key: list(found) for key, found in self.derived.items()}
        for m in messages:
            if m.arrival is not None:
                for d in self.sends[m.relation, m.row, m.src, m.send_tick]:
                    derived.setdefault((m.relation, m.row, m.arrival), []).append(
                        Derivation("message", d.pos, d.rule, d.body, d.absent, m))
        return Provenance(derived, dict(self.leaves))

    def _derivations(self, rule, bindings: list, tick: int, kind: str):
        """One derivation per binding; for an aggregate one for the whole group."""
        found = [(_body(self.program, rule, b, tick), absent_atoms(rule, b, tick)) for b in bindings]
        if rule.is_aggregate:
            found = [(tuple(dict.fromkeys(f for body, _ in found for f in body)),
                      tuple(dict.fromkeys(a for _, absent in found for a in absent)))]
        for body, absent in found:
            yield Derivation(kind, _line(rule.pos), rule.index, body, absent)


def _line(pos: ast.Pos) -> str:
    return f"{pos.file}:{pos.line}"


def _body(program, rule, binding: dict, tick: int) -> tuple:
    return tuple(FactAt(atom.name, convert_row(tuple(_value(arg, binding) for arg in atom.args),
                                               program.relations[atom.name].types), ast.read_tick(atom, tick))
                 for atom in rule.positive_atoms)


def absent_atoms(rule, binding: dict, tick: int) -> tuple:
    """The rule's negated atoms under `binding`, as `Absent`s read at `tick`."""
    return tuple(Absent(atom.name, tuple(_value(arg, binding) for arg in atom.args), ast.read_tick(atom, tick))
                 for atom in rule.negated_atoms)


def _value(arg, binding: dict):
    return arg.value if isinstance(arg, ast.Const) else binding.get(arg.name)
