"""Partial partitioning with coordination (scaling paper, 4.3 and B.3): a
Paxos acceptor whose ballot is replicated and whose log is partitioned by slot
(ScalablePaxos of 5.2, without its sealing), and a key-value store whose
limit and grants are replicated: the policy is partial, the rewritten program
checks, and `equiv` sees no difference over 20 random-delay seeds. Removing
the freeze, or sending the replicated input to one partition only, shows a
difference; the freeze's timeline is derived by hand under one-tick delays.
Sealing (B.4): the acceptor's log sent to a proposer as a sealed batch, each
partition sending its fraction; a receiver that seals early shows a difference."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkdedalus import Program
from sparkdedalus.analysis.partitioning import distribution_policy
from sparkdedalus.equivalence import compare
from sparkdedalus.network import Network
from sparkdedalus.reference import run
from sparkdedalus.rewrite.decouple import RewriteError
from sparkdedalus.rewrite.partial_partition import partial_partition
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.rewrite.text import program_text
from sparkdedalus.shell.cli import main

RANDOM = Network.parse("delay=uniform(1,4)")
FIXED = Network.parse("delay=fixed")  # every message arrives one tick after it is sent

# Proposers p1 (ballot 1, slots s1 and s2) and p2 (ballot 2, slot s3) prepare, then send
# their values on a promise for their own ballot. The acceptor keeps the highest ballot
# (replicated: every partition needs it) and logs a value whose ballot is at least the
# highest one (the log is partitioned by slot). The phases are far apart in time, so the
# original's outcome does not depend on the delays.
PAXOS = """component proposer {
    .persist promised
    p1a(A, P, B)@async :- prepare(P, A, B);
    promised(P, A, B) :- p1b(P, A, B, B);
    p2a(A, P, S, B, V)@async :- p1b(P, A, B, B), want(P, B, S, V);
    p2a(A, P, S, B, V)@async :- propose(P, A, S, B, V);
}

component acceptor {
    .persist ballots
    .persist log
    ballots(A, B) :- p1a(A, P, B);
    maxBallot(A, max<B>) :- ballots(A, B);
    p1b(P, A, B, M)@async :- p1a(A, P, B), maxBallot(A, M);
    log(A, S, B, V) :- p2a(A, P, S, B, V), maxBallot(A, M), B >= M;
    p2b(P, A, S, B, M)@async :- p2a(A, P, S, B, V), maxBallot(A, M);
}

want("p1", 1, "s1", "x");
want("p1", 1, "s2", "y");
want("p2", 2, "s3", "z");
prepare("p1", "a", 1)@1;
prepare("p2", "a", 2)@40;
"""
# p1, not knowing of ballot 2, proposes s4 late with ballot 1: rejected
LATE = 'propose("p1", "a", "s4", 1, "w")@70;\n'
# ... or one tick after p2's prepare: with one-tick delays its p2a reaches the acceptor
# while ballot 2 is being committed to the partitions
RACING = 'propose("p1", "a", "s4", 1, "w")@41;\n'

# Clients send limits and grants (replicated: every put reads both) and puts (partitioned
# by key). A put is stored when its client is granted and its value is at most the
# smallest limit. By hand: limit 10, then min(10, 5) = 5 at tick 30: a=3 ok, b=7 and c=12 too big,
# d from the ungranted c3 refused; limit 2 and c3 granted at tick 50: at tick 80 e=3 too
# big, f=1 and g=2 ok. kv ends as {a: 3, f: 1, g: 2}.
STORE = """component client {
    setLimit(S, N)@async :- limitReq(C, S, N);
    grant(S, U)@async :- grantReq(C, S, U);
    put(S, C, K, V)@async :- putReq(C, S, K, V);
}

component store {
    .persist kv
    .persist limits
    .persist admins
    limits(S, N) :- setLimit(S, N);
    admins(S, U) :- grant(S, U);
    limit(S, min<N>) :- limits(S, N);
    kv(S, K, V) :- put(S, C, K, V), admins(S, C), limit(S, N), V <= N;
    ok(C, K, V)@async :- put(S, C, K, V), admins(S, C), limit(S, N), V <= N;
    tooBig(C, K, V)@async :- put(S, C, K, V), admins(S, C), limit(S, N), V > N;
    refused(C, K, V)@async :- put(S, C, K, V), notin admins(S, C);
}

limitReq("c1", "s", 10)@1;
limitReq("c1", "s", 5)@12;
grantReq("c1", "s", "c1")@1;
grantReq("c1", "s", "c2")@2;
putReq("c1", "s", "a", 3)@30;
putReq("c1", "s", "b", 7)@30;
putReq("c1", "s", "c", 12)@30;
putReq("c3", "s", "d", 1)@30;
limitReq("c1", "s", 2)@50;
grantReq("c1", "s", "c3")@50;
putReq("c1", "s", "e", 3)@80;
putReq("c3", "s", "f", 1)@80;
putReq("c2", "s", "g", 2)@80;
"""


def _text(program) -> str:
    return program_text(program, source_rules(program))


def _final(program, relation: str, ticks: int, network=RANDOM) -> set:
    """The facts of `relation` at the last tick, partitions read as their home."""
    return {(row[0].rsplit("/", 1)[0], *row[1:]) for row in run(program, ticks, network).at(ticks)[relation]}


@pytest.mark.parametrize("text, component, replicated, broadcast", [
    (PAXOS + LATE, "acceptor", {"ballots", "maxBallot", "p1a"}, ("p1a",)),
    (STORE, "store", {"admins", "grant", "limit", "limits", "setLimit"}, ("grant", "setLimit")),
], ids=["paxos-acceptor", "store"])
def test_partial_partitioning_checks_and_is_equivalent(text, component, replicated, broadcast):
    program = Program.parse(text)
    policy = distribution_policy(program, component)
    assert policy.method == "partial"
    assert set(policy.replicate) == replicated and policy.broadcast == broadcast
    rewritten = partial_partition(program, component, 2)
    again = Program.parse(_text(rewritten))  # prints as dialect that checks
    assert again.homes == ("/p0", "/p1", "/coord")
    assert f"component {component}_coord {{" in _text(rewritten)
    result = compare(program, rewritten, 110, 20, RANDOM)
    assert result.difference is None, result.difference


def test_the_rewritten_programs_reach_the_states_derived_by_hand():
    store = partial_partition(Program.parse(STORE), "store", 2)
    assert _final(store, "kv", 110) == {("s", "a", 3), ("s", "f", 1), ("s", "g", 2)}
    paxos = partial_partition(Program.parse(PAXOS + LATE), "acceptor", 2)
    trace = run(paxos, 110, RANDOM)
    log = trace.at(110)["log"]
    assert {row[1:] for row in log} == {("s1", 1, "x"), ("s2", 1, "y"), ("s3", 2, "z")}
    assert len({row[0] for row in log}) == 2  # the slots are on both partitions
    # every partition holds the highest ballot
    assert set(trace.at(110)["maxBallot"]) == {("a/p0", 2), ("a/p1", 2)}
    p2b = {row for t in range(1, 111) for row in trace.at(t)["p2b"]}
    assert ("p1", "a", "s4", 1, 2) in p2b  # the late proposal is told of ballot 2


def test_a_partitioned_input_waits_while_a_replicated_one_is_committed():
    # One-tick delays, by hand. Original: p2's p1a (sent at 40) raises the ballot at 41;
    # p1's racing p2a (sent at 41) arrives at 42, is rejected, p2b at 43.
    # Rewritten: p1a_coord reaches a/coord at 41, the vote requests the partitions at 42
    # (frozen from 42), the votes the coordinator at 43, the commit the partitions at 44
    # (ballot 2 applied at 44, thawed at 45). The p2a reaching its partition at 42 is
    # buffered at 43, 44 and 45, read at 45 with ballot 2, rejected, p2b at 46.
    original = Program.parse(PAXOS + RACING)
    rewritten = partial_partition(original, "acceptor", 2)
    trace = run(rewritten, 60, FIXED)
    at = lambda relation: {t for t in range(1, 61) if trace.at(t)[relation]}  # noqa: E731
    p2b = lambda tr, ticks: {t for t in range(1, ticks + 1) if ("p1", "a", "s4", 1, 2) in tr.at(t)["p2b"]}  # noqa: E731
    # ballot 1 (prepared at 1) the same way: frozen at 3, 4 and 5
    assert at("acceptor_frozen") == {3, 4, 5, 42, 43, 44}
    assert at("p2a_buffer") == {43, 44, 45}
    assert ("a/p0", 2) in trace.at(44)["maxBallot"] and ("a/p0", 1) in trace.at(43)["maxBallot"]
    assert p2b(trace, 60) == {46} and p2b(run(original, 60, FIXED), 60) == {43}
    assert compare(original, rewritten, 60, 1, FIXED).difference is None


def test_without_the_freeze_the_racing_proposal_is_accepted():
    # the partitions never freeze: the p2a of p1 reaching its partition at 42 is read with
    # ballot 1, before ballot 2 is applied, and s4 is logged, which the original never does
    original = Program.parse(PAXOS + RACING)
    text = _text(partial_partition(original, "acceptor", 2))
    frozen = "acceptor_frozen(Lp) :- acceptor_batch(Lp, T, _), notin acceptor_processed(Lp, T);"
    assert frozen in text
    unfrozen = Program.parse(text.replace(frozen, frozen[:-1] + ", T < 0;"))
    result = compare(original, unfrozen, 60, 1, FIXED)
    assert result.difference is not None and result.difference.relation == "log"
    assert result.difference.only_b == (("a", "s4", 1, "w"),)


def test_a_replicated_input_on_one_partition_only_is_not_equivalent():
    # what co-hashing would do with the limits and grants: send them to one partition (here
    # the coordinator knows of partition 0 only): puts on partition 1 find no grant or limit
    original = Program.parse(STORE)
    text = _text(partial_partition(original, "store", 2))
    assert "J < 2;" in text
    one = Program.parse(text.replace("J < 2;", "J < 1;"))
    result = compare(original, one, 110, 20, RANDOM)
    assert result.difference is not None


def test_cli_applies_partial_partitioning_and_equiv_accepts_it(tmp_path, capsys):
    src, out = tmp_path / "paxos.ded", tmp_path / "paxos_partial.ded"
    src.write_text(PAXOS + LATE)
    assert main(["rewrite", str(src), "--partition", "acceptor:3", "--out", str(out)]) == 0
    text = out.read_text()
    assert "// sparkdedalus rewrite: acceptor on 3 partitions (partial): p2a by c2, log by c1" in text
    assert 'p1a ordered by a coordinator at L + "/coord" (B.3)' in text
    assert '// @home "/coord"' in text and "J < 3;" in text
    assert main(["equiv", str(src), str(out), "--ticks", "110", "--seeds", "5"]) == 0  # 20: the test above
    assert "equivalent: no difference in 5 seed(s)" in capsys.readouterr().out


@pytest.mark.parametrize("text, message", [
    # the coordinator orders arrivals: a persisted replicated input would arrive every tick
    (PAXOS.replace(".persist ballots", ".persist ballots\n    .persist p1a"), "the replicated input p1a is persisted"),
    # a name the rewrite adds is taken
    (PAXOS.replace("promised", "p2a_sealed"), "the rewrite needs the name 'p2a_sealed'"),
])
def test_what_the_mechanism_cannot_express_is_refused(tmp_path, text, message, capsys):
    src = tmp_path / "p.ded"
    src.write_text(text)
    assert main(["rewrite", str(src), "--partition", "acceptor:2"]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1, err


def test_a_policy_that_is_not_partial_is_refused_by_the_module():
    program = Program.parse('component k { n(L, B, count<X>) :- v(L, X, B); }')
    with pytest.raises(RewriteError, match="has a co-hashing policy, not a partial one"):
        partial_partition(program, "k", 2)


def test_the_walk_through_in_docs_is_what_the_rewrite_prints():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "rewrites.md").read_text()
    section = doc[doc.index("## Partial partitioning"):doc.index("## Partitioning sealing")]
    source, printed = [block.split("```")[0] for block in section.split("```dedalus\n")[1:3]]
    assert source == PAXOS + LATE
    shown = printed[:printed.index("...\n")]
    text = _text(partial_partition(Program.parse(source), "acceptor", 2))
    header = ("// sparkdedalus rewrite: acceptor on 2 partitions (partial): p2a by c2, log by c1\n"
              "// sparkdedalus rewrite: acceptor replicates ballots, maxBallot, p1a on every partition; "
              'p1a ordered by a coordinator at L + "/coord" (B.3)\n')
    assert shown.startswith(header) and text.startswith(shown[len(header):])


# ScalablePaxos (5.2) seals the acceptor's log in p1b: here the desugared form (module
# sealing) of p1bLog(P, A, B, seal<S, Bl, V>). p1 writes s1..s3 with ballot 1 (tick 20),
# p2 prepares ballot 2 at tick 40 and gets the log, sealed, of 3 entries.
SEALED = """.output p1bLogSealed
.output p1bLogSize
.output log

component proposer {
    .persist p1bLog
    .persist p1bLogCount
    p1a(A, P, B)@async :- prepare(P, A, B);
    p2a(A, P, S, B, V)@async :- propose(P, A, S, B, V);
    p1bLogReceived(P, A, B, count<*>) :- p1bLog(P, A, B, S, Bl, V);
    p1bLogSealed(P, A, B, S, Bl, V) :- p1bLog(P, A, B, S, Bl, V), p1bLogCount(P, A, B, N), p1bLogReceived(P, A, B, N);
    p1bLogSize(P, A, B, count<*>) :- p1bLogSealed(P, A, B, S, Bl, V);
}

component acceptor {
    .persist ballots
    .persist log
    ballots(A, B) :- p1a(A, P, B);
    maxBallot(A, max<B>) :- ballots(A, B);
    log(A, S, B, V) :- p2a(A, P, S, B, V), maxBallot(A, M), B >= M;
    anyLog(A) :- log(A, _, _, _);
    p1bLog(P, A, B, S, Bl, V)@async :- p1a(A, P, B), log(A, S, Bl, V);
    p1bLogCount(P, A, B, count<*>)@async :- p1a(A, P, B), log(A, S, Bl, V);
    p1bLogCount(P, A, B, 0)@async :- p1a(A, P, B), notin anyLog(A);
}

prepare("p1", "a", 1)@1;
propose("p1", "a", "s1", 1, "x")@20;
propose("p1", "a", "s2", 1, "y")@20;
propose("p1", "a", "s3", 1, "z")@20;
prepare("p2", "a", 2)@40;
"""


def test_a_sealed_output_is_counted_per_partition_and_is_equivalent():
    from sparkdedalus.rewrite import partial_partition as module
    from sparkdedalus.rewrite import partition
    program = Program.parse(SEALED)
    # with its counting rules the log must be replicated (anyLog has no key); without
    # them (B.4.2) the log partitions by slot
    assert "log" in partition.policy(program, "acceptor").replicate
    policy = module.policy(program, "acceptor")
    assert policy.method == "partial" and policy.keys() == {"p2a": "c2", "log": "c1"}
    rewritten = partial_partition(program, "acceptor", 4)
    text = _text(rewritten)
    assert "p1bLogCountPart(P, A, B, A2, count<*>)@async :- p1a(A2, P, B), log(A2, S, Bl, V), home(A2, A);" in text
    assert "p1bLogParts(L, K1, K2, M), M == 4;" in text and ".persist p1bLogCount\n" not in text
    trace = run(Program.parse(text), 80, RANDOM)
    assert len({row[0] for row in trace.at(80)["log"]}) >= 2  # the log is spread
    assert set(trace.at(80)["p1bLogSize"]) == {("p2", "a", 2, 3)}
    result = compare(program, rewritten, 80, 20, RANDOM)
    assert result.difference is None, result.difference


def test_a_receiver_that_does_not_wait_for_every_partition_is_not_equivalent():
    # sealing when any partition's fraction is complete: p2 sees logs of 1 or 2 entries
    text = _text(partial_partition(Program.parse(SEALED), "acceptor", 4))
    early = Program.parse(text.replace("M == 4;", "M >= 1;"))
    result = compare(Program.parse(SEALED), early, 80, 20, RANDOM)
    assert result.difference is not None and result.difference.relation == "p1bLogSize"
    assert {row[3] for row in result.difference.only_b} <= {1, 2}


def test_cli_names_the_sealed_outputs(tmp_path, capsys):
    src = tmp_path / "sealed.ded"
    src.write_text(SEALED)
    assert main(["rewrite", str(src), "--partition", "acceptor:2"]) == 0
    out = capsys.readouterr().out
    assert "// sparkdedalus rewrite: acceptor on 2 partitions (partial): p2a by c2, log by c1\n" in out
    assert "// sparkdedalus rewrite: acceptor seals p1bLog per partition (B.4)\n" in out
