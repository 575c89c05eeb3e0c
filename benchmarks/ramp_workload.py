"""Seeded inputs for benchmarks/programs/ramp_bench.ded (RAMP-style transactions) and
the check of what its reads returned. No Spark here.

`ramp_edb` builds the program's EDB relations: one coordinator "co", a few clients,
`keys` keys spread round-robin over `partitions` partitions (each with a seeded commit
lag of 0-2 ticks), `transactions` write transactions of 2-3 keys and `reads` read
transactions of 2-3 keys, starting at seeded ticks over a window that grows with the
number of transactions, so that reads race with commits.

>>> edb = ramp_edb(transactions=4, keys=3, partitions=2, reads=2, seed=1)
>>> sorted(edb)
['apply_lag', 'client', 'placement', 'read_at', 'read_item', 'write_at', 'write_item']
>>> len(edb["write_at"]), len(edb["read_at"]), edb == ramp_edb(4, 3, 2, 2, seed=1)
(4, 2, True)
>>> ramp_ticks(edb) == max(t for *_, t in edb["write_at"] + edb["read_at"]) + 10
True

`fractured_reads` is RAMP's read atomicity: a read that returns transaction X's
write on one key returns X's write, or a later one, on every other key X wrote that
the read reads. Here x@2 was written with y, and the read saw y only at 1:

>>> fractured_reads({1: {"x", "y"}, 2: {"x", "y"}}, [("c", "r", "x", 2, "x2"), ("c", "r", "y", 1, "y1")])
[('c', 'r', 'x', 2, 'y', 1)]
>>> fractured_reads({1: {"x", "y"}, 2: {"x", "y"}}, [("c", "r", "x", 2, "x2"), ("c", "r", "y", 2, "y2")])
[]
"""

from __future__ import annotations

import random

RAMP_WORKLOAD = ("RAMP-Fast transactions through one sequencing coordinator: seeded write transactions "
                 "of 2-3 keys and read transactions of 2-3 keys starting over a window of ticks, keys "
                 "round-robin on the partitions, each partition installing commits 0-2 ticks late")

#: the benchmark's default size
RAMP_DEFAULT = {"transactions": 200, "keys": 40, "partitions": 4, "reads": 100, "seed": 1}

COORDINATOR = "co"


def ramp_edb(transactions: int, keys: int, partitions: int, reads: int, seed: int, clients: int = 4) -> dict:
    """{relation: rows} for ramp_bench.ded: ids are zero-padded (w00001, r00001, k001, p1,
    c1) so that their order is their number; writes start over ticks 1..1+transactions//10,
    reads over that window plus 6 ticks. Needs keys >= 2."""
    rng = random.Random(seed)
    names = [f"c{i}" for i in range(1, clients + 1)]
    key_names = [f"k{j:03d}" for j in range(keys)]
    home = {k: f"p{j % partitions + 1}" for j, k in enumerate(key_names)}
    window = 1 + transactions // 10
    edb = {"client": [(c, COORDINATOR) for c in names],
           "placement": [(n, k, home[k]) for n in [COORDINATOR] + names for k in key_names],
           "apply_lag": [(f"p{i}", rng.randrange(3)) for i in range(1, partitions + 1)],
           "write_at": [], "write_item": [], "read_at": [], "read_item": []}
    for i in range(1, transactions + 1):
        client, x = names[i % clients], f"w{i:05d}"
        edb["write_at"].append((client, x, 1 + rng.randrange(window)))
        edb["write_item"] += [(client, x, k, f"{x}:{k}") for k in _some_keys(rng, key_names)]
    for i in range(1, reads + 1):
        client, r = names[i % clients], f"r{i:05d}"
        edb["read_at"].append((client, r, 1 + rng.randrange(window + 6)))
        edb["read_item"] += [(client, r, k) for k in _some_keys(rng, key_names)]
    return edb


def _some_keys(rng: random.Random, key_names: list) -> list:
    return sorted(rng.sample(key_names, min(len(key_names), rng.randint(2, 3))))


def ramp_ticks(edb: dict) -> int:
    """Ticks by which every transaction of `edb` is acknowledged and every read returned,
    under the default network: a write needs 6 ticks plus its partitions' commit lag (at
    most 2), a read 4."""
    return max(t for *_, t in edb["write_at"] + edb["read_at"]) + 10


def fractured_reads(written: dict, results) -> list:
    """The fractured reads among `results` (rows of `result`: client, read, key,
    timestamp, value), given `written` {timestamp: the keys that transaction wrote}:
    (client, read, key, ts, sibling key, the sibling's ts seen) for every version seen
    whose transaction also wrote a key the read returned at an older timestamp."""
    seen = {(c, r, k): ts for c, r, k, ts, _ in results}
    return sorted((c, r, k, ts, k2, seen[c, r, k2])
                  for (c, r, k), ts in seen.items() if ts > 0
                  for k2 in written[ts] if (c, r, k2) in seen and seen[c, r, k2] < ts)
