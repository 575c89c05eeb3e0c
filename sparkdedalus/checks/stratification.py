"""Stratification of same-tick rules, and the temporal view of the cycles that
pass through `@next` / `@async`.

Same-tick edges decide strata: a relation that is negated or aggregated must be
complete before its reader runs, so such an edge inside a cycle of same-tick
rules is an error. Cycles through `@next`/`@async` are fine (temporal
stratification): they are reported by `temporal_cycles` for `explain`.
"""

from __future__ import annotations

from collections import deque

from sparkdedalus.checks.dependencies import Edge, strongly_connected
from sparkdedalus.checks.parts import Stratum
from sparkdedalus.syntax.diagnostics import Diagnostic


def stratify(relations, rules, edges: list[Edge], lattices: dict | None = None) -> tuple[tuple, list[Diagnostic]]:
    """Strata in evaluation order, and one error per blocking edge in a
    same-tick cycle (naming the cycle rule by rule). `lattices`: the relations
    that aggregate over their own recursion (checks/lattices.py), whose edges
    within it come positive."""
    lattices = lattices or {}
    now_edges = [e for e in edges if e.time == "now"]
    components = list(reversed(strongly_connected(relations, now_edges)))  # topological order
    component_of = {rel: i for i, comp in enumerate(components) for rel in comp}
    errors = []
    for edge in now_edges:
        if edge.needs_complete_source and component_of[edge.source] == component_of[edge.target]:
            errors.append(_cycle_error(edge, now_edges, component_of, rules))
    if errors:
        return (), errors

    level = {}
    for i, comp in enumerate(components):
        incoming = [e for e in now_edges if component_of[e.target] == i and component_of[e.source] != i]
        level[i] = max((level[component_of[e.source]] + (1 if e.needs_complete_source else 0)
                        for e in incoming), default=0)
    strata = []
    for number in sorted(set(level.values())):
        members = frozenset(rel for i, comp in enumerate(components) if level[i] == number for rel in comp)
        stratum_rules = tuple(r.index for r in rules if r.delivery == "now" and r.head.name in members)
        if not stratum_rules:
            continue
        recursive = any(e.time == "now" and e.target in members
                        and component_of[e.source] == component_of[e.target]
                        for e in now_edges)
        strata.append(Stratum(len(strata), members, stratum_rules, recursive,
                              tuple(lattices[n] for n in sorted(members) if n in lattices)))
    return tuple(strata), []


def _cycle_error(edge: Edge, edges: list[Edge], component_of: dict, rules) -> Diagnostic:
    path = _path(edge.target, edge.source, [e for e in edges if component_of[e.source] == component_of[edge.source]
                                             and component_of[e.target] == component_of[edge.source]])
    how = {"negated": "negation", "aggregated": "aggregation"}[edge.polarity]
    steps = [f"'{edge.target}' {_verb(edge)} '{edge.source}' (rule at {rules[edge.rule].pos})"]
    steps += [f"'{e.target}' {_verb(e)} '{e.source}' (rule at {rules[e.rule].pos})" for e in path]
    return Diagnostic(edge.pos, "error",
                      f"unstratifiable: a cycle through {how} within one tick: " + ", ".join(steps)
                      + "; break it with @next or @async"
                      + ("" if not rules[edge.rule].is_aggregate else
                         " (only min<X> and max<X> may aggregate over their own recursion: docs/language.md, section 9)"))


def _verb(edge: Edge) -> str:
    return {"positive": "reads", "negated": "negates", "aggregated": "aggregates"}[edge.polarity]


def _path(start: str, goal: str, edges: list[Edge]) -> list[Edge]:
    """The edges of a shortest path from `start` to `goal` (breadth first)."""
    by_source: dict = {}
    for e in edges:
        by_source.setdefault(e.source, []).append(e)
    via: dict = {start: None}
    queue = deque([start])
    while queue and goal not in via:
        node = queue.popleft()
        for e in by_source.get(node, []):
            if e.target not in via:
                via[e.target] = e
                queue.append(e.target)
    chain = []
    node = goal
    while via.get(node) is not None:
        chain.append(via[node])
        node = via[node].source
    return list(reversed(chain))


def temporal_cycles(relations, edges: list[Edge]) -> list[list[str]]:
    """Cycles that pass through @next/@async and contain negation or
    aggregation: legal thanks to temporal stratification."""
    found = []
    for comp in strongly_connected(relations, edges):
        members = set(comp)
        inside = [e for e in edges if e.source in members and e.target in members]
        if any(e.needs_complete_source for e in inside) and any(e.time != "now" for e in inside):
            found.append(comp)
    return found
