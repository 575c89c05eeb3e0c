"""`sparkdedalus equiv A.ded B.ded --ticks N [--mode strict|refinement] [--seeds K]
[--observe R1,R2] [--network SPEC] [--state] [--format text|json]`: do two programs show an
outside observer the same facts? (docs/rewrites.md)

The comparison is the library's (`sparkdedalus.equivalence`): this module
parses the options and prints. `--state` also compares the persisted state
both keep at tick N under garbage collection (`equivalence.state`). Exit 0:
equivalent (strict) or refines (refinement), and with `--state` B keeps no
more facts than A; 1: different, or B keeps more; 2: usage errors.
"""

from __future__ import annotations

import json

from sparkdedalus.shell.check import add_hidden_strict
from sparkdedalus.shell.options import integer, names, network
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.printer import format_atom

DEFAULT_NETWORK = "delay=uniform(1,4)"
FORMATS = ("text", "json")
MODES = ("strict", "refinement")


def _facts(relation: str, rows) -> str:
    return ", ".join(format_atom(ast.Atom(relation, tuple(ast.Const(v) for v in row))) for row in rows) or "-"


def _observed(result) -> str:
    return f"observed: {result.observed.describe()}; compared: {', '.join(result.observed.relations)}"


def render_strict(result, name_a: str, name_b: str) -> str:
    if result.difference is None:
        return (f"equivalent: no difference in {len(result.seeds)} seed(s) over {result.ticks} tick(s) "
                f"({result.network}); {_observed(result)}")
    d = result.difference
    return "\n".join([f"different: seed {d.seed}, relation {d.relation}, {d.view} (first at tick {d.tick})",
                      f"  only in {name_a}: {_facts(d.relation, d.only_a)}",
                      f"  only in {name_b}: {_facts(d.relation, d.only_b)}", _observed(result)])


def render_refinement(result, name_a: str, name_b: str) -> str:
    counts = (f"{result.outcomes_a} outcome(s) of {name_a}, {result.outcomes_b} of {name_b} in "
              f"{len(result.seeds)} seed(s) each over {result.ticks} tick(s) ({result.network})")
    if result.refines:
        return f"refines: every outcome of {name_b} is one of {name_a}'s: {counts}; {_observed(result)}"
    lines = [f"different: {result.unseen} outcome(s) of {name_b} that {name_a} never showed: {counts}"]
    for new in result.new:
        lines.append(f"  {name_b} under seed {new.seed_b}, against {name_a}'s closest outcome (seed {new.seed_a}):")
        for relation, view, only_a, only_b in new.differences:
            lines.append(f"    {relation} {view}: only in {name_a}: {_facts(relation, only_a)}; "
                         f"only in {name_b}: {_facts(relation, only_b)}")
    lines.append(_observed(result))
    return "\n".join(lines)


def render_state(sizes, name_a: str, name_b: str) -> str:
    def kept(relations: dict) -> str:
        return ", ".join(f"{name} {n}" for name, n in relations.items()) or "none"
    verdict = f"{name_b} keeps more facts than {name_a}" if sizes.grows else f"{name_b} keeps no more than {name_a}"
    return "\n".join([f"persisted state at tick {sizes.ticks} with --gc on, seed {sizes.seed} (of {len(sizes.seeds)}; "
                      f"{sizes.network}): {verdict}",
                      f"  {name_a}: {sizes.total_a} fact(s): {kept(sizes.a)}",
                      f"  {name_b}: {sizes.total_b} fact(s): {kept(sizes.b)}"])


def add_parser(commands) -> None:
    parser = commands.add_parser("equiv", help="run two programs under many delay seeds and compare what they show")
    parser.add_argument("a", metavar="A.ded")
    parser.add_argument("b", metavar="B.ded")
    parser.add_argument("--ticks", metavar="N", required=True, type=integer(minimum=1), help="run ticks 1..N")
    parser.add_argument("--mode", default="strict", choices=MODES,
                        help="strict (default): seed by seed; refinement: every outcome of B is one of A's")
    parser.add_argument("--seeds", metavar="K", default=20, type=integer(minimum=1), help="number of seeds (default 20)")
    parser.add_argument("--observe", metavar="R1,R2", default=(), type=names,
                        help="the relations compared (default: the .output relations of A, else every shared one)")
    parser.add_argument("--network", metavar="SPEC", default=DEFAULT_NETWORK, type=network,
                        help=f"delay model and failures (default {DEFAULT_NETWORK}); seed= is the first seed")
    parser.add_argument("--state", action="store_true",
                        help="also compare the persisted state at tick N with --gc on; exit 1 when B keeps more")
    parser.add_argument("--format", default="text", choices=FORMATS, help="text (default) or json")
    add_hidden_strict(parser)
    parser.set_defaults(handler=handle)


def handle(args) -> int:
    from sparkdedalus.equivalence import compare, refine
    from sparkdedalus.program import Program
    a, b = Program.from_files(args.a, strict=args.strict), Program.from_files(args.b, strict=args.strict)
    if args.mode == "strict":
        result = compare(a, b, args.ticks, args.seeds, args.network, args.observe)
        same, render = result.difference is None, render_strict
    else:
        result = refine(a, b, args.ticks, args.seeds, args.network, args.observe)
        same, render = result.refines, render_refinement
    sizes = None
    if args.state:
        from sparkdedalus.equivalence.state import state_sizes
        sizes = state_sizes(a, b, args.ticks, args.seeds, args.network)
    if args.format == "json":
        found = result.to_json()
        if sizes is not None:
            found["state"] = sizes.to_json()
        print(json.dumps(found, indent=2))
    else:
        print(render(result, args.a, args.b))
        if sizes is not None:
            print(render_state(sizes, args.a, args.b))
    return 0 if same and not (sizes and sizes.grows) else 1
