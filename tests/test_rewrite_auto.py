"""`sparkdedalus rewrite --auto`: on voting and two-phase commit it applies the
decouplings and partitionings derived by hand below, says so in the header and on
stderr, and the program checks and passes `equiv` over 20 seeds; a component
nothing applies to is reported as such; a decoupling added to the registry is
used without other changes; bad input is one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from frontend_helpers import exit_code

import sparkdedalus.rewrite
from sparkdedalus import Program
from sparkdedalus.rewrite import mutually_independent
from sparkdedalus.rewrite.decouplings import Decoupling
from sparkdedalus.shell.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
VOTING, TWO_PC = str(EXAMPLES / "voting.ded"), str(EXAMPLES / "two_phase_commit.ded")

# Derived from the programs: the largest candidate a decoupling applies to moves first.
# Voting's leader has two independent parts, {ballot} and the collectors; the collectors
# move, then ballot, which reads the client's requests: the leader relays them (the paper's
# broadcasters) and is not partitioned (the client's rule would change). The parts are named
# by role (rewrite/naming.py): the collectors count what derives from `vote`, the ballot rule
# sends to every participant (a constant relation). The participant's vote rule negates voted,
# which the other rule derives: no decoupling. The rest is co-hashed by the ballot.
VOTING_NOTES = [
    "leader -> vote_collectors: mutually independent decoupling of votes, nvotes, complete, waiting, anyno, result, "
    "replied (independent part)",
    "leader -> ballot_broadcasters: mutually independent decoupling of ballot (the rest; relayed: request)",
    "leader not partitioned: it would rewrite the rule", "vote_collectors on 4 partitions (co-hashing)",
    "ballot_broadcasters on 4 partitions (co-hashing)",
    "participant on 4 partitions (co-hashing)"]
# 2PC's coordinator: parts {prepare} (1 rule), committers (8), enders (3): the committers
# (counting what derives from `vote`), then the enders (counting `ack`) move; prepare reads
# the `begin` events, which the coordinator then relays to it (it sends to every participant:
# broadcasters); the coordinator is not partitioned (the events would move). The participant:
# voters (lines 69-72, handle prepare), {74, 75} (commit), {76} (abort), {78} (inquiries,
# events at p3): the voters, the commit handlers, then the abort handler (the first of two
# single rules) move, then the inquiry rule, which the participant relays, so it is not
# partitioned either. Every part is co-hashed by the transaction id.
TWO_PC_NOTES = [
    "coordinator -> vote_collectors: mutually independent decoupling of yes, nyes, decide_commit, commit_log, commit, "
    "sent_commit, abort, answer (independent part)",
    "coordinator -> ack_collectors: mutually independent decoupling of acks, nacks, end_log (independent part)",
    "coordinator -> prepare_broadcasters: mutually independent decoupling of prepare (the rest; relayed: begin)",
    "participant -> prepare_handlers: mutually independent decoupling of part_log, vote (independent part)",
    "participant -> commit_handlers: mutually independent decoupling of part_log, ack (independent part)",
    "participant -> abort_handlers: mutually independent decoupling of part_log (independent part)",
    "participant -> inquire_handlers: mutually independent decoupling of query (the rest; relayed: inquire)",
    "coordinator not partitioned: it would change the event 'begin(\"coord\", \"t1\")@1'",
    "vote_collectors on 2 partitions (co-hashing)", "ack_collectors on 2 partitions (co-hashing)",
    "prepare_broadcasters on 2 partitions (co-hashing)",
    "participant not partitioned: it would change the event 'inquire(\"p3\", \"coord\", \"t1\")@4'",
    "prepare_handlers on 2 partitions (co-hashing)", "commit_handlers on 2 partitions (co-hashing)",
    "abort_handlers on 2 partitions (co-hashing)", "inquire_handlers on 2 partitions (co-hashing)"]
# The leader relays the client's requests to the broadcasters: one more network hop, so the
# leader's internal relations (waiting, nvotes) see other interleavings than in the base
# program; what the client observes, result, is the same (strict) and every outcome of it is
# one the base shows (refinement). Likewise 2PC's relays (begin, inquire): what a client and
# the participants' operators see, the logs and the answers to inquiries, refines the base
# (strictly it may not: the relays move an inquiry and the commit in time relative to each other).
VOTING_EQUIV = [["--observe", "result"], ["--observe", "result", "--mode", "refinement"]]
TWO_PC_EQUIV = [["--observe", "commit_log,end_log,part_log,answer", "--mode", "refinement"]]
CASES = [(VOTING, "leader,participant", [], VOTING_NOTES, VOTING_EQUIV),
         (TWO_PC, "coordinator,participant", ["--partitions", "2"], TWO_PC_NOTES, TWO_PC_EQUIV)]


def _notes(lines) -> list:
    return [line.split("sparkdedalus rewrite: ", 1)[1] for line in lines if "sparkdedalus rewrite: " in line]


def _starts(notes, expected) -> bool:
    return len(notes) == len(expected) and all(n.startswith(e) for n, e in zip(notes, expected))


@pytest.mark.parametrize("path, components, options, expected, equiv", CASES, ids=["voting", "2pc"])
def test_auto_applies_what_the_analyses_allow_and_is_equivalent(path, components, options, expected, equiv, tmp_path,
                                                                capsys):
    out = str(tmp_path / "auto.ded")
    assert main(["rewrite", path, "--auto", components, *options, "--out", out]) == 0
    header = _notes(Path(out).read_text().splitlines())
    assert _starts(header, expected), header
    assert _notes(capsys.readouterr().err.splitlines()) == header
    assert main(["check", out]) == 0
    capsys.readouterr()
    for mode in equiv:
        assert main(["equiv", path, out, "--ticks", "30", "--seeds", "20", *mode]) == 0, mode


def test_a_component_nothing_applies_to_is_reported(tmp_path, capsys):
    # p and q are EDB: the rules over them only compute constants, no decoupling candidate;
    # p is joined on different columns in the two rules: a partial policy, not partitioned
    src = tmp_path / "partial.ded"
    src.write_text("component k {\n    a(L, X, Y) :- p(L, X, Y), q(L, Y, Z);\n"
                   "    b(L, X) :- p(L, X, Y), q(L, X, Y);\n}\n")
    assert main(["rewrite", str(src), "--auto", "k"]) == 0
    out, err = capsys.readouterr()
    assert _notes(err.splitlines()) == [
        "k not partitioned: component 'k' has a partial policy: it cannot be partitioned without coordination "
        "(partial_partition)",
        "k: nothing to apply"]
    rules = [line for line in out.splitlines() if ":-" in line]
    assert rules == ["    a(L, X, Y) :- p(L, X, Y), q(L, Y, Z);", "    b(L, X) :- p(L, X, Y), q(L, X, Y);"]


def test_auto_uses_the_decouplings_registered(monkeypatch, tmp_path, capsys):
    # a rewrite added to DECOUPLINGS is used as it is; with none registered nothing decouples,
    class Renamed(Decoupling):
        def analysis(self, program, target):
            return mutually_independent.analysis(program, target)

    monkeypatch.setattr(sparkdedalus.rewrite, "DECOUPLINGS", (Renamed("renamed", "redirect"),))
    assert main(["rewrite", VOTING, "--auto", "leader"]) == 0
    assert _notes(capsys.readouterr().err.splitlines())[0].startswith("leader -> vote_collectors: renamed decoupling of votes")
    monkeypatch.setattr(sparkdedalus.rewrite, "DECOUPLINGS", ())
    assert main(["rewrite", VOTING, "--auto", "leader"]) == 0
    # nor is the leader partitioned: that would change the client's rule, outside the scope
    assert _notes(capsys.readouterr().err.splitlines()) == [
        "leader not partitioned: it would rewrite the rule 'request(L, C, B)@async :- ask(C, L, B);' of the client "
        "'client', outside the scope (leader)", "leader: nothing to apply"]


def test_auto_composes_with_the_other_steps_in_order(capsys):
    # the collectors decoupled by hand first: --auto moves the broadcasters, which the
    # leader relays the client's requests to, and partitions them, not the leader (the client's
    # rule would change)
    assert main(["rewrite", VOTING, "--decouple", "leader:votes,nvotes,complete,waiting,anyno,result,replied:collectors",
                 "--auto", "leader", "--partitions", "3"]) == 0
    out = capsys.readouterr().out
    assert _notes(out.splitlines()) == [
        "leader -> collectors: mutually independent decoupling of votes, nvotes, complete, waiting, anyno, result, "
        "replied", "leader -> ballot_broadcasters: mutually independent decoupling of ballot (the rest; relayed: "
        "request)",
        "leader not partitioned: it would rewrite the rule 'request(L, C, B)@async :- ask(C, L, B);' of the client "
        "'client', outside the scope (leader, ballot_broadcasters)",
        "ballot_broadcasters on 3 partitions (co-hashing): request_ballot_broadcasters by c2"]
    assert Program.parse(out).homes == ("/collectors", "/ballot_broadcasters", "/p0", "/p1", "/p2")


@pytest.mark.parametrize("args, message", [
    (["--auto", "leader,nope"], "--auto leader,nope: no component 'nope'"),
    (["--auto", "leader", "--partitions", "0"], "argument --partitions: expected an integer >= 1, got 0"),
    (["--auto", "leader", "--partitions", "x"], "argument --partitions: expected an integer, got 'x'"),
    (["--partition", "leader:2", "--partitions", "3"], "--partitions 3: partitions per --auto partitioning; "
                                                       "there is no --auto"),
])
def test_bad_input_is_one_line_exit_2(args, message, capsys):
    code = exit_code(["rewrite", VOTING, *args])
    err = capsys.readouterr().err
    assert (code, len(err.splitlines())) == (2, 1) and message in err, err
