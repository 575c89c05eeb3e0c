"""One naming scheme (issue 49, item 6; `rewrite/naming.py`): the part a rewrite
creates is named by the role of its rules, the same whether `--auto`, `--decouple`
without a NEWNAME or `optimize` creates it (tests/test_optimize.py: Paxos's p2b proxy
leaders are `p2b_collectors`)."""

from __future__ import annotations

from pathlib import Path

from sparkdedalus import Program
from sparkdedalus.rewrite.auto import auto
from sparkdedalus.shell.cli import main

ROOT = Path(__file__).resolve().parent.parent
VOTING, MONOTONIC = str(ROOT / "examples" / "voting.ded"), str(ROOT / "examples" / "microbenchmarks" / "monotonic.ded")
COLLECTORS = ["votes", "nvotes", "complete", "waiting", "anyno", "result", "replied"]


def _decouple_note(path: str, spec: str, capsys) -> str:
    assert main(["rewrite", path, "--decouple", spec]) == 0
    return capsys.readouterr().out.splitlines()[0]


def test_decouple_without_a_name_names_the_part_as_auto_does(capsys):
    # voting's collectors count what derives from `vote`: vote_collectors (was leader_2)
    assert _decouple_note(VOTING, "leader:" + ",".join(COLLECTORS), capsys) == (
        "// sparkdedalus rewrite: leader -> vote_collectors: mutually independent decoupling of "
        + ", ".join(COLLECTORS))
    _, notes = auto(Program.from_files(VOTING), ["leader"], 2)
    assert notes[0].startswith("leader -> vote_collectors: ")
    # the monotonic collector keeps allVotes (GC'd persistence) and counts it: allVotes_collectors
    assert _decouple_note(MONOTONIC, "leader:numVotes,committed,response", capsys).startswith(
        "// sparkdedalus rewrite: leader -> allVotes_collectors: monotonic decoupling")
    # a given name wins
    assert _decouple_note(VOTING, "leader:votes:mine", capsys).startswith("// sparkdedalus rewrite: leader -> mine: ")

