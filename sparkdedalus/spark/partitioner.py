"""The analyses' distribution policies as Spark's physical partitioning.

Every relation frame of the tick loop carries a partition column
(`PARTITION_COLUMN`): the bucket of the fact among `buckets`, from the hash of
its location and its policy key (`analysis/partitioning.distribution_policy`,
co-hashing or dependencies, the key through its `via` functions). Relations
no such policy keys are bucketed by their location alone; static relations
(`static_relations`) are replicated, a copy in every bucket, unless the
Arrow fixpoint computes them with a pivot finer than their location (then
they are bucketed by it: `pivots`). Frames are
hash-partitioned by the column, so a rule whose atoms' buckets are equal for
every binding (`Partitioner.local`) joins, negates and groups on the column
plus its variables with no exchange: the tick's only shuffles are the facts
that change bucket (messages, rules the policy does not cover).

A bucket's value is chosen so that Spark's `hash` of it puts it in the
partition of that number (`bucket_values`): Spark partitions a column by
`pmod(hash(value), n)`, and small integers would collide.

>>> bucket_values(2), [spark_hash_int(v) % 2 for v in bucket_values(2)]
([2, 0], [0, 1])
>>> spark_hash_int(0), spark_hash_int(1)
(933211791, -559580957)
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from sparkdedalus.analysis.partitioning import distribution_policy, static_relations
from sparkdedalus.checks.normalize import is_wildcard
from sparkdedalus.program import Program
from sparkdedalus.pack.columns import PARTITION_COLUMN, relation_columns
from sparkdedalus.pack.columns import SPARK_TYPES
from sparkdedalus.syntax import ast
from udfs.registry import FUNCTIONS

#: policy methods whose keys make the loop's buckets
KEYED_METHODS = ("co-hashing", "dependencies")
_MASK = 0xFFFFFFFF


def _rotate(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def spark_hash_int(value: int, seed: int = 42) -> int:
    """Spark's `hash()` (Murmur3, x86 32-bit) of an INT value."""
    k = _rotate((value & _MASK) * 0xCC9E2D51 & _MASK, 15) * 0x1B873593 & _MASK
    h = (_rotate(seed ^ k, 13) * 5 + 0xE6546B64) & _MASK
    h ^= 4
    h = (h ^ (h >> 16)) * 0x85EBCA6B & _MASK
    h = (h ^ (h >> 13)) * 0xC2B2AE35 & _MASK
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def bucket_values(buckets: int) -> list[int]:
    """The i-th: the smallest non-negative INT that Spark hash-partitions into
    partition i of `buckets`."""
    out: dict = {}
    value = 0
    while len(out) < buckets:
        out.setdefault(spark_hash_int(value) % buckets, value)
        value += 1
    return [out[i] for i in range(buckets)]


def spread_values(count: int, partitions: int) -> list[int]:
    """`count` distinct non-negative INTs, the i-th of which Spark
    hash-partitions into partition i % `partitions`: labels of work split
    evenly over the partitions (plain 0..count-1 may share one).

    >>> values = spread_values(8, 2)
    >>> [spark_hash_int(v) % 2 for v in values], len(set(values))
    ([0, 1, 0, 1, 0, 1, 0, 1], 8)
    """
    out: list = []
    value = 0
    while len(out) < count:
        if spark_hash_int(value) % partitions == len(out) % partitions:
            out.append(value)
        value += 1
    return out


class Partitioner:
    """Where the facts of each relation of `program` go among `buckets`."""

    def __init__(self, program: Program, buckets: int, pivots: dict | None = None):
        """`pivots`: {relation: column} bucketing a relation no policy keys by
        its location and that column, never replicated (a recursion's pivot,
        see TickPlan._pivot_columns)."""
        self.program = program
        self.buckets = buckets
        self.values = bucket_values(buckets)
        timed = {f.atom.name for f in program.facts if f.tick is not None}
        # replicated: known at every tick from the text alone, filled only by
        # facts at every tick and `now` rules over such relations
        self.replicated = frozenset(static_relations(program) - program.persisted - timed - set(pivots or ()))
        self.policies = {}
        for component in program.components:
            policy = distribution_policy(program, component)
            if policy.method in KEYED_METHODS:
                self.policies[component] = {rp.relation: (rp.column, rp.via) for rp in policy.relations
                                            if rp.column is not None and rp.relation not in self.replicated}
        keys: dict = {}
        for keyed in self.policies.values():
            for relation, key in keyed.items():
                keys.setdefault(relation, set()).add(key)
        #: {relation: (column, via)}; the others are bucketed by location
        # a key through a function of several inputs is not computed here: by location
        # and never by a lattice's value (checks/lattices.py): a group's rows share a bucket
        self.keys = {r: k.pop() for r, k in keys.items()
                     if len(k) == 1 and all(FUNCTIONS[f].inputs == 1 for f in next(iter(k))[1])
                     and not (r in program.lattices and next(iter(k))[0] == program.lattices[r].position)}
        for relation, column in (pivots or {}).items():
            if relation not in keys:
                self.keys[relation] = (column, ())

    def bucket_sql(self, name: str, columns: list[str] | None = None) -> str:
        """SQL of the bucket of a fact of `name` (not replicated) from its
        columns (`c0`, `c1`, ... unless `columns` names them)."""
        relation = self.program.relations[name]
        columns = columns or relation_columns(relation.arity)
        parts = [f"`{columns[0]}`"]
        if name in self.keys:
            column, via = self.keys[name]
            sql, typ = f"`{columns[column]}`", relation.types[column]
            for f in via:
                function = FUNCTIONS[f]
                sql = function.spark((sql, typ))[0]
                typ = typ if function.output_types[0] == "same" else function.output_types[0]
            parts.append(f"CAST({sql} AS {SPARK_TYPES[typ]})")
        values = ", ".join(str(v) for v in self.values)
        return f"element_at(array({values}), CAST(pmod(hash({', '.join(parts)}), {self.buckets}) AS INT) + 1)"

    def place(self, name: str, frame: DataFrame) -> DataFrame:
        """`frame` (columns c0..) with its partition column: a replicated
        relation's rows once per bucket, the others' in their bucket."""
        return frame.selectExpr("*", self._placement(name))

    def place_sql(self, name: str, relation: str) -> str:
        """SQL: `place` of the subquery or view `relation`."""
        return f"SELECT *, {self._placement(name)} FROM {relation}"

    def _placement(self, name: str) -> str:
        if name in self.replicated:
            return f"explode(array({', '.join(str(v) for v in self.values)})) AS {PARTITION_COLUMN}"
        return f"{self.bucket_sql(name)} AS {PARTITION_COLUMN}"

    def local(self, rule) -> bool:
        """Whether all atoms of `rule` that are not replicated (body, and the
        head of a `now` or `@next` rule) are in one bucket for every binding:
        keyed by the policy of the rule's component (which makes their keys
        equal), or all bucketed by one location variable. Not for `choose` or
        aggregates sent `@async` (their groups may span buckets), nor for
        replicated relations read at an earlier tick (only one copy is kept), nor
        when every positive atom is replicated and a negated one is not (each
        bucket's copy of a binding would be negated against that bucket only)."""
        if rule.choose is not None or (rule.is_aggregate and rule.delivery == "async") \
                or not rule.positive_atoms:
            return False
        if all(a.name in self.replicated for a in rule.positive_atoms) \
                and any(a.name not in self.replicated for a in rule.negated_atoms):
            return False
        body = rule.positive_atoms + rule.negated_atoms
        if any(isinstance(a.time, ast.TickTime) and a.name in self.replicated for a in body):
            return False
        atoms = [a for a in body + ([rule.head] if rule.delivery != "async" else [])
                 if a.name not in self.replicated]
        keyed = self.policies.get(rule.component, {})
        if all(a.name in self.keys and keyed.get(a.name) == self.keys[a.name] for a in atoms):
            return True
        locations = {a.args[0] for a in atoms if a.args}
        return all(a.name not in self.keys for a in atoms) and len(locations) <= 1 \
            and all(isinstance(x, ast.Var) and not is_wildcard(x) for x in locations)

    def settle_sql(self, rule, relation: str) -> str:
        """SQL: what a `local` rule derives (the subquery `relation`), in the
        buckets of its head: a rule reading replicated relations only derives
        in every bucket, each keeps the facts of its own."""
        body = rule.positive_atoms + rule.negated_atoms
        if rule.delivery == "async" or rule.head.name in self.replicated \
                or any(a.name not in self.replicated for a in body):
            return f"SELECT * FROM {relation}"
        return f"SELECT * FROM {relation} WHERE {PARTITION_COLUMN} = {self.bucket_sql(rule.head.name)}"
