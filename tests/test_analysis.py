"""Analyses of a checked program: dependency graph, strata, temporal cycles,
roles (EDB/IDB, component inputs/outputs), persistence, types. Every expected
value is derived by hand from the program text."""

from __future__ import annotations

from sparkdedalus import Program
from sparkdedalus.checks.dependencies import dependency_graph
from sparkdedalus.analysis.roles import component_roles
from sparkdedalus.checks.stratification import temporal_cycles
from sparkdedalus.syntax.ast import Pos


def parse(text: str) -> Program:
    return Program.parse(text, "a.ded")


def edges_of(program: Program) -> set:
    return {(e.source, e.target, e.polarity, e.time) for e in dependency_graph(program.rules)}


# ---------------------------------------------------------------- dependency graph

EDGES_PROGRAM = """\
a(N, X) :- e(N, X);
b(N, X)@next :- a(N, X), notin f(N, X);
c(N, count<X>)@async :- a(N, X);
d(N, X) :- e(N, X), notin b(N, X);
g(N, X)@async :- a(N, X), notin c(N, X);
h(N, sum<X>)@next :- a(N, X);
k(N, X) :- e(N, X), choose((N), (X));
m(N, count<X>) :- e(N, X);
p(N, H) :- e(N, X), hash(X, H);
e("n", 1);
f("n", 2);
"""


def test_edge_labels_polarity_and_time():
    assert edges_of(parse(EDGES_PROGRAM)) == {
        ("e", "a", "positive", "now"),
        ("a", "b", "positive", "next"),
        ("f", "b", "negated", "next"),
        ("a", "c", "aggregated", "async"),
        ("e", "d", "positive", "now"),
        ("b", "d", "negated", "now"),
        ("a", "g", "positive", "async"),
        ("c", "g", "negated", "async"),
        ("a", "h", "aggregated", "next"),
        ("e", "k", "aggregated", "now"),  # choose needs its input complete, like an aggregate
        ("e", "m", "aggregated", "now"),
        ("e", "p", "positive", "now"),  # function relations (hash) are not nodes of the graph
    }


def test_edges_name_their_rule_and_literal():
    program = parse(EDGES_PROGRAM)
    negated = [e for e in dependency_graph(program.rules) if e.polarity == "negated" and e.target == "d"]
    (edge,) = negated
    assert edge.rule == 3 and program.rules[edge.rule].head.name == "d"
    assert edge.pos == Pos("a.ded", 4, 21)  # the `notin` of rule 4
    assert edge.needs_complete_source


# ---------------------------------------------------------------- strata

STRATA_PROGRAM = """\
a(N, X) :- e(N, X);
b(N, X) :- a(N, X), notin c(N, X);
c(N, X) :- e(N, X), X > 1;
d(N, count<X>) :- b(N, X);
f(N, X) :- d(N, X), a(N, X);
g(N, X)@next :- f(N, X), notin g(N, X);
e("n", 1);
"""


def test_strata_order():
    # a, c read only e: stratum 0. b negates c: after c. d aggregates b: after b.
    # f reads d and a positively: with d. g is derived @next: in no stratum.
    program = parse(STRATA_PROGRAM)
    heads = [sorted({program.rules[i].head.name for i in s.rules}) for s in program.strata]
    assert heads == [["a", "c"], ["b"], ["d", "f"]]
    assert [s.rules for s in program.strata] == [(0, 2), (1,), (3, 4)]
    assert [s.index for s in program.strata] == [0, 1, 2]
    assert [s.recursive for s in program.strata] == [False, False, False]


def test_a_relation_is_in_a_later_stratum_than_what_it_negates_or_aggregates():
    program = parse(STRATA_PROGRAM)
    stratum_of = {program.rules[i].head.name: s.index for s in program.strata for i in s.rules}
    for e in dependency_graph(program.rules):
        if e.time == "now" and e.source in stratum_of:
            if e.needs_complete_source:
                assert stratum_of[e.source] < stratum_of[e.target]
            else:
                assert stratum_of[e.source] <= stratum_of[e.target]


def test_recursive_flag_transitive_closure():
    program = parse("""\
path(G, X, Y) :- edge(G, X, Y);
path(G, X, Z) :- edge(G, X, Y), path(G, Y, Z);
reach(G, X, count<Y>) :- path(G, X, Y);
edge("g", "a", "b");
""")
    assert [(sorted(s.relations & {"path", "reach"}), s.rules, s.recursive) for s in program.strata] == [
        (["path"], (0, 1), True), (["reach"], (2,), False)]


def test_mutual_recursion_is_recursive():
    program = parse('p(N, X) :- q(N, X);\nq(N, X) :- p(N, X);\nq(N, X) :- s(N, X);\ns("n", 1);\n')
    (stratum,) = program.strata
    assert stratum.rules == (0, 1, 2) and stratum.recursive
    assert {"p", "q"} <= stratum.relations


def test_recursion_through_next_is_not_same_tick_recursion():
    program = parse('p(N, X)@next :- q(N, X);\nq(N, X) :- p(N, X);\np("n", 1)@1;\n')
    (stratum,) = program.strata
    assert stratum.rules == (1,) and not stratum.recursive


# ---------------------------------------------------------------- temporal cycles

def test_temporal_cycles_through_next_and_async():
    program = parse("""\
p(N, X)@next :- q(N, X), notin p(N, X);
c(N, count<X>)@async :- d(N, X);
d(N, X) :- c(N, X);
r(N, X) :- q(N, X), notin s(N, X);
s(N, X)@next :- r(N, X);
keep(N, X)@next :- keep(N, X);
q("n", 1);
keep("n", 1)@1;
""")
    cycles = temporal_cycles(list(program.relations), dependency_graph(program.rules))
    # p negates itself across a tick; c aggregates d which reads c; r negates s which
    # r derives @next. The persistence cycle of keep is positive: not listed.
    assert sorted(cycles) == [["c", "d"], ["p"], ["r", "s"]]


# ---------------------------------------------------------------- roles

ROLES_PROGRAM = """\
component a {
  .persist st
  st(N, X) :- in(N, X);
  out(M, X)@async :- st(N, X), peer(N, M);
}
component b {
  got(N, X) :- out(N, X), notin bad(N, X);
  got(N, X)@next :- got(N, X);
}
in("n", 1)@1;
peer("n", "m");
bad("m", 2);
"""


def test_edb_and_idb():
    program = parse(ROLES_PROGRAM)
    assert program.idb == {"st", "out", "got"}
    assert program.edb == {"in", "peer", "bad"}


def test_component_inputs_and_outputs():
    # a: derives st, out; reads in, st, peer -> inputs in, peer; outputs out.
    # b: derives got; reads out, bad (the identity rule of got is ignored) -> outputs got.
    # main holds only facts: no rules, no roles.
    program = parse(ROLES_PROGRAM)
    assert program.components == ("a", "b", "main")
    roles = {r.name: (set(r.derived), set(r.inputs), set(r.outputs)) for r in component_roles(program)}
    assert roles == {
        "a": ({"st", "out"}, {"in", "peer"}, {"out"}),
        "b": ({"got"}, {"out", "bad"}, {"got"}),
        "main": (set(), set(), set()),
    }


def test_rules_carry_their_component():
    program = parse(ROLES_PROGRAM)
    assert [(r.head.name, r.component) for r in program.rules] == [
        ("st", "a"), ("out", "a"), ("got", "b"), ("got", "b"), ("st", "a")]  # .persist st comes last
    assert [f.component for f in program.facts] == ["main", "main", "main"]


def test_default_component_is_main():
    program = parse('p(N, X) :- q(N, X);\nq("n", 1);\n')
    assert program.components == ("main",)
    (roles,) = component_roles(program)
    assert (roles.name, set(roles.inputs), set(roles.outputs)) == ("main", {"q"}, {"p"})


# ---------------------------------------------------------------- persistence

def test_identity_next_rule_is_persistence():
    program = parse('p(N, X)@next :- p(N, X);\np("n", 1)@1;\n')
    assert program.persisted == {"p"}
    (rule,) = program.rules
    assert rule.persistence


def test_persist_declaration_adds_an_identity_rule():
    program = parse('.persist q\nq("n", 1, "x")@1;\n')
    assert program.persisted == {"q"}
    (rule,) = program.rules
    assert rule.persistence and rule.delivery == "next"
    assert rule.head.name == "q" and rule.head.arity == 3
    assert rule.body == (rule.head,)


def test_persist_declaration_next_to_an_identity_rule_adds_nothing():
    program = parse('.persist q\nq(N, X)@next :- q(N, X);\nq("n", 1)@1;\n')
    assert len(program.rules) == 1 and program.persisted == {"q"}


def test_non_identity_next_rules_are_not_persistence():
    program = parse("""\
r(N, X)@next :- r(N, Y), X == Y + 1;
s(N, X)@next :- s(X, N);
u(N, X)@async :- u(N, X);
v(N, X)@next :- v(N, X), w(N);
x(N, N)@next :- x(N, N);
y(N, 1)@next :- y(N, 1);
z(N, X)@next :- z(N, X)@T;
t(N, X) :- t(N, X), w(N);
r("n", 1)@1; s("n", "n")@1; u("n", 1)@1; v("n", 1)@1; x("n", "n")@1; y("n", 1)@1; z("n", 1)@1;
t("n", 1); w("n");
""")
    assert program.persisted == frozenset()
    assert not any(r.persistence for r in program.rules)


# ---------------------------------------------------------------- types

def types(program: Program) -> dict:
    return {name: rel.types for name, rel in program.relations.items()}


def test_aggregate_types():
    program = parse("""\
c(N, count<X>) :- v(N, X);
s(N, count<*>) :- v(N, X);
a(N, avg<X>) :- w(N, X);
m(N, min<X>) :- w(N, X);
v("n", "x");
w("n", 1);
""")
    t = types(program)
    assert t["c"] == ("string", "long")
    assert t["s"] == ("string", "long")
    assert t["a"] == ("string", "double")
    assert t["m"] == ("string", "int")  # min keeps the type of what it aggregates
    assert t["w"] == ("string", "int")


def test_numeric_widening():
    program = parse('z("a", 1)@1;\nz("a", 2.5)@1;\nu(N, X) :- z(N, X);\ni("a", 1);\nl(N, X) :- i(N, X);\n'
                    '.decl l(loc: string, n: long)\n')
    t = types(program)
    assert t["z"] == ("string", "double")  # int and double: double
    assert t["u"] == ("string", "double")
    assert t["i"] == ("string", "long")  # int widened to the long declared for l
    assert t["l"] == ("string", "long")


def test_unconstrained_columns_default_to_string():
    program = parse("p(N, X) :- q(N, X);\n")
    assert types(program) == {"p": ("string", "string"), "q": ("string", "string")}


def test_types_from_constants_expressions_ticks_and_functions():
    program = parse("""\
f("n", true, 2.5, 3);
cat(N, S) :- g(N, A), S == A + "!";
cmp(N, X) :- h(N, X), X > 0.5;
at(N, T) :- g(N, A)@T;
hs(N, H, L) :- g(N, A), hash(A, H), strlen(A, L);
sg(N, S) :- g(N, A), sign(A, S);
g("n", "x");
h("n", 1);
""")
    t = types(program)
    assert t["f"] == ("string", "bool", "double", "int")
    assert t["cat"] == ("string", "string")
    assert t["cmp"] == ("string", "double") and t["h"] == ("string", "double")
    assert t["at"] == ("string", "int")  # a tick is an int
    assert t["hs"] == ("string", "long", "long")
    assert t["sg"] == ("string", "string")


def test_declared_columns_and_default_column_names():
    program = parse('.decl vote(loc: string, agent: string, ballot: int)\nvote("n", "a", 1);\n'
                    'tally(N, B, count<A>) :- vote(N, A, B);\n')
    assert program.relations["vote"].columns == ("loc", "agent", "ballot")
    assert program.relations["vote"].declared
    assert program.relations["tally"].columns == ("loc", "c1", "c2")
    assert program.relations["tally"].types == ("string", "int", "long")
    assert not program.relations["tally"].declared


def test_crash_builtin_types():
    program = parse('alive(N) :- node(N), notin crash(N, N, _);\nnode("a");\n')
    assert program.relations["crash"].columns == ("loc", "node", "tick")
    assert program.relations["crash"].types == ("string", "string", "int")
