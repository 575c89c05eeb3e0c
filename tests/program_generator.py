"""Random VALID Dedalus programs, as hypothesis strategies, for differential testing.

    from program_generator import programs
    @given(programs())
    def test(p): Program.parse(p.text) ...

Every generated program is checked with `Program.parse` inside the strategy, and is
by construction:
- safe: every head, negated, compared or function-input variable is bound by a
  positive atom, an `@T` qualifier, a function output or an assignment `Z == expr`,
  except existential variables (`E0`, ...: in negated atoms only, where they may
  repeat within one atom or recur in another; `check` warns about each);
- well typed: each column of a relation has one type ("loc"/"str" strings, "int",
  "dbl" for averages and sums, "real" for other doubles) and variables of different
  types are never mixed;
- local: every body atom is at the location variable `L`, every non-async head too
  (an `@async` head goes to a location read from data, e.g. `peer(L, M)`, or to a
  constant location);
- stratifiable: it is built in layers; a same-tick rule of layer k reads layers
  <= k, and negates, aggregates or `choose`s only relations of layers < k; layer 0
  holds the EDB (`peer`, `e0`..) and mailbox relations (`m0`..) that only
  `@next`/`@async` rules and facts fill. `@next`/`@async` rules read, negate and
  aggregate anything and write any relation (temporal stratification);
- finite: a rule that reads a relation of its own layer (recursion) only copies
  values (variables, constants, `% 997`), so every fixpoint is finite, except
  the min/max relations (`v1_0`, ...: shortest and longest paths over a steps
  relation `w0`, ...), which never improve on the value they read;
- free of integer overflow: every int column has a bound on |value| fixed when it
  is created (at least 1000); an expression whose bound exceeds the column's is
  wrapped in `(...) % 997`; no intermediate value can exceed 1e17 (hash outputs
  are only compared, copied or taken `% c`);
- free of rounding that depends on an order: the engines sum doubles in different
  orders, so "dbl" columns, which `sum` and `avg` may add, hold exact small values
  (`EXACT_DOUBLES`), while "real" columns hold any of `DOUBLES` (1e16, 0.1, -0.0...)
  and are only compared, copied, counted, min/max'ed, hashed, chosen or sent.

Relation names are lower case (`peer`, `e0`, `m0`, `r1_0`, `t0`), variables upper
case, so `GeneratedProgram.renamed(prefix)` can prefix every relation: programs
renamed with distinct prefixes have disjoint relations and can run as one batch
(see `combine`). Note that the relation name is part of the hash that decides a
message's delay under `Uniform`, so a renamed program is a different program under
random delays; always re-run a program with the names it failed with.

`FEATURES` names the constructs a program may use; `programs(avoid=...)` leaves
some out (used to keep constructs that trigger known engine bugs out of the
default differential runs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from hypothesis import HealthCheck, Phase
from hypothesis import strategies as st

from sparkdedalus import Program
from sparkdedalus.network import Fixed, Network, Uniform
from sparkdedalus.syntax.printer import format_const

LOCATIONS = ("n1", "n2", "n3")
WORDS = ("a", "b", "c")
INT_LOW, INT_HIGH = -2, 5  # data values: a small range, so that joins hit
FLOOR = 1000  # every int column admits |value| <= FLOOR
WRAP = 997  # `(E) % WRAP` brings any value under FLOOR
LIMIT = 10**17  # bound on every intermediate integer value
HUGE = 2**63  # bound of a hash output
COUNT_BOUND = 10**6  # a count never gets near this with the data sizes generated
MAX_TICKS = 4
#: Doubles whose sums are exact in any order; and every double the programs use,
#: chosen where the text of a double is tricky (Spark's cast prints `1.0E7`, `5.0E-4`).
EXACT_DOUBLES = (0.5, 1.0, 2.5)
DOUBLES = EXACT_DOUBLES + (1e7, 5e-4, -0.0, 1e16, 0.1, 123456.789)

FEATURES = (
    "join", "aggregate", "negation", "negation_wildcard", "negation_existential",
    "negation_existential_repeated", "negation_existential_shared", "count", "count_star", "sum", "min", "max", "avg",
    "aggregate_async", "aggregate_next", "arith_add", "arith_sub", "arith_mul", "arith_div", "arith_mod",
    "div_by_zero_const", "negative_const", "neg", "comparison", "assign", "assign_reversed",
    "string_concat", "string_compare", "next", "async", "later", "async_const_dest", "persist_rule",
    "persist_decl", "entangle", "entangle_check", "negated_entangle", "tick_atom", "negated_tick_atom",
    "choose", "choose_no_keys", "hash", "abs", "abs_check", "recursion", "mutual_recursion",
    "fact_at_tick", "idb_fact", "crash", "crash_positive", "avg_huge", "sum_double", "location_compare",
    "recursive_entangle", "recursive_tick_atom", "lattice_min", "lattice_max", "derived_time_atom", "aggregate_async_multi_sender", "wrap", "expr_head", "const_head", "double_payload",
)

#: Constructs with a known engine disagreement, which the default differential
#: runs avoid (none today: the bugs the generator found are fixed, and their
#: minimal programs are regression tests in tests/test_engine_differential.py).
KNOWN_BUGS: frozenset = frozenset()


# ---------------------------------------------------------------- program shapes

@dataclass(frozen=True)
class Shape:
    """How big generated programs get (each count drawn among the choices given)."""

    layers: tuple = (1, 2, 2, 3)  # same-tick layers of derived relations
    relations_per_layer: int = 2
    atoms: int = 3  # positive atoms per rule, at most
    temporal: tuple = (1, 2, 2, 3)  # @next / @async rules
    recursion: float = 0.35  # probability of a recursive rule per derived relation
    edb_relations: int = 3
    ticks: tuple = (3, 4)  # ticks to run


#: Programs of up to ~12 rules, for single runs.
FULL = Shape()
#: Smaller programs (a Spark tick's cost grows with the plan), for batches.
SMALL = Shape(layers=(1, 1, 2), atoms=2, temporal=(1, 1, 2), recursion=0.2, edb_relations=2, ticks=(3, 3, 4))


# ---------------------------------------------------------------- the result

@dataclass(frozen=True)
class GeneratedProgram:
    """A program as statements (one per line), with the names of its relations."""

    statements: tuple
    relations: tuple  # relation names (without `crash`, which is built in)
    ticks: int = 4
    features: frozenset = frozenset()

    @property
    def text(self) -> str:
        return "".join(s + "\n" for s in self.statements)

    def parse(self) -> Program:
        return Program.parse(self.text)

    def renamed(self, prefix: str) -> "GeneratedProgram":
        """Every relation `r` renamed `prefix + r`."""
        return self.renamed_to({r: prefix + r for r in self.relations})

    def renamed_to(self, mapping: dict) -> "GeneratedProgram":
        """Relations renamed by `mapping` (relation -> new name; all of them)."""
        if not self.relations:
            return self
        names = "|".join(sorted(map(re.escape, self.relations), key=len, reverse=True))
        call = re.compile(rf'(?<![\w."])({names})(?=\()')
        persist = re.compile(rf"^(\.persist\s+)({names})\b")

        def rename(stmt: str) -> str:
            stmt = call.sub(lambda m: mapping[m[1]], stmt)
            return persist.sub(lambda m: m[1] + mapping[m[2]], stmt)
        return replace(self, statements=tuple(rename(s) for s in self.statements),
                       relations=tuple(mapping[r] for r in self.relations))

    def with_statements(self, statements) -> "GeneratedProgram":
        """The same relations (some may no longer occur) with other statements."""
        return replace(self, statements=tuple(statements))

    def used_relations(self) -> tuple:
        """The relations that still occur in the statements."""
        text = self.text
        return tuple(r for r in self.relations if re.search(rf'(?<![\w."]){re.escape(r)}(\(|\b)', text))


def combine(parts) -> str:
    """The text of one program holding every part (parts must have disjoint relations)."""
    return "".join(p.text for p in parts)


def batch(programs_, prefix: str = "g") -> list[GeneratedProgram]:
    """Programs renamed `g0_`, `g1_`, ...: disjoint relations, one combined program."""
    return [p.renamed(f"{prefix}{i}_") for i, p in enumerate(programs_)]


# ---------------------------------------------------------------- building blocks

@dataclass
class Col:
    type: str  # "loc" | "str" | "int" | "dbl" | "real"
    bound: int = FLOOR  # int columns: the largest |value| the program can store


@dataclass
class Rel:
    name: str
    cols: list
    layer: int  # 0: EDB and mailboxes; k: derived by same-tick rules of layer k; None: temporal only
    defined: bool = True  # has at least one defining rule or fact (read by later rules)


@dataclass
class Value:
    """A head argument or expression: its text, generator type and bound."""

    text: str
    type: str
    bound: int = 0
    plain_var: bool = False


def _const_text(value) -> str:
    return f'"{value}"' if isinstance(value, str) else format_const(value)


class _RuleBuilder:
    """Variables and body literals of one rule under construction."""

    def __init__(self, gen: "_Generator", mode: str):
        self.gen = gen
        self.mode = mode  # "base" | "recursive" | "temporal"
        self.vars: dict = {"L": ("loc", 0)}
        self.literals: list = []
        self.count = 0
        self.atoms: list = []  # relation names read positively
        self.existential: dict = {}  # variables in negated atoms only: name -> type

    @property
    def draw(self):
        return self.gen.draw

    def fresh(self, typ: str, bound: int = 0) -> str:
        name = f"X{self.count}"
        self.count += 1
        self.vars[name] = (typ, bound)
        return name

    def of_type(self, typ: str) -> list:
        return [v for v, (t, _) in self.vars.items() if t == typ]

    def int_vars(self, max_bound: int = 10**9) -> list:
        return [v for v, (t, b) in self.vars.items() if t == "int" and b <= max_bound]

    # -------------------------------------------------------- body atoms
    def positive(self, rel: Rel, allow_time: bool = True) -> None:
        g = self.gen
        args = ["L"]
        for col in rel.cols[1:]:
            same = self.of_type(col.type)
            kinds = ["fresh", "fresh", "const", "wildcard"] + (["reuse"] * 3 if same else [])
            kind = g.pick(kinds)
            if kind == "reuse":
                args.append(g.pick(same))
                g.feature("join")
            elif kind == "fresh":
                args.append(self.fresh(col.type, col.bound))
            elif kind == "const":
                args.append(g.const_text(col.type))
            else:
                args.append("_")
        text = f"{rel.name}({', '.join(args)})"
        if allow_time:
            own_layer = self.mode == "recursive" and rel.layer == self.gen.layer
            derived = self.mode != "temporal" and rel.layer is not None and rel.layer >= 1
            ok = not derived or g.allowed("derived_time_atom")
            time = g.pick(["none"] * 10
                          + ["entangle"] * (ok and g.allowed("entangle")
                                            and (not own_layer or g.allowed("recursive_entangle")))
                          + ["tick"] * (ok and g.allowed("tick_atom")
                                        and (not own_layer or g.allowed("recursive_tick_atom"))))
            if time != "none" and derived:
                g.feature("derived_time_atom")
            if time == "entangle":
                if "T" in self.vars:
                    g.feature("entangle_check")
                else:
                    self.vars["T"] = ("int", MAX_TICKS + 1)
                g.feature("entangle")
                if own_layer:
                    g.feature("recursive_entangle")
                text += "@T"
            elif time == "tick":
                g.feature("tick_atom")
                if own_layer:
                    g.feature("recursive_tick_atom")
                text += f"@{g.draw(st.integers(1, 3))}"
        self.literals.append(text)
        self.atoms.append(rel.name)

    def crash_atom(self) -> None:
        """`crash(L, N, T)`: positively (binding N and its tick) or negated."""
        g = self.gen
        g.feature("crash")
        if g.want("crash_positive", 0.3):
            g.feature("crash_positive")
            node = self.fresh("loc")
            self.literals.append(f"crash(L, {node}, {self.fresh('int', 100)})")
        else:
            node = g.pick(["L"] + [v for v in self.of_type("loc") if v != "L"] + ['"n2"'])
            self.literals.append(f"notin crash(L, {node}, _)")

    def negated(self, rel: Rel) -> None:
        g = self.gen
        args = ["L"]
        earlier = set(self.existential)  # existential variables of earlier negated atoms
        for col in rel.cols[1:]:
            same = self.of_type(col.type)
            kind = g.pick((["reuse"] if same else []) + ["const", "wildcard"]
                          + ["existential"] * g.allowed("negation_existential"))
            if kind == "reuse":
                args.append(g.pick(same))
            elif kind == "const":
                args.append(g.const_text(col.type))
            elif kind == "existential":
                args.append(self.existential_var(col.type, args, earlier))
            else:
                args.append("_")
                g.feature("negation_wildcard")
        text = f"notin {rel.name}({', '.join(args)})"
        time = g.pick(["none"] * 6 + ["entangle"] * ("T" in self.vars and g.allowed("negated_entangle")) * 3
                      + ["tick"] * g.allowed("negated_tick_atom"))
        if time == "entangle":
            g.feature("negated_entangle")
            text += "@T"
        elif time == "tick":
            g.feature("negated_tick_atom")
            text += f"@{g.draw(st.integers(1, 3))}"
        g.feature("negation")
        self.literals.append(text)

    def existential_var(self, typ: str, args: list, earlier: set) -> str:
        """A variable of negated atoms only: one of the same type again (in this atom:
        an equality inside the negation; from an earlier atom: a separate existential)
        or a new one. Never entered in `vars`, so nothing else in the rule uses it."""
        g = self.gen
        g.feature("negation_existential")
        again = [v for v, t in self.existential.items() if t == typ]
        if again and g.coin(0.6):
            name = g.pick(again)
            if name in args:
                g.feature("negation_existential_repeated")
            if name in earlier:
                g.feature("negation_existential_shared")
            return name
        name = f"E{len(self.existential)}"
        self.existential[name] = typ
        return name

    # -------------------------------------------------------- expressions
    def int_expr(self, depth: int, max_bound: int = LIMIT) -> Value:
        """An int expression over bound int variables and small constants."""
        g = self.gen
        small = self.int_vars()
        if depth <= 0 or g.coin(0.4):
            return self.int_leaf(small)
        op = g.pick(["+", "-", "*", "/", "%", "neg"])
        if op == "neg":
            inner = self.int_expr(depth - 1, max_bound)
            g.feature("neg")
            return Value(f"-({inner.text})", "int", inner.bound)
        left = self.int_expr(depth - 1, max_bound)
        if op in "/%" and g.want("div_by_zero_const", 0.15):
            right = Value("0", "int", 0)
            g.feature("div_by_zero_const")
        else:
            right = self.int_expr(depth - 1, max_bound)
        if op in "+-":
            bound = left.bound + right.bound
        elif op == "*":
            bound = left.bound * right.bound
        elif op == "/":
            bound = left.bound
        else:
            bound = min(left.bound, right.bound)
        if bound > max_bound:
            return left
        g.feature({"+": "arith_add", "-": "arith_sub", "*": "arith_mul", "/": "arith_div", "%": "arith_mod"}[op])
        return Value(f"({left.text} {op} {right.text})", "int", bound)

    def int_leaf(self, small: list) -> Value:
        g = self.gen
        huge = [v for v, (t, b) in self.vars.items() if t == "int" and b > 10**9]
        kinds = ["const"] + (["var", "var"] if small else []) + (["huge"] if huge else [])
        kind = g.pick(kinds)
        if kind == "var":
            v = g.pick(small)
            return Value(v, "int", self.vars[v][1], plain_var=True)
        if kind == "huge":
            v = g.pick(huge)
            m = g.draw(st.integers(2, 13))
            g.feature("arith_mod")
            return Value(f"({v} % {m})", "int", m)
        c = g.draw(st.integers(-3, 5))
        if c < 0:
            g.feature("negative_const")
        return Value(str(c), "int", abs(c))

    def string_value(self) -> Value:
        g = self.gen
        strs = self.of_type("str")
        if strs and g.want("string_concat", 0.4):
            g.feature("string_concat")
            return Value(f"{g.pick(strs)} + {g.const_text('str')}", "str")
        return Value(g.pick(strs), "str", plain_var=True) if strs else Value(g.const_text("str"), "str")

    # -------------------------------------------------------- filters
    def comparison(self) -> None:
        g = self.gen
        kinds = ["int"] if self.int_vars() else []
        kinds += ["str"] if self.of_type("str") else []
        kinds += ["loc"]
        doubles = self.of_type("dbl") + self.of_type("real")
        kinds += ["dbl"] if doubles else []
        kind = g.pick(kinds)
        op = g.pick(["<", "<=", ">", ">=", "==", "!="])
        if kind == "int":
            left = self.int_expr(1)
            right = self.int_expr(1) if g.coin(0.5) else Value(str(g.draw(st.integers(-2, 5))), "int", 5)
            if left.plain_var and right.plain_var and left.text == right.text:
                right = Value("2", "int", 2)
            if not (left.plain_var or right.plain_var) and op == "==":
                op = "!="  # keep `==` between bound things only when one side is a variable
            text = f"{left.text} {op} {right.text}"
        elif kind == "str":
            g.feature("string_compare")
            text = f"{g.pick(self.of_type('str'))} {op} {g.const_text('str')}"
        elif kind == "dbl":
            text = f"{g.pick(doubles)} {op} {g.draw(st.integers(0, 4))}"
        else:
            g.feature("location_compare")
            locs = self.of_type("loc")
            left = g.pick(locs)
            right = g.pick([v for v in locs if v != left] + [g.const_text("loc")])
            text = f"{left} {g.pick(['==', '!='])} {right}"
        g.feature("comparison")
        self.literals.append(text)

    def assignment(self) -> None:
        g = self.gen
        if self.of_type("str") and g.coin(0.2):
            value = self.string_value()
            target = self.fresh("str")
        else:
            value = self.int_expr(2)
            target = self.fresh("int", value.bound)
        g.feature("assign")
        if g.coin(0.3):
            g.feature("assign_reversed")
            self.literals.append(f"{value.text} == {target}")
        else:
            self.literals.append(f"{target} == {value.text}")

    def function(self) -> None:
        g = self.gen
        ints = self.int_vars()
        if ints and (not g.allowed("hash") or g.coin(0.5)) and g.allowed("abs"):
            v = g.pick(ints)
            existing = [w for w in ints if w != v]
            if existing and g.want("abs_check", 0.3):
                g.feature("abs_check")
                self.literals.append(f"abs({v}, {g.pick(existing)})")
            else:
                g.feature("abs")
                self.literals.append(f"abs({v}, {self.fresh('int', self.vars[v][1])})")
        elif g.allowed("hash"):
            g.feature("hash")
            doubles = [v for v in self.vars if self.vars[v][0] in ("dbl", "real")]  # doubles' text
            self.literals.append(f"hash({g.pick(doubles if doubles and g.coin(0.5) else list(self.vars))}, "
                                 f"{self.fresh('int', HUGE)})")

    def choose(self) -> None:
        g = self.gen
        names = list(self.vars)
        keys = [v for v in names if g.coin(0.4) and self.vars[v][0] not in ("dbl", "real")]  # doubles chosen
        values = [v for v in names if v not in keys]
        if not values:
            return
        chosen = [v for v in values if g.coin(0.5)] or [values[0]]
        chosen += [v for v in values if self.vars[v][0] in ("dbl", "real") and v not in chosen]  # doubles' text
        if not keys:
            if not g.allowed("choose_no_keys"):
                return
            g.feature("choose_no_keys")
        g.feature("choose")
        self.literals.append(f"choose(({', '.join(keys)}), ({', '.join(chosen)}))")


class _Generator:
    def __init__(self, draw, avoid: frozenset, shape: Shape = FULL):
        self.draw = draw
        self.shape = shape
        self.avoid = avoid
        self.rels: dict = {}
        self.statements: list = []
        self.features: set = set()
        self.layer = 0

    # -------------------------------------------------------- drawing helpers
    def coin(self, p: float) -> bool:
        """True with probability about p; shrinks to False."""
        return self.draw(st.integers(0, 99)) >= 100 - round(100 * p)

    def want(self, feature: str, p: float) -> bool:
        """Use construct `feature` (probability p) unless it is avoided."""
        return feature not in self.avoid and self.coin(p)

    def pick(self, options):
        return self.draw(st.sampled_from(list(options)))

    def feature(self, name: str) -> None:
        assert name in FEATURES, name
        self.features.add(name)

    def allowed(self, name: str) -> bool:
        return name not in self.avoid

    def const_text(self, typ: str) -> str:
        if typ == "int":
            value = self.draw(st.integers(INT_LOW, INT_HIGH))
            if value < 0:
                self.feature("negative_const")
            return str(value)
        if typ == "str":
            return _const_text(self.pick(WORDS))
        if typ == "loc":
            return _const_text(self.pick(LOCATIONS))
        return _const_text(self.pick(EXACT_DOUBLES if typ == "dbl" else DOUBLES))

    def fact(self, rel: Rel, tick: int | None) -> None:
        values = [_const_text(self.pick(LOCATIONS))] + [self.const_text(c.type) for c in rel.cols[1:]]
        suffix = "" if tick is None else f"@{tick}"
        if tick is not None:
            self.feature("fact_at_tick")
        self.statements.append(f"{rel.name}({', '.join(values)}){suffix};")

    def add_rel(self, name: str, cols: list, layer) -> Rel:
        rel = Rel(name, cols, layer)
        self.rels[name] = rel
        return rel

    # -------------------------------------------------------- the program
    def build(self) -> GeneratedProgram:
        self.edb()
        for layer in range(1, self.pick(self.shape.layers) + 1):
            self.layer = layer
            self.derived_layer(layer)
        self.layer = None
        for _ in range(self.pick(self.shape.temporal)):
            self.temporal_rule()
        self.persistence()
        for rel in [r for r in self.rels.values() if r.layer not in (0,)]:
            if self.coin(0.1):
                self.feature("idb_fact")
                self.fact(rel, self.draw(st.integers(1, 3)))
        ticks = self.pick(self.shape.ticks)
        return GeneratedProgram(tuple(self.statements), tuple(self.rels), ticks, frozenset(self.features))

    def edb(self) -> None:
        peer = self.add_rel("peer", [Col("loc"), Col("loc")], 0)
        ring = list(zip(LOCATIONS, LOCATIONS[1:] + LOCATIONS[:1]))
        extra = [(a, b) for a in LOCATIONS for b in LOCATIONS if a != b and (a, b) not in ring]
        pairs = ring + [p for p in extra if self.coin(0.3)]
        self.statements += [f'peer("{a}", "{b}");' for a, b in pairs]
        for i in range(self.draw(st.integers(1, self.shape.edb_relations))):
            cols = [Col("loc")] + [Col(self.edb_type()) for _ in range(self.draw(st.integers(1, 2)))]
            rel = self.add_rel(f"e{i}", cols, 0)
            for _ in range(self.draw(st.integers(2, 6))):
                self.fact(rel, self.draw(st.integers(1, 3)) if self.coin(0.3) else None)
        for i in range(self.draw(st.integers(0, 2))):
            cols = [Col("loc")] + [Col(self.edb_type()) for _ in range(self.draw(st.integers(1, 2)))]
            rel = self.add_rel(f"m{i}", cols, 0)
            if self.coin(0.5):
                self.fact(rel, 1)

    def edb_type(self) -> str:
        return "str" if self.coin(0.15) else "real" if self.coin(0.15) else "int"

    def readable(self, max_layer: int) -> list:
        return [r for r in self.rels.values() if r.layer is not None and r.layer <= max_layer]

    def derived_layer(self, layer: int) -> None:
        for j in range(self.draw(st.integers(1, self.shape.relations_per_layer))):
            name = f"r{layer}_{j}"
            rel = self.rule("base", name, None, "now")
            if self.coin(0.25):
                self.rule("base", name, rel, "now")
        own = [r for r in self.rels.values() if r.layer == layer]
        for rel in own:
            if self.want("recursion", self.shape.recursion):
                self.rule("recursive", rel.name, rel, "now")
        if self.want("lattice", 0.2):
            self.lattice(layer)

    def lattice(self, layer: int) -> None:
        """A relation taking min or max over its own recursion (checks/lattices.py):
        paths over a new EDB relation of steps, each adding its weight (min)
        or taking it off (max); the rule keeps the weights >= 0, and may bound
        the value read the way the order keeps."""
        func = self.pick(("min", "max"))
        self.feature(f"lattice_{func}")
        number = sum(1 for r in self.rels if r.startswith("w"))
        steps = self.add_rel(f"w{number}", [Col("loc"), Col("int"), Col("int"), Col("int")], 0)
        for _ in range(self.draw(st.integers(2, 6))):
            self.fact(steps, self.draw(st.integers(1, 3)) if self.coin(0.2) else None)
        name = f"v{layer}_{number}"
        self.add_rel(name, [Col("loc"), Col("int"), Col("int")], layer)
        start = self.const_text("int")
        self.statements.append(f"{name}(L, X, {start}) :- {steps.name}(L, X, _, _);")
        bound = (", D1 < 12" if func == "min" else ", D1 > -12") if self.coin(0.3) else ""
        step = "+" if func == "min" else "-"
        self.statements.append(f"{name}(L, Y, {func}<D>) :- {name}(L, X, D1), {steps.name}(L, X, Y, W), "
                               f"W >= 0{bound}, D == D1 {step} W;")

    def temporal_rule(self) -> None:
        delivery = "async" if self.want("async", 0.5) else "next"
        if self.coin(0.4):
            name = f"t{sum(1 for r in self.rels if r.startswith('t'))}"
            self.rule("temporal", name, None, delivery)
        else:
            target = self.pick(list(self.rels.values()))
            self.rule("temporal", target.name, target, delivery)

    def persistence(self) -> None:
        for rel in list(self.rels.values()):
            if rel.layer == 0 and rel.name == "peer":
                continue
            if self.want("persist_rule", 0.2):
                used = any(re.search(rf"\b{rel.name}\(", stmt) for stmt in self.statements)
                if used and self.want("persist_decl", 0.2):
                    self.feature("persist_decl")
                    self.statements.append(f".persist {rel.name}")
                else:
                    self.feature("persist_rule")
                    args = ", ".join(["L"] + [f"X{i}" for i in range(1, len(rel.cols))])
                    self.statements.append(f"{rel.name}({args})@next :- {rel.name}({args});")

    # -------------------------------------------------------- one rule
    def rule(self, mode: str, name: str, target: Rel | None, delivery: str) -> Rel:
        """Add one rule deriving `name` (schema of `target`, or a new relation);
        returns the relation."""
        b = _RuleBuilder(self, mode)
        if mode == "base":
            positive = self.readable(self.layer - 1)
            negatable = positive
        elif mode == "recursive":
            positive = self.readable(self.layer)
            negatable = self.readable(self.layer - 1)
        else:
            positive = negatable = [r for r in self.rels.values()]
        # positive atoms (a recursive rule reads its own layer first)
        n_atoms = self.draw(st.integers(1, self.shape.atoms))
        first = None
        if mode == "recursive":
            own = [r for r in positive if r.layer == self.layer]
            first = self.pick(own)
            self.feature("recursion")
            if first.name != name:
                self.feature("mutual_recursion")
        for i in range(n_atoms):
            rel = first if (i == 0 and first is not None) else self.pick(positive)
            b.positive(rel)
        if mode != "recursive" and self.want("crash", 0.1):
            b.crash_atom()
        if delivery == "async" and not [v for v in b.of_type("loc") if v != "L"] and self.coin(0.7):
            b.positive(self.rels["peer"], allow_time=False)
        # filters
        for _ in range(self.draw(st.integers(0, 2))):
            b.comparison()
        if mode != "recursive":
            if self.want("assign", 0.3):
                b.assignment()
            if self.coin(0.15):
                b.function()
        for _ in range(self.draw(st.integers(0, 2))):
            if negatable and self.want("negation", 0.5):
                b.negated(self.pick(negatable))
        # head
        aggregate = mode != "recursive" and target is None \
            and self.want({"now": "aggregate", "next": "aggregate_next", "async": "aggregate_async"}[delivery], 0.35)
        if not aggregate and mode != "recursive" and self.want("choose", 0.1):
            b.choose()
        if delivery == "async":
            locs = [v for v in b.of_type("loc") if v != "L"]
            if locs and self.coin(0.85):
                dest = self.pick(locs)
            else:
                dest = self.const_text("loc") if self.coin(0.7) else "L"
                if dest != "L":
                    self.feature("async_const_dest")
        else:
            dest = "L"
        if target is None:
            cols, args = self.free_head(b, aggregate, delivery, dest)
            layer = self.layer if mode != "temporal" else None
            if mode == "temporal":
                layer = None
            rel = self.rels.get(name) or self.add_rel(name, cols, layer)
            if rel.layer is None:
                # read by later temporal rules only
                pass
        else:
            rel = target
            args = self.fixed_head(b, rel)
        if aggregate:
            self.feature("aggregate" if delivery == "now" else f"aggregate_{delivery}")
        suffix = {"now": "", "next": "@next", "async": "@async"}[delivery]
        if delivery == "async":
            self.feature("async")
            if self.want("later", 0.1):
                suffix = "@later"
                self.feature("later")
            if any(b.vars.get(a.strip(), ("",))[0] in ("dbl", "real") for a in args):
                self.feature("double_payload")
        elif delivery == "next":
            self.feature("next")
        head = f"{name}({', '.join([dest] + args)}){suffix}"
        self.statements.append(f"{head} :- {', '.join(b.literals)};")
        return rel

    def free_head(self, b: _RuleBuilder, aggregate: bool, delivery: str, dest: str) -> tuple:
        """Head arguments (after the location) of a new relation, and its columns."""
        cols, args = [Col("loc")], []
        candidates = [v for v in b.vars if v != "L" or delivery == "async"]
        if not aggregate:
            for _ in range(self.draw(st.integers(1, 3))):
                value = self.head_value(b, None, candidates)
                cols.append(Col(value.type, max(FLOOR, value.bound)))
                args.append(value.text)
            return cols, args
        groups = [v for v in candidates if self.coin(0.3)][:2]
        if delivery == "async" and "L" not in groups:
            # the group of a message then spans several senders
            if self.allowed("aggregate_async_multi_sender"):
                self.feature("aggregate_async_multi_sender")
            else:
                groups = ["L"] + groups[:1]
        rest = [v for v in b.vars if v not in groups and v not in ("L", dest)]
        parts = []
        for g in groups:
            typ, bound = b.vars[g]
            parts.append((Col(typ, max(FLOOR, bound)), g))
        for _ in range(self.draw(st.integers(1, 2))):
            parts.append(self.aggregate(b, rest))
        order = self.draw(st.permutations(range(len(parts))))
        for i in order:
            cols.append(parts[i][0])
            args.append(parts[i][1])
        return cols, args

    def aggregate(self, b: _RuleBuilder, rest: list) -> tuple:
        funcs = ["count_star"] + (["count", "min", "max"] if rest else [])
        numeric = [v for v in rest if b.vars[v][0] in ("int", "dbl")]
        if numeric:
            funcs += ["sum", "avg"]
        funcs = [f for f in funcs if self.allowed(f)] or ["count_star"]
        func = self.pick(funcs)
        if func not in ("sum", "avg"):  # those may fall back to another aggregate below
            self.feature(func)
        if func == "count_star":
            return Col("int", COUNT_BOUND), "count<*>"
        if func == "count":
            return Col("int", COUNT_BOUND), f"count<{self.pick(rest)}>"
        if func in ("min", "max"):
            var = self.pick(rest)
            typ, bound = b.vars[var]
            return Col(typ, max(FLOOR, bound)), f"{func}<{var}>"
        var = self.pick(numeric)
        typ, bound = b.vars[var]
        if func == "avg":
            if typ == "int" and bound > 10**9:
                if not self.allowed("avg_huge"):
                    self.feature("count")
                    return Col("int", COUNT_BOUND), f"count<{var}>"
                self.feature("avg_huge")
            self.feature("avg")
            return Col("dbl"), f"avg<{var}>"
        if typ == "dbl":
            if not self.allowed("sum_double"):
                self.feature("max")
                return Col("dbl"), f"max<{var}>"
            self.feature("sum_double")
            self.feature("sum")
            return Col("dbl"), f"sum<{var}>"
        if bound > 10**9:  # a sum of hashes could overflow: count them instead
            self.feature("count")
            return Col("int", COUNT_BOUND), f"count<{var}>"
        self.feature("sum")
        return Col("int", max(FLOOR, 1000 * bound)), f"sum<{var}>"

    def head_value(self, b: _RuleBuilder, col: Col | None, candidates: list) -> Value:
        """A head argument: a variable, an expression or a constant; of `col`'s type
        and within its bound when `col` is given."""
        recursive = b.mode == "recursive"
        typ = col.type if col is not None else None
        vars_ = [v for v in candidates if typ is None or b.vars[v][0] == typ]
        kinds = (["var", "var", "var"] if vars_ else []) + ["const"]
        if not recursive and (typ in (None, "int")) and b.int_vars():
            kinds += ["expr", "expr"]
        if not recursive and typ in (None, "str") and (b.of_type("str") or typ == "str"):
            kinds += ["str"]
        kind = self.pick(kinds)
        if kind == "var":
            v = self.pick(vars_)
            vt, vb = b.vars[v]
            value = Value(v, vt, vb, plain_var=True)
        elif kind == "expr":
            self.feature("expr_head")
            value = b.int_expr(2)
        elif kind == "str":
            value = b.string_value()
        else:
            self.feature("const_head")
            t = typ or self.pick(["int", "str"])
            value = Value(self.const_text(t), t, 5)
        if col is not None and value.type == "int" and value.bound > col.bound:
            self.feature("wrap")
            value = Value(f"({value.text}) % {WRAP}", "int", WRAP)
        return value

    def fixed_head(self, b: _RuleBuilder, rel: Rel) -> list:
        candidates = [v for v in b.vars]
        return [self.head_value(b, col, candidates).text for col in rel.cols[1:]]


@st.composite
def programs(draw, avoid: frozenset = KNOWN_BUGS, shape: Shape = FULL) -> GeneratedProgram:
    """A random valid program (checked with `Program.parse`), without the
    constructs in `avoid` (default: those of known engine bugs)."""
    program = _Generator(draw, frozenset(avoid), shape).build()
    try:
        program.parse()
    except Exception as exc:  # pragma: no cover - a generator bug
        raise AssertionError(f"the generator produced an invalid program:\n{program.text}\n{exc}") from exc
    return program


#: hypothesis settings of the differential tests: the same programs on every run, no deadline
SETTINGS = dict(deadline=None, database=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example, HealthCheck.filter_too_much])

_locations = st.sampled_from(LOCATIONS)
#: Networks to run generated programs under: mostly the default one; some with
#: random delays, omissions and crashes.
networks = st.one_of(
    st.just(Network()),
    st.builds(Network,
              delay=st.sampled_from([Fixed(), Uniform(1, 2), Uniform(1, 3)]),
              seed=st.integers(0, 1000),
              omissions=st.frozensets(st.tuples(_locations, _locations, st.integers(1, 3)), max_size=3),
              crashes=st.dictionaries(_locations, st.integers(1, 4), max_size=1)),
)


def program_texts(avoid: frozenset = KNOWN_BUGS, shape: Shape = FULL):
    """The text of a random valid program."""
    return programs(avoid, shape).map(lambda p: p.text)
