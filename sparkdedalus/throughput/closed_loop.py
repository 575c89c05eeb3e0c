"""The closed-loop clients of a benchmark program (docs/protocols.md).

A closed-loop program names each client by a fact `client(C, SERVER, K)`: the
client's node C, the node it sends its commands to, its number K (1, 2, ..).
Each client records the commands answered in `committed(C, X)` (persisted),
and sends its next command only when the previous one is answered.
`client_rows` gives N clients, c1 .. cN, all sending to the server of the
program's first `client` fact, as `edb=` rows of the reference evaluator
(they hold at every tick, beside the program's own facts): the clients'
component is outside every rewrite, so the rows fit every rewritten program.

>>> from sparkdedalus import Program
>>> p = Program.parse('committed(C, X) :- done(C, X); client("c1", "leader", 1);')
>>> client_rows(p, 3)
{'client': [('c1', 'leader', 1), ('c2', 'leader', 2), ('c3', 'leader', 3)]}
"""

from __future__ import annotations

#: the relation naming the clients, and the one recording their answered commands
CLIENT, COMMITTED = "client", "committed"


def client_rows(program, n: int) -> dict:
    """`edb=` rows for `n` clients of `program`'s server; a `ValueError`
    when the program has no `client(C, SERVER, K)` fact or n < 1."""
    facts = [f.row for f in program.facts if f.atom.name == CLIENT and len(f.row) == 3]
    if not facts:
        raise ValueError(f"not a closed-loop program: no fact {CLIENT}(C, SERVER, K) names a client "
                         f"(docs/protocols.md)")
    if COMMITTED not in program.relations:
        raise ValueError(f"not a closed-loop program: no relation {COMMITTED}(C, X) records answered commands")
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"the number of clients must be an integer >= 1, not {n!r}")
    server = facts[0][1]
    return {CLIENT: [(f"c{k}", server, k) for k in range(1, n + 1)]}
