"""Build one distributed Dedalus program from Hydroflow `datalog!` files, one per role.

Each file is a component named by its role, and every relation gets the node
as its first attribute (`loc`); a relation two roles both have (not a
channel) is two relations, `ROLE.name` in each. `:+` rules become `@next` rules and `:~`
rules `@async` ones, sent to the location their head names (`rel@addr(...)`):
an `.async` channel declared on two roles is one relation. `.persist` and
`.static` become `.persist`; `.output`, and `.async` channels only one role
declares and sends (sinks to clients), become `.output`. A `.input` of literal
rows becomes facts at every node of its role (`nodes`, default: one node named
after the role); any other `.input`, and an `.async` channel only received
(from clients), is a relation the user fills, named in a comment. Each rule
ends with a comment naming where it came from (`// leader.rs:12:9`).

>>> from sparkdedalus.hydroflow.rust_source import Embedded
>>> text = translate([("leader", Embedded("leader.rs",
...     '.input n `repeat_iter([(2,),])` big(x) :- req(x), n(m), (x > m) '
...     'out@x(y) :~ big(y), req(x) .persist big', 1, 1))])
>>> print(text.split("component", 1)[1].split("}")[0].strip())
leader {
    .persist big
    big(loc, x) :- req(loc, x), n(loc, m), x > m;  // leader.rs:1:33
    out(x, y)@async :- big(loc, y), req(loc, x);  // leader.rs:1:65
    n("leader", 2);
"""

from __future__ import annotations

from dataclasses import replace

from sparkdedalus.hydroflow.errors import HydroflowError
from sparkdedalus.hydroflow.reader import HfRule, Target, read
from sparkdedalus.hydroflow.snippets import HostData, Rows, meaning
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.printer import format_const, format_rule

_DELIVERY = {":-": "now", ":+": "next", ":~": "async"}
#: Hydroflow variables the dialect here reads as constants: renamed `true_`, `false_`
_CONSTANT_WORDS = ("true", "false")


def translate(sources: list, nodes: dict | None = None) -> str:
    """Dialect text for `sources`, a list of (role, `Embedded`); `nodes` maps a
    role to its node names. `HydroflowError` lists every located problem."""
    nodes = nodes or {}
    programs, errors = [], []
    for role, embedded in sources:
        try:
            programs.append((role, read(embedded)))
        except HydroflowError as exc:
            errors += exc.lines
    channels = _channels(programs)
    programs = _qualified(programs, channels)
    blocks, filled = [], []
    for role, declarations in programs:
        block, facts = [], []
        for item in declarations:
            try:
                if isinstance(item, HfRule):
                    block.append(f"    {format_rule(_rule(item))}  // {item.pos}")
                    continue
                _declaration(item, role, channels, nodes.get(role) or [role], block, facts, filled)
            except HydroflowError as exc:
                errors += exc.lines
        blocks.append((role, block + facts))
    if errors:
        raise HydroflowError(sorted(set(errors), key=_position_key))
    lines = ["// imported from Hydroflow datalog! by sparkdedalus import hydroflow"]
    lines += [f"//   {role}: {embedded.file}" for role, embedded in sources]
    if filled:
        lines += ["//", "// relations to fill (facts, or an .input file): what the host program fed them"] + filled
    lines.append("")
    for role, block in blocks:
        lines += [f"component {role} {{"] + _ordered(block) + ["}", ""]
    return "\n".join(lines)


def _ordered(block: list[str]) -> list[str]:
    """Declarations first, then rules and facts, each group in source order."""
    return [line for line in block if line.lstrip().startswith(".")] + \
        [line for line in block if not line.lstrip().startswith(".")]


def _position_key(line: str):
    file, _, rest = line.partition(":")
    parts = rest.split(":")
    return (file, *(int(p) if p.isdigit() else 0 for p in parts[:2]))


def _channels(programs) -> dict:
    """{channel: {"declared": roles, "sent": roles}} for every `.async` name."""
    found = {}
    for role, declarations in programs:
        for item in declarations:
            if not isinstance(item, HfRule) and item.kind == "async":
                found.setdefault(item.name, {"declared": set(), "sent": set()})["declared"].add(role)
    for role, declarations in programs:
        for item in declarations:
            if isinstance(item, HfRule) and item.kind == ":~" and item.head.name in found:
                found[item.head.name]["sent"].add(role)
    return found


def _declaration(item, role, channels, role_nodes, block, facts, filled) -> None:
    if item.kind in ("persist", "static"):
        block.append(f"    .persist {item.name}")
    elif item.kind == "output":
        block.append(f"    .output {item.name}")
    elif item.kind == "async":
        channel = channels[item.name]
        if len(channel["declared"]) == 1 and role in channel["sent"] and _receives_nothing(item):
            block.append(f"    .output {item.name}")  # a sink to clients
        elif not channel["sent"]:
            filled.append(f"//   {item.name} ({role}, received from outside): `{_flat(item.snippets[-1].code)}`")
    else:
        found = meaning(item.snippets[0], item.name)
        if isinstance(found, HostData):
            filled.append(f"//   {item.name} ({role}, .input): `{_flat(found.code)}`")
            return
        for node in role_nodes:
            for row in found.rows:
                atom = ", ".join(format_const(v) for v in (node, *row))
                facts.append(f"    {item.name}({atom}){'' if found.every_tick else '@1'};")


def _receives_nothing(channel) -> bool:
    """An `.async` whose source is empty or `null::<...>()`."""
    source = channel.snippets[-1].code.strip()
    return not source or source.startswith("null")


def _flat(code: str) -> str:
    return " ".join(code.split())


def _rule(rule: HfRule) -> ast.Rule:
    head = rule.head
    names = {v.name for lit in rule.body for v in _literal_vars(lit)}
    names |= {v.name for arg in head.args for v in ast.expr_vars(arg)}
    loc = ast.Var(_fresh("loc", names))
    renamed = {word: _fresh(word + "_", names) for word in _CONSTANT_WORDS if word in names}
    if renamed:
        rule = _renamed(rule, names=renamed)
        head = rule.head
    if head.at is not None and rule.kind != ":~":
        raise HydroflowError([f"{head.at.pos}: a location on the head of a `{rule.kind}` rule: "
                              f"only `:~` rules send to another node"])
    body = tuple(_located(lit, loc) for lit in rule.body)
    args, choose = [], None
    for arg in head.args:
        if isinstance(arg, ast.Aggregate) and arg.func == "index":
            raise HydroflowError([f"{arg.pos}: index() numbers rows in arrival order and has no Dedalus counterpart"])
        if isinstance(arg, ast.Aggregate) and arg.func == "choose":
            if choose is not None:
                raise HydroflowError([f"{arg.pos}: one choose(...) per head"])
            choose = arg.var
            args.append(arg.var)
        else:
            args.append(arg)
    location = head.at if head.at is not None else loc
    if choose is not None:
        keys = tuple(dict.fromkeys([loc] + [v for a in args if a is not choose for v in ast.expr_vars(a)]))
        body += (ast.Choose(keys, (choose,)),)
    return ast.Rule(ast.Atom(head.name, (location, *args), None, head.pos), _DELIVERY[rule.kind], body, rule.pos)


def _renamed(rule: HfRule, names: dict | None = None, relations: dict | None = None) -> HfRule:
    """`rule` with the variables of `names` and the relations of `relations` renamed."""
    names, relations = names or {}, relations or {}

    def term(node):
        if isinstance(node, ast.Var):
            return ast.Var(names.get(node.name, node.name), node.pos)
        if isinstance(node, ast.BinOp):
            return ast.BinOp(node.op, term(node.left), term(node.right), node.pos)
        if isinstance(node, ast.Aggregate) and node.var is not None:
            return ast.Aggregate(node.func, term(node.var), node.pos)
        if isinstance(node, ast.Atom):
            return ast.Atom(relations.get(node.name, node.name), tuple(term(a) for a in node.args), node.time, node.pos)
        if isinstance(node, ast.Negated):
            return ast.Negated(term(node.atom), node.pos)
        if isinstance(node, ast.Comparison):
            return ast.Comparison(node.op, term(node.left), term(node.right), node.pos)
        return node
    head = rule.head
    at = term(head.at) if head.at is not None else None
    return HfRule(Target(relations.get(head.name, head.name), at, tuple(term(a) for a in head.args), head.pos),
                  rule.kind, tuple(term(lit) for lit in rule.body), rule.pos)


def _qualified(programs: list, channels: dict) -> list:
    """The programs with every relation local to two roles or more named
    `ROLE.name` in each: in Hydroflow each role has its own (a channel is shared)."""
    roles_of = {}
    for role, declarations in programs:
        for name in _relations(declarations):
            roles_of.setdefault(name, set()).add(role)
    shared = {name for name, roles in roles_of.items() if len(roles) > 1 and name not in channels}
    qualified = []
    for role, declarations in programs:
        names = {name: f"{role}.{name}" for name in shared}
        qualified.append((role, [_renamed(item, relations=names) if isinstance(item, HfRule)
                                 else replace(item, name=names.get(item.name, item.name)) for item in declarations]))
    return qualified


def _relations(declarations: list) -> set:
    found = set()
    for item in declarations:
        if isinstance(item, HfRule):
            found.add(item.head.name)
            found |= {(lit.atom if isinstance(lit, ast.Negated) else lit).name for lit in item.body
                      if isinstance(lit, (ast.Atom, ast.Negated))}
        else:
            found.add(item.name)
    return found


def _literal_vars(literal) -> list:
    if isinstance(literal, ast.Atom):
        return ast.atom_vars(literal)
    if isinstance(literal, ast.Negated):
        return ast.atom_vars(literal.atom)
    return ast.expr_vars(literal.left) + ast.expr_vars(literal.right)


def _located(literal, loc: ast.Var):
    if isinstance(literal, ast.Atom):
        return ast.Atom(literal.name, (loc, *literal.args), None, literal.pos)
    if isinstance(literal, ast.Negated):
        return ast.Negated(_located(literal.atom, loc), literal.pos)
    return literal


def _fresh(base: str, taken: set) -> str:
    name, n = base, 1
    while name in taken:
        name, n = f"{base}{n}", n + 1
    return name
