"""Names of the parts `rewrite --auto` decouples, by the role the rules
moved play (the vocabulary of the scaling paper, section 5.2), where their
text tells it:

- `M_collectors`: a rule aggregates (`count<..>`, ..) what derives from the
  message M, received from another node (voting's and 2PC's vote
  collectors, 2PC's enders: `ack_collectors`);
- `M_broadcasters`: a rule sends M to every node a constant relation lists
  (its destination is bound by a constant atom: voting's broadcasters,
  2PC's vote requesters: `prepare_broadcasters`);
- `M_handlers`: otherwise, the rules that handle the input M (2PC's
  participants: voters `prepare_handlers`, ackers `commit_handlers`).

M is a relation the moved rules read and do not derive (not constant; a
relation they only keep, persisted or GC'd, counts as read: the monotonic
vote collector of `allVotes`), the first by rule order that feeds the
aggregate, or the sent relation. A name the program uses as a component
gets `_2`, `_3`, ...; rules with no role give `COMPONENT_2` (`new_name`).
`rewrite --auto`, `--decouple` without a name and `optimize` all name the
parts they create with `name_part`.

>>> from sparkdedalus import Program
>>> p = Program.parse('component k { n(L, count<P>) :- got(L, P); got(L, P) :- vote(L, P); '
...                   'out(D, X)@async :- in(L, X), peer(L, D); h(L, X) :- in(L, X); }\\n'
...                   'component s { vote(D, 1)@async :- go(L, D); }\\npeer("k", "s"); in("k", 1)@2;')
>>> part_name(p, [0, 1]), part_name(p, [2]), part_name(p, [3])
('vote_collectors', 'out_broadcasters', 'in_handlers')
>>> name_part(Program.parse('component k { a(L, 1) :- peer(L, _); }\\npeer("k", "s");'), "k", [0])  # no input
'k_2'
"""

from __future__ import annotations

from sparkdedalus.analysis.roles import constant_relations
from sparkdedalus.syntax import ast


def _role(program, rules: list) -> tuple | None:
    """(role, message) of the rules moved, or None when they read no input."""
    constant = constant_relations(program)
    derived = {r.head.name: [d for d in rules if d.head.name == r.head.name and not _keeps(d)] for r in rules}
    derived = {name: found for name, found in derived.items() if found}  # kept only: an input

    def inputs(start: list) -> list:
        found, seen, todo = [], set(), list(start)
        while todo:
            for atom in todo.pop(0).positive_atoms:
                if atom.name in constant or atom.name in seen:
                    continue
                seen.add(atom.name)
                if atom.name in derived:
                    todo += derived[atom.name]
                else:
                    found.append(atom.name)
        return found

    for rule in rules:
        if rule.aggregates and (fed := inputs([rule])):
            return "collectors", fed[0]
    for rule in rules:
        dest = rule.head.args[0]
        if rule.delivery == "async" and isinstance(dest, ast.Var) and any(
                a.name in constant and dest in a.args[1:] for a in rule.positive_atoms):
            return "broadcasters", rule.head.name
    fed = inputs(rules)
    return ("handlers", fed[0]) if fed else None


def _keeps(rule) -> bool:
    """Whether `rule` keeps its relation (reads it: persistence, GC'd or not)."""
    return rule.head.name in {a.name for a in rule.positive_atoms}


def part_name(program, rules) -> str | None:
    """The name of the part made of the rules `rules` (indices) by their
    role (module docstring), free as a component name; None: no role."""
    role = _role(program, [program.rules[i] for i in sorted(rules)])
    if role is None:
        return None
    base = name = f"{role[1]}_{role[0]}"
    k = 2
    while name in program.components:
        name, k = f"{base}_{k}", k + 1
    return name


def new_name(program, component: str) -> str:
    """`COMPONENT_2`, or the first `COMPONENT_k` not taken."""
    k = 2
    while f"{component}_{k}" in program.components:
        k += 1
    return f"{component}_{k}"


def name_part(program, component: str, rules) -> str:
    """The name of the part of `component` made of the rules `rules`: by
    their role (`part_name`), else `new_name`. Every rewrite that names a
    part it creates (`--auto`, `--decouple` without NEWNAME, `optimize`)
    names it so."""
    return part_name(program, rules) or new_name(program, component)
