"""The predicate dependency graph: an edge from every relation a rule reads to
the relation it derives, labelled with how (positive, negated, aggregated) and
when (same tick, next tick, async).

>>> from sparkdedalus import Program
>>> p = Program.parse('q(N, X) :- p(N, X), notin r(N, X); c(N, count<X>)@next :- q(N, X);')
>>> sorted((e.source, e.target, e.polarity, e.time) for e in dependency_graph(p.rules))
[('p', 'q', 'positive', 'now'), ('q', 'c', 'aggregated', 'next'), ('r', 'q', 'negated', 'now')]
"""

from __future__ import annotations

from dataclasses import dataclass

from sparkdedalus.syntax import ast


@dataclass(frozen=True)
class Edge:
    source: str  # the relation read
    target: str  # the relation derived
    polarity: str  # "positive", "negated" or "aggregated" (aggregates and choose)
    time: str  # "now", "next" or "async": when the derived fact holds
    rule: int  # index of the rule in Program.rules
    pos: ast.Pos  # the body literal

    @property
    def needs_complete_source(self) -> bool:
        """True when the target may only be computed once the source is final."""
        return self.polarity != "positive"


def dependency_graph(rules) -> list[Edge]:
    edges = []
    for rule in rules:
        blocking = rule.is_aggregate or rule.choose is not None
        for atom in rule.positive_atoms:
            polarity = "aggregated" if blocking else "positive"
            edges.append(Edge(atom.name, rule.head.name, polarity, rule.delivery, rule.index, atom.pos))
        for lit in rule.body:
            if isinstance(lit, ast.Negated):
                edges.append(Edge(lit.atom.name, rule.head.name, "negated", rule.delivery, rule.index, lit.pos))
    return edges


def strongly_connected(nodes, edges) -> list[list[str]]:
    """Tarjan's algorithm; components in reverse topological order of the
    condensation (a component comes after every component it reaches)."""
    succ: dict = {n: [] for n in nodes}
    for e in edges:
        succ.setdefault(e.source, []).append(e.target)
        succ.setdefault(e.target, [])
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    out: list = []
    counter = 0

    for root in sorted(succ):
        if root in index:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(succ[child])))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(sorted(component))
    return out
