"""`sparkdedalus equiv`: says no when two programs differ under some delays,
yes when they do not, and maps the locations a rewrite introduced home."""

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
