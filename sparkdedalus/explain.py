"""A readable report of a checked program: relations, roles, strata, components.

>>> from sparkdedalus import Program
>>> print(explain(Program.parse('p(N, X)@next :- p(N, X); p("a", 1)@1;')).splitlines()[1])
  p(loc: string, c1: int)  EDB, persisted
"""

from __future__ import annotations

from sparkdedalus.analysis.dependencies import dependency_graph
from sparkdedalus.analysis.roles import component_roles
from sparkdedalus.analysis.stratification import temporal_cycles


def _names(items) -> str:
    return ", ".join(sorted(items)) or "-"


def explain(program) -> str:
    lines = ["relations:"]
    derived = {r.head.name for r in program.rules if not r.persistence}
    for rel in program.relations.values():
        cols = ", ".join(f"{c}: {t}" for c, t in zip(rel.columns, rel.types))
        roles = ["IDB" if rel.name in derived else "EDB"]
        if rel.name in program.persisted:
            roles.append("persisted")
        if any(i.name == rel.name for i in program.inputs):
            roles.append("input")
        if rel.auxiliary:
            roles.append(f"auxiliary: what the negated atom at {rel.pos} reads")
        lines.append(f"  {rel.name}({cols})  {', '.join(roles)}")
    lines.append("strata (same tick, in evaluation order):")
    for stratum in program.strata:
        kind = "recursive" if stratum.recursive else "non-recursive"
        derived = sorted({program.rules[i].head.name for i in stratum.rules})
        lines.append(f"  {stratum.index}: {_names(derived)}  ({kind}, {len(stratum.rules)} rule(s))")
    carried = sorted({r.head.name for r in program.rules if r.delivery == "next" and not r.persistence})
    sent = sorted({r.head.name for r in program.rules if r.delivery == "async"})
    lines.append(f"derived for the next tick (@next): {_names(carried)}")
    lines.append(f"sent over the network (@async): {_names(sent)}")
    lines.append(f"persisted: {_names(program.persisted)}")
    cycles = temporal_cycles(list(program.relations), dependency_graph(program.rules))
    lines.append("cycles through negation or aggregation across ticks: "
                 + ("; ".join(" <-> ".join(c) for c in cycles) if cycles else "-"))
    lines.append("components:")
    for roles in component_roles(program):
        lines.append(f"  {roles.name}: inputs {_names(roles.inputs)}; outputs {_names(roles.outputs)}")
    lines.append(f"warnings: {len(program.warnings)}")
    return "\n".join(lines)
