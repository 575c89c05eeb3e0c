"""`sparkdedalus rewrite FILE... [--decouple COMPONENT:RULES[:NEWNAME]] [--partition COMPONENT:N[:KEY]]
[--auto COMPONENT[,COMPONENT...]] [--coordinate] [--partitions N] [--out FILE] [--force]`:
move rules of a component to a new component at new locations, run a component
on N partitions per location, or count messages where their order matters, and
print the program (docs/rewrites.md).

RULES: comma-separated selectors, each a head relation (every rule of the
component deriving it) or a line number (the rule there). NEWNAME defaults
to the name of the part by its role, as `--auto` and `optimize` name parts
(`rewrite.naming`: `vote_collectors`, ..; COMPONENT_2 when the rules have
none). The first decoupling whose precondition holds is applied (mutually
independent, functional, monotonic, state machine, asymmetric); when none
holds the rewrite is refused with the reasons (exit 1), unless `--force`,
which applies the monotonic mechanism and marks the output unchecked. `--decouple` repeats:
the rewrites compose in the order given: the options are the steps of one plan
(`rewrite.plan`), every component in its scope. `--partition` (repeats too, in the
same order) applies the partitioning rewrite when the component's distribution
policy is co-hashing or dependencies, partial partitioning with a coordinator
(B.3) when it is partial or the component sends sealed outputs (counted per
partition, B.4), and refuses with the reasons (exit 1) when it is none. KEY
chooses the partition key among the valid ones `explain` lists: a relation of
the component and the attribute its facts are hashed by, through functions as
the notes print it (`request(id)`, `toStorage(hash(v))`;
`analysis.partition_keys`); the other relations follow. A KEY that is not a
valid key is one line, exit 2, with the reason.
`--auto` applies every rewrite the analyses allow for the components named
(`rewrite.auto`; `--partitions N`, default 4), in the same order, and prints
its notes on stderr too. `--coordinate` applies the coordination rewrite
(`rewrite.coordinate`) at its place in the order; a program with nothing to
coordinate is printed unchanged with a note (stderr too), one it cannot
coordinate is refused with the reason (exit 1). Bad input: one line, exit 2,
before any work: an --out that cannot be written, a component named twice in
--auto (in one list or two), --partitions without --auto, --force without
--decouple (the other rewrites always check their preconditions).
"""

from __future__ import annotations

import sys
from argparse import ArgumentTypeError

from sparkdedalus.errors import UsageError, UserError
from sparkdedalus.shell.check import add_hidden_strict
from sparkdedalus.shell.options import component_count, integer, names, step, writable, write_text


def add_parser(commands) -> None:
    parser = commands.add_parser("rewrite", help="decouple rules into a new component; print the program")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--decouple", action="append", dest="steps", default=[], type=step("decouple", _spec),
                        metavar="COMPONENT:RULES[:NEWNAME]",
                        help="move the rules RULES (head relations or line numbers, comma-separated)")
    parser.add_argument("--partition", action="append", dest="steps", type=step("partition", _partition_spec),
                        metavar="COMPONENT:N[:KEY]", help="run COMPONENT on N partitions per location, routed by "
                        "its policy (keyed by KEY, e.g. request(id), if given)")
    parser.add_argument("--auto", action="append", dest="steps", type=step("auto", names),
                        metavar="COMPONENT[,COMPONENT...]", help="apply every rewrite the analyses allow")
    parser.add_argument("--coordinate", action="append_const", dest="steps", const=("coordinate", ()),
                        help="count messages where their order matters (seed 004 coordination)")
    parser.add_argument("--partitions", type=integer(minimum=1), metavar="N",
                        help="partitions per --auto partitioning (default 4)")
    parser.add_argument("--out", metavar="FILE", type=writable, help="write the program to FILE (default: print it)")
    parser.add_argument("--force", action="store_true",
                        help="apply a --decouple even when no precondition holds (unchecked)")
    add_hidden_strict(parser)
    parser.set_defaults(handler=handle)


def _spec(text: str) -> tuple:
    """COMPONENT:RULES[:NEWNAME]: (component, selectors, new name)."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or not all(parts):
        raise ArgumentTypeError(f"expected COMPONENT:RULES[:NEWNAME], got '{text}'")
    component, rules = parts[0], [s.strip() for s in parts[1].split(",")]
    return component, rules, parts[2] if len(parts) == 3 else None


def _partition_spec(text: str) -> tuple:
    """COMPONENT:N[:KEY]: (component, N, KEY or None)."""
    parts = text.split(":", 2)
    if len(parts) == 3 and not parts[2].strip():
        raise ArgumentTypeError(f"expected COMPONENT:N[:KEY], got '{text}'")
    return (*component_count(":".join(parts[:2])), parts[2].strip() if len(parts) == 3 else None)


def _check_steps(args) -> None:
    """Refuse the options that would not act: --partitions without --auto, --force
    without --decouple, and a component named twice in --auto."""
    kinds = {kind for kind, _ in args.steps}
    if args.partitions is not None and "auto" not in kinds:
        raise UsageError(f"--partitions {args.partitions}: partitions per --auto partitioning; there is no --auto "
                         f"(--partition takes COMPONENT:N)")
    if args.force and "decouple" not in kinds:
        raise UsageError("--force applies to --decouple only: --partition, --auto and --coordinate "
                         "always check their preconditions")
    named = [component for kind, components in args.steps if kind == "auto" for component in components]
    twice = sorted({component for component in named if named.count(component) > 1})
    if twice:
        raise UsageError(f"--auto: component '{twice[0]}' is named twice")


def to_step(kind: str, spec):
    """The `rewrite.plan.Step` of an option's (kind, parsed text), but --auto's."""
    from sparkdedalus.rewrite.plan import Step
    if kind == "decouple":
        component, selectors, name = spec
        return Step("decouple", component, tuple(selectors), name)
    if kind == "partition":
        component, n, key = spec
        return Step("partition", component, partitions=n, key=key)
    return Step("coordinate")


def _apply(program, steps: list, force: bool, notes: list):
    """`steps` applied (`rewrite.plan.apply_plan`, every component in scope):
    a step that names what the program lacks is exit 2, one the rewrites
    refuse exit 1; --coordinate prints its notes on stderr too."""
    from sparkdedalus.rewrite.plan import StepError, apply_plan

    def report(step, applied):
        if step.kind == "coordinate":
            print("\n".join("sparkdedalus rewrite: " + note for note in applied), file=sys.stderr)
    try:
        program, applied = apply_plan(program, steps, force=force, report=report)
    except StepError as exc:
        raise (UsageError if exc.usage else UserError)(str(exc)) from None
    notes += applied
    return program


def _auto(program, components: tuple, n: int, notes: list):
    from sparkdedalus.rewrite import auto
    try:
        program, applied = auto.auto(program, list(components), n)
    except ValueError as exc:
        raise UsageError(f"--auto {','.join(components)}: {exc}") from None
    print("\n".join("sparkdedalus rewrite: " + note for note in applied), file=sys.stderr)
    notes += applied
    return program


def handle(args) -> int:
    from sparkdedalus.program import Program
    from sparkdedalus.rewrite.source import source_rules
    from sparkdedalus.rewrite.text import program_text
    if not args.steps:
        raise UsageError("nothing to do: give --decouple COMPONENT:RULES[:NEWNAME], --partition COMPONENT:N[:KEY], "
                         "--auto COMPONENT[,COMPONENT...] or --coordinate")
    _check_steps(args)
    program = Program.from_files(*args.files, strict=args.strict)
    notes, steps = [], []
    for kind, spec in args.steps:  # the steps of the plan, in order; an --auto decides its own on what they leave
        if kind != "auto":
            steps.append(to_step(kind, spec))
            continue
        program, steps = _apply(program, steps, args.force, notes), []
        program = _auto(program, spec, args.partitions or 4, notes)
    program = _apply(program, steps, args.force, notes)
    text = program_text(program, source_rules(program), header=["sparkdedalus rewrite: " + n for n in notes])
    if args.out:
        write_text(args.out, text)
    else:
        print(text, end="")
    return 0
