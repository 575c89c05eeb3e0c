"""Fault scenarios one by one on the reference evaluator: the oracle of the
batched Spark evaluation (`Engine.faults`) and `sparkdedalus faults --engine
reference`. Each scenario is one run to EOT with `scenario.network(network)`; it is a
counterexample when a `pre` fact at EOT has no equal `post` fact (docs/faults.md).
`search="ldfi"` runs only the scenarios the lineage of the runs points to
(`reference/ldfi.py`); "auto" (the default) enumerates spaces of at most 10,000.

>>> from sparkdedalus import Program
>>> program = Program.parse('''
...     .persist log
...     log(M, P)@async :- log(N, P), node(N, M);
...     pre(M, P) :- node(N, M), bcast(N, P)@1;
...     post(M, P) :- log(M, P);
...     log("a", "hi")@1; node("a", "b"); bcast("a", "hi")@1;''')
>>> checked = faults(program, nodes=("a", "b"), eot=3, eff=2)  # omit a>b@1, b>a@1 or not
>>> checked.scenarios, checked.counterexamples
(4, [])
>>> checked = faults(program, nodes=("a", "b"), eot=3, eff=2, crashes=1)  # 4 x (1 + 2 x 3)
>>> checked.scenarios, checked.counterexamples[0].to_json()
(28, {'omissions': [], 'crashes': [['a', 1]], 'missing': [['b', 'hi']]})
>>> checked = faults(program, nodes=("a", "b"), eot=3, eff=2, crashes=1, search="ldfi")
>>> checked.scenarios, checked.executions, checked.counterexamples[0].to_json()
(28, 2, {'omissions': [], 'crashes': [['a', 1]], 'missing': [['b', 'hi']]})
"""

from __future__ import annotations

from sparkdedalus.faults.space import Space, resolve
from sparkdedalus.faults.verdict import POST, PRE, Checked, Counterexample, missing, smallest_first
from sparkdedalus.network import Network
from sparkdedalus.reference.evaluator import run
from sparkdedalus.reference.ldfi import search as ldfi


def faults(program, nodes, eot: int, eff: int, crashes: int = 0, sample: int | None = None, seed: int = 0,
           inputs_dir: str | None = None, progress=None, search: str = "auto",
           network: Network = Network()) -> Checked:
    """Run every scenario of `Space(nodes, eot, eff, crashes)` (or `sample` of
    them drawn with `seed`) to tick `eot`, or with `search="ldfi"` those LDFI
    picks (`faults.space.resolve` decides "auto"; ValueError for an unknown
    search, or ldfi with a sample or with a network it refuses). `progress(done,
    found)` is called after each scenario with the counterexamples found so
    far. Every scenario runs with `scenario.network(network)`: `network`'s
    delay, seed, capacity and failures with the scenario's failures added."""
    space = Space(tuple(nodes), eot, eff, crashes)
    if resolve(search, space, sample, network) == "ldfi":
        return ldfi(program, space, inputs_dir, progress, network)
    scenarios = space if sample is None else space.sample(sample, seed)
    found, done = [], 0
    for scenario in scenarios:
        trace = run(program, ticks=eot, network=scenario.network(network), inputs_dir=inputs_dir)
        lost = missing(trace.relation(PRE), trace.relation(POST))
        if lost:
            found.append(Counterexample(scenario, lost))
        done += 1
        if progress is not None:
            progress(done, len(found))
    return Checked(done, smallest_first(found), executions=done)
