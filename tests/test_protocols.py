"""The shipped protocols (examples/protocols/): the scalable programs are what the
commands of scripts/regen-protocols.sh (`rewrite --auto`) print, byte for byte;
they have the paper's components (section 5.2); `equiv` finds what a client
observes the same (voting) or a possible outcome of the base program (2PC)
over 20 random-delay seeds; the base programs are the copies of
examples/voting.ded and examples/two_phase_commit.ded."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from sparkdedalus import Program
from sparkdedalus.shell.cli import main

ROOT = Path(__file__).resolve().parent.parent
PROTOCOLS = ROOT / "examples" / "protocols"
SCRIPT = ROOT / "scripts" / "regen-protocols.sh"


def _commands() -> dict:
    """The script's `rewrite` commands (arguments after the program name), by --out file."""
    text = SCRIPT.read_text().replace("\\\n", " ")
    found = {}
    for line in text.splitlines():
        if line.startswith('"$SD" rewrite '):
            args = shlex.split(line)[1:]
            found[args[args.index("--out") + 1]] = args
    return found


def test_the_script_generates_the_three_scalable_programs():
    assert sorted(_commands()) == ["examples/protocols/paxos_scalable.ded",
                                   "examples/protocols/two_phase_commit_scalable.ded",
                                   "examples/protocols/voting_scalable.ded"]


@pytest.mark.parametrize("name", ["voting", "two_phase_commit"])
def test_the_base_programs_are_the_examples(name):
    assert (PROTOCOLS / f"{name}.ded").read_bytes() == (ROOT / "examples" / f"{name}.ded").read_bytes()


@pytest.mark.parametrize("name", ["voting", "two_phase_commit", "paxos"])
def test_the_scalable_programs_are_regenerated_byte_for_byte(name, tmp_path, monkeypatch):
    shipped = f"examples/protocols/{name}_scalable.ded"
    args = _commands()[shipped]
    args[args.index("--out") + 1] = str(tmp_path / "out.ded")
    monkeypatch.chdir(ROOT)  # the script runs from the repository root
    assert main(args) == 0
    assert (tmp_path / "out.ded").read_bytes() == (ROOT / shipped).read_bytes()


# (protocol, components the rewrites added, partitioned components), from section 5.2 with
# the parts' names of rewrite/naming.py: voting's broadcasters and collectors, all but the
# leader partitioned; 2PC's vote requesters (prepare_broadcasters), committers
# (vote_collectors), enders (ack_collectors), voters (prepare_handlers), ackers
# (commit_handlers), and the abort and inquiry handlers, all partitioned, but the
# coordinator and the participant, which relay the events begin and inquire
SHAPES = [
    ("voting", {"ballot_broadcasters", "vote_collectors"}, ["vote_collectors", "ballot_broadcasters", "participant"]),
    ("two_phase_commit", {"prepare_broadcasters", "vote_collectors", "ack_collectors", "prepare_handlers",
                          "commit_handlers", "abort_handlers", "inquire_handlers"},
     ["vote_collectors", "ack_collectors", "prepare_broadcasters", "prepare_handlers", "commit_handlers",
      "abort_handlers", "inquire_handlers"]),
]


@pytest.mark.parametrize("name, added, partitioned", SHAPES, ids=[s[0] for s in SHAPES])
def test_the_scalable_programs_have_the_paper_s_components(name, added, partitioned):
    base = Program.from_files(str(PROTOCOLS / f"{name}.ded"))
    scalable = Program.from_files(str(PROTOCOLS / f"{name}_scalable.ded"))
    assert set(scalable.components) == set(base.components) | added
    assert set(scalable.homes) == {f"/{c}" for c in added} | {"/p0", "/p1", "/p2", "/p3"}
    header = [line for line in (PROTOCOLS / f"{name}_scalable.ded").read_text().splitlines()
              if line.startswith("// sparkdedalus rewrite: ")]
    assert [h.split(": ")[1].split(" on ")[0] for h in header if " on 4 partitions " in h] == partitioned
    assert not any("UNCHECKED" in h for h in header)


def test_constant_facts_are_copied_to_their_own_component_s_partitions_only():
    # participant(L, P) is EDB at the leader; broadcasters and collectors each get a copy at
    # their node, then one per partition; nobody's copy is copied again
    program = Program.from_files(str(PROTOCOLS / "voting_scalable.ded"))
    held = sorted({(f.component, f.atom.args[0].value) for f in program.facts if f.atom.name == "participant"})
    assert held == [("ballot_broadcasters", f"leader/ballot_broadcasters/p{i}") for i in range(4)] + \
        [("main", "leader")] + [("vote_collectors", f"leader/vote_collectors/p{i}") for i in range(4)]
    assert len([f for f in program.facts if f.atom.name == "participant"]) == 3 * 9
    # the participant count is computed once per node: the enders do not copy the committers' copy
    tpc = Program.from_files(str(PROTOCOLS / "two_phase_commit_scalable.ded"))
    assert sorted(r.component for r in tpc.rules if r.head.name == "nparts") == [
        "ack_collectors", "coordinator", "vote_collectors"]


# What a client observes: voting's result, in both modes. 2PC's logs and the answers to
# inquiries, in refinement mode: the relays move an inquiry and the commit in time relative
# to each other, so under a seed the answer may be "abort" where the base's found the commit
# (a possible run of the base under other delays); the relays reorder internal relations
# (nvotes, nyes at some tick), so every relation cannot be compared.
EQUIV = [("voting", ["--observe", "result"]), ("voting", ["--observe", "result", "--mode", "refinement"]),
         ("two_phase_commit", ["--observe", "commit_log,end_log,part_log,answer", "--mode", "refinement"])]


@pytest.mark.parametrize("name, options", EQUIV)
def test_base_and_scalable_are_equivalent_over_20_seeds(name, options, capsys):
    base, scalable = str(PROTOCOLS / f"{name}.ded"), str(PROTOCOLS / f"{name}_scalable.ded")
    assert main(["equiv", base, scalable, "--ticks", "30", "--seeds", "20", *options]) == 0
    out = capsys.readouterr().out
    assert out.startswith("refines: every outcome" if "refinement" in options else "equivalent: no difference"), out
