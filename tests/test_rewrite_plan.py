"""One rewrite plan (`sparkdedalus/rewrite/plan.py`): `rewrite`'s options,
`rewrite --auto`'s decisions and `optimize`'s plans are `Step`s applied by
one driver, `apply_plan`, with one decoupling chooser
(`rewrite.decouple_first`); a rewrite's verdict and mechanism are kept on the
immutable program they read."""

from __future__ import annotations

import pytest
from rewrite_helpers import EXAMPLES

from sparkdedalus import Program, throughput
from sparkdedalus.rewrite import RewriteError, Target, decouple_first, partitioning
from sparkdedalus.rewrite.auto import auto, auto_plan
from sparkdedalus.rewrite.decouple import select
from sparkdedalus.rewrite.plan import Step, StepError, apply_plan, apply_step
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.rewrite.text import program_text
from sparkdedalus.shell.cli import _parser, main
from sparkdedalus.shell.rewrite import to_step
from sparkdedalus.throughput import optimize

VOTING = str(EXAMPLES / "voting.ded")


def _text(program) -> str:
    return program_text(program, source_rules(program))


def _cli(capsys, *argv) -> tuple:
    """(exit code, the printed program without its notes, stderr) of `sparkdedalus rewrite`."""
    code = main(["rewrite", *argv])
    out, err = capsys.readouterr()
    return code, "".join(line for line in out.splitlines(True) if not line.startswith("// sparkdedalus rewrite:")), err


def test_optimize_and_the_throughput_package_use_the_plan_of_the_rewrites():
    assert throughput.apply_plan is apply_plan and throughput.Step is Step
    assert optimize.apply_plan is apply_plan and optimize.Step is Step


@pytest.mark.parametrize("example, components", [("voting.ded", "leader,participant"),
                                                 ("two_phase_commit.ded", "coordinator,participant"),
                                                 ("microbenchmarks/monotonic.ded", "leader,replica")])
def test_auto_is_the_plan_of_its_steps(example, components):
    program = Program.from_files(str(EXAMPLES / example))
    q, notes, steps = auto_plan(program, components.split(","), 2)
    same, same_notes = auto(program, components.split(","), 2)
    assert (_text(same), same_notes) == (_text(q), notes)
    again, _ = apply_plan(program, steps, tuple(components.split(",")), coordinated=False)
    assert _text(again) == _text(q)


def test_rewrite_options_are_the_plan_of_their_steps(capsys):
    program = Program.from_files(VOTING)
    _, _, steps = auto_plan(program, ["leader", "participant"], 2)
    options = [word for step in steps for word in step.option().split(" ", 1)]
    assert options[:2] == ["--decouple", "leader:votes,nvotes,complete,waiting,anyno,result,replied:vote_collectors"]
    code, printed, _ = _cli(capsys, VOTING, *options)
    assert code == 0
    assert printed == _text(apply_plan(program, steps)[0])  # the command's scope: every component


def test_steps_round_trip_through_options_and_json():
    steps = [Step("decouple", "leader", ("votes", "12"), "collectors"), Step("decouple", "leader", ("ballot",)),
             Step("partition", "participant", partitions=3), Step("partition", "replica", partitions=2,
                                                                  key="voteToReplica(id)"),
             Step("coordinate")]
    argv = ["rewrite", "f.ded"] + [word for step in steps for word in step.option().split(" ", 1)]
    args = _parser().parse_args(argv)
    assert [to_step(kind, spec) for kind, spec in args.steps] == steps
    assert [Step.from_json(step.to_json()) for step in steps] == steps
    with pytest.raises(ValueError, match="indices"):
        Step("decouple", "leader", (3, 4), "part").option()


def test_one_chooser_the_coordinated_decouplings_only_where_asked(capsys):
    """voting's `waiting` only the state machine decoupling moves: `rewrite
    --decouple` takes it; a plan without `coordinated` (`--auto`,
    `optimize`) refuses the same step, with the coordination-free reasons."""
    program = Program.from_files(VOTING)
    step = Step("decouple", "leader", ("waiting",), "waiters")
    q, notes = apply_plan(program, [step])
    assert notes == ["leader -> waiters: state machine decoupling of waiting"]
    code, printed, _ = _cli(capsys, VOTING, "--decouple", "leader:waiting:waiters")
    assert (code, printed) == (0, _text(q))
    with pytest.raises(StepError) as refused:
        apply_plan(program, [step], coordinated=False)
    message = str(refused.value)
    assert message.startswith("cannot decouple waiting from leader: no precondition holds\n  mutually independent: ")
    assert "state machine" not in message and not refused.value.usage
    # the same choice as the library's chooser, and as the table's first coordination-free rule elsewhere
    target = Target("leader", select(program, "leader", ["ballot"]), "bc")
    assert _text(decouple_first(program, target)[0]) == _text(decouple_first(program, target, coordinated=False)[0])
    assert _text(apply_plan(program, [Step("decouple", "leader", ("ballot",), "bc")])[0]) \
        == _text(decouple_first(program, target)[0])


def test_a_plan_refuses_what_no_rewrite_applies_with_the_command_s_messages(capsys):
    program = Program.from_files(VOTING)
    with pytest.raises(RewriteError) as refused:  # a StepError is a RewriteError
        apply_plan(program, [Step("decouple", "leader", ("ballot",), "bc"), Step("decouple", "bc", ("ballot",))])
    assert refused.value.usage and str(refused.value).startswith("--decouple bc:ballot: ")
    code, _, err = _cli(capsys, VOTING, "--decouple", "leader:ballot:bc", "--decouple", "bc:ballot")
    assert code == 2 and str(refused.value) in err
    unknown = Step("partition", "nobody", partitions=2)
    with pytest.raises(StepError, match="^--partition nobody:2: "):
        apply_step(program, unknown)
    with pytest.raises(StepError, match="^cannot coordinate: "):
        apply_plan(program, [Step("coordinate")])
    code, _, err = _cli(capsys, VOTING, "--coordinate")
    assert code == 1 and "cannot coordinate: " in err


def test_the_scope_grows_with_the_components_a_step_makes():
    program = Program.from_files(VOTING)
    _, _, scope = apply_step(program, Step("decouple", "leader", ("ballot",), "bc"), ("leader",))
    assert scope == ("leader", "bc")
    assert apply_step(program, Step("decouple", "leader", ("ballot",), "bc"))[2] is None  # None: every component


def test_a_verdict_is_kept_on_the_program_and_the_mechanism_runs_once(monkeypatch):
    program = Program.from_files(VOTING)
    target = Target("participant", partitions=2)
    runs = []
    mechanism = type(partitioning).mechanism
    monkeypatch.setattr(type(partitioning), "mechanism", lambda self, p, t: runs.append(t) or mechanism(self, p, t))
    verdict = partitioning.precondition(program, target)
    assert verdict.applies and partitioning.precondition(program, target) is verdict
    rewritten, notes = partitioning.apply(program, target)
    rewritten_again, _ = apply_plan(program, [Step("partition", "participant", partitions=2)])
    assert runs == [target] and rewritten_again is rewritten
    fresh = Program.from_files(VOTING)  # another program: its own verdicts
    partitioning.precondition(fresh, target)
    assert runs == [target, target]
