"""benchmarks/programs/ramp_bench.ded (RAMP-style transactions) on the reference
evaluator: it passes the strict check at its stated size; the tiny run its header
derives by hand holds tick by tick; at 50 transactions every write commits and is
acknowledged and every read is read-atomic; and a variant without the second read
round returns the fractured read the check must catch. No Spark."""

from __future__ import annotations

import doctest

import pytest

from reference_helpers import rows
from sparkdedalus import Program
from sparkdedalus.reference import run
from sparkdedalus.shell.cli import main
from test_benchmarks_smoke import REPO, benchmark_module

RAMP = str(REPO / "benchmarks" / "programs" / "ramp_bench.ded")
rw = benchmark_module("ramp_workload")

#: the header's tiny workload: t1 and t2 write x (on p1) and y (on p2, one tick late to
#: install a commit); r1 reads both at tick 5
NODES = ("co", "c1", "c2")
TINY = {"client": [("c1", "co"), ("c2", "co")],
        "placement": [(n, k, p) for n in NODES for k, p in (("x", "p1"), ("y", "p2"))],
        "apply_lag": [("p1", 0), ("p2", 1)],
        "write_at": [("c1", "t1", 1), ("c1", "t2", 2)],
        "write_item": [("c1", "t1", "x", "x1"), ("c1", "t1", "y", "y1"),
                       ("c1", "t2", "x", "x2"), ("c1", "t2", "y", "y2")],
        "read_at": [("c2", "r1", 5)],
        "read_item": [("c2", "r1", "x"), ("c2", "r1", "y")]}

#: (tick, relation, facts that hold then), as the header derives them
TINY_EXPECTED = [
    (2, "stamp", {("co", "c1", "t1", 1)}),
    (3, "version", {("p1", "x", 1, "x1"), ("p2", "y", 1, "y1")}),
    (3, "last", {("co", 1)}),
    (3, "stamp", {("co", "c1", "t2", 2)}),
    (4, "nacks", {("co", "t1", 2)}),
    (5, "committed", {("p1", "x", 1)}),
    (5, "latest", {("p1", "x", 1)}),
    (5, "installing", {("p1", "co", "t1", "x", 1, 5), ("p2", "co", "t1", "y", 1, 6)}),
    (6, "latest", {("p1", "x", 2), ("p2", "y", 1)}),
    (7, "round1", {("c2", "r1")}),
    (7, "missing", {("c2", "r1", "y", 2)}),
    (7, "result", {("c2", "r1", "x", 2, "x2")}),
    (7, "latest", {("p1", "x", 2), ("p2", "y", 2)}),
    (8, "wdone", {("c1", "t1", 1)}),
    (8, "fetch", {("p2", "c2", "r1", "y", 2)}),
    (9, "result", {("c2", "r1", "x", 2, "x2"), ("c2", "r1", "y", 2, "y2")}),
    (9, "read_done", {("c2", "r1")}),
    (9, "wdone", {("c1", "t1", 1), ("c1", "t2", 2)}),
]

#: no second round: no fetch, every round-1 version is the result
WITHOUT_ROUND_2 = [("fetch(P, Cl, R, K, Ts)@async :- missing(Cl, R, K, Ts), placement(Cl, K, P);", ""),
                   (", notin missing(Cl, R, K, _);", ";")]


def ramp(*replacements: tuple[str, str]) -> Program:
    """The program, with each (old, new) replaced once in its text (old must be there)."""
    text = open(RAMP).read()
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return Program.parse(text, RAMP, strict=True)


def written(edb: dict, trace) -> dict:
    """{timestamp: keys written} of the transactions `trace` assigned a timestamp."""
    keys = {}
    for _, x, k, _ in edb["write_item"]:
        keys.setdefault(x, set()).add(k)
    return {ts: keys[x] for _, _, x, ts in rows(trace, "assigned", trace.ticks)}


def test_strict_check_and_size():
    assert main(["check", "--strict", RAMP]) == 0
    program = Program.from_files(RAMP, strict=True)
    edb = {"client", "placement", "apply_lag", "write_at", "write_item", "read_at", "read_item"}
    assert all("never defined" in w.message for w in program.warnings)  # only the EDB relations
    assert program.edb == edb and not program.facts  # the workload is all EDB
    assert 40 <= len(program.rules) <= 50 and 30 <= len(program.relations) <= 40
    shapes = {r.delivery for r in program.rules} | {"persist" for r in program.rules if r.persistence}
    assert {"now", "next", "async", "persist"} <= shapes
    assert any(r.aggregates for r in program.rules) and any(r.negated_atoms for r in program.rules)


def test_tiny_workload_as_the_header_derives():
    trace = run(ramp(), 10, edb=TINY)
    for tick, relation, facts in TINY_EXPECTED:
        assert rows(trace, relation, tick) == facts, (tick, relation)
    assert not rows(trace, "latest", 4) and not rows(trace, "read_done", 8)  # nothing earlier
    assert rw.fractured_reads(written(TINY, trace), rows(trace, "result", 10)) == []


def test_without_the_second_round_the_tiny_read_is_fractured():
    trace = run(ramp(*WITHOUT_ROUND_2), 10, edb=TINY)
    results = rows(trace, "result", 10)
    assert results == {("c2", "r1", "x", 2, "x2"), ("c2", "r1", "y", 1, "y1")}  # x from t2, y from t1
    assert rw.fractured_reads(written(TINY, trace), results) == [("c2", "r1", "x", 2, "y", 1)]


@pytest.mark.parametrize("seed", [7, 8])
def test_fifty_transactions_commit_and_reads_are_read_atomic(seed):
    """Reads race with commits here: without round 2 some read of each seed is fractured."""
    edb = rw.ramp_edb(transactions=50, keys=12, partitions=3, reads=30, seed=seed)
    trace = run(ramp(), rw.ramp_ticks(edb), edb=edb)
    last = trace.ticks
    assigned = {x: ts for _, _, x, ts in rows(trace, "assigned", last)}
    assert sorted(assigned.values()) == list(range(1, 51))  # one sequence number each
    assert rows(trace, "wdone", last) == {(c, x, assigned[x]) for c, x, _ in edb["write_at"]}
    assert rows(trace, "read_done", last) == {(c, r) for c, r, _ in edb["read_at"]}
    value = {(assigned[x], k): v for _, x, k, v in edb["write_item"]} | {(0, k): "" for _, _, k in edb["read_item"]}
    results = rows(trace, "result", last)
    assert {(c, r, k) for c, r, k, _, _ in results} == set(edb["read_item"])
    assert all(value[ts, k] == v for _, _, k, ts, v in results)
    assert rw.fractured_reads(written(edb, trace), results) == []
    assert any(rows(trace, "fetch", t) for t in range(1, last + 1))  # some read needed round 2
    broken = run(ramp(*WITHOUT_ROUND_2), last, edb=edb)  # and would be fractured without it
    assert rw.fractured_reads(written(edb, broken), rows(broken, "result", last))


def test_workload_builder_examples():
    assert doctest.testmod(rw).failed == 0
