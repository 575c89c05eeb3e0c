"""The state machine decoupling (scaling paper, A.4; mechanism A.4.2,
Batching): where its precondition holds and the cheaper decouplings' do not,
the rewritten program checks and `equiv` sees no difference over 20
random-delay seeds; the batches are sealed in order, one per tick; the same
split without the batches shows a difference."""

from __future__ import annotations

import pytest
from rewrite_helpers import EXAMPLES, PAIRS, RANDOM, decouple_and_compare

from sparkdedalus import Program
from sparkdedalus.equivalence import compare
from sparkdedalus.network import Network
from sparkdedalus.reference import run
from sparkdedalus.rewrite import DECOUPLINGS, Target, applicable, state_machine
from sparkdedalus.rewrite.decouple import RewriteError, decouple, select
from sparkdedalus.shell.cli import main

# What 2PC's observers see: the acks' partial counts (nacks) and the answer to an
# inquiry depend on message timing in the original too.
LOGS = ".output commit_log\n.output end_log\n.output part_log\n"

# (example, extra declarations, component, selectors, new name, ticks); the paper's
# programs where only the state machine decoupling applies (sparkdedalus explain)
CASES = [
    ("voting", "", "leader", ["waiting"], "waiters", 30),
    ("voting", "", "leader", ["anyno", "result"], "repliers", 30),
    ("two_phase_commit", LOGS, "coordinator", ["commit"], "committers", 30),
    ("scaling_running_example", "", "leader", ["certReply"], "repliers", 30),
]


@pytest.mark.parametrize("example, extra, component, selectors, name, ticks", CASES,
                         ids=[f"{c[0]}-{c[4]}" for c in CASES])
def test_state_machine_decoupling_holds_checks_and_is_equivalent(example, extra, component, selectors, name, ticks):
    program = Program.parse((EXAMPLES / f"{example}.ded").read_text() + extra, file=f"{example}.ded")
    found = decouple_and_compare(program, component, selectors, name, "state machine", ticks)
    assert found[0] == "state machine", found  # the cheaper decouplings do not apply


def test_batches_are_sealed_in_order_one_per_tick():
    program = Program.parse(PAIRS)
    split = select(program, "proposer", ["lonely", "alarm"])
    assert [r.REWRITE for r in applicable(program, "proposer", split)] == ["state machine"]
    rewritten = state_machine.apply(program, Target("proposer", split, "checker"))[0]
    for seed in range(5):
        trace = run(rewritten, 25, Network.parse(f"delay=uniform(1,4),seed={seed}"))
        # the inbox derives got at the ticks of the p2b facts: batches 1, 2 and 4,
        # announced with their predecessor and sizes (got, gotb: 2 and 1, 2 and 2, 1 and 1)
        assert trace.at(25)["seal_checker"] == {("prop/checker", 1, 0, 2, 1), ("prop/checker", 2, 1, 2, 2),
                                                ("prop/checker", 4, 2, 1, 1)}
        sealing = [(t, row[1]) for t in range(1, 26) for row in trace.at(t)["can_seal_checker"]]
        assert [batch for _, batch in sealing] == [1, 2, 4]
        assert [t for t, _ in sealing] == sorted({t for t, _ in sealing})  # one batch per tick
        assert not any(trace.at(t)["alarm"] for t in range(1, 26))


def test_without_the_batches_the_split_shows_a_difference():
    # got and gotb, forwarded fact by fact, arrive at different ticks: lonely holds
    program = Program.parse(PAIRS)
    split = select(program, "proposer", ["lonely", "alarm"])
    assert compare(program, state_machine.apply(program, Target("proposer", split, "checker"))[0], 25, 20,
                   RANDOM).difference is None
    result = compare(program, decouple(program, "proposer", split, "checker", "redirect"), 25, 20, RANDOM)
    assert result.difference is not None and result.difference.relation in ("alarm", "lonely")
    assert result.difference.only_a == ()  # the original never raises an alarm


def test_the_precondition_says_no_when_the_rules_that_stay_read_the_moved_ones():
    program = Program.parse(PAIRS)
    split = select(program, "proposer", ["lonely"])  # alarm (stays) reads lonely
    verdict = state_machine.precondition(program, Target("proposer", split, "checker"))
    assert not verdict.applies and verdict.reasons
    assert [r.REWRITE for r in DECOUPLINGS][-2:] == ["state machine", "asymmetric"]


def test_the_rewrite_command_chooses_the_state_machine_decoupling(tmp_path, capsys):
    out = tmp_path / "waiters.ded"
    path = str(EXAMPLES / "voting.ded")
    assert main(["rewrite", path, "--decouple", "leader:waiting:waiters", "--out", str(out)]) == 0
    assert out.read_text().startswith("// sparkdedalus rewrite: leader -> waiters: state machine decoupling")
    assert main(["equiv", path, str(out), "--ticks", "30", "--seeds", "5"]) == 0
    assert "equivalent" in capsys.readouterr().out


def test_a_relation_name_the_rewrite_needs_is_refused_when_taken():
    # seal_checker would announce the batches: the program uses the name already
    text = PAIRS + 'seal_checker("prop", 1);\n'
    program = Program.parse(text)
    with pytest.raises(RewriteError, match="needs the relation name 'seal_checker'"):
        state_machine.apply(program, Target("proposer", select(program, "proposer", ["lonely", "alarm"]), "checker"))
