"""Growing relations, carried relations and differential rules (analysis/growth.py),
on small programs checked by hand."""

from sparkdedalus import Program
from sparkdedalus.analysis.growth import carried_relations, differential_rules, growing_relations


def analyse(text: str, stamped=frozenset()):
    program = Program.parse(text)
    growing = growing_relations(program, stamped)
    differential = {program.rules[i].text() for i in differential_rules(program, growing)}
    return growing, carried_relations(program, growing), differential


def test_persisted_relations_grow_whatever_derives_them():
    growing, carried, _ = analyse('.persist seen\nmsg("a", 1)@2;\nseen(L, X) :- msg(L, X), notin block(L, X);\n'
                                  'block("a", 3);')
    assert "seen" in growing and "seen" in carried
    assert "msg" not in growing  # a fact of tick 2 only
    assert "block" in growing and "block" not in carried  # static: nothing to carry


def test_monotone_rules_over_growing_relations_grow():
    growing, carried, differential = analyse(
        'edge("a", 1, 2);\npath(L, X, Y) :- edge(L, X, Y);\npath(L, X, Z) :- path(L, X, Y), edge(L, Y, Z);')
    assert {"edge", "path"} <= growing
    assert carried == {"path"}
    assert differential == {"path(L, X, Y) :- edge(L, X, Y);", "path(L, X, Z) :- path(L, X, Y), edge(L, Y, Z);"}


def test_negation_aggregation_choose_and_messages_stop_growth():
    growing, carried, differential = analyse(
        'e("a", 1); f("a", 2);\n'
        'n(L, X) :- e(L, X), notin f(L, X);\n'           # negation: f may grow and n shrink
        'c(L, count<X>) :- e(L, X);\n'                   # a count can change
        'k(L, X) :- e(L, X), choose((L), (X));\n'        # choose can change its pick
        'm(L, X)@async :- e(L, X);\n'                   # a message arrives once
        'uses_m(L, X) :- m(L, X);')
    assert not {"n", "c", "k", "m", "uses_m"} & growing
    assert carried == frozenset() and differential == set()


def test_reading_the_clock_stops_growth():
    growing, _, differential = analyse('e("a", 1);\nstamp(L, X, T) :- e(L, X)@T;\nold(L, X) :- e(L, X)@1;')
    assert "stamp" not in growing and "old" not in growing
    assert differential == set()


def test_growth_needs_every_source_to_grow():
    # q grows (static), but p also gets a fact of tick 3 only, and r reads p
    growing, _, _ = analyse('q("a", 1);\np("a", 2)@3;\np(L, X) :- q(L, X);\nr(L, X) :- p(L, X);')
    assert "q" in growing and "p" not in growing and "r" not in growing


def test_stamped_inputs_do_not_grow_unless_persisted():
    text = '.decl obs(loc: string, v: int)\nseen(L, V) :- obs(L, V);'
    assert "obs" in analyse(text)[0] and "seen" in analyse(text)[0]
    growing, _, differential = analyse(text, stamped=frozenset({"obs"}))
    assert "obs" not in growing and "seen" not in growing and differential == set()


def test_next_rules_grow_but_are_not_differential():
    growing, carried, differential = analyse('e("a", 1);\np(L, X)@next :- e(L, X);\nq(L, X) :- p(L, X);')
    assert {"p", "q"} <= growing and {"p", "q"} <= carried
    assert differential == {"q(L, X) :- p(L, X);"}


def test_negated_growing_relation_is_differential_only_under_a_persisted_head():
    growing, _, differential = analyse(
        '.persist done\nreq("a", 1)@1; req("a", 2)@2;\nfin("a", 1);\n'
        'done(L, X) :- fin(L, X), notin req(L, X);\n'  # req is not growing: full every tick
        'ok(L, X) :- done(L, X), notin fin(L, X);')     # ok grows? no: negation
    assert "req" not in growing and "ok" not in growing and "done" in growing
    assert differential == set()
    _, _, differential = analyse('.persist done\nfin("a", 1); gone("a", 2);\n'
                                 'done(L, X) :- fin(L, X), notin gone(L, X);')
    assert differential == {"done(L, X) :- fin(L, X), notin gone(L, X);"}
