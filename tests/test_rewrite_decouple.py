"""The decoupling rewrites on the paper's programs (section 5.2 and the running
example, sections 3.1-3.3): the precondition holds, the rewritten program
prints and checks, and `equiv` sees no difference over 20 random-delay seeds.
A forced rewrite whose precondition fails shows a difference; bad input is
one line, exit 2."""

from __future__ import annotations

import pytest
from frontend_helpers import exit_code
from rewrite_helpers import EXAMPLES, decouple_and_compare

from sparkdedalus import Program
from sparkdedalus.rewrite import Target, monotonic
from sparkdedalus.rewrite.decouple import select
from sparkdedalus.shell.cli import main
# What the running example's client observes. The leader's ack counts
# (numAcks) depend on when the acks arrive, in the original program too, so
# they are no observation when a rewrite adds a hop before the storage nodes.
CLIENT = ".output certificate\n.output inconsistency\n.output certReply\n"

# (example, extra declarations, component, selectors, new name, rewrite the paper uses, ticks)
CASES = [
    # 3.1: Lines 1-2 of the leader (sign, broadcast) share nothing with the rest
    ("scaling_running_example", "", "leader", ["signed", "toStorage"], "signer", "mutually independent", 30),
    # 3.2: Line 8 (inconsistency) reads the persisted acks, no negation/aggregation
    ("scaling_running_example", "", "leader", ["inconsistentReply"], "checker", "monotonic", 30),
    # 3.3: Line 2 alone is a map over signed (one IDB atom, no negation)
    ("scaling_running_example", CLIENT, "leader", ["toStorage"], "sender", "functional", 30),
    # 5.2 voting: broadcasters (ballot) and collectors (the rest) share only the participant list
    ("voting", "", "leader", ["ballot"], "broadcasters", "mutually independent", 30),
    ("voting", "", "leader", ["votes", "nvotes", "complete", "waiting", "anyno", "result", "replied"],
     "collectors", "mutually independent", 30),
    # 5.2 2PC: vote requesters, enders; participant voters (lines 69-72) vs ackers
    ("two_phase_commit", "", "coordinator", ["prepare"], "requesters", "mutually independent", 30),
    ("two_phase_commit", "", "coordinator", ["acks", "nacks", "end_log"], "enders", "mutually independent", 30),
    ("two_phase_commit", "", "participant", ["74", "75", "76"], "ackers", "mutually independent", 30),
]


def _program(example: str, extra: str = "") -> Program:
    return Program.parse((EXAMPLES / f"{example}.ded").read_text() + extra, file=f"{example}.ded")


@pytest.mark.parametrize("example, extra, component, selectors, name, rewrite, ticks", CASES,
                         ids=[f"{c[0]}-{c[4]}" for c in CASES])
def test_decoupling_holds_checks_and_is_equivalent(example, extra, component, selectors, name, rewrite, ticks):
    assert rewrite in decouple_and_compare(_program(example, extra), component, selectors, name, rewrite, ticks)


def test_forwarded_relations_are_persisted_by_the_monotonic_rewrite():
    program = _program("scaling_running_example")
    split = select(program, "leader", ["inconsistentReply"])
    rewritten = monotonic.apply(program, Target("leader", split, "checker"))[0]
    # acks is read by the certificate rules too: the checker reads a forwarded copy, persisted (A.2.2)
    assert "acks_checker" in rewritten.persisted
    (rule,) = [r for r in rewritten.rules if r.head.name == "inconsistentReply"]
    assert rule.component == "checker" and {a.name for a in rule.positive_atoms} == {"acks_checker", "client"}


def test_a_forced_non_monotone_decoupling_shows_a_difference(tmp_path, capsys):
    # waiting negates votes: once moved with the replies, the votes reach it
    # later and in other batches, so which participants it reports as missing
    # changes. (waiting alone is a state machine: A.4's batches keep it right.)
    out = tmp_path / "forced.ded"
    path = str(EXAMPLES / "voting.ded")
    assert main(["rewrite", path, "--decouple", "leader:waiting,result,replied:w"]) == 1
    assert "no precondition holds" in capsys.readouterr().err
    assert main(["rewrite", path, "--decouple", "leader:waiting,result,replied:w", "--force", "--out", str(out)]) == 0
    assert out.read_text().startswith("// sparkdedalus rewrite: UNCHECKED")
    assert main(["equiv", path, str(out), "--ticks", "30", "--seeds", "20"]) == 1
    assert "relation waiting" in capsys.readouterr().out


def test_the_rewrite_command_prints_a_program_that_passes_equiv(tmp_path, capsys):
    out = tmp_path / "voting2.ded"
    path = str(EXAMPLES / "voting.ded")
    assert main(["rewrite", path, "--decouple", "leader:ballot:broadcasters", "--out", str(out)]) == 0
    assert 'L2 == L + "/broadcasters"' in out.read_text()
    assert main(["equiv", path, str(out), "--ticks", "25", "--seeds", "5"]) == 0


@pytest.mark.parametrize("spec, message", [
    ("nope:ballot", "no component 'nope'"),
    ("leader:nothing", "no rule of component 'leader' derives 'nothing'"),
    ("leader:999", "no rule of component 'leader' at line 999"),
    ("leader", "expected COMPONENT:RULES[:NEWNAME]"),
    ("leader:ballot:client", "new component name 'client' is taken"),
])
def test_bad_input_is_one_line_exit_2(spec, message, capsys):
    code = exit_code(["rewrite", str(EXAMPLES / "voting.ded"), "--decouple", spec])
    err = capsys.readouterr().err
    assert (code, len(err.splitlines())) == (2, 1) and message in err, err
