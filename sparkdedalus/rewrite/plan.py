"""A rewrite plan: one list of steps and one driver, `apply_plan`, which
`rewrite` (its `--decouple`, `--partition` and `--coordinate` options, in
the order given), `rewrite --auto` (`rewrite.auto`: the steps it decides
on) and `optimize` (`throughput.optimize`: the plans it measures) all use,
as sqlglot's optimizer is one ordered list of rules with one loop.

A `Step` is one of

- *decouple*: move the rules of `component` that `rules` selects (head
  relations or line numbers, as text, as `rewrite.decouple.select` reads
  them; or rule indices, for a set of rules no selector names) to a new
  component `name` (None: by its role, `rewrite.naming`), with the first
  decoupling of `rewrite.DECOUPLINGS` whose precondition holds
  (`rewrite.decouple_first`, the one chooser). The driver's `coordinated`
  says whether the decouplings that sequence the moved rules' inputs (state
  machine, asymmetric) are tried: `rewrite --decouple` tries them (the user
  asked for that split); `--auto` and `optimize` do not, since the parts
  they make cannot be partitioned. They come last in the table, so the
  choice differs only where no coordination-free decoupling holds. `force`
  (`rewrite --force`) applies the monotonic mechanism when none holds,
  marking the output unchecked;
- *partition*: run `component` on `partitions` partitions per location:
  the partitioning rewrite (co-hashing or dependencies), else partial
  partitioning with a coordinator (`rewrite.partition_by_policy`), keyed by
  `key` (`request(id)`, `analysis.partition_keys`; None: the policy's);
- *coordinate*: count the messages whose order matters (`rewrite.coordinate`).

Each step is applied with a scope (`rewrite.scope`; None: every
component): the components its rewrite may change, so that the clients'
rules stay as written and a decoupled component relays what the clients
send it. The scope grows with each component a step creates: a
decoupling's, a coordinator. A rewrite's precondition is kept on the
program it reads (`rewrite.rule`), so a plan that asks before it applies
pays once. `Step.option` is the `rewrite` option that names a step, and
`Step.to_json` / `Step.from_json` its JSON.

>>> from sparkdedalus import Program
>>> p = Program.parse('component c { q(S, X, C)@async :- go(C, S, X); }\\n'
...     'component k { a(L, X)@async :- q(L, X, C), to(L, D); b(C, X)@async :- q(L, X, C); }\\n'
...     'go("c", "n", 1)@1; to("n", "d");')
>>> plan = (Step("decouple", "k", ("a",), "sender"), Step("partition", "sender", partitions=2))
>>> q, notes = apply_plan(p, plan, ("k",))
>>> [s.option() for s in plan]
['--decouple k:a:sender', '--partition sender:2']
>>> sorted(q.components)  # c still sends q to k, which relays it to the sender
['c', 'k', 'main', 'sender']
>>> apply_plan(p, (Step("decouple", "k", ("a", "b")),))
Traceback (most recent call last):
  ...
sparkdedalus.rewrite.plan.StepError: --decouple k:a,b: the rules selected are all the rules of component 'k': \
nothing stays
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.analysis.partition_keys import parse_key
from sparkdedalus.rewrite import RewriteError, Target, coordination, decouple_first, partition_by_policy
from sparkdedalus.rewrite.decouple import check_name, select
from sparkdedalus.rewrite.naming import name_part

#: the kinds of step, as `rewrite` names their options
KINDS = ("decouple", "partition", "coordinate")


@dataclass(frozen=True)
class Step:
    kind: str  # one of KINDS
    component: str | None = None  # decouple, partition: the component
    rules: tuple = ()  # decouple: selectors (head relations or line numbers, as text), or rule indices (ints)
    name: str | None = None  # decouple: the new component (None: by its role)
    partitions: int = 1  # partition: K
    key: str | None = None  # partition: the partition key, as `explain` prints it (None: the policy's)

    def option(self) -> str:
        """The `rewrite` option of the step (a step of rule indices has none: `ValueError`)."""
        if self.kind == "decouple":
            if not all(isinstance(r, str) for r in self.rules):
                raise ValueError(f"the rules {self.rules} of {self.component} are indices: no option names them")
            return f"--decouple {self.component}:{','.join(self.rules)}" + (f":{self.name}" if self.name else "")
        if self.kind == "partition":
            return f"--partition {self.component}:{self.partitions}" + (f":{self.key}" if self.key else "")
        return "--coordinate"

    def to_json(self) -> dict:
        if self.kind == "decouple":
            return {"decouple": self.component, "rules": list(self.rules), "name": self.name}
        if self.kind == "partition":
            return {"partition": self.component, "partitions": self.partitions, **({"key": self.key} if self.key
                                                                                 else {})}
        return {"coordinate": True}

    @staticmethod
    def from_json(data: dict) -> "Step":
        if "decouple" in data:
            return Step("decouple", data["decouple"], tuple(data["rules"]), data.get("name"))
        if "partition" in data:
            return Step("partition", data["partition"], partitions=data["partitions"], key=data.get("key"))
        return Step("coordinate")


class StepError(RewriteError):
    """A step that cannot be applied, as `rewrite` reports it: `usage` when
    the step names what the program lacks (a component, a rule, a free name,
    a key; the message starts with the step's option), else the rewrite
    refuses (`cannot decouple ..`, with the reasons). `step`: the step."""

    def __init__(self, step: Step, message: str, usage: bool = False):
        super().__init__(message)
        self.step, self.usage = step, usage


def selectors(program, component: str, rules) -> tuple:
    """The head relations that select exactly the rule indices `rules` of
    `component` (`rewrite.decouple.select`), else `rules` themselves."""
    heads = tuple(dict.fromkeys(program.rules[i].head.name for i in rules))
    try:
        return heads if select(program, component, list(heads)) == tuple(rules) else tuple(rules)
    except RewriteError:
        return tuple(rules)


def apply_step(program, step: Step, scope: tuple | None = None, *, coordinated: bool = True,
               force: bool = False) -> tuple:
    """(the program, notes, the scope) after `step` (module doc); a
    `StepError` when it cannot be applied."""
    if step.kind == "decouple":
        return _decouple(program, step, scope, coordinated, force)
    if step.kind == "partition":
        try:
            key = parse_key(program, step.key) if step.key else None
            rewritten, notes = partition_by_policy(program, step.component, step.partitions, scope, key)
        except RewriteError as exc:
            raise StepError(step, f"cannot partition {step.component}: {exc}") from None
        except ValueError as exc:
            raise StepError(step, f"{step.option()}: {exc}", usage=True) from None
    elif step.kind == "coordinate":
        try:
            rewritten, notes = coordination.apply(program, Target(scope=scope))
        except RewriteError as exc:
            raise StepError(step, f"cannot coordinate: {exc}") from None
    else:
        raise ValueError(f"unknown step kind {step.kind!r}: one of {', '.join(KINDS)}")
    if scope is not None:
        scope = tuple(scope) + tuple(c for c in rewritten.components if c not in program.components)
    return rewritten, notes, scope


def _decouple(program, step: Step, scope, coordinated: bool, force: bool) -> tuple:
    listed = ",".join(map(str, step.rules))
    try:
        if all(isinstance(r, str) for r in step.rules):
            rules = select(program, step.component, list(step.rules))
        else:
            rules = tuple(step.rules)
        name = step.name or name_part(program, step.component, rules)
        check_name(program, name)
    except RewriteError as exc:
        raise StepError(step, f"--decouple {step.component}:{listed}: {exc}", usage=True) from None
    scope = None if scope is None else tuple(scope) + (name,)
    try:
        rewritten, notes = decouple_first(program, Target(step.component, rules, name, scope=scope), force,
                                          coordinated)
    except RewriteError as exc:
        raise StepError(step, f"cannot decouple {', '.join(map(str, step.rules))} from {step.component}: "
                              f"{exc}") from None
    return rewritten, notes, scope


def apply_plan(program, steps, scope: tuple | None = None, *, coordinated: bool = True, force: bool = False,
               report=None) -> tuple:
    """(the program, the notes) after `steps` in order (`apply_step`);
    `scope`: the components the first step may change (the clients are
    outside it; None: all); `report(step, notes)` is called after each step."""
    notes = []
    for step in steps:
        program, done, scope = apply_step(program, step, scope, coordinated=coordinated, force=force)
        if report:
            report(step, done)
        notes += done
    return program, notes
