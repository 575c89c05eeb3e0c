"""The `seal<X..>` head (checks/seal.py): parsing and printing, the rules it
desugars into, errors at the seal, what it computes on the reference
evaluator, and partitioning it (rewrite/sealing.py)."""

from __future__ import annotations

import pytest

from frontend_helpers import errors
from sparkdedalus import Program
from sparkdedalus.analysis.explain import explain, report
from sparkdedalus.equivalence import compare
from sparkdedalus.network import Network, Uniform
from sparkdedalus.reference import run
from sparkdedalus.rewrite.partial_partition import partial_partition
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.rewrite.text import program_text
from sparkdedalus.shell.cli import main
from sparkdedalus.syntax.parser import parse_text
from sparkdedalus.syntax.printer import format_rule, format_unit

# The sender s holds values per key; asked at tick 2 for keys k1 (values 1, 2, 3) and k0
# (no values), it sends each batch to r. The receiver counts a batch (size) and keeps
# every size it ever saw (seen).
SEALED = """component sender {
    .persist v
    v(L, K, X) :- put(L, K, X);
    batch(D, K, seal<X>)@async :- ask(L, D, K), v(L, K, X);
}

component receiver {
    .persist seen
    size(L, K, count<X>) :- batch(L, K, X);
    seen(L, K, N) :- size(L, K, N);
}

put("s", "k1", 1)@1;
put("s", "k1", 2)@1;
put("s", "k1", 3)@1;
ask("s", "r", "k1")@2;
ask("s", "r", "k0")@2;
"""

# Written out by hand from the module docstring of checks/seal.py: the sender's rules stay
# in the sender, the receiver's (and its .persist) go to the component reading batch.
DESUGARED = {
    ("sender", "batch(D, K, X)@async :- ask(L, D, K), v(L, K, X);"),
    ("sender", "batchBatch(L, D, K, X) :- ask(L, D, K), v(L, K, X);"),
    ("sender", "batchCount(D, K, count<*>)@async :- batchBatch(L, D, K, X);"),
    ("sender", "batchCount(D, K, 0)@async :- ask(L, D, K), notin batchBatch(L, D, K, _);"),
    ("receiver", "batchReceived(D, K, count<*>) :- batch(D, K, X);"),
    ("receiver", "batchSealed(D, K, X) :- batch(D, K, X), batchCount(D, K, N), batchReceived(D, K, N);"),
    ("receiver", "size(L, K, count<X>) :- batchSealed(L, K, X);"),
}
PERSISTED = {"v": "sender", "seen": "receiver", "batch": "receiver", "batchCount": "receiver"}

# The same program without the seal: the receiver counts whatever has arrived.
UNSEALED = SEALED.replace("seal<X>", "X").replace(".persist seen", ".persist seen\n    .persist batch")

TICKS = 12  # uniform(1,4) delays: everything sent at tick 2 has arrived by tick 6
SEEDS = range(20)


def _rules(program) -> set:
    return {(s.component, format_rule(s.rule)) for s in source_rules(program)}


def test_seal_parses_and_prints_back():
    unit = parse_text(SEALED)
    assert format_unit(unit) == SEALED
    assert parse_text(format_unit(unit)) == unit
    seal = unit.statements[0].statements[2].head.args[-1]
    assert [v.name for v in seal.vars] == ["X"] and (seal.pos.line, seal.pos.col) == (4, 17)
    several = "p(D, K, seal<X, Y, Z>)@async :- q(L, D, K), r(L, X, Y, Z);\n"
    assert format_unit(parse_text(several.replace(", ", ","))) == several


def test_fmt_prints_the_sugar(tmp_path, capsys):
    src = tmp_path / "seal.ded"
    src.write_text(SEALED.replace("seal<X>", "seal< X >"))
    assert main(["fmt", str(src)]) == 0
    assert capsys.readouterr().out == SEALED


def test_the_seal_desugars_into_the_hand_written_rules():
    program = Program.parse(SEALED)
    user = {("sender", "v(L, K, X) :- put(L, K, X);"), ("receiver", "seen(L, K, N) :- size(L, K, N);")}
    assert _rules(program) == DESUGARED | user
    assert {r.head.name: r.component for r in program.rules if r.persistence} == PERSISTED
    # the same rules written out parse to the same program rules
    written = "\n".join(f"component {c} {{ {rule} }}" for c, rule in sorted(DESUGARED | user))
    persisted = "\n".join(f"component {c} {{ .persist {r} }}" for r, c in PERSISTED.items())
    assert _rules(Program.parse(written + "\n" + persisted)) == _rules(program)
    # the made relations are auxiliary (not default outputs); batchSealed is what r reads
    assert {n for n, r in program.relations.items() if r.auxiliary} == {"batchBatch", "batchCount", "batchReceived"}
    assert "batchSealed" in program.outputs and "batchCount" not in program.outputs


def test_explain_shows_the_desugared_rules():
    program = Program.parse(SEALED, file="s.ded")
    (entry,) = report(program)["sealed"]
    assert entry["relation"] == "batch" and entry["where"] == "s.ded:4:5"
    assert set(entry["rules"]) == {rule for _, rule in DESUGARED if "size" not in rule} \
        | {".persist batch", ".persist batchCount"}
    text = explain(program)
    assert "sealed batch (seal at s.ded:4:5) desugars into:\n  batch(D, K, X)@async :- ask(L, D, K), v(L, K, X);\n" \
        in text
    assert "batchCount(loc: string, c1: string, c2: long)  IDB, persisted, auxiliary: the number of values " \
           "of each batch of batch sealed at s.ded:4:5" in text
    assert report(Program.parse(UNSEALED))["sealed"] == []


def _seen(text: str, seed: int) -> tuple:
    trace = run(Program.parse(text), TICKS, Network(delay=Uniform(1, 4), seed=seed))
    sizes = {tuple(sorted(trace.at(t)["size"])) for t in range(1, TICKS + 1)}
    return tuple(sorted(trace.at(TICKS)["seen"])), sizes, trace


def test_a_batch_is_read_only_once_complete_under_random_delays():
    # Hand-checked: batch k1 holds 1, 2, 3, so r only ever sees size 3 (or nothing yet);
    # k0 is empty: it is announced with count 0, and size has no group for it.
    for seed in SEEDS:
        seen, sizes, trace = _seen(SEALED, seed)
        assert seen == (("r", "k1", 3),), seed
        assert sizes <= {(), (("r", "k1", 3),)}, seed
        assert set(trace.at(TICKS)["batchCount"]) == {("r", "k0", 0), ("r", "k1", 3)}
        assert set(trace.at(TICKS)["batchSealed"]) == {("r", "k1", 1), ("r", "k1", 2), ("r", "k1", 3)}
    # without the seal, r counts partial batches: what it saw depends on the delays
    unsealed = {_seen(UNSEALED, seed)[0] for seed in SEEDS}
    assert len(unsealed) >= 2 and any(("r", "k1", 1) in seen for seen in unsealed)
    assert all(("r", "k1", 3) in seen for seen in unsealed)


def test_with_fixed_delays_the_batch_is_sealed_one_tick_after_it_is_sent():
    # sent at tick 2, values and counts arrive at tick 3: sealed and counted at tick 3
    trace = run(Program.parse(SEALED), 4, Network())
    assert set(trace.at(2)["size"]) == set() and set(trace.at(3)["size"]) == {("r", "k1", 3)}


MISUSE = [
    ("p(D, seal<X>) :- q(L, D, X);", 1, 6, "needs an @async head"),
    ("p(D, seal<X>, seal<Y>)@async :- q(L, D, X, Y);", 1, 6, "at most one seal"),
    ("p(D, count<Y>, seal<X>)@async :- q(L, D, X, Y);", 1, 16, "cannot be combined with an aggregate"),
    ("p(seal<X>)@async :- q(L, X);", 1, 3, "location (first argument) cannot be sealed"),
    ("p(D, seal<X>, K)@async :- q(L, D, K, X);", 1, 6, "must be the last argument"),
    ("p(D, K + 1, seal<X>)@async :- q(L, D, K, X);", 1, 6, "must be variables or constants"),
    ("p(D, X, seal<X>)@async :- q(L, D, X);", 1, 6, "is both a batch key and sealed"),
    ("p(D, seal<X, X>)@async :- q(L, D, X);", 1, 14, "'X' is sealed twice"),
    ("p(D, seal<X>)@async :- q(L, D, X);", 1, 6, "must bind the location, the destination and the key"),
    ("p(D, K, seal<X>)@async :- a(L, D), q(L, K, X);", 1, 9, "(K unbound)"),
    ("p(D, seal<X>)@async :- a(L, D), q(L, X);\np(D, X)@async :- q(D, X);", 2, 1,
     "'p' is sealed at t.ded:1:1; no other rule may derive it"),
    ("p(D, seal<X>)@async :- a(L, D), q(L, X);\np(D, seal<X>)@async :- a(L, D), r(L, X);", 2, 1,
     "'p' is already sealed at t.ded:1:1"),
    ("p(D, seal<X>)@async :- a(L, D), q(L, X);\npCount(L, 1) :- a(L, L);", 2, 1,
     "'pCount' is a relation the seal at t.ded:1:1 makes; use another name"),
    ("p(D, seal<X>)@async :- a(L, D), q(L, X);\np(\"a\", 1);", 2, 1, "cannot have facts or inputs"),
    ("p(\"a\", seal<X>);", 1, 8, "a fact cannot be sealed"),
    ("component a { p(D, seal<X>)@async :- a(L, D), q(L, X); }\ncomponent b { r(L, X) :- p(L, X); }\n"
     "component c { s(L, X) :- p(L, X); }", 1, 15, "is read in components b, c; its receiver must be one"),
]


@pytest.mark.parametrize("text,line,col,message", MISUSE, ids=[m[3] for m in MISUSE])
def test_misuse_is_an_error_at_the_seal(text, line, col, message):
    found = errors(text)
    assert any((l, c) == (line, col) and message in m for l, c, m in found), found


def test_a_well_formed_seal_has_no_error():
    assert errors("p(D, seal<X>)@async :- a(L, D), q(L, X);\nr(L, X) :- p(L, X);") == []
    assert errors("p(D, seal<X>)@async :- q(L, D, _), q(L, D, X);") == []


# ScalablePaxos' sealed log (tests/test_rewrite_partial_partition.py, SEALED) with the seal
# written as sugar: p2 prepares ballot 2 at tick 40 and gets the log of 3 entries.
PAXOS = """.output p1bLogSealed
.output p1bLogSize
.output log

component proposer {
    p1a(A, P, B)@async :- prepare(P, A, B);
    p2a(A, P, S, B, V)@async :- propose(P, A, S, B, V);
    p1bLogSize(P, A, B, count<*>) :- p1bLog(P, A, B, S, Bl, V);
}

component acceptor {
    .persist ballots
    .persist log
    ballots(A, B) :- p1a(A, P, B);
    maxBallot(A, max<B>) :- ballots(A, B);
    log(A, S, B, V) :- p2a(A, P, S, B, V), maxBallot(A, M), B >= M;
    p1bLog(P, A, B, seal<S, Bl, V>)@async :- p1a(A, P, B), log(A, S, Bl, V);
}

prepare("p1", "a", 1)@1;
propose("p1", "a", "s1", 1, "x")@20;
propose("p1", "a", "s2", 1, "y")@20;
propose("p1", "a", "s3", 1, "z")@20;
prepare("p2", "a", 2)@40;
"""
RANDOM = Network.parse("delay=uniform(1,4)")


def _desugared_paxos(program) -> str:
    rules = source_rules(program)
    persisted = {r.head.name: r.component for r in program.rules if r.persistence}
    return program_text(program, rules, persisted=persisted)


def test_the_sugar_partitions_as_its_desugared_program():
    from sparkdedalus.rewrite import partial_partition as module
    sugared = Program.parse(PAXOS)
    desugared = Program.parse(_desugared_paxos(sugared))
    assert "seal<" not in _desugared_paxos(sugared)
    policy = module.policy(sugared, "acceptor")
    assert policy.method == "partial" and policy.keys() == {"p2a": "c2", "log": "c1"}
    a, b = partial_partition(sugared, "acceptor", 4), partial_partition(desugared, "acceptor", 4)
    text = program_text(a, source_rules(a))
    assert text == program_text(b, source_rules(b))
    assert "p1bLogCountPart(P, A, B, A2, count<*>)@async :- p1bLogBatch(A2, P, A, B, S, Bl, V), home(A2, A);" in text
    assert "p1bLogParts(L, K1, K2, M), M == 4;" in text
    trace = run(a, 80, RANDOM)
    assert set(trace.at(80)["p1bLogSize"]) == {("p2", "a", 2, 3)}
    assert len({row[0] for row in trace.at(80)["log"]}) >= 2  # the log is spread
    assert compare(sugared, a, 80, 5, RANDOM).difference is None


def test_cli_rewrite_partitions_the_sugar(tmp_path, capsys):
    src = tmp_path / "paxos.ded"
    src.write_text(PAXOS)
    assert main(["rewrite", str(src), "--partition", "acceptor:2"]) == 0
    out = capsys.readouterr().out
    assert "// sparkdedalus rewrite: acceptor seals p1bLog per partition (B.4)\n" in out


@pytest.mark.spark
def test_the_spark_engine_runs_the_sugar_as_the_reference(spark):
    from engine_helpers import differences
    program = Program.parse(SEALED)
    assert differences(spark, program, 8, network=Network(delay=Uniform(1, 4), seed=3)) == []


def test_a_rewritten_program_keeps_the_seal_marks():
    # issue 31: a rewrite kept the rules a seal head stands for but no longer marked them
    from sparkdedalus.rewrite import Target, decouple_first
    from sparkdedalus.rewrite.decouple import select
    from sparkdedalus.rewrite.source import assemble, source_rules
    program = Program.parse(SEALED)
    marked = sorted((r.head.name, r.persistence) for r in program.rules if r.sealed == "batch")
    assert ("batch", True) in marked and ("batchSealed", False) in marked
    same = assemble(program, source_rules(program))
    assert sorted((r.head.name, r.persistence) for r in same.rules if r.sealed == "batch") == marked
    moved, _ = decouple_first(program, Target("receiver", select(program, "receiver", ["seen"]), "log"))
    assert sorted((r.head.name, r.persistence) for r in moved.rules if r.sealed == "batch") == marked
    assert report(moved)["sealed"][0]["relation"] == "batch"
