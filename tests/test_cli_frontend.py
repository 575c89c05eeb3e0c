"""The front-end commands of the CLI: check, fmt, explain. Run in-process via
`sparkdedalus.shell.cli.main` (fast), plus one subprocess run of the installed
console script and a check that the front end never imports pyspark."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest

from frontend_helpers import EXAMPLES, REPO, write
from sparkdedalus.shell import cli
from sparkdedalus.syntax.parser import parse_text

EXAMPLE_FILES = sorted(glob.glob(os.path.join(EXAMPLES, "*.ded")))


def test_there_are_examples():
    assert EXAMPLE_FILES


# ---------------------------------------------------------------- check

@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=os.path.basename)
def test_check_accepts_every_example(path, capsys):
    assert cli.main(["check", path]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ")


def test_check_reports_counts(tmp_path, capsys):
    path = write(tmp_path, "ok.ded", 'p(N, X)@next :- p(N, X);\nq(N, X) :- p(N, X);\np("a", 1)@1;\n')
    assert cli.main(["check", path]) == 0
    captured = capsys.readouterr()
    assert captured.out == "ok: 2 relations, 2 rules, 1 strata, 0 warning(s)\n"
    assert captured.err == ""


def test_check_fails_with_diagnostics(tmp_path, capsys):
    path = write(tmp_path, "bad.ded", 'p(X) :- q(X)\nr(X, Y) :- q(X);\nq("a");\n')
    assert cli.main(["check", path]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{path}:1:13: error: syntax error: missing ';' at the end of the statement" in captured.err
    assert captured.err.endswith("1 error(s)\n")


def test_check_reports_every_error_of_a_file(tmp_path, capsys):
    path = write(tmp_path, "bad.ded", 'p(X, Y) :- q(X);\nr(X, _) :- q(X);\ns(X) :- q(X), notin t(X, Z), Z > 0;\nq("a");\nt("a", 1);\n')
    assert cli.main(["check", path]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1:6: error: " in err
    assert f"{path}:2:6: error: " in err
    assert f"{path}:3:26: error: " in err
    assert err.endswith("3 error(s)\n")


def test_check_several_files_form_one_program(tmp_path, capsys):
    rules = write(tmp_path, "rules.ded", "q(N, X) :- p(N, X);\n")
    facts = write(tmp_path, "facts.ded", 'p("a", 1);\n')
    assert cli.main(["check", rules, facts]) == 0
    captured = capsys.readouterr()
    assert captured.out == "ok: 2 relations, 1 rules, 1 strata, 0 warning(s)\n"
    assert captured.err == ""  # p is defined in the other file: no warning


GLOBAL = 'q("a", "b");\np(X, Y) :- q(X, Y), q(Y, X);\n'


def test_check_warns_on_a_global_rule(tmp_path, capsys):
    path = write(tmp_path, "global.ded", GLOBAL)
    assert cli.main(["check", path]) == 0
    captured = capsys.readouterr()
    assert f"{path}:2:1: warning: rule reads or writes several locations in one tick (X, Y)" in captured.err
    assert captured.out == "ok: 2 relations, 1 rules, 1 strata, 1 warning(s)\n"


def test_check_strict_fails_on_a_global_rule(tmp_path, capsys):
    path = write(tmp_path, "global.ded", GLOBAL)
    assert cli.main(["check", "--strict", path]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2:1: error: rule reads or writes several locations in one tick (X, Y)" in err
    assert err.endswith("1 error(s)\n")


def test_check_missing_file(tmp_path, capsys):
    assert cli.main(["check", str(tmp_path / "nope.ded")]) == 1
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["check"], "sparkdedalus check: error: the following arguments are required: FILE"),
    (["frob"], "sparkdedalus: error: argument COMMAND: invalid choice: 'frob'"),
    (["run", "x.ded", "--ticks", "1", "--bogus"], "sparkdedalus: error: unrecognized arguments: --bogus"),
    (["run", "x.ded"], "sparkdedalus run: error: the following arguments are required: --ticks"),
])
def test_usage_error_is_one_line_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(message) and line.endswith("(see --help)")


# ---------------------------------------------------------------- fmt

UNFORMATTED = """\
// a comment
log(N,P)@next:-log(N,P);
log(M,P)@async :- bcast(N,P),node(N,M), !gone(M) , P!=\"x\";
votes(C,X,count<A>):-vote(C,A,X);
"""

FORMATTED = """\
// a comment
log(N, P)@next :- log(N, P);
log(M, P)@async :- bcast(N, P), node(N, M), notin gone(M), P != "x";
votes(C, X, count<A>) :- vote(C, A, X);
"""


def test_fmt_prints_the_canonical_form(tmp_path, capsys):
    path = write(tmp_path, "u.ded", UNFORMATTED)
    assert cli.main(["fmt", path]) == 0
    out = capsys.readouterr().out
    assert out == FORMATTED
    assert parse_text(out) == parse_text(UNFORMATTED)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=os.path.basename)
def test_fmt_output_reparses_to_the_same_ast(path, capsys):
    assert cli.main(["fmt", path]) == 0
    out = capsys.readouterr().out
    with open(path, encoding="utf-8") as handle:
        original = parse_text(handle.read(), path)
    reparsed = parse_text(out, path)
    assert reparsed == original
    assert [c.text for c in reparsed.comments] == [c.text for c in original.comments]


def test_fmt_check(tmp_path, capsys):
    bad = write(tmp_path, "u.ded", UNFORMATTED)
    good = write(tmp_path, "f.ded", FORMATTED)
    assert cli.main(["fmt", "--check", bad]) == 1
    assert capsys.readouterr().err == f"{bad}: not formatted\n"
    assert cli.main(["fmt", "--check", good]) == 0
    assert capsys.readouterr().err == ""
    assert cli.main(["fmt", "--check", good, bad]) == 1


def test_fmt_write_rewrites_in_place(tmp_path, capsys):
    path = write(tmp_path, "u.ded", UNFORMATTED)
    assert cli.main(["fmt", "--write", path]) == 0
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == FORMATTED
    assert cli.main(["fmt", "--check", path]) == 0


def test_fmt_refuses_a_file_with_syntax_errors(tmp_path, capsys):
    path = write(tmp_path, "bad.ded", "p(X) :- q(X)\n")
    assert cli.main(["fmt", "--write", path]) == 1
    assert f"{path}:1:13: error:" in capsys.readouterr().err
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == "p(X) :- q(X)\n"  # untouched


# ---------------------------------------------------------------- explain

EXPLAIN_PROGRAM = """\
.decl vote(loc: string, agent: string, ballot: int)
component tally {
  .persist seen
  seen(N, A) :- vote(N, A, B);
  votes(N, B, count<A>) :- vote(N, A, B);
  missing(N, A) :- agent(N, A), notin seen(N, A);
}
component relay {
  fwd(M, B)@async :- votes(N, B, C), peer(N, M);
  late(N, B)@next :- fwd(N, B), notin late(N, B);
}
agent("n", "x");
peer("n", "m");
vote("n", "x", 1)@1;
"""

# By hand: vote is declared (first); then relations by first use: seen (the
# .persist on line 3), votes, missing, agent, fwd, peer, late. seen reads vote: stratum 0;
# votes aggregates vote and missing negates seen: stratum 1. fwd and late are not
# same-tick rules. late negates itself across a tick. tally reads vote, agent
# (seen is its own), derives seen, votes, missing; relay reads votes, peer, and
# fwd and late, which it derives itself: no outputs.
EXPLAIN_OUTPUT = """\
relations:
  vote(loc: string, agent: string, ballot: int)  EDB
  seen(loc: string, c1: string)  IDB, persisted
  votes(loc: string, c1: int, c2: long)  IDB
  missing(loc: string, c1: string)  IDB
  agent(loc: string, c1: string)  EDB
  fwd(loc: string, c1: int)  IDB
  peer(loc: string, c1: string)  EDB
  late(loc: string, c1: int)  IDB
strata (same tick, in evaluation order):
  0: seen  (non-recursive, 1 rule(s))
  1: missing, votes  (non-recursive, 2 rule(s))
derived for the next tick (@next): late
sent over the network (@async): fwd
persisted: seen
cycles through negation or aggregation across ticks: late
"""
# By hand (seed 004): fwd is sent by an @async rule (line 9) and not persisted; late,
# fed by fwd, negates itself (line 10, `notin` at column 33): two points of order.
EXPLAIN_CONFLUENCE = """\
confluent: no (2 point(s) of order)
  {path}:9:3: fwd is sent by an async rule but not persisted
  {path}:10:33: late negates late, fed by an async rule
"""
EXPLAIN_COMPONENTS = """\
components:
  main: no rules
  tally: 3 rule(s); inputs agent, vote; outputs missing, votes
"""
# By hand, the partitioning of each component (paper 4.1, 4.3): in tally, seen is
# keyed by the agent (its only attribute), so vote must be keyed by the agent too,
# while votes groups vote by the ballot: two keys of vote, so no policy without
# replicating vote. In relay every atom carries the ballot B: co-hashing by it.
EXPLAIN_POLICIES = [
    # tally: replicating vote would leave seen, votes and missing keyed by the agent, but missing
    # (line 6) is derived at every tick agent x is not seen, input or none: an output without
    # an existence dependency, so no state machine (A.4); larger replicated sets fail alike
    "  tally: 3 rule(s); inputs agent, vote; outputs missing, votes\n    partitioning: none\n",
    ":6:3: replicating vote: the partitioned part is not a state machine (A.4): output missing may exist at a "
    "tick without input: the rule for missing (line 6) reads no input\n",
    "      no set of replicated relations leaves the rest partitionable with both parts state machines (A.4)\n",
    "  relay: 2 rule(s); inputs peer, votes; outputs -\n"
    "    partitioning (co-hashing): votes by c1, fwd by c1, late by c1\n",
]


def test_explain(tmp_path, capsys):
    path = write(tmp_path, "x.ded", EXPLAIN_PROGRAM)
    assert cli.main(["explain", path]) == 0
    out = capsys.readouterr().out
    assert out.startswith(EXPLAIN_OUTPUT)
    confluence = out[len(EXPLAIN_OUTPUT):out.index("components:")].splitlines()
    expected = EXPLAIN_CONFLUENCE.format(path=path).splitlines()
    assert len(confluence) == len(expected)
    assert all(line.startswith(start) for line, start in zip(confluence, expected)), confluence
    assert EXPLAIN_COMPONENTS in out
    for text in EXPLAIN_POLICIES:
        assert text in out
    assert out.endswith("warnings: 0\n")


def test_explain_json_and_one_component(tmp_path, capsys):
    path = write(tmp_path, "x.ded", EXPLAIN_PROGRAM)
    assert cli.main(["explain", path, "--format", "json", "--component", "relay"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == 2 and [c["name"] for c in data["components"]] == ["relay"]
    relay = data["components"][0]
    assert [r["head"] for r in relay["rules"]] == ["fwd", "late"]  # lines 9 and 10, by hand
    assert relay["rules"][0]["where"] == f"{path}:9:3"
    policy = relay["distribution_policy"]
    assert (policy["method"], policy["partitioned"], policy["replicate"]) == ("co-hashing", True, [])
    assert {name: rp["name"] for name, rp in policy["relations"].items()} == {"votes": "c1", "fwd": "c1", "late": "c1"}
    assert data["persisted"] == ["seen"] and data["async"] == ["fwd"] and data["next"] == ["late"]


def test_explain_bad_options_are_one_line_exit_2(tmp_path, capsys):
    path = write(tmp_path, "x.ded", EXPLAIN_PROGRAM)
    assert cli.main(["explain", path, "--component", "nope"]) == 2
    assert capsys.readouterr().err == ("sparkdedalus: error: --component: unknown component 'nope' "
                                       "(components: main, tally, relay)\n")
    with pytest.raises(SystemExit) as exited:  # argparse's choices=: refused before the file is read
        cli.main(["explain", path, "--format", "yaml"])
    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        "sparkdedalus explain: error: argument --format: invalid choice: 'yaml' (choose from 'text', 'json') "
        "(see --help)\n")


def test_explain_example_mentions_relations_strata_persistence_components(capsys):
    assert cli.main(["explain", os.path.join(EXAMPLES, "broadcast.ded")]) == 0
    out = capsys.readouterr().out
    assert "  log(loc: string, c1: string)  IDB, persisted\n" in out
    assert "  node(loc: string, c1: string)  EDB, persisted\n" in out
    assert "  bcast(loc: string, c1: string)  EDB\n" in out
    assert "  0: log  (non-recursive, 1 rule(s))\n" in out
    assert "sent over the network (@async): log\n" in out
    assert "persisted: log, node\n" in out
    assert "  main: 2 rule(s); inputs bcast, node; outputs log\n" in out


def test_explain_fails_like_check_on_a_bad_program(tmp_path, capsys):
    path = write(tmp_path, "bad.ded", 'p(X, Y) :- q(X);\nq("a");\n')
    assert cli.main(["explain", path]) == 1
    assert f"{path}:1:6: error: variable 'Y' in the head" in capsys.readouterr().err


# ---------------------------------------------------------------- the installed script

def test_console_script_runs(tmp_path):
    script = os.path.join(os.path.dirname(sys.executable), "sparkdedalus")
    assert os.path.exists(script)
    ok = subprocess.run([script, "check", os.path.join(EXAMPLES, "broadcast.ded")],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("ok: ")
    bad = write(tmp_path, "bad.ded", 'p(X)@5 :- q(X);\n')
    failed = subprocess.run([script, "check", bad], capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1
    assert f"{bad}:1:6: error: a rule head takes @next, @async or @later, not '@5'" in failed.stderr
    assert "Traceback" not in failed.stderr


def test_front_end_does_not_import_pyspark():
    code = ("import sys, sparkdedalus, sparkdedalus.checks, sparkdedalus.analysis.explain, sparkdedalus.shell.cli; "
            "from sparkdedalus import Program; Program.from_files('examples/broadcast.ded'); "
            "assert 'pyspark' not in sys.modules, sorted(m for m in sys.modules if 'spark' in m)")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_front_end_commands_do_not_import_pyspark():
    code = ("import sys; from sparkdedalus.shell import cli\n"
            "for command in ('check', 'fmt', 'explain'):\n"
            "    assert cli.main([command, 'examples/broadcast.ded']) == 0\n"
            "assert 'pyspark' not in sys.modules, sorted(m for m in sys.modules if 'spark' in m)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_explain_reports_the_point_of_order(capsys):
    # By hand: examples/nonconfluent.ded line 36 negates s_false, which an @async rule
    # sends; the `notin` is at column 39. Nothing else in it negates or aggregates.
    path = os.path.join(EXAMPLES, "nonconfluent.ded")
    assert cli.main(["explain", path]) == 0
    out = capsys.readouterr().out
    assert "confluent: no (1 point(s) of order)\n" in out
    assert f"  {path}:36:39: believed negates s_false" in out
    assert cli.main(["explain", path, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["confluent"] is False
    assert [(p["async_relation"], p["relation"], p["kind"], p["rule"]) for p in data["points_of_order"]] == [
        ("s_false", "s_false", "negation", f"{path}:36")]
    assert cli.main(["explain", os.path.join(EXAMPLES, "broadcast.ded"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["confluent"] is True
