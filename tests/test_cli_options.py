"""Bad options are refused before any work, in one line, exit 2: argparse's
`type=` functions of `sparkdedalus.shell.options` (integers, COMPONENT:N,
names, KEY=VALUE, a file to write) and `choices=`; and every flag either acts
or is refused (`rewrite --force` without `--decouple`, a component named twice
in `--auto`, `show --at` without a relation, `faults --seed` without
`--sample`, `faults --search ldfi` with `--sample` or on Spark, `run --provenance` with
`--store` or csv). No Spark: every case here ends before a session would start."""

from __future__ import annotations

import argparse
import os

import pytest

from frontend_helpers import EXAMPLES, exit_code
from sparkdedalus.shell import options

VOTING = os.path.join(EXAMPLES, "voting.ded")
SIMPLE_LOG = os.path.join(EXAMPLES, "faults", "simple_log.ded")


def refused(capsys, argv: list) -> str:
    """The one line of a command refused with exit 2, nothing on stdout."""
    code = exit_code(argv)
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), err
    (line,) = err.splitlines()
    assert "Traceback" not in err
    return line


# ---------------------------------------------------------------- the type= functions

def test_integer_says_yes_and_no():
    assert options.integer()("-3") == -3 and options.integer(minimum=0)("0") == 0
    with pytest.raises(argparse.ArgumentTypeError, match="expected an integer, got 'x'"):
        options.integer()("x")
    with pytest.raises(argparse.ArgumentTypeError, match="expected an integer >= 1, got 0"):
        options.integer(minimum=1)("0")


def test_names_component_count_and_key_value():
    assert options.names(" a ,b") == ("a", "b")
    assert options.component_count("a:b:3") == ("a:b", 3)
    assert options.key_value(" k = v=w ") == ("k", "v=w")
    for parse, text in ((options.names, "a,,b"), (options.names, ""), (options.component_count, "leader:0"),
                        (options.component_count, "leader:-1"), (options.component_count, ":4"),
                        (options.key_value, "k"), (options.key_value, "=v")):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)


def test_writable_refuses_a_missing_directory_and_a_directory(tmp_path):
    assert options.writable(str(tmp_path / "x.ded")) == str(tmp_path / "x.ded")
    (tmp_path / "old.ded").write_text("p(1);\n")
    assert options.writable(str(tmp_path / "old.ded")) == str(tmp_path / "old.ded")  # overwritten
    with pytest.raises(argparse.ArgumentTypeError, match="no directory"):
        options.writable(str(tmp_path / "missing" / "x.ded"))
    with pytest.raises(argparse.ArgumentTypeError, match="it is a directory"):
        options.writable(str(tmp_path))


# ---------------------------------------------------------------- rewrite

def test_rewrite_out_that_cannot_be_written_is_refused_before_any_work(tmp_path, capsys):
    missing = tmp_path / "missing" / "x.ded"
    line = refused(capsys, ["rewrite", VOTING, "--auto", "leader", "--out", str(missing)])
    assert line == (f"sparkdedalus rewrite: error: argument --out: cannot write '{missing}': "
                    f"no directory '{missing.parent}' (see --help)")
    assert "leader" not in line  # refused before the rewrite's notes
    line = refused(capsys, ["rewrite", VOTING, "--auto", "leader", "--out", str(tmp_path)])
    assert line.endswith(f"cannot write '{tmp_path}': it is a directory (see --help)")


def test_rewrite_out_that_can_be_written_is_written(tmp_path, capsys):
    out = tmp_path / "v.ded"
    assert exit_code(["rewrite", VOTING, "--auto", "leader", "--out", str(out)]) == 0
    # the leader is not partitioned (the client's rule would change): its decoupled parts are
    assert capsys.readouterr().out == "" and "vote_collectors on 4 partitions" in out.read_text()


@pytest.mark.parametrize("args", [["--auto", "leader,leader"], ["--auto", "leader", "--auto", "participant,leader"]])
def test_rewrite_auto_refuses_a_component_named_twice(args, capsys):
    assert refused(capsys, ["rewrite", VOTING, *args]) == "sparkdedalus: error: --auto: component 'leader' is named twice"


def test_rewrite_auto_takes_distinct_components(capsys):
    assert exit_code(["rewrite", VOTING, "--auto", "leader", "--auto", "participant"]) == 0
    # each --auto has its own scope: the second one may change ballot_broadcasters (the
    # leader's part), which sends the ballots, only by routing its send as partitioning the
    # participant asks (it is no client): the participant is partitioned as it is, no relay
    notes = [line for line in capsys.readouterr().err.splitlines() if " on 4 partitions" in line]
    assert [note.split(" on ")[0] for note in notes] == ["sparkdedalus rewrite: vote_collectors",
                                                        "sparkdedalus rewrite: ballot_broadcasters",
                                                        "sparkdedalus rewrite: participant"]


@pytest.mark.parametrize("steps", [["--partition", "leader:4"], ["--auto", "leader"], ["--coordinate"]])
def test_rewrite_force_without_decouple_is_refused(steps, capsys):
    assert refused(capsys, ["rewrite", VOTING, *steps, "--force"]) == (
        "sparkdedalus: error: --force applies to --decouple only: --partition, --auto and --coordinate "
        "always check their preconditions")


def test_rewrite_force_acts_on_decouple(capsys):
    # waiting negates votes: with the replies, no decoupling's precondition holds
    decouple = ["--decouple", "leader:waiting,result,replied:w"]
    assert exit_code(["rewrite", VOTING, *decouple]) == 1
    assert "no precondition holds" in capsys.readouterr().err
    assert exit_code(["rewrite", VOTING, *decouple, "--partition", "participant:2", "--force"]) == 0
    out = capsys.readouterr().out
    assert "// sparkdedalus rewrite: UNCHECKED: leader -> w forced" in out and "participant on 2 partitions" in out


@pytest.mark.parametrize("args, message", [
    (["--partition", "leader:x"], "argument --partition: expected COMPONENT:N with N >= 1, got 'leader:x'"),
    (["--decouple", "leader"], "argument --decouple: expected COMPONENT:RULES[:NEWNAME], got 'leader'"),
    (["--auto", "leader,"], "argument --auto: expected comma-separated names, got 'leader,'"),
    (["--auto", "leader", "--partitions", "0"], "argument --partitions: expected an integer >= 1, got 0"),
])
def test_rewrite_bad_values_are_argparse_errors(args, message, capsys):
    assert refused(capsys, ["rewrite", VOTING, *args]) == f"sparkdedalus rewrite: error: {message} (see --help)"


# ---------------------------------------------------------------- the other commands

@pytest.mark.parametrize("argv, message", [
    (["run", VOTING, "--engine", "reference", "--ticks", "3", "--stats", "/missing/dir/s.json"],
     "sparkdedalus run: error: argument --stats: cannot write '/missing/dir/s.json': no directory '/missing/dir'"),
    (["run", VOTING, "--engine", "reference", "--ticks", "3", "--at", "0"],
     "sparkdedalus run: error: argument --at: expected an integer >= 1, got 0"),
    (["run", VOTING, "--engine", "reference", "--ticks", "3", "--gc", "maybe"],
     "sparkdedalus run: error: argument --gc: invalid choice: 'maybe' (choose from 'auto', 'on', 'off')"),
    (["run", VOTING, "--ticks", "3", "--provenance", "--store", "runs/x"],  # no session starts
     "sparkdedalus: error: --provenance is recorded from the run in memory: not with --store"),
    (["run", "/missing/p.ded", "--ticks", "3", "--provenance", "--store", "runs/x"],  # refused before reading the file
     "sparkdedalus: error: --provenance is recorded from the run in memory: not with --store"),
    (["run", VOTING, "--engine", "reference", "--ticks", "3", "--provenance", "--format", "csv"],
     "sparkdedalus: error: --provenance prints with --format json or table"),
    (["diagram", "runs/x", "--out", "/missing/dir/d.svg"],
     "sparkdedalus diagram: error: argument --out: cannot write '/missing/dir/d.svg': no directory '/missing/dir'"),
    (["show", "runs/x", "log", "--at", "x"], "sparkdedalus show: error: argument --at: expected an integer, got 'x'"),
    (["show", "runs/x", "log", "--format", "xml"], "sparkdedalus show: error: argument --format: invalid choice: 'xml'"),
    (["show", "runs/x", "--at", "3"], "sparkdedalus: error: --at needs REL: without it, show lists the run's relations"),
    (["show", "runs/x", "--format", "json"],
     "sparkdedalus: error: --format needs REL: without it, show lists the run's relations"),
    (["equiv", VOTING, VOTING, "--ticks", "3", "--seeds", "0"],
     "sparkdedalus equiv: error: argument --seeds: expected an integer >= 1, got 0"),
    (["faults", SIMPLE_LOG, "--nodes", "a,b", "--eot", "3", "--eff", "-1", "--engine", "reference"],
     "sparkdedalus faults: error: argument --eff: expected an integer >= 0, got -1"),
    (["faults", SIMPLE_LOG, "--nodes", "a,,b", "--eot", "3", "--eff", "1", "--engine", "reference"],
     "sparkdedalus faults: error: argument --nodes: expected comma-separated names, got 'a,,b'"),
    (["faults", SIMPLE_LOG, "--nodes", "a,b", "--eot", "3", "--eff", "1", "--engine", "reference", "--seed", "3"],
     "sparkdedalus: error: --seed needs --sample N: it seeds the sample's draw"),
    (["faults", SIMPLE_LOG, "--nodes", "a,b", "--eot", "3", "--eff", "1", "--engine", "reference", "--search", "bfs"],
     "sparkdedalus faults: error: argument --search: invalid choice: 'bfs' (choose from 'auto', 'ldfi', 'all')"),
    (["faults", SIMPLE_LOG, "--nodes", "a,b", "--eot", "3", "--eff", "1", "--search", "ldfi", "--sample", "2"],
     "sparkdedalus: error: --sample draws scenarios to enumerate: it does not go with --search ldfi"),  # Spark
    (["faults", SIMPLE_LOG, "--nodes", "a,b", "--eot", "3", "--eff", "1", "--engine", "reference", "--search", "ldfi",
      "--sample", "2"],
     "sparkdedalus: error: --sample draws scenarios to enumerate: it does not go with --search ldfi"),
])
def test_bad_options_of_every_command(argv, message, capsys):
    assert refused(capsys, argv).startswith(message)


def test_the_same_options_act_when_they_are_good(tmp_path, capsys):
    stats = tmp_path / "s.json"
    assert exit_code(["run", VOTING, "--engine", "reference", "--ticks", "3", "--at", "2", "--stats", str(stats)]) == 0
    assert '"tick": 2' in capsys.readouterr().out and stats.exists()
    assert exit_code(["faults", SIMPLE_LOG, "--nodes", "a,b,c", "--eot", "4", "--eff", "2", "--engine", "reference",
                      "--sample", "3", "--seed", "3", "--quiet", "--format", "json"]) in (0, 1)
    assert '"scenarios": 3' in capsys.readouterr().out
    assert exit_code(["faults", SIMPLE_LOG, "--nodes", "a,b,c", "--eot", "4", "--eff", "2", "--engine", "reference",
                      "--search", "ldfi", "--quiet", "--format", "json"]) == 1
    assert '"executions": 2, "search": "ldfi"' in capsys.readouterr().out
