"""Parsing every construct of the dialect (docs/language.md) into
the AST. Expected trees are written by hand; AST equality ignores positions,
positions are asserted separately where they matter."""

from __future__ import annotations

import pytest

from frontend_helpers import A, C, V, one, stmts
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.ast import (Aggregate, BinOp, Choose, Column, Comparison, Component, Decl, Fact,
                                     Include, InputDecl, Neg, Negated, OutputDecl, PersistDecl, Pos, Rule,
                                     TickTime, VarTime, Wildcard)
from sparkdedalus.syntax.diagnostics import DiagnosticError
from sparkdedalus.syntax.parser import parse_text


# ---------------------------------------------------------------- facts

def test_fact_at_tick():
    assert one('node("a", "b")@1;') == Fact(A("node", C("a"), C("b")), 1)


def test_edb_fact_has_no_tick():
    assert one('edge("g", "a", "b");') == Fact(A("edge", C("g"), C("a"), C("b")), None)


def test_fact_constants_of_every_type():
    fact = one('p("s", 42, -3, 2.5, -0.25, true, false, 7)@12;')
    assert fact.tick == 12
    assert fact.atom.args == (C("s"), C(42), C(-3), C(2.5), C(-0.25), C(True), C(False), C(7))
    # constants of different Python types differ even when == in Python
    assert [type(a.value) for a in fact.atom.args] == [str, int, int, float, float, bool, bool, int]
    assert C(1) != C(True) and C(1) != C(1.0)


def test_string_escapes_and_unicode():
    fact = one(r'p("a\"b", "back\\slash", "tab\tnew\nline", "héllo ✓", "");')
    assert fact.atom.args == (C('a"b'), C("back\\slash"), C("tab\tnew\nline"), C("héllo ✓"), C(""))


def test_float_with_exponent():
    assert one("p(1.5e3, 2.0E-2);").atom.args == (C(1500.0), C(0.02))


def test_facts_may_be_many_on_one_line():
    assert stmts('p("a")@1; p("b")@2; p("c");') == (
        Fact(A("p", C("a")), 1), Fact(A("p", C("b")), 2), Fact(A("p", C("c")), None))


# ---------------------------------------------------------------- rules and deliveries

def test_deductive_rule():
    assert one("log(N, P) :- bcast(N, P);") == Rule(A("log", "N", "P"), "now", (A("bcast", "N", "P"),))


@pytest.mark.parametrize("suffix, delivery", [("next", "next"), ("async", "async"), ("later", "async")])
def test_rule_deliveries(suffix, delivery):
    rule = one(f"log(M, P)@{suffix} :- bcast(N, P), node(N, M);")
    assert rule == Rule(A("log", "M", "P"), delivery, (A("bcast", "N", "P"), A("node", "N", "M")))


def test_later_is_async():
    assert one("p(X)@later :- q(X);") == one("p(X)@async :- q(X);")


def test_unquoted_identifiers_are_variables_whatever_their_case():
    rule = one("p(node, Pl, l2) :- q(node, Pl, l2);")
    assert rule.head.args == (V("node"), V("Pl"), V("l2"))


def test_wildcards():
    rule = one("p(X) :- q(X, _, _);")
    assert rule.body == (A("q", "X", "_", "_"),)
    assert rule.body[0].args[1] == Wildcard()


def test_relation_names_may_contain_dots_and_digits():
    rule = one("net.send2(X) :- net.recv_1(X);")
    assert rule.head.name == "net.send2" and rule.body[0].name == "net.recv_1"


def test_keywords_only_where_they_are_keywords():
    # `notin`, `choose`, `format`, `from` as prefixes or variables are plain names
    rule = one("notinfo(X, choose, from) :- q(X, choose, from), notinvited(X), chooser(X);")
    assert rule == Rule(A("notinfo", "X", V("choose"), V("from")), "now",
                        (A("q", "X", V("choose"), V("from")), A("notinvited", "X"), A("chooser", "X")))


# ---------------------------------------------------------------- negation

def test_notin_and_bang_are_the_same_negation():
    rule = one("p(X) :- q(X), notin r(X), !s(X, 1);")
    assert rule.body == (A("q", "X"), Negated(A("r", "X")), Negated(A("s", "X", 1)))


# ---------------------------------------------------------------- time qualifiers

def test_body_atom_at_a_tick():
    rule = one("p(X) :- q(X)@5;")
    assert rule.body == (A("q", "X", time=TickTime(5)),)


def test_entanglement_binds_a_tick_variable():
    rule = one("seen(N, R, T)@next :- req(N, R)@T;")
    assert rule == Rule(A("seen", "N", "R", "T"), "next", (A("req", "N", "R", time=VarTime(V("T"))),))


def test_negated_atom_with_time_qualifier():
    rule = one("p(X) :- q(X), notin r(X)@3;")
    assert rule.body[1] == Negated(A("r", "X", time=TickTime(3)))


# ---------------------------------------------------------------- comparisons and arithmetic

@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_comparison_operators(op):
    rule = one(f"p(X) :- q(X, Y), X {op} Y;")
    assert rule.body[1] == Comparison(op, V("X"), V("Y"))


def test_assignment_style_equality():
    rule = one("p(X, Z) :- q(X), Z == X + 1;")
    assert rule.body[1] == Comparison("==", V("Z"), BinOp("+", V("X"), C(1)))


def _cmp_right(expr_text: str):
    return one(f"p(X) :- q(X, Y, Z), X == {expr_text};").body[1].right


def test_multiplication_binds_tighter_than_addition():
    assert _cmp_right("Y + Z * 2") == BinOp("+", V("Y"), BinOp("*", V("Z"), C(2)))
    assert _cmp_right("Y * Z + 2") == BinOp("+", BinOp("*", V("Y"), V("Z")), C(2))


def test_operators_are_left_associative():
    assert _cmp_right("Y - Z - 1") == BinOp("-", BinOp("-", V("Y"), V("Z")), C(1))
    assert _cmp_right("Y / Z % 3") == BinOp("%", BinOp("/", V("Y"), V("Z")), C(3))


def test_parentheses_override_precedence():
    assert _cmp_right("(Y + Z) * 2") == BinOp("*", BinOp("+", V("Y"), V("Z")), C(2))
    assert _cmp_right("Y - (Z - 1)") == BinOp("-", V("Y"), BinOp("-", V("Z"), C(1)))


def test_unary_minus():
    # on a literal number it folds into a negative constant
    assert _cmp_right("-3") == C(-3)
    assert _cmp_right("- 2.5") == C(-2.5)
    assert _cmp_right("-(3)") == C(-3)
    # on anything else it is a Neg node, binding tighter than * and +
    assert _cmp_right("-Y") == Neg(V("Y"))
    assert _cmp_right("-Y * Z") == BinOp("*", Neg(V("Y")), V("Z"))
    assert _cmp_right("-(Y * Z)") == Neg(BinOp("*", V("Y"), V("Z")))
    assert _cmp_right("Y - -Z") == BinOp("-", V("Y"), Neg(V("Z")))
    assert _cmp_right("Y * -2") == BinOp("*", V("Y"), C(-2))
    assert _cmp_right("--Y") == Neg(Neg(V("Y")))


def test_comparison_between_expressions_on_both_sides():
    rule = one('p(X) :- q(X, Y), X + 1 < Y * 2, Y != "a" + "b";')
    assert rule.body[1:] == (Comparison("<", BinOp("+", V("X"), C(1)), BinOp("*", V("Y"), C(2))),
                             Comparison("!=", V("Y"), BinOp("+", C("a"), C("b"))))


def test_head_expressions():
    rule = one("p(X, Y + 1, -Y, 2 * (Y - 1)) :- q(X, Y);")
    assert rule.head.args == (V("X"), BinOp("+", V("Y"), C(1)), Neg(V("Y")),
                              BinOp("*", C(2), BinOp("-", V("Y"), C(1))))


# ---------------------------------------------------------------- aggregates and choose

@pytest.mark.parametrize("func", ["count", "sum", "min", "max", "avg"])
def test_head_aggregates(func):
    rule = one(f"r(C, X, {func}<A>) :- v(C, A, X);")
    assert rule.head.args == (V("C"), V("X"), Aggregate(func, V("A")))


def test_count_star():
    rule = one("n(C, count<*>) :- v(C, A);")
    assert rule.head.args == (V("C"), Aggregate("count", None))


def test_aggregate_allows_spaces():
    assert one("n(C, count < A >) :- v(C, A);").head.args[1] == Aggregate("count", V("A"))
    assert one("n(C, count< * >) :- v(C, A);").head.args[1] == Aggregate("count", None)


def test_aggregate_variable_position():
    agg = parse_text("n(C, count< A >) :- v(C, A);", "f.ded").statements[0].head.args[1]
    assert agg.pos == Pos("f.ded", 1, 6)  # the aggregate starts at `count`
    assert agg.var.pos == Pos("f.ded", 1, 13)  # its variable at `A`


def test_choose():
    rule = one("leader(G, L) :- cand(G, L, W), choose((G), (L, W));")
    assert rule.body[1] == Choose((V("G"),), (V("L"), V("W")))


def test_choose_with_several_keys_and_no_keys():
    assert one("p(X) :- q(X, Y, Z), choose((X, Y), (Z));").body[1] == Choose((V("X"), V("Y")), (V("Z"),))
    assert one("p(X) :- q(X, Y), choose((), (Y));").body[1] == Choose((), (V("Y"),))


# ---------------------------------------------------------------- include and declarations

def test_include():
    assert one('include "lib/common.ded";') == Include("lib/common.ded")


def test_decl():
    decl = one(".decl vote(loc: string, agent: string, ballot: int, w: double, ok: bool, n: long)")
    assert decl == Decl("vote", (Column("loc", "string"), Column("agent", "string"), Column("ballot", "int"),
                                 Column("w", "double"), Column("ok", "bool"), Column("n", "long")))


def test_declarations_take_an_optional_semicolon():
    assert stmts(".decl p(l: string);\n.output p;\n.persist p;\n.input p from \"p.csv\";") == \
        stmts(".decl p(l: string)\n.output p\n.persist p\n.input p from \"p.csv\"")


@pytest.mark.parametrize("fmt", ["delta", "parquet", "csv", "json"])
def test_input_with_format(fmt):
    assert one(f'.input req from "data/req" format {fmt}') == InputDecl("req", "data/req", fmt)


def test_input_without_format():
    assert one('.input req from "req.parquet"') == InputDecl("req", "req.parquet", None)


def test_output_and_persist():
    assert stmts(".output log\n.persist node") == (OutputDecl("log"), PersistDecl("node"))


# ---------------------------------------------------------------- components

def test_component_block():
    unit = stmts("""
        component leader {
          .persist acks
          acks(L, N) :- ack(L, N);
          include "x.ded";
        }
        ack("l", "n")@1;
    """)
    assert unit == (
        Component("leader", (PersistDecl("acks"), Rule(A("acks", "L", "N"), "now", (A("ack", "L", "N"),)),
                             Include("x.ded"))),
        Fact(A("ack", C("l"), C("n")), 1),
    )


def test_empty_component():
    assert one("component idle { }") == Component("idle", ())


# ---------------------------------------------------------------- comments

def test_comments_are_ignored_and_kept_apart():
    text = ('// line comment\n'
            'p(X) :- /* inline */ q(X); // trailing\n'
            '/* block\n   over lines */\n'
            'r("// not a comment", "/* nor this */");\n')
    unit = parse_text(text, "c.ded")
    assert unit.statements == (Rule(A("p", "X"), "now", (A("q", "X"),)),
                               Fact(A("r", C("// not a comment"), C("/* nor this */")), None))
    assert [(c.text, c.pos.line, c.pos.col) for c in unit.comments] == [
        ("// line comment", 1, 1), ("/* inline */", 2, 9), ("// trailing", 2, 28),
        ("/* block\n   over lines */", 3, 1)]


def test_comments_do_not_take_part_in_equality():
    assert parse_text("p(1); // x") == parse_text("p(1);")


# ---------------------------------------------------------------- the location mark

def test_location_mark_is_accepted_and_dropped():
    assert one("p(#L, X) :- q(#L, X);") == one("p(L, X) :- q(L, X);")
    assert one('p(#"a", 1)@1;') == Fact(A("p", C("a"), C(1)), 1)


# ---------------------------------------------------------------- positions

def test_positions_are_one_based_line_and_column():
    unit = parse_text('p("a");\n\n  log(N, P)@next :- log(N, P), notin gone(N), P > 1;\n', "pos.ded")
    rule = unit.statements[1]
    assert rule.pos == Pos("pos.ded", 3, 3)
    assert rule.head.pos == Pos("pos.ded", 3, 3)
    assert rule.head.args[1].pos == Pos("pos.ded", 3, 10)
    assert rule.body[0].pos == Pos("pos.ded", 3, 21)
    assert rule.body[1].pos == Pos("pos.ded", 3, 32)  # the `notin` keyword
    assert rule.body[1].atom.pos == Pos("pos.ded", 3, 38)
    assert rule.body[2].pos == Pos("pos.ded", 3, 49)  # a comparison sits at its operator


def test_positions_do_not_take_part_in_equality():
    assert parse_text("p(X) :- q(X);", "a.ded") == parse_text("\n\n   p( X )  :-  q( X ) ;", "b.ded")


def test_empty_file():
    assert parse_text("") == ast.Unit(())
    assert parse_text("// only a comment\n").statements == ()


def test_syntax_error_raises_diagnostic_error():
    with pytest.raises(DiagnosticError):
        parse_text("p(X) :- ;")
