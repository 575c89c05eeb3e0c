"""The network and failure model (sparkdedalus.network) and runs under it:
delays, omissions, crashes, the crash relation, (non)confluence under delays."""

from __future__ import annotations

import pytest

from reference_helpers import BROADCAST_FINAL, history, rows, run_example, run_text
from sparkdedalus.network import Fixed, Network, Uniform, message_key
from udfs.registry import xxhash64_string


#: Spark's own `xxhash64` (`SELECT xxhash64(k)`, Spark 4.1) of the keys below, recorded;
#: `test_recorded_hashes_are_sparks` checks them against the shared session.
SPARK_XXHASH64 = {"": -7444071767201028348, "hi": -8360655810398647041, "Spark": -4294468057691064905,
                  "héllo": 501425390238239234}
#: ... of the key of `log("b", 3t, true, "x")` sent at t = 1..8 with seed 9
LOG_HASHES = [145516464724737869, -3378892738062378280, 2822451260385214717, -7315425549721298745,
              6157400022625299586, -7374033852725202711, -3124825419760827464, -5420639147848441364]
#: ... of the keys of nonconfluent.ded's statement("l", "s1", "y") sent at 1 and its
#: s_false sent at 2, with seeds 0..11
STATEMENT_HASHES = [8987449111849825188, 438401435037328826, 980094674701200596, -3740353778067640099,
                    3854241239059757507, -1978023724391936478, -9043602671706809766, -1546422645083278729,
                    -8002372921599613700, -3658681242278092524, -1821616714399280210, 3474306856779316611]
S_FALSE_HASHES = [-7151287081648429741, -1107237815725630943, 7248868013115162540, -2835876016393782674,
                  -8090978577962430491, -4554374869253482440, -6577158816735214384, 7514849386869552253,
                  3068266937330501590, -4846581686371746837, -4610152584346749484, -8410048183682022379]


def recorded_hashes() -> dict:
    """Every recorded key (written out by hand, fields joined by \\x1f) and its hash."""
    keys = dict(SPARK_XXHASH64)
    keys.update({f"9\x1flog\x1f{t}\x1fb\x1f{3 * t}\x1ftrue\x1fx": h for t, h in enumerate(LOG_HASHES, 1)})
    keys.update({f"{seed}\x1fstatement\x1f1\x1fl\x1fs1\x1fy": h for seed, h in enumerate(STATEMENT_HASHES)})
    keys.update({f"{seed}\x1fs_false\x1f2\x1fl\x1fs1\x1fy": h for seed, h in enumerate(S_FALSE_HASHES)})
    return keys


def test_xxhash64_string_is_sparks():
    assert {k: xxhash64_string(k) for k in recorded_hashes()} == recorded_hashes()


@pytest.mark.spark
def test_recorded_hashes_are_sparks(spark):
    keys = recorded_hashes()
    rows = spark.createDataFrame([(k,) for k in keys], "k string").selectExpr("k", "xxhash64(k) AS h").collect()
    assert {r.k: r.h for r in rows} == keys


# ---------------------------------------------------------------- the model

def test_fixed_delay_is_one_tick():
    assert Network().arrival("log", ("b", "hi"), "a", 7) == 8


def test_uniform_delay_follows_the_hash_recipe():
    net = Network(Uniform(2, 5), seed=9)
    # Uniform(2, 5): the delay is 2 + h % 4, h from LOG_HASHES (h % 4 = 1, 0, 1, 3, 2, 1, 0, 0)
    assert [net.arrival("log", ("b", t * 3, True, "x"), "a", t) - t for t in range(1, 9)] == [3, 2, 3, 5, 4, 3, 2, 2]
    delays = {net.arrival("log", ("b", i), "a", 1) - 1 for i in range(200)}
    assert delays == {2, 3, 4, 5}


def test_message_key_layout():
    assert message_key(3, "m", ("b", 1.5, False), 4) == "3\x1fm\x1f4\x1fb\x1f1.5\x1ffalse"


def test_omission_loses_one_message():
    net = Network(omissions={("a", "b", 2)})
    assert net.arrival("log", ("b", "x"), "a", 2) is None
    assert net.arrival("log", ("b", "x"), "a", 1) == 2
    assert net.arrival("log", ("c", "x"), "a", 2) == 3
    assert net.arrival("log", ("a", "x"), "b", 2) == 3


def test_crash_silences_the_node_from_its_tick_on():
    net = Network(crashes={"a": 3})
    assert net.arrival("log", ("b", "x"), "a", 2) == 3
    assert net.arrival("log", ("b", "x"), "a", 3) is None
    assert net.arrival("log", ("b", "x"), "a", 9) is None
    assert net.arrival("log", ("a", "x"), "b", 5) == 6  # messages to a crashed node arrive


def test_nodes_compare_by_their_string_form():
    net = Network(omissions={(1, 2, 3)})
    assert net.arrival("p", (2, "x"), 1, 3) is None
    assert net.arrival("p", ("2", "x"), "1", 3) is None


@pytest.mark.parametrize("spec,expected", [
    ("", Network()),
    ("delay=fixed", Network()),
    ("delay=uniform(1,3)", Network(Uniform(1, 3))),
    ("delay = Uniform( 2 , 2 ), seed=-4", Network(Uniform(2, 2), seed=-4)),
    ("delay=uniform(1,3),omit=a>b@2,omit=b>a@2,crash=c@3",
     Network(Uniform(1, 3), omissions={("a", "b", 2), ("b", "a", 2)}, crashes={"c": 3})),
    ('crash="node 1"@4', Network(crashes={"node 1": 4})),
])
def test_parse(spec, expected):
    assert Network.parse(spec) == expected
    assert Network.parse(expected.spec()) == expected


@pytest.mark.parametrize("spec,message", [
    ("delay=uniform(3,1)", "LOW <= HIGH"),
    ("delay=uniform(0,2)", "must be >= 1"),
    ("delay=normal(1,2)", "expected delay=fixed or delay=uniform(LOW,HIGH)"),
    ("delay=uniform(1,x)", "'x' is not an integer"),
    ("omit=a>b", "expected omit=SRC>DST@TICK"),
    ("omit=a>b@0", "must be >= 1"),
    ("crash=b", "expected crash=NODE@TICK"),
    ("crash=b@2,crash=b@3", "crashes twice"),
    ("delay=fixed,delay=fixed", "given twice"),
    ("drop=a", "unknown key 'drop'"),
    ("fixed", "expected KEY=VALUE"),
])
def test_parse_errors_are_one_line(spec, message):
    with pytest.raises(ValueError) as info:
        Network.parse(spec)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_constructor_checks():
    with pytest.raises(ValueError):
        Uniform(2, 1)
    with pytest.raises(ValueError):
        Network(crashes={"a": 0})
    with pytest.raises(ValueError):
        Network(delay="fixed")
    assert Network(Fixed()) == Network()


# ---------------------------------------------------------------- failures in runs

def test_broadcast_under_omission():
    # a's "hi" to b (sent at tick 1) is dropped; nothing else changes
    trace = run_example("broadcast.ded", 5, network=Network.parse("omit=a>b@1"))
    assert all(("b", "hi") not in facts for facts in history(trace, "log").values())
    assert rows(trace, "log", 5) == BROADCAST_FINAL - {("b", "hi")}
    lost = [m for m in trace.messages if m.arrival is None]
    assert [(m.relation, m.row, m.src, m.send_tick) for m in lost] == [("log", ("b", "hi"), "a", 1)]


def test_broadcast_under_crash_of_the_sender():
    # a crashes at tick 3: its "bye" (sent at tick 3) reaches nobody; a still logs it itself
    trace = run_example("broadcast.ded", 5, network=Network.parse("crash=a@3"))
    assert rows(trace, "log", 5) == BROADCAST_FINAL - {("b", "bye"), ("c", "bye"), ("d", "bye")}
    assert {m.row for m in trace.messages if m.arrival is None} == {("b", "bye"), ("c", "bye"), ("d", "bye")}


def test_broadcast_under_crash_of_a_receiver():
    # b crashes at tick 2: its "yo" never arrives, but messages to b still do
    trace = run_example("broadcast.ded", 5, network=Network.parse("crash=b@2"))
    assert rows(trace, "log", 5) == BROADCAST_FINAL - {("a", "yo"), ("c", "yo")}
    assert ("b", "bye") in rows(trace, "log", 4)


CRASH_PROGRAM = """
    up(L, N) :- peer(L, N), notin crash(L, N, _);
    seen(L, N, T) :- crash(L, N, T);
    peer("a", "b"); peer("a", "c");
    .decl extra(loc: string, x: int)
"""


def test_crash_relation_holds_at_every_location_and_tick():
    trace = run_text(CRASH_PROGRAM, 3, network=Network.parse("crash=c@2,omit=x>y@1"),
                     edb={"extra": [("e", 1)]})
    # locations: "a" (facts), "e" (input rows), "c", "x", "y" (failure model)
    everywhere = {(loc, "c", 2) for loc in ("a", "c", "e", "x", "y")}
    for tick in (1, 2, 3):
        assert rows(trace, "crash", tick) == everywhere
        assert rows(trace, "up", tick) == {("a", "b")}
        assert rows(trace, "seen", tick) == everywhere


def test_crash_relation_is_empty_without_crashes():
    trace = run_text(CRASH_PROGRAM, 2, network=Network.parse("omit=a>b@1"))
    assert rows(trace, "crash", 2) == set()
    assert rows(trace, "up", 2) == {("a", "b"), ("a", "c")}


def test_sender_is_the_location_of_the_first_body_atom():
    # the head is sent to "c"; the sender is "b" (first atom), not "a" (second atom)
    trace = run_text("""
        got(X, N)@async :- relay(N, X), src(M, N);
        relay("b", "c")@1; src("a", "b")@1;
    """, 3, network=Network.parse("crash=b@1"))
    assert [(m.row, m.src, m.arrival) for m in trace.messages] == [(("c", "b"), "b", None)]
    assert rows(trace, "got", 2) == set()


def test_late_arrivals_are_recorded():
    trace = run_text('m(N)@async :- go(N); go("a")@3;', 3)
    assert [(m.send_tick, m.arrival) for m in trace.messages] == [(3, 4)]


# ---------------------------------------------------------------- confluence under delays

def test_nonconfluent_result_depends_on_delays():
    # "y" is believed iff statement y (sent at 1) arrives strictly before its falsity
    # notice (sent at 2): 1 + d1 < 2 + d2, i.e. d1 <= d2. x, z, w are always believed.
    finals = set()
    for seed in range(12):
        d1, d2 = 1 + STATEMENT_HASHES[seed] % 3, 1 + S_FALSE_HASHES[seed] % 3  # Uniform(1,3)
        trace = run_example("nonconfluent.ded", 6, network=Network(Uniform(1, 3), seed=seed))
        believed = frozenset(x for _, x in rows(trace, "believed", 6))
        assert believed == frozenset("xzw") | (frozenset("y") if d1 <= d2 else frozenset()), seed
        finals.add(believed)
    assert finals == {frozenset("xyzw"), frozenset("xzw")}


def test_sealed_result_is_the_same_under_50_seeds():
    for seed in range(50):
        trace = run_example("sealed.ded", 6, network=Network(Uniform(1, 3), seed=seed))
        assert rows(trace, "believed", 6) == {("l", "x"), ("l", "z"), ("l", "w")}, seed
        assert rows(trace, "refuted", 6) == {("l", "y")}, seed
        assert all(("l", "y") not in facts for facts in history(trace, "believed").values()), seed
