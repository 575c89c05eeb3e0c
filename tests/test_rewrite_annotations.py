"""A rewrite keeps the program's `// @gc` annotations and `// @home`
directives (issue 31): it assembles the new program from ASTs and metadata
(sparkdedalus/rewrite/source.py), with no text step that drops comments."""

from __future__ import annotations

from sparkdedalus import Program
from sparkdedalus.faults.worlds import with_worlds
from sparkdedalus.rewrite.decouple import decouple, select
from sparkdedalus.rewrite.partition import partition
from sparkdedalus.rewrite.source import source_rules
from sparkdedalus.rewrite.text import gc_comment, program_text

VOTES = '''component k { .persist vote .persist done
  // @gc vote(L, B, _) when done(L, B)
  vote(L, B, V) :- ballot(L, B, V);
  done(L, B) :- vote(L, B, _), closed(L, B);
  tally(L, B, count<V>) :- vote(L, B, V); }
component c { ballot(D, B, V)@async :- ask(L, D, B, V); }
ask("c", "k", 1, 5)@1; closed("k", 1)@3;'''


def annotations(program) -> list:
    return [gc_comment(a) for a in program.gc_annotations]


def test_the_program_has_its_annotation():
    assert annotations(Program.parse(VOTES)) == ["// @gc vote(L, B, _) when done(L, B)"]


def test_a_decoupling_keeps_the_annotation():
    p = Program.parse(VOTES)
    q = decouple(p, "k", select(p, "k", ["tally"]), "kt")
    assert annotations(q) == annotations(p)
    assert q.homes == ("/kt",)


def test_a_partitioning_keeps_the_annotation_and_prints_it():
    q = partition(Program.parse(VOTES), "k", 2)
    assert annotations(q) == ["// @gc vote(L, B, _) when done(L, B)"]
    text = program_text(q, source_rules(q))
    assert "// @gc vote(L, B, _) when done(L, B)\n" in text
    again = Program.parse(text)
    assert annotations(again) == annotations(q) and again.homes == q.homes


def test_the_fault_worlds_keep_the_annotation_per_world():
    text = VOTES.replace("component k {", "component k { pre(L, B) :- vote(L, B, _); post(L, B) :- vote(L, B, _);")
    w = with_worlds(Program.parse(text))
    assert {"vote", "done"} <= w.dependent
    assert annotations(w.program) == ["// @gc vote(L, W, B, _) when done(L, W, B)"]
