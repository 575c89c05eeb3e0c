"""Arithmetic gives functional dependencies as function relations do
(analysis/functional_dependencies.py): `H == V % 10`, or a head term `V % 10`, makes H
a function of V (the scaling paper's hash, 4.2, written as Hydroflow's dialect writes
it), so a replica joining a request and its storage on the hash alone is partitioned by
it; an expression of two variables, a comparison other than `==` or a division by 0
gives none, and the dependency never goes back from H to V. Checked by hand on a small replica: requests
12, 32 and 2 collide (the same value % 10), 7 and 17 too."""

from __future__ import annotations

import pytest
from frontend_helpers import exit_code

from sparkdedalus import Program
from sparkdedalus.analysis.functional_dependencies import functional_dependencies
from sparkdedalus.analysis.partitioning import distribution_policy
from sparkdedalus.reference.evaluator import run
from sparkdedalus.shell.cli import main

REPLICA = """.decl req(loc: string, client: string, v: int)
.decl seen(loc: string, v: int, h: int)
.output dup
component k {
    .persist seen
    seen(L, V, H)@next :- req(L, C, V), H == V % 10;
    dup(C, V, W)@async :- req(L, C, V), seen(L, W, H), H == V % 10;
}
req("k", "c", 12)@1;
req("k", "c", 7)@2;
req("k", "c", 32)@3;
req("k", "c", 2)@4;
req("k", "c", 17)@5;
"""
#: the modulus a fact of another relation: `V % M` is no function of V alone
BY_A_RELATION = REPLICA.replace("H == V % 10;", "modulus(L, M), H == V % M;") + 'modulus("k", 10);\n'


def fds(text: str) -> set:
    return {str(d) for d in functional_dependencies(Program.parse(text))}


@pytest.mark.parametrize("rule", ["m(L, V, H) :- e(L, V), H == V % 10;", "m(L, V, H) :- e(L, V), V % 10 == H;",
                                  "m(L, V, V % 10) :- e(L, V);"])
def test_an_expression_of_one_variable_is_a_function_of_it(rule):
    assert fds(rule + 'e("a", 3);') == {"m.c2 = m.c1 % 10"}


def test_the_dependency_goes_from_the_variable_to_the_expression_only():
    assert fds("m(L, H, V) :- e(L, V), H == V * 2 + 1;") == {"m.c1 = m.c2 * 2 + 1"}


@pytest.mark.parametrize("rule", ["m(L, V, H) :- e(L, V, W), H == V % W;", "m(L, V, H) :- e(L, V, H), H < V % 10;",
                                  "m(L, V, H) :- e(L, V, H), H != V % 10;", "m(L, V, H) :- e(L, V, W), H == V % 0;"])
def test_no_dependency_from_two_variables_an_inequality_or_a_division_by_zero(rule):
    assert fds(rule + 'e("a", 3, 4);') == set()


def test_the_hash_as_arithmetic_partitions_the_replica_by_dependencies():
    # seen(V, H) and req(V) share no variable (co-hashing fails); H == V % 10 in both
    # rules makes req's key V % 10 and seen's H one value
    policy = distribution_policy(Program.parse(REPLICA), "k")
    assert (policy.method, policy.keys()) == ("dependencies", {"req": "v % 10", "seen": "h"})


def test_the_partitioned_replica_answers_as_the_base(tmp_path, capsys):
    base, out = tmp_path / "base.ded", tmp_path / "p.ded"
    base.write_text(REPLICA)
    assert main(["rewrite", str(base), "--partition", "k:3", "--out", str(out)]) == 0
    text = out.read_text()
    # the requests are placed by hash(v % 10): 12, 32 and 2 on one partition
    homes = {line.split('"c", ')[1].split(")")[0]: line.split('"')[1] for line in text.splitlines()
             if line.startswith("req(")}
    assert homes["12"] == homes["32"] == homes["2"] and homes["7"] == homes["17"]
    assert len(set(homes.values())) == 2
    dup = {row for t in range(1, 12) for row in run(Program.parse(REPLICA), 12).relation("dup", t)}
    assert {row[1:] for row in dup} == {(32, 12), (2, 12), (2, 32), (17, 7)}
    capsys.readouterr()
    assert main(["equiv", str(base), str(out), "--ticks", "20", "--seeds", "20"]) == 0
    assert main(["rewrite", str(base), "--partition", "k:3:req(v % 10)", "--out", str(tmp_path / "k.ded")]) == 0
    assert (tmp_path / "k.ded").read_text() == text


def test_a_modulus_read_from_a_relation_is_refused(tmp_path, capsys):
    assert distribution_policy(Program.parse(BY_A_RELATION), "k").method == "none"
    path = tmp_path / "by_a_relation.ded"
    path.write_text(BY_A_RELATION)
    assert exit_code(["rewrite", str(path), "--partition", "k:3:req(v % 10)"]) == 2
    assert "req(v % 10) cannot key k: " in capsys.readouterr().err
