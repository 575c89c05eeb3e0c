"""Lineage-driven fault injection on the reference evaluator: `faults(...,
search="ldfi")` and `sparkdedalus faults --search ldfi` (docs/faults.md).

Run the failure-free scenario with provenance; ask the lineage (`faults/ldfi.py`)
for the minimal failure sets that break every derivation of some `post` fact
whose `pre` fact holds; run them, fewest failures first, adding each run's
lineage; ask again; stop at the first counterexample or when no candidate is
left that was not run.

>>> from sparkdedalus import Program
>>> from sparkdedalus.faults.space import Space
>>> program = Program.parse('''
...     .persist log
...     log(M, P)@async :- log(N, P), node(N, M);
...     pre(M, P) :- node(N, M), bcast(N, P)@1;
...     post(M, P) :- log(M, P);
...     log("a", "hi")@1; node("a", "b"); bcast("a", "hi")@1;''')
>>> checked = search(program, Space(("a", "b"), eot=3, eff=2))  # a re-sends at 2: only tick 1 omissible
>>> checked.executions, checked.counterexamples
(1, [])
>>> checked = search(program, Space(("a", "b"), eot=3, eff=3))  # the copies sent at 1 and 2 both lost
>>> checked.executions, checked.counterexamples[0].scenario
(2, Scenario(omissions=(('a', 'b', 1), ('a', 'b', 2)), crashes=()))
>>> checked = search(program, Space(("a", "b"), eot=3, eff=2, crashes=1))
>>> checked.executions, checked.counterexamples[0].to_json()
(2, {'omissions': [], 'crashes': [['a', 1]], 'missing': [['b', 'hi']]})
"""

from __future__ import annotations

from sparkdedalus.faults.ldfi import Lineage, search as ldfi_search
from sparkdedalus.faults.space import Space
from sparkdedalus.faults.verdict import POST, PRE, Checked, Counterexample, missing
from sparkdedalus.inputs import read_inputs
from sparkdedalus.network import Network
from sparkdedalus.reference.evaluator import run
from sparkdedalus.reference.why import blocked, joined


def search(program, space: Space, inputs_dir: str | None = None, progress=None,
           network: Network = Network()) -> Checked:
    """LDFI over `space` (see the module doc, `faults.ldfi.search` the loop),
    every scenario run with `scenario.network(network)`, one at a time.
    `progress(executions, found)` is called after each run. The result's
    `scenarios` is the size of the space, `executions` the runs made."""
    locations = {fact.row[0] for fact in program.facts} | {row[0] for _, _, row in read_inputs(program, inputs_dir)}
    lineage, executions = Lineage(space, locations), []

    def evaluate(batch: list):
        ran = []
        for scenario in batch:
            # a run earlier in the batch may have shown another derivation this scenario does not break
            if lineage.runs and not lineage.breaks(scenario):
                continue
            ran.append(scenario)
            executions.append(scenario)
            trace = run(program, ticks=space.eot, network=scenario.network(network), inputs_dir=inputs_dir,
                        provenance=True)
            pre = trace.relation(PRE)
            lost = missing(pre, trace.relation(POST))
            if progress is not None:
                progress(len(executions), int(bool(lost)))
            if lost:
                return ran, [Counterexample(scenario, lost)]
            lineage.add_run(trace, pre, blocked, joined)
        return ran, []

    return ldfi_search(space, lineage, evaluate)
