"""`sparkdedalus equiv`: says no when two programs differ under some delays,
yes when they do not, and maps the locations a rewrite introduced home. It
compares the observed relations (`--observe`, else A's `.output`, else the
shared ones) and says which; in refinement mode, B passes when every outcome it
shows over K seeds is one A shows under some seed: a dropped rule and a
misrouted message fail both modes, another legal delay only the strict one."""

from __future__ import annotations

import json
from pathlib import Path

from frontend_helpers import exit_code
from sparkdedalus import Program
from sparkdedalus.equivalence import compare, home_of
from sparkdedalus.network import Network
from sparkdedalus.shell.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
NONCONFLUENT = (EXAMPLES / "nonconfluent.ded").read_text()
# The variant sends the retraction one tick later (through `retracted@next`).
# Under delay=fixed both believe "y" (statement arrives at 2, the retraction at
# 3 or 4); under random delays, a statement arriving at tick 4 (sent at 1,
# delay 3) beats a retraction sent at 3 but not one sent at 2 with delay 1.
VARIANT = NONCONFLUENT.replace(
    "s_false(L, S, X)@async :- retract(S, X), listener(S, L);",
    "s_false(L, S, X)@async :- retracted(S, X), listener(S, L);\nretracted(S, X)@next :- retract(S, X);")


def _files(tmp_path, **texts):
    for name, text in texts.items():
        (tmp_path / f"{name}.ded").write_text(text)
    return [str(tmp_path / f"{name}.ded") for name in texts]


def test_equiv_says_no_for_programs_that_differ_under_some_delays(tmp_path, capsys):
    a, b = _files(tmp_path, a=NONCONFLUENT, b=VARIANT)
    assert VARIANT != NONCONFLUENT
    assert main(["equiv", a, b, "--ticks", "8", "--seeds", "20"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("different: seed ") and "relation believed" in out
    assert 'believed("l", "y")' in out  # the only belief that depends on timing


def test_equiv_json_names_the_seed_tick_and_facts(tmp_path, capsys):
    a, b = _files(tmp_path, a=NONCONFLUENT, b=VARIANT)
    assert main(["equiv", a, b, "--ticks", "8", "--seeds", "20", "--format", "json"]) == 1
    found = json.loads(capsys.readouterr().out)
    diff = found["difference"]
    assert found["equivalent"] is False and diff["relation"] == "believed"
    assert [["l", "y"]] in (diff["only_a"], diff["only_b"]) and diff["only_a"] != diff["only_b"]


def test_equiv_says_yes_under_fixed_delays_and_for_a_program_and_itself(tmp_path, capsys):
    a, b = _files(tmp_path, a=NONCONFLUENT, b=VARIANT)
    assert main(["equiv", a, b, "--ticks", "8", "--seeds", "3", "--network", "delay=fixed"]) == 0
    assert main(["equiv", a, a, "--ticks", "8", "--seeds", "20"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("equivalent: no difference in 20 seed(s)")


def test_locations_a_rewrite_introduced_are_read_as_their_home():
    # B keeps its facts at "n/copy", which its @home directive maps to "n".
    a = Program.parse('p(L, X)@next :- q(L, X); q("n", 1)@1;')
    b = Program.parse('// @home "/copy"\np(L, X)@next :- q(L, X); q("n/copy", 1)@1;')
    assert b.homes == ("/copy",) and home_of("n/copy/copy", b.homes) == "n" and home_of("/copy", b.homes) == "/copy"
    assert compare(a, b, 3, 2, Network()).difference is None
    c = Program.parse('p(L, X)@next :- q(L, X); q("n/copy", 1)@1;')  # no directive: another node
    diff = compare(a, c, 3, 1, Network()).difference
    assert (diff.relation, diff.tick, diff.only_a, diff.only_b) == ("p", 2, (("n", 1),), (("n/copy", 1),))


def test_outputs_decide_what_is_compared(tmp_path, capsys):
    # Only `refuted` is observed: it does not depend on timing.
    a, b = _files(tmp_path, a=NONCONFLUENT + ".output refuted\n", b=VARIANT)
    assert main(["equiv", a, b, "--ticks", "10", "--seeds", "20"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("compared: refuted")


def test_usage_errors_exit_2(tmp_path, capsys):
    a, b = _files(tmp_path, a=NONCONFLUENT + ".output nothere\n", b=VARIANT)
    assert exit_code(["equiv", a, b, "--ticks", "0"]) == 2
    assert exit_code(["equiv", a, b, "--ticks", "3", "--network", "delay=slow"]) == 2
    assert exit_code(["equiv", a, b, "--ticks", "3", "--seeds", "x"]) == 2
    assert exit_code(["equiv", a, b, "--ticks", "3", "--format", "yaml"]) == 2
    assert main(["equiv", a, b, "--ticks", "3"]) == 2  # nothere is no relation of either
    err = capsys.readouterr().err.splitlines()
    assert err[:4] == ["sparkdedalus equiv: error: argument --ticks: expected an integer >= 1, got 0 (see --help)",
                       "sparkdedalus equiv: error: argument --network: bad network item 'delay=slow': expected "
                       "delay=fixed or delay=uniform(LOW,HIGH) (see --help)",
                       "sparkdedalus equiv: error: argument --seeds: expected an integer, got 'x' (see --help)",
                       "sparkdedalus equiv: error: argument --format: invalid choice: 'yaml' (choose from 'text', "
                       "'json') (see --help)"]
    assert len(err) == 5 and "'nothere' is not a relation of program A" in err[4]


# -- observed relations and the refinement mode
VOTING = (EXAMPLES / "voting.ded").read_text()
ACCEPT = 'result(C, B, "accepted")@async :- complete(L, C, B), notin anyno(L, B), notin replied(L, B);'
REJECT = 'result(C, B, "rejected")@async :- complete(L, C, B), anyno(L, B), notin replied(L, B);'
NEGATIVES = {"dropped rule": VOTING.replace(REJECT, ""),  # b2 is never answered
             "misrouted message": VOTING.replace(ACCEPT, ACCEPT.replace("result(C,", "result(L,"))}  # to the leader
MODES = ("strict", "refinement")
# refutes "z" where NONCONFLUENT refutes "y"; believed is the same run for run
WRONG_REFUTED = NONCONFLUENT.replace("refuted(L, X) :- s_false(L, S, X);", 'refuted(L, "z") :- s_false(L, _, _);')


def _equiv(a, b, *options):
    return main(["equiv", a, b, "--ticks", "30", "--seeds", "10", *options])


def test_a_dropped_rule_and_a_misrouted_message_are_different_in_both_modes(tmp_path, capsys):
    assert REJECT in VOTING and ACCEPT in VOTING
    a, dropped, misrouted = _files(tmp_path, a=VOTING, dropped=NEGATIVES["dropped rule"],
                                   misrouted=NEGATIVES["misrouted message"])
    for mode in MODES:
        assert _equiv(a, a, "--mode", mode, "--observe", "result") == 0
        assert _equiv(a, dropped, "--mode", mode, "--observe", "result") == 1
        assert 'result("client", "b2", "rejected")' in capsys.readouterr().out.split("only in")[1]  # only in A
        assert _equiv(a, misrouted, "--mode", mode, "--observe", "result", "--format", "json") == 1
        found = json.loads(capsys.readouterr().out)
        assert found["mode"] == mode and found["observed"] == {"reason": "observe", "relations": ["result"]}
        difference = found["difference"] if mode == "strict" else found["new_outcomes_b"][0]["differences"][0]
        assert difference["only_a"] == [["client", "b1", "accepted"]]
        assert difference["only_b"] == [["leader", "b1", "accepted"]]


def test_refinement_says_which_outcomes_b_has_that_a_never_showed(tmp_path, capsys):
    a, misrouted = _files(tmp_path, a=VOTING, misrouted=NEGATIVES["misrouted message"])
    assert _equiv(a, misrouted, "--mode", "refinement", "--observe", "result") == 1
    assert capsys.readouterr().out.splitlines() == [
        f"different: 1 outcome(s) of {misrouted} that {a} never showed: 1 outcome(s) of {a}, 1 of {misrouted} in "
        "10 seed(s) each over 30 tick(s) (delay=uniform(1,4),seed=0)",
        f"  {misrouted} under seed 0, against {a}'s closest outcome (seed 0):",
        f'    result at tick 30: only in {a}: result("client", "b1", "accepted"); '
        f'only in {misrouted}: result("leader", "b1", "accepted")',
        f'    result at some tick: only in {a}: result("client", "b1", "accepted"); '
        f'only in {misrouted}: result("leader", "b1", "accepted")',
        "observed: named by --observe; compared: result"]


def test_another_legal_delay_is_different_in_strict_mode_and_refines(tmp_path, capsys):
    # VARIANT's retraction takes one tick more: under a seed where NONCONFLUENT's
    # retraction beats the statement, VARIANT's may not (strict: different), but
    # each final belief VARIANT reaches, NONCONFLUENT reaches under some other
    # seed ({x, z, w} or {x, y, z, w}).
    a, b = _files(tmp_path, a=NONCONFLUENT, b=VARIANT)
    assert _equiv(a, b, "--seeds", "20") == 1
    assert 'only in ' + b + ': believed("l", "y")' in capsys.readouterr().out
    assert _equiv(a, b, "--seeds", "20", "--mode", "refinement", "--format", "json") == 0
    found = json.loads(capsys.readouterr().out)
    assert found["refines"] is True and (found["outcomes_a"], found["outcomes_b"]) == (2, 2)
    assert found["observed"]["reason"] == "shared" and "believed" in found["relations"]


def test_the_coordinated_rewrite_refines_the_original(tmp_path, capsys):
    # `rewrite --coordinate` makes the listener wait for every s_false: it never
    # believes "y", which is one of the original's outcomes, not all of them.
    src = str(EXAMPLES / "nonconfluent.ded")
    out = str(tmp_path / "coordinated.ded")
    assert main(["rewrite", src, "--coordinate", "--out", out]) == 0
    assert _equiv(src, out, "--observe", "believed") == 1
    assert 'only in ' + src + ': believed("l", "y")' in capsys.readouterr().out
    assert _equiv(src, out, "--observe", "believed", "--mode", "refinement") == 0
    assert capsys.readouterr().out.startswith(f"refines: every outcome of {out} is one of {src}'s: 2 outcome(s)")
    assert _equiv(out, src, "--observe", "believed", "--mode", "refinement") == 1  # not the other way round


def test_observe_restricts_what_is_compared(tmp_path, capsys):
    assert WRONG_REFUTED != NONCONFLUENT
    a, b = _files(tmp_path, a=NONCONFLUENT, b=WRONG_REFUTED)
    for mode in MODES:
        assert _equiv(a, b, "--mode", mode) == 1
        assert _equiv(a, b, "--mode", mode, "--observe", "believed,statement") == 0
        assert capsys.readouterr().out.rstrip().endswith(
            "observed: named by --observe; compared: believed, statement")


def test_the_outputs_of_a_are_observed_not_those_only_b_declares(tmp_path, capsys):
    a, b = _files(tmp_path, a=NONCONFLUENT + ".output believed\n", b=WRONG_REFUTED + ".output refuted\n")
    for mode in MODES:
        assert _equiv(a, b, "--mode", mode) == 0
        assert capsys.readouterr().out.rstrip().endswith("observed: the .output relations of A; compared: believed")
    assert _equiv(b, a) == 1  # B's outputs, refuted, are what A must match when B is the original


def test_bad_mode_and_observe_exit_2(tmp_path, capsys):
    a, b = _files(tmp_path, a=NONCONFLUENT, b=VARIANT)
    assert exit_code(["equiv", a, b, "--ticks", "3", "--mode", "loose"]) == 2
    assert exit_code(["equiv", a, b, "--ticks", "3", "--observe", "believed,"]) == 2
    assert main(["equiv", a, b, "--ticks", "3", "--observe", "believed,nothere", "--mode", "refinement"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("sparkdedalus equiv: error: argument --mode: invalid choice: 'loose' (choose from 'strict', "
                      "'refinement') (see --help)")
    assert err[1] == ("sparkdedalus equiv: error: argument --observe: expected comma-separated names, got 'believed,' "
                      "(see --help)")
    assert len(err) == 3 and "observed relation 'nothere' is not a relation of program A" in err[2]
