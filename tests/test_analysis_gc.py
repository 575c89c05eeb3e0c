"""The GC analysis (sparkdedalus/analysis/gc.py) and the `// @gc` directive:
findings on small programs, each derived by hand from the patterns in the
module's docstring (docs/gc.md), and programs where it must find nothing."""

from __future__ import annotations

import textwrap

import pytest

from sparkdedalus import Program
from sparkdedalus.analysis.explain import explain, report
from sparkdedalus.analysis.gc import gc_rules, not_collected
from sparkdedalus.syntax.diagnostics import DiagnosticError


def parse(text: str) -> Program:
    return Program.parse(textwrap.dedent(text).lstrip("\n"), "t.ded")


#: (a) DR+: z negates persisted y on x's variables; x's only consumer is that rule.
DR_PLUS = """
.persist x
.persist y
z(L, K) :- x(L, K), notin y(L, K);
y(L, K) :- mark(L, K);
x("a", 1)@1; x("a", 2)@1; mark("a", 1)@2;
"""

#: (b) punctuation: every rule deriving item carries notin closed(L, O), so once
#: closed(L, O) holds no item of order O can appear; order's consumer joins item on (L, O).
PUNCTUATION = """
.persist order
.persist closed
item(L, O, I) :- add(L, O, I), notin closed(L, O);
closed(L, O) :- close(L, O);
line(L, O, I, P) :- order(L, O, P), item(L, O, I);
order("a", "o1", 10)@1; add("a", "o1", "i1")@2; close("a", "o1")@3; add("a", "o1", "i2")@4;
"""

#: (c) held: seen's consumer copies it into persisted log, which then holds it for good.
HELD = """
.persist seen
.persist log
log(L, M)@next :- seen(L, M);
seen(L, M) :- msg(L, M);
msg("a", "m1")@1; msg("a", "m2")@3;
"""

#: (d) annotation: the votes of a slot go once the slot is chosen (the paper's Paxos example).
ANNOTATED = """
.persist vote
.persist chosen
.output chosen
// @gc vote(L, S, A) when chosen(L, S)
nvotes(L, S, count<A>) :- vote(L, S, A);
chosen(L, S) :- nvotes(L, S, N), N >= 2;
vote("a", 1, "x")@1; vote("a", 1, "y")@2; vote("a", 2, "x")@2; vote("a", 2, "z")@4;
"""


def test_dr_plus():
    [rule] = gc_rules(parse(DR_PLUS))
    assert rule.text() == "x(L, K) when y(L, K)"
    assert rule.pattern == "DR+"
    assert [str(p) for p in rule.relies_on] == ["t.ded:3:1"]
    assert rule.reasons[0].where == "t.ded:3:1" and "DR+" in rule.reasons[0].message


def test_punctuation_on_a_sealed_partner():
    [rule] = gc_rules(parse(PUNCTUATION))
    assert rule.text() == "order(L, O, P) when closed(L, O)"
    assert rule.pattern == "punctuation"
    assert [str(p) for p in rule.relies_on] == ["t.ded:5:1"]
    assert "sealed by 'closed'" in rule.reasons[0].message


def test_punctuation_on_a_persisted_partner_also_needs_it_empty():
    [rule] = gc_rules(parse(".persist item\n" + PUNCTUATION.replace("item(L, O, I) :- add", "item(L, O, I) :- add")))
    assert rule.text() == "order(L, O, P) when closed(L, O), notin item(L, O, _)"


def test_held():
    [rule] = gc_rules(parse(HELD))
    assert rule.text() == "seen(L, M) when log(L, M)"
    assert rule.pattern == "held"
    assert [str(p) for p in rule.relies_on] == ["t.ded:3:1"]


def test_annotation():
    [rule] = gc_rules(parse(ANNOTATED))
    assert rule.text() == "vote(L, S, A) when chosen(L, S)"
    assert rule.pattern == "annotation"
    assert [str(p) for p in rule.relies_on] == ["t.ded:4:8"]
    # without the annotation the aggregate keeps every vote
    assert gc_rules(parse(ANNOTATED.replace("// @gc", "// no gc"))) == []


def test_one_rule_per_relation_joins_the_conditions_of_all_consumers():
    program = parse("""
        .persist req
        .persist done
        out(L, R) :- req(L, R), notin done(L, R);
        done(L, R)@next :- req(L, R), ok(L, R);
        ok("a", 1)@2; req("a", 1)@1;
        """)
    [rule] = gc_rules(program)
    assert rule.text() == "req(L, R) when done(L, R)"
    assert rule.pattern == "DR+, held"
    assert [str(p) for p in rule.relies_on] == ["t.ded:3:1", "t.ded:4:1"]


NOTHING = {
    # y is not persisted: x("a", 1) is blocked at tick 2 only and counts again at tick 3
    "negated relation not persisted": """
        .persist x
        z(L, K) :- x(L, K), notin y(L, K);
        y(L, K) :- mark(L, K);
        x("a", 1)@1; mark("a", 1)@2;
        """,
    # a second consumer still reads x whatever y says
    "one consumer without a pattern": DR_PLUS + "w(L, K) :- x(L, K), K > 0;\n",
    # each condition would read the other relation, which would not stay
    "conditions reading each other": """
        .persist x
        .persist y
        a(L, K) :- x(L, K), notin y(L, K);
        b(L, K) :- y(L, K), notin x(L, K);
        """,
    # the partner is not sealed: one rule deriving item does not check closed
    "partner not sealed": PUNCTUATION + "item(L, O, I) :- late(L, O, I);\n",
    # sink, declared output, aggregate
    "sink": ".persist log\nlog(L, M) :- msg(L, M);\n",
    "declared output": DR_PLUS + ".output x\n.output z\n",
    "aggregated": ".persist v\nn(L, count<A>) :- v(L, A);\n",
}


@pytest.mark.parametrize("name", list(NOTHING))
def test_finds_nothing(name):
    program = parse(NOTHING[name])
    assert gc_rules(program) == []
    assert set(not_collected(program)) == set(program.persisted)


def test_kept_reasons_say_why():
    kept = not_collected(parse(NOTHING["negated relation not persisted"]))
    assert str(kept["x"]) == "t.ded:2:1: no pattern shows that the rule can never again use a 'x' fact"
    kept = not_collected(parse(NOTHING["aggregated"]))
    assert str(kept["v"]) == "t.ded:2:1: 'v' is read by a rule with an aggregate or choose"


def test_explain_lists_the_gc_rules():
    program = parse(DR_PLUS)
    data = report(program)["gc"]
    assert data["rules"] == [{"relation": "x", "rule": "x(L, K) when y(L, K)", "pattern": "DR+",
                              "relies_on": ["t.ded:3:1"], "reasons": [rule.to_json() for rule in
                                                                      gc_rules(program)[0].reasons]}]
    assert data["kept"] == [{"relation": "y", "reason": {"message": "'y' is negated by the rule",
                                                          "where": "t.ded:3:1"}}]
    text = explain(program)
    assert "  x(L, K) when y(L, K)  (DR+)" in text.splitlines()
    assert "garbage collection: nothing to reclaim" in explain(parse(NOTHING["sink"]))


@pytest.mark.parametrize("directive, message", [
    ("// @gc vote(L, S, A) chosen(L, S)", "t.ded:4:1: error: @gc: expected '// @gc rel(args) when condition'"),
    ("// @gc vote(L, S, A) when chosen(L, S", "t.ded:4:38: error: @gc: syntax error"),
    ("// @gc nvotes(L, S, N) when chosen(L, S)", "t.ded:4:8: error: @gc: 'nvotes' is not persisted"),
    ("// @gc vote(L, S) when chosen(L, S)", "t.ded:4:8: error: @gc: 'vote' has 3 column(s), not 2"),
    ("// @gc vote(L, S, A) when chosen(L, S), X > 1", "t.ded:4:8: error: @gc: variable 'X' is not bound"),
    ("// @gc vote(L, S, A) when nope(L, S)", "t.ded:4:8: error: @gc: unknown relation 'nope'"),
    ("// @gc vote(L, S, A) when chosen(L, S)@3", "t.ded:4:8: error: @gc: a condition reads the current tick only"),
])
def test_bad_directives_are_errors_with_their_place(directive, message):
    with pytest.raises(DiagnosticError) as caught:
        parse(ANNOTATED.replace("// @gc vote(L, S, A) when chosen(L, S)", directive))
    assert caught.value.diagnostics[0].header().startswith(message)


def test_directive_with_wildcards_and_negation():
    program = parse(ANNOTATED.replace("when chosen(L, S)", "when chosen(L, _), notin vote(L, S, \"q\")"))
    assert gc_rules(program)[0].text() == 'vote(L, S, A) when chosen(L, _), notin vote(L, S, "q")'
