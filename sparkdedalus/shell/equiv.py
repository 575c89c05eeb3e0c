"""`sparkdedalus equiv A.ded B.ded --ticks N --seeds K [--network SPEC] [--format text|json]`:
do two programs show an outside observer the same facts? (docs/rewrites.md)

Both run on the reference evaluator under seeds S..S+K-1 of the delay model
(default `delay=uniform(1,4)`, S the spec's seed, 0 by default). Compared: the
`.output` relations either program declares, or, when neither declares any,
every relation both have; per relation, the set of its facts over ticks 1..N
and its facts at tick N. A location that ends with a suffix of a program's
`// @home` directives is read as its home (`home(L2, L)`, applied until none
matches): the facts of a node a rewrite split off are the original node's.
Delays are drawn per logical message: the location of a message is mapped the
same way before its delay is hashed, so a message both programs send is
delayed alike, and the difference left is the rewrite's own (extra hops).
Exit 0: no seed shows a difference; 1: the first difference (seed, relation,
tick, facts); 2: usage errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from sparkdedalus.errors import UsageError
from sparkdedalus.network import Network
from sparkdedalus.output import sort_key
from sparkdedalus.shell.check import add_hidden_strict
from sparkdedalus.shell.options import integer, network
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.printer import format_atom

DEFAULT_NETWORK = "delay=uniform(1,4)"
FORMATS = ("text", "json")


def home_of(value, homes: tuple):
    """`value` with the suffixes in `homes` stripped while one matches."""
    while isinstance(value, str):
        suffix = next((s for s in homes if value.endswith(s) and len(value) > len(s)), None)
        if suffix is None:
            break
        value = value[:-len(suffix)]
    return value


@dataclass(frozen=True, eq=False)
class MappedNetwork(Network):
    """A network whose delays and failures see locations mapped home."""

    homes: tuple = ()

    def arrival(self, relation: str, row: tuple, src, send_tick: int) -> int | None:
        row = (home_of(row[0], self.homes), *row[1:])
        return super().arrival(relation, row, home_of(src, self.homes), send_tick)


@dataclass(frozen=True)
class Difference:
    seed: int
    relation: str
    view: str  # "over all ticks" or "at tick N"
    tick: int  # the first tick at which a differing fact holds
    only_a: tuple  # rows, sorted
    only_b: tuple

    def to_json(self) -> dict:
        return {"seed": self.seed, "relation": self.relation, "view": self.view, "tick": self.tick,
                "only_a": [list(r) for r in self.only_a], "only_b": [list(r) for r in self.only_b]}


@dataclass(frozen=True)
class Comparison:
    relations: tuple
    ticks: int
    seeds: tuple
    network: str
    difference: Difference | None

    def to_json(self) -> dict:
        return {"equivalent": self.difference is None, "relations": list(self.relations), "ticks": self.ticks,
                "seeds": list(self.seeds), "network": self.network,
                "difference": None if self.difference is None else self.difference.to_json()}


def compared_relations(a, b) -> tuple:
    declared = tuple(dict.fromkeys(a.declared_outputs + b.declared_outputs))
    if not declared:
        return tuple(sorted(n for n, r in a.relations.items() if n in b.relations and not r.auxiliary))
    for name in declared:
        for label, program in (("A", a), ("B", b)):
            if name not in program.relations:
                raise UsageError(f"output relation '{name}' is not a relation of program {label}")
    return tuple(sorted(declared))


def _views(program, ticks: int, network: Network, relations) -> dict:
    """relation -> (tick -> set of rows), locations mapped home."""
    from sparkdedalus.reference import run
    trace = run(program, ticks, MappedNetwork(network.delay, network.seed, network.omissions,
                                              network.crashes, program.homes))
    return {name: {t: {(home_of(row[0], program.homes), *row[1:]) for row in trace.at(t)[name]}
                   for t in range(1, ticks + 1)} for name in relations}


def _first_tick(rows: set, *histories) -> int:
    return min(t for history in histories for t, held in history.items() if held & rows)


def compare(a, b, ticks: int, seeds: int, network: Network) -> Comparison:
    """Run `a` and `b` (Programs) under `seeds` seeds from `network.seed`;
    the first difference, if any."""
    relations = compared_relations(a, b)
    seed_list = tuple(range(network.seed, network.seed + seeds))
    for seed in seed_list:
        net = replace(network, seed=seed)
        va, vb = _views(a, ticks, net, relations), _views(b, ticks, net, relations)
        for name in relations:
            ha, hb = va[name], vb[name]
            views = (("over all ticks", set().union(*ha.values()), set().union(*hb.values())),
                     (f"at tick {ticks}", ha[ticks], hb[ticks]))
            for view, sa, sb in views:
                if sa != sb:
                    tick = _first_tick(sa ^ sb, ha, hb) if view == "over all ticks" else ticks
                    diff = Difference(seed, name, view, tick, tuple(sorted(sa - sb, key=sort_key)),
                                      tuple(sorted(sb - sa, key=sort_key)))
                    return Comparison(relations, ticks, seed_list, network.spec(), diff)
    return Comparison(relations, ticks, seed_list, network.spec(), None)


def render(result: Comparison, name_a: str, name_b: str) -> str:
    if result.difference is None:
        return (f"equivalent: no difference in {len(result.seeds)} seed(s) over {result.ticks} tick(s) "
                f"({result.network}); compared: {', '.join(result.relations)}")
    d = result.difference
    lines = [f"different: seed {d.seed}, relation {d.relation}, {d.view} (first at tick {d.tick})"]
    for label, rows in ((name_a, d.only_a), (name_b, d.only_b)):
        facts = ", ".join(format_atom(ast.Atom(d.relation, tuple(ast.Const(v) for v in row)))
                          for row in rows) or "-"
        lines.append(f"  only in {label}: {facts}")
    return "\n".join(lines)


def add_parser(commands) -> None:
    parser = commands.add_parser("equiv", help="run two programs under many delay seeds and compare their outputs")
    parser.add_argument("a", metavar="A.ded")
    parser.add_argument("b", metavar="B.ded")
    parser.add_argument("--ticks", metavar="N", required=True, type=integer(minimum=1), help="run ticks 1..N")
    parser.add_argument("--seeds", metavar="K", default=20, type=integer(minimum=1), help="number of seeds (default 20)")
    parser.add_argument("--network", metavar="SPEC", default=DEFAULT_NETWORK, type=network,
                        help=f"delay model and failures (default {DEFAULT_NETWORK}); seed= is the first seed")
    parser.add_argument("--format", default="text", choices=FORMATS, help="text (default) or json")
    add_hidden_strict(parser)
    parser.set_defaults(handler=handle)


def handle(args) -> int:
    from sparkdedalus.program import Program
    a, b = Program.from_files(args.a, strict=args.strict), Program.from_files(args.b, strict=args.strict)
    result = compare(a, b, args.ticks, args.seeds, args.network)
    print(json.dumps(result.to_json(), indent=2) if args.format == "json" else render(result, args.a, args.b))
    return 0 if result.difference is None else 1
