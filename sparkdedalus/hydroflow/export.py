"""Write a program back as Hydroflow `datalog!` strings, one Rust file per component.

The inverse of `translate`: the location (first attribute) becomes implicit,
`@next` rules `:+`, `@async` rules `:~` with the head's first argument as
`@location`; identity `@next` rules `.persist`; a relation sent between
components an `.async` channel on each; an `.output` only sent, a client sink;
the facts of a component, the same at each of its nodes, a literal
`.input`; any other relation it reads but nothing derives, a `.input` to fill.
Importing the files again gives the same program. What Hydroflow cannot say
(a rule over several locations, a node's own name as a value, strings in
rules, time qualifiers, avg) is one located line each.

>>> from sparkdedalus.syntax.loader import load_text
>>> files = export_components(load_text('component a { .persist s  s(L, X) :- r(L, X); t(M, X)@async :- s(L, X), p(L, M); }'))
>>> for line in files["a"].split('r#"')[1].split('"#')[0].strip().splitlines():
...     print(line.strip())
.input r `source_stream(r_input)`
.input p `source_stream(p_input)`
.async t `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(t_sink)` `null::<()>()`
.persist s
s(X) :- r(X)
t@M(X) :~ s(X), p(M)
"""

from __future__ import annotations

import os
import re

from sparkdedalus.hydroflow.errors import HydroflowError
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.loader import DEFAULT_COMPONENT
from sparkdedalus.syntax.printer import format_expr
from udfs.registry import FUNCTIONS

_KIND = {"now": ":-", "next": ":+", "async": ":~"}
_NULL = "`null::<()>()`"


def export_files(paths: list[str], out_dir: str) -> list[str]:
    """Check the program of `paths`, write `out_dir/COMPONENT.rs` per component."""
    from sparkdedalus.program import Program
    from sparkdedalus.syntax.loader import load_files
    loaded = load_files(list(paths))
    Program.build(loaded)
    files = export_components(loaded, " ".join(paths))
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for component, text in files.items():
        path = os.path.join(out_dir, f"{component}.rs")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        written.append(path)
    return written


def export_components(loaded, origin: str = "<string>") -> dict:
    """{component: Rust file text} for the components of `loaded` (statements
    outside any component are data, not exported)."""
    placed = [p for p in loaded.statements if p.component != DEFAULT_COMPONENT]
    rules = [p for p in placed if isinstance(p.statement, ast.Rule)]
    sent = {p.statement.head.name for p in rules if p.statement.delivery == "async"}
    derived = {p.statement.head.name for p in rules}
    components = list(dict.fromkeys(p.component for p in placed))
    errors, files = [], {}
    for component in components:
        mine = [p.statement for p in placed if p.component == component]
        try:
            files[component] = _file(component, origin, _component(mine, sent, derived, rules, component))
        except HydroflowError as exc:
            errors += exc.lines
    if errors:
        raise HydroflowError(errors)
    if not files:
        raise HydroflowError([f"{origin}: no component to export (put the rules of each role in a component block)"])
    return files


def _component(statements: list, sent: set, derived: set, all_rules: list, component: str) -> tuple:
    rules = [s for s in statements if isinstance(s, ast.Rule)]
    persisted = {s.name for s in statements if isinstance(s, ast.PersistDecl)}
    persisted |= {r.head.name for r in rules if _is_persistence(r)}
    rules = [r for r in rules if not (_is_persistence(r) and r.head.name in persisted)]
    outputs = [s.name for s in statements if isinstance(s, ast.OutputDecl)]
    facts = [s for s in statements if isinstance(s, ast.Fact)]
    read = list(dict.fromkeys(a.name for r in rules for a in _body_atoms(r)))
    sends = {r.head.name for r in rules if r.delivery == "async"}
    errors = []
    lines, nodes = _inputs(facts, errors)
    fact_names = {f.atom.name for f in facts}
    lines += [f".input {name} `source_stream({name}_input)`" for name in read
              if name not in derived and name not in fact_names and name not in persisted]
    receives = [name for name in read if name in sent]
    for name in dict.fromkeys(sorted(sends, key=_order(rules)) + receives):
        sink = f"`map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink({name}_sink)`" if name in sends else _NULL
        source = (f"`source_stream({name}_source) -> map(|x| deserialize_from_bytes(x.unwrap().1).unwrap())`"
                  if name in receives else _NULL)
        lines.append(f".async {name} {sink} {source}")
    for name in outputs:
        if name in sends and not _read_anywhere(name, all_rules):
            continue  # a sink to clients: its .async says so
        lines.append(f".output {name} `for_each(|v| println!(\"{{:?}}\", v))`")
    lines += [f".persist {name}" for name in sorted(persisted, key=_order(rules))]
    for rule in rules:
        try:
            lines.append(_rule(rule, component))
        except HydroflowError as exc:
            errors += exc.lines
    if errors:
        raise HydroflowError(errors)
    return [_declared_locally(line, component) for line in lines], nodes


def _declared_locally(line: str, component: str) -> str:
    """A declaration line (or a rule, already local) with `component.` dropped
    from the relation names, as `_local` drops it in rules."""
    return re.sub(rf"(?<![A-Za-z0-9_.]){re.escape(component)}\.", "", line)


def _read_anywhere(name: str, all_rules: list) -> bool:
    return any(a.name == name for p in all_rules for a in _body_atoms(p.statement))


def _order(rules: list):
    first = {}
    for i, rule in enumerate(rules):
        first.setdefault(rule.head.name, i)
    return lambda name: (first.get(name, len(rules)), name)


def _body_atoms(rule: ast.Rule) -> list:
    return [lit if isinstance(lit, ast.Atom) else lit.atom for lit in rule.body
            if isinstance(lit, (ast.Atom, ast.Negated))]


def _is_persistence(rule: ast.Rule) -> bool:
    if rule.delivery != "next" or len(rule.body) != 1 or not isinstance(rule.body[0], ast.Atom):
        return False
    body = rule.body[0]
    return (body.name == rule.head.name and body.args == rule.head.args and body.time is None
            and all(isinstance(a, ast.Var) for a in body.args) and len({a.name for a in body.args}) == len(body.args))


def _inputs(facts: list, errors: list) -> tuple:
    """`.input` lines for the facts of a component, and the nodes they are at."""
    by_relation, nodes = {}, []
    for fact in facts:
        location, *row = fact.atom.args
        if fact.tick not in (None, 1):
            errors.append(f"{fact.pos}: a fact at tick {fact.tick}: a Hydroflow .input holds from the first tick or at every tick")
            continue
        nodes.append(location.value)
        by_relation.setdefault((fact.atom.name, fact.tick), {}).setdefault(location.value, []).append(
            tuple(a.value for a in row))
    nodes = list(dict.fromkeys(nodes))
    lines = []
    for (name, tick), at in by_relation.items():
        rows = list(at.values())
        if len(at) != len(nodes) or any(sorted(r) != sorted(rows[0]) for r in rows):
            first = next(f for f in facts if f.atom.name == name)
            errors.append(f"{first.pos}: the facts of {name} are not the same at every node of the component "
                          f"({', '.join(map(str, nodes))}), as a Hydroflow .input is at every node of its role")
            continue
        literal = ", ".join("(" + "".join(f"{_rust_value(v, name, errors)}, " for v in row).rstrip() + ")" for row in rows[0])
        source = "repeat_iter" if tick is None else "source_iter"
        lines.append(f".input {name} `{source}([{literal}])`")
    return lines, nodes


def _rust_value(value, name: str, errors: list) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    errors.append(f"a fact of {name} holds {value!r}, which a Hydroflow .input literal here cannot")
    return "0"


def _rule(rule: ast.Rule, component: str) -> str:
    head = rule.head
    if not head.args:
        raise HydroflowError([f"{head.pos}: {head.name} has no location attribute"])
    location, *args = head.args
    here = _location_var(rule)
    if rule.delivery != "async" and location != here:
        raise HydroflowError([f"{head.pos}: the head is at another location than the body: "
                              f"only an @async rule sends, in Hydroflow"])
    choose = next((lit for lit in rule.body if isinstance(lit, ast.Choose)), None)
    chosen = _chosen(rule, choose, here, args)
    fields = []
    for arg in args:
        if chosen is not None and arg == chosen:
            fields.append(f"choose({arg.name})")
        else:
            fields.append(_head_arg(arg, rule))
    at = "" if rule.delivery != "async" else "@" + _at(location, rule)
    body = [_literal(lit, here, component) for lit in rule.body if not isinstance(lit, ast.Choose)]
    _check_own_location(rule, here)
    return f"{_local(head.name, component, head.pos)}{at}({', '.join(fields)}) {_KIND[rule.delivery]} {', '.join(body)}"


def _local(name: str, component: str, pos) -> str:
    """A relation's Hydroflow name in `component`: `component.x` (a relation two
    roles both have, as the import names it) is `x` there."""
    if name.startswith(component + "."):
        name = name[len(component) + 1:]
    if "." in name:
        raise HydroflowError([f"{pos}: the relation name {name} is not a Hydroflow identifier"])
    return name


def _location_var(rule: ast.Rule) -> ast.Var:
    for atom in _body_atoms(rule):
        if atom.name in FUNCTIONS:
            raise HydroflowError([f"{atom.pos}: {atom.name} is a library function, which Hydroflow's dialect has not "
                                  f"(a partitioning's address arithmetic uses them: export before partitioning)"])
    locations = {a.args[0] for a in _body_atoms(rule) if a.args}
    for atom in _body_atoms(rule):
        if atom.time is not None:
            raise HydroflowError([f"{atom.pos}: a time-qualified atom has no Hydroflow counterpart"])
    if len(locations) != 1 or not isinstance(next(iter(locations)), ast.Var):
        raise HydroflowError([f"{rule.pos}: the rule reads more than one location (or a constant one): "
                              f"a Hydroflow rule runs at one node"])
    return next(iter(locations))


def _check_own_location(rule: ast.Rule, here: ast.Var) -> None:
    uses = [v for a in _body_atoms(rule) for arg in a.args[1:] for v in ast.expr_vars(arg)]
    uses += [v for arg in rule.head.args[1:] for v in ast.expr_vars(arg)]
    uses += [v for lit in rule.body if isinstance(lit, ast.Comparison) for v in ast.expr_vars(lit.left) + ast.expr_vars(lit.right)]
    if rule.delivery == "async":
        uses += ast.expr_vars(rule.head.args[0])
    if any(v.name == here.name for v in uses):
        raise HydroflowError([f"{rule.pos}: the rule uses its own location {here.name} as a value: Hydroflow has "
                              f"no name for the running node (read it from a relation such as myID)"])


def _chosen(rule, choose, here, args):
    if choose is None:
        return None
    keys = {k.name for k in choose.keys}
    group = {v.name for a in args for v in ast.expr_vars(a)} | {here.name}
    if len(choose.values) != 1 or choose.values[0] not in args or keys != group - {choose.values[0].name}:
        raise HydroflowError([f"{choose.pos}: a choose whose keys are not the head's other attributes has no "
                              f"Hydroflow counterpart (choose(x) in the head)"])
    return choose.values[0]


def _head_arg(arg, rule) -> str:
    if isinstance(arg, ast.Aggregate):
        if arg.func == "avg":
            raise HydroflowError([f"{arg.pos}: avg<> has no Hydroflow counterpart"])
        return f"{arg.func}({arg.var.name if arg.var else '*'})"
    return _expr(arg)


def _at(location, rule) -> str:
    text = _expr(location)
    return text if isinstance(location, (ast.Var, ast.Const)) else f"({text})"


def _literal(literal, here: ast.Var, component: str) -> str:
    if isinstance(literal, ast.Negated):
        return "!" + _atom(literal.atom, here, component)
    if isinstance(literal, ast.Atom):
        return _atom(literal, here, component)
    return f"({_expr(literal.left)} {literal.op} {_expr(literal.right)})"


def _atom(atom: ast.Atom, here: ast.Var, component: str) -> str:
    fields = []
    for arg in atom.args[1:]:
        if isinstance(arg, ast.Wildcard):
            fields.append("_")
        elif isinstance(arg, ast.Var):
            fields.append(arg.name)
        else:
            raise HydroflowError([f"{arg.pos}: a constant or an expression in a body atom: Hydroflow atoms hold "
                                  f"variables (bind a variable and compare it)"])
    return f"{_local(atom.name, component, atom.pos)}({', '.join(fields)})"


def _expr(expr) -> str:
    """The expression as the printer writes it, once every part is one Hydroflow has."""
    _integral(expr)
    return format_expr(expr)


def _integral(expr) -> None:
    if isinstance(expr, ast.BinOp):
        _integral(expr.left)
        _integral(expr.right)
    elif not (isinstance(expr, ast.Var) or isinstance(expr, ast.Const) and type(expr.value) is int and expr.value >= 0):
        raise HydroflowError([f"{expr.pos}: {_describe(expr)}: Hydroflow rules compute over non-negative integers only"])


def _describe(expr) -> str:
    if isinstance(expr, ast.Const):
        return f"the constant {expr.value!r}"
    return "this expression"


def _file(component: str, origin: str, built: tuple) -> str:
    lines, nodes = built
    body = "\n".join(f"        {line}" for line in lines)
    where = (f"// The facts were at {', '.join(nodes)}: import with --nodes {component}={','.join(nodes)}.\n"
             if nodes and nodes != [component] else "")
    return (f"// Component {component} of {origin}, exported by `sparkdedalus export hydroflow`.\n{where}"
            f"// Connect each .async channel's sink and source, and each .input to fill, to your ports.\n"
            f"use hydroflow_datalog::datalog;\n\n"
            f"pub fn flow() -> hydroflow::scheduled::graph::Hydroflow {{\n"
            f"    datalog!(\n        r#\"\n{body}\n        \"#\n    )\n}}\n")
