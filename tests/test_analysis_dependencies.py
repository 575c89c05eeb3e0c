"""Functional and co-partition dependencies (analysis/functional_dependencies.py),
checked by hand against the scaling paper's sections 4.2 and B.2.1."""

from pathlib import Path

from sparkdedalus import Program
from sparkdedalus.analysis.functional_dependencies import co_partition_dependencies, functional_dependencies

RUNNING = "examples/scaling_running_example.ded"


def where(fragment, text):
    """`file:line:col` of the first `text` on the one line of the running example holding `fragment`."""
    lines = Path(RUNNING).read_text().splitlines()
    (n,) = [n for n, line in enumerate(lines, 1) if fragment in line]
    return f"{RUNNING}:{n}:{lines[n - 1].index(text, lines[n - 1].index(fragment)) + 1}"


def fds(program):
    return {str(d): d for d in functional_dependencies(program)}


def test_function_relations_give_their_fd():
    # B.2.1 "EDB annotation": hash(M, H) simulates H = hash(M), so M -> H; sign likewise.
    found = fds(Program.from_files(RUNNING))
    assert "hash.H = hash(hash.V)" in found and "sign.S = sign(sign.V)" in found
    # the reason points at the first use of the function atom: `hash(V, H)` in the storage's
    # hashset rule
    assert [r.where for r in found["hash.H = hash(hash.V)"].reasons] == [
        where("hashset(N, H, V) :- valid", "hash(V, H)")]


def test_heads_inherit_fds_across_rules_and_messages():
    # signed(L, Id, V, Sig) :- request(...), sign(V, Sig)   (Line 1): Sig = sign(V);
    # toStorage(N, L, Id, V, Sig)@async :- signed(L, Id, V, Sig), ... (Line 2) inherits it.
    found = fds(Program.from_files(RUNNING))
    assert "signed.c3 = sign(signed.c2)" in found
    d = found["toStorage.sig = sign(toStorage.v)"]
    assert (d.kind, d.source.column, d.target.column, d.via) == ("fd", 3, 4, ("sign",))
    sign_rule = "signed(L, Id, V, Sig) :-"
    assert [r.where for r in d.reasons] == [where("toStorage(N, L, Id, V, Sig)@async", "toStorage"),
                                            where(sign_rule, "signed"), where(sign_rule, "sign(V, Sig)")]
    # no FD relates the id to the value: nothing in the program forces one value per id
    assert not any(d.source.name == "id" or d.target.name == "id" for d in found.values())


def test_variable_sharing_and_equality_give_identity_fds():
    # B.2.1 "variable sharing": p's two attributes always hold X; r's are equal through X == Y.
    found = fds(Program.parse('e("a", 1); f("a", 1);\np(L, X, X) :- e(L, X);\n'
                              'r(L, X, Y) :- e(L, X), f(L, Y), X == Y;'))
    assert {"p.c2 = p.c1", "p.c1 = p.c2", "r.c2 = r.c1", "r.c1 = r.c2"} <= set(found)


def test_an_fd_must_hold_in_every_rule_and_fact():
    # Intersection step: h's second rule copies H from e2, so hash is not guaranteed;
    # g's rules agree, but its fact ("a", 1, 2) breaks H = hash(V) (2 is not hash(1)).
    found = fds(Program.parse('e("a", 1); e2("a", 1, 5);\n'
                              'h(L, V, H) :- e(L, V), hash(V, H);\nh(L, V, H) :- e2(L, V, H);\n'
                              'g(L, V, H) :- e(L, V), hash(V, H);\ng("a", 1, 2);\n'
                              'k(L, V, H) :- e(L, V), hash(V, H);'))
    assert not any(key.startswith(("h.", "g.")) for key in found)
    assert "k.c2 = hash(k.c1)" in found


def test_recursive_relations():
    # path's recursive rule re-hashes its new node Y: both rules give c2 = hash(c1).
    # q's recursive rule keeps H from the old node Y while c1 becomes X: the FD fails.
    found = fds(Program.parse('e("a", 1); e2("a", 1, 2);\n'
                              'path(L, X, H) :- e(L, X), hash(X, H);\n'
                              'path(L, Y, H) :- path(L, X, _), e2(L, X, Y), hash(Y, H);\n'
                              'q(L, X, H) :- e(L, X), hash(X, H);\n'
                              'q(L, X, H) :- q(L, Y, H), e2(L, X, Y);'))
    assert "path.c2 = hash(path.c1)" in found
    assert not any(key.startswith("q.") for key in found)


def test_co_partition_dependency_of_the_running_example():
    # Section 4.2: a valid message joins hashset facts only where hash(value) equals
    # hashset's hash attribute ("a fact in toStorage can only join with a fact in hashset
    # if hash equals"): the hashset rule derives hashset(N, H, V) from valid(N, _, _, V)
    # with hash(V, H), and the collisions rule joins them through hash(V, H).
    program = Program.from_files(RUNNING)
    storage = [r.index for r in program.rules if r.component == "storage"]
    cds = {str(d): d for d in co_partition_dependencies(program, storage)}
    d = cds["hashset.hash = hash(valid.c3)"]
    assert d.kind == "cd" and (d.source.relation, d.target.relation) == ("valid", "hashset")
    store, collide = "hashset(N, H, V) :- valid", "collisions(N, V, V2) :-"
    assert [r.where for r in d.reasons] == [where(store, "hashset"), where(store, "hash(V, H)"),
                                            where(collide, "collisions"), where(collide, "hash(V, H)")]
    assert d.to_json()["via"] == ["hash"] and d.to_json()["source"] == {"relation": "valid", "column": 3, "name": "c3"}


def test_a_cd_must_hold_in_every_rule_joining_both_relations():
    # a and b join on hash in the first rule but on the plain value in the second.
    program = Program.parse('a("n", 1); b("n", 2);\n'
                            'x(L, V) :- a(L, V), hash(V, H), b(L, H);\ny(L, V) :- a(L, V), b(L, V);')
    assert not [d for d in co_partition_dependencies(program) if {d.source.relation, d.target.relation} == {"a", "b"}]
    assert "b.c1 = hash(a.c1)" in {str(d) for d in co_partition_dependencies(program, [0])}
