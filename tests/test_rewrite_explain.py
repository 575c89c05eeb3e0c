"""`explain` and `rewrite` agree (issue 31 point 3): a decoupling candidate
offers only the rewrites whose precondition holds (`rewrite.refusals`, which
the shell passes to `analysis.explain.report`), the others the analyses allow
are listed as refused with the rewrite's reason, and every decoupling
`explain --format json` offers on a shipped base example is applied by
`rewrite` to a program that passes its own check; likewise every partitioning
it offers is applied by `rewrite --partition`, and every one it refuses is refused."""

from __future__ import annotations

import glob
import json
import os

import pytest

from frontend_helpers import EXAMPLES
from sparkdedalus import Program
from sparkdedalus.analysis.explain import report
from sparkdedalus.rewrite import REWRITES, RewriteError, Target, decouple_first, refusals
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.rewrite.text import program_text
from sparkdedalus.shell import cli

RUNNING = os.path.join(EXAMPLES, "scaling_running_example.ded")
SEALED = os.path.join(EXAMPLES, "sealed.ded")


def _explained(capsys, path: str, component: str) -> dict:
    assert cli.main(["explain", path, "--format", "json", "--component", component]) == 0
    return json.loads(capsys.readouterr().out)["components"][0]


def _candidate(component: dict, lines) -> dict:
    return next(c for c in component["decouplings"]
                if sorted(int(r["where"].split(":")[-2]) for r in c["rules"]) == list(lines))


def test_the_running_examples_storage_split_is_refused_by_both(capsys):
    # issue 31: explain offered the state machine decoupling of lines 70-75, which rewrite refuses
    cand = _candidate(_explained(capsys, RUNNING, "storage"), (70, 71, 73, 74, 75))
    assert cand["rewrites"] == []
    assert [r["rewrite"] for r in cand["refused"]] == ["state machine"]
    why = "the moved rules derive 'hashset', which the rules that stay derive or read too"
    assert cand["refused"][0]["reasons"][0]["message"] == why
    assert cli.main(["rewrite", RUNNING, "--decouple", "storage:70,71,73,74,75:sm"]) == 1
    assert f"state machine: {why}" in capsys.readouterr().err
    assert cli.main(["explain", RUNNING, "--component", "storage"]) == 0
    assert f"(downstream of valid): no rewrite\n        refused by the state machine rewrite: {why}\n" \
        in capsys.readouterr().out


def test_a_sent_relation_named_seal_is_refused_not_emitted_broken(capsys):
    # issue 31: the batches of `seal` and the channel's own seal were both `seal_moved` (4 and 7 arguments)
    cand = _candidate(_explained(capsys, SEALED, "main"), (45, 46, 47))
    assert "state machine" not in cand["rewrites"]
    refused = {r["rewrite"]: r["reasons"][0]["message"] for r in cand["refused"]}
    assert refused == {"state machine": "the batches need the relation name 'seal_seal_handlers' for two relations"}
    assert cli.main(["rewrite", SEALED, "--decouple", "main:45,46,47:moved"]) == 1
    err = capsys.readouterr().err
    assert "state machine: the batches need the relation name 'seal_moved' for two relations" in err
    assert "argument(s) here but" not in err


def test_without_refusals_the_report_is_the_analyses_alone():
    program = Program.from_files(RUNNING)
    alone = next(c for c in report(program, "storage")["components"][0]["decouplings"]
                 if c["found_by"] == "downstream of valid")
    assert alone["rewrites"] == ["state machine"] and alone["refused"] == []
    target = Target("storage", tuple(r["index"] for r in alone["rules"]))
    assert refusals(program, "storage", target.rules, "state machine")


def test_every_decoupling_explain_offers_on_the_examples_is_applied():
    # the statistic: 86 of the 89 offered were applied; now every one offered is
    by_name = {r.REWRITE: r for r in REWRITES}
    offered = 0
    for path in sorted(glob.glob(os.path.join(EXAMPLES, "*.ded"))):
        program = Program.from_files(path)
        for component in report(program, refusals=refusals)["components"]:
            for cand in component["decouplings"]:
                target = Target(component["name"], tuple(r["index"] for r in cand["rules"]))
                if cand["rewrites"]:
                    decouple_first(program, target)  # what `rewrite --decouple` applies
                for name in cand["rewrites"]:
                    offered += 1
                    rewritten, _ = by_name[name].apply(program, target)
                    Program.parse(program_text(rewritten, source_rules(rewritten)), path)  # the printed text checks
                for refused in cand["refused"]:
                    with pytest.raises(RewriteError):
                        by_name[refused["rewrite"]].apply(program, target)
    assert offered > 50


def test_a_persisted_replicated_input_is_shown_refused(capsys):
    # issue 31: explain called shortest_paths partially partitionable; --partition refuses it
    path = os.path.join(EXAMPLES, "shortest_paths.ded")
    why = "the replicated input road is persisted: the coordinator orders arrivals only"
    part = _explained(capsys, path, "main")["partition_rewrites"]
    assert part["rewrites"] == []
    assert [(r["rewrite"], r["reasons"][0]["message"]) for r in part["refused"]] == [("partial partitioning", why)]
    assert cli.main(["rewrite", path, "--partition", "main:4"]) == 1
    assert why in capsys.readouterr().err
    assert cli.main(["explain", path]) == 0
    assert f"      refused by the partial partitioning rewrite: {why}\n" in capsys.readouterr().out


def test_every_partitioning_explain_offers_is_applied_and_every_refused_one_refused(capsys):
    paths = sorted(glob.glob(os.path.join(EXAMPLES, "*.ded")) + glob.glob(os.path.join(EXAMPLES, "protocols", "*.ded")))
    offered = refused = 0
    for path in paths:
        for component in report(Program.from_files(path), refusals=refusals)["components"]:
            part = component["partition_rewrites"]
            if not part["rewrites"] and not part["refused"]:
                continue
            code = cli.main(["rewrite", path, "--partition", f"{component['name']}:4"])
            err = capsys.readouterr().err
            assert code == (0 if part["rewrites"] else 1), (path, component["name"])
            assert all(r["reasons"][0]["message"] in err for r in part["refused"])
            offered, refused = offered + bool(part["rewrites"]), refused + bool(part["refused"])
    # (a component whose parts are not state machines (A.4) has no partial policy: not counted here)
    assert offered > 20 and refused >= 2


def test_candidates_print_their_rules(capsys):
    # issue 49: the co-hashing leader has two candidates deriving allVotes, voteCounts,
    # committed and reply: its independent part (lines 37-41, with the rule that takes
    # voteFromReplica in) and what is downstream of voteCounts (38-41); each prints its
    # rules (file:line; in JSON with their text)
    path = os.path.join(EXAMPLES, "microbenchmarks", "partitioning_cohashing.ded")
    assert cli.main(["explain", path, "--component", "leader"]) == 0
    text = capsys.readouterr().out.splitlines()
    heads = "{allVotes, voteCounts, committed, reply}"
    starts = [i for i, line in enumerate(text) if line.startswith(f"      {heads} (")]
    rules = [text[i + 1 + next(k for k, line in enumerate(text[i + 1:]) if "rules: " in line)] for i in starts]
    assert rules == ["        rules: " + ", ".join(f"{path}:{n}" for n in lines)
                     for lines in ([37, 38, 39, 40, 41], [38, 39, 40, 41])]
    leader = _explained(capsys, path, "leader")
    first = leader["decouplings"][1]["rules"][0]
    assert first == {"index": first["index"], "head": "allVotes", "where": f"{path}:37:5",
                     "text": "allVotes(L, I, C, Id, V) :- voteFromReplica(L, I, C, Id, V);"}
