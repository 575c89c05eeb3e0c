"""Shared helpers for the reference evaluator's tests. Every expected fact in
these tests is derived by hand from docs/semantics.md and the examples'
comments, never copied from the evaluator's output."""

from __future__ import annotations

import json
import os
import textwrap

from sparkdedalus import Program
from sparkdedalus.reference import Trace, run

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples")

FAULT_EXAMPLES = os.path.join(EXAMPLES, "faults")
ABC = ("a", "b", "c")


def faults_json(capsys, name, *options):
    """(exit code, json output) of `faults examples/faults/NAME --engine reference --format json`."""
    from sparkdedalus.shell import cli

    code = cli.main(["faults", os.path.join(FAULT_EXAMPLES, name), "--engine", "reference", "--format", "json",
                     "--quiet", *options])
    return code, json.loads(capsys.readouterr().out)


def spec(found: dict) -> str:
    """The `--network` spec of a counterexample's JSON."""
    return ",".join([f"omit={a}>{b}@{t}" for a, b, t in found["omissions"]]
                    + [f"crash={n}@{t}" for n, t in found["crashes"]])


def broken(program, eot: int, network_spec: str) -> set:
    """The `pre` rows without their `post` at EOT in a run with that network."""
    from sparkdedalus.faults.verdict import POST, PRE
    from sparkdedalus.network import Network

    trace = run(program, ticks=eot, network=Network.parse(network_spec))
    return set(trace.relation(PRE, eot)) - set(trace.relation(POST, eot))


#: log in examples/broadcast.ded from tick 4 on (default network), from its comments.
BROADCAST_FINAL = frozenset({("a", "hi"), ("b", "hi"), ("c", "hi"), ("d", "hi"), ("a", "yo"), ("b", "yo"),
                             ("c", "yo"), ("a", "bye"), ("b", "bye"), ("c", "bye"), ("d", "bye")})


def example(name: str) -> Program:
    return Program.from_files(os.path.join(EXAMPLES, name))


def run_example(name: str, ticks: int, **options) -> Trace:
    return run(example(name), ticks=ticks, **options)


def run_text(text: str, ticks: int, **options) -> Trace:
    return run(Program.parse(textwrap.dedent(text)), ticks=ticks, **options)


def rows(trace: Trace, relation: str, tick: int) -> set:
    """The facts of `relation` at `tick`, as a plain set of tuples."""
    return set(trace.relation(relation, tick=tick))


def history(trace: Trace, relation: str) -> dict:
    """tick -> facts of `relation`, for every tick of the run."""
    return {t: rows(trace, relation, t) for t in range(1, trace.ticks + 1)}

