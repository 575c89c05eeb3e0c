"""What an observer sees of one run: the observed relations' facts per tick,
with the locations a rewrite introduced read as their home.

A location that ends with a suffix of a program's `// @home` directives is read
as its home (`home(L2, L)`, applied until none matches): the facts of a node a
rewrite split off are the original node's. Delays are drawn per logical
message: the location of a message is mapped the same way before its delay is
hashed, so a message both programs send is delayed alike.

>>> from sparkdedalus import Program
>>> from sparkdedalus.network import Network
>>> b = Program.parse('// @home "/copy"\\np(L, X)@next :- q(L, X); q("n/copy", 1)@1;')
>>> views(b, 2, Network(), ("p",))["p"]
{1: set(), 2: {('n', 1)}}
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.network import Network


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
    """A network whose delays and failures see locations mapped home (a
    capacity still bounds every node, a split-off one included)."""

    homes: tuple = ()

    def arrival(self, relation: str, row: tuple, src, send_tick: int) -> int | None:
        row = (home_of(row[0], self.homes), *row[1:])
        return super().arrival(relation, row, home_of(src, self.homes), send_tick)


def views(program, ticks: int, network: Network, relations) -> dict:
    """Run `program` for `ticks` ticks: relation -> (tick -> set of rows),
    for each of `relations`, locations mapped home."""
    from sparkdedalus.reference import run
    trace = run(program, ticks, MappedNetwork(network.delay, network.seed, network.omissions,
                                              network.crashes, network.capacity, homes=program.homes))
    return {name: {t: {(home_of(row[0], program.homes), *row[1:]) for row in trace.at(t)[name]}
                   for t in range(1, ticks + 1)} for name in relations}
