"""The report of `sparkdedalus explain`: relations, strata, the rules each
`seal` head stands for, whether the program is confluent (and its points of
order), what garbage collection can reclaim (`analysis/gc.py`), and per
component its roles, distribution policy (and every valid partition key,
`analysis.partition_keys`) and decoupling candidates, with reasons and
their rules (file:line; in JSON with their text too: candidates that derive
the same relations by other rules differ).

`report(program)` is the data (the JSON of `explain --format json`, schema in
docs/analyses.md); `explain(program)` renders the same data as text. The
rewrites sit above the analyses: given `refusals` (the shell passes
`rewrite.refusals`), a decoupling candidate offers only the rewrites whose
precondition holds, and lists the others the analyses allow under
`refused`, with the reasons, so that what `explain` offers `rewrite` applies;
a component's policy likewise offers the partitioning rewrite that holds
(`partition_rewrites`), or shows the one its method names refused.

>>> from sparkdedalus import Program
>>> p = Program.parse('p(N, X)@next :- p(N, X); p("a", 1)@1;')
>>> print(explain(p).splitlines()[1])
  p(loc: string, c1: int)  EDB, persisted
>>> report(p)["components"][0]["name"]
'main'
"""

from __future__ import annotations

import re

from sparkdedalus.analysis.confluence import confluence
from sparkdedalus.analysis.decoupling import decouplings
from sparkdedalus.analysis.gc import gc_rules, not_collected
from sparkdedalus.analysis.partition_keys import valid_keys
from sparkdedalus.analysis.partitioning import distribution_policy
from sparkdedalus.analysis.roles import component_roles
from sparkdedalus.checks.dependencies import dependency_graph
from sparkdedalus.checks.normalize import unwild_literal
from sparkdedalus.checks.stratification import temporal_cycles
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.printer import format_rule

#: the version of the JSON schema (docs/analyses.md); bumped when a field changes meaning
SCHEMA = 2
#: the partitioning rewrites of `rewrite.REWRITES`, by name
PARTITIONINGS = ("partitioning", "partial partitioning")


def report(program, component: str | None = None, refusals=None) -> dict:
    """The analyses of `program` as JSON data; with `component`, that
    component only (a `ValueError` names an unknown one). `refusals(program,
    component, rules, rewrite)` gives why a rewrite refuses a decoupling or
    partitioning the analyses allow (empty: it applies); without it every
    such rewrite is offered."""
    if component is not None and component not in program.components:
        raise ValueError(f"unknown component '{component}' (components: {', '.join(program.components)})")
    derived = {r.head.name for r in program.rules if not r.persistence}
    inputs = {i.name for i in program.inputs}
    relations = []
    for rel in program.relations.values():
        roles = ["IDB" if rel.name in derived else "EDB"]
        roles += ["persisted"] if rel.name in program.persisted else []
        roles += ["input"] if rel.name in inputs else []
        roles += [f"auxiliary: {rel.auxiliary}"] if rel.auxiliary else []
        relations.append({"name": rel.name, "columns": [{"name": c, "type": t} for c, t in zip(rel.columns, rel.types)],
                          "roles": roles})
    strata = [{"index": s.index, "relations": sorted({program.rules[i].head.name for i in s.rules}),
               "recursive": s.recursive, "rules": len(s.rules),
               "lattices": [{"relation": lat.relation, "aggregate": lat.func, "argument": lat.position + 1}
                            for lat in s.lattices]} for s in program.strata]
    components = [_component(program, roles, refusals) for roles in component_roles(program)
                  if component is None or roles.name == component]
    verdict = confluence(program).to_json()
    return {
        "schema": SCHEMA,
        "relations": relations,
        "strata": strata,
        "next": sorted({r.head.name for r in program.rules if r.delivery == "next" and not r.persistence}),
        "async": sorted({r.head.name for r in program.rules if r.delivery == "async"}),
        "persisted": sorted(program.persisted),
        "sealed": _sealed(program),
        "temporal_cycles": [list(c) for c in temporal_cycles(list(program.relations),
                                                             dependency_graph(program.rules))],
        "confluent": verdict["confluent"],
        "points_of_order": verdict["points_of_order"],
        "confluence_reasons": verdict["reasons"],
        "gc": {"rules": [rule.to_json() for rule in gc_rules(program)],
               "kept": [{"relation": name, "reason": reason.to_json()}
                        for name, reason in not_collected(program).items()]},
        "components": components,
        "warnings": len(program.warnings),
    }


def _sealed(program) -> list:
    """Per `seal` head, the rules it desugars into (checks/seal.py), as text."""
    found: dict = {}
    for rule in program.rules:
        if rule.sealed:
            entry = found.setdefault(rule.sealed, {"relation": rule.sealed, "where": str(rule.pos), "rules": []})
            entry["rules"].append(_rule_text(rule))
    return list(found.values())


def _rule_text(rule) -> str:
    if rule.persistence:
        return f".persist {rule.head.name}"
    return format_rule(ast.Rule(rule.head, rule.delivery, tuple(unwild_literal(lit) for lit in rule.body)))


def _component(program, roles, refusals) -> dict:
    found = distribution_policy(program, roles.name)
    policy = found.to_json()
    return {
        "name": roles.name,
        "rules": [{"index": i, "head": program.rules[i].head.name, "where": str(program.rules[i].pos)}
                  for i in roles.rules],
        "inputs": sorted(roles.inputs),
        "outputs": sorted(roles.outputs),
        "references": sorted(roles.references),
        "distribution_policy": policy,
        "partition_rewrites": _partitionings(program, roles.name, policy, refusals),
        "partition_keys": [key.to_json() for key in valid_keys(program, roles.name, found)],
        "decouplings": [_candidate(program, c, refusals) for c in decouplings(program, roles.name)],
    }


def _candidate(program, candidate, refusals) -> dict:
    """A candidate's JSON: `rewrites` those that apply, `refused` the others
    the analyses allow, with the rewrite's reasons."""
    data = candidate.to_json()
    for rule in data["rules"]:
        rule["text"] = _rule_text(program.rules[rule["index"]])
    refused = {name: refusals(program, candidate.component, candidate.rules, name) if refusals else ()
               for name in data["rewrites"]}
    data["rewrites"] = [name for name, reasons in refused.items() if not reasons]
    data["refused"] = [{"rewrite": name, "reasons": [r.to_json() for r in reasons]}
                       for name, reasons in refused.items() if reasons]
    return data


def _partitionings(program, component: str, policy: dict, refusals) -> dict:
    """The partitioning rewrites of a partitioned policy: `rewrites` the
    one whose precondition holds; with none, `refused` the one the
    policy's method names, with its reasons."""
    if not policy["partitioned"]:
        return {"rewrites": [], "refused": []}
    named = "partial partitioning" if policy["method"] == "partial" else "partitioning"
    if refusals is None:
        return {"rewrites": [named], "refused": []}
    reasons = {name: refusals(program, component, (), name) for name in PARTITIONINGS}
    offered = [name for name, why in reasons.items() if not why]
    return {"rewrites": offered, "refused": [] if offered else
            [{"rewrite": named, "reasons": [r.to_json() for r in reasons[named]]}]}


def explain(program, component: str | None = None, refusals=None) -> str:
    """`report(program, component, refusals)` as text for a terminal."""
    data = report(program, component, refusals)
    lines = ["relations:"]
    for rel in data["relations"]:
        cols = ", ".join(f"{c['name']}: {c['type']}" for c in rel["columns"])
        lines.append(f"  {rel['name']}({cols})  {', '.join(rel['roles'])}")
    lines.append("strata (same tick, in evaluation order):")
    for s in data["strata"]:
        kind = "recursive" if s["recursive"] else "non-recursive"
        kept = "".join(f"; {lat['relation']} keeps the {lat['aggregate']} of argument {lat['argument']}"
                       for lat in s["lattices"])
        lines.append(f"  {s['index']}: {_names(s['relations'])}  ({kind}, {s['rules']} rule(s){kept})")
    lines.append(f"derived for the next tick (@next): {_names(data['next'])}")
    lines.append(f"sent over the network (@async): {_names(data['async'])}")
    lines.append(f"persisted: {_names(data['persisted'])}")
    for seal in data["sealed"]:
        lines.append(f"sealed {seal['relation']} (seal at {seal['where']}) desugars into:")
        lines += [f"  {text}" for text in seal["rules"]]
    lines.append("cycles through negation or aggregation across ticks: "
                 + ("; ".join(" <-> ".join(c) for c in data["temporal_cycles"]) or "-"))
    if data["confluent"]:
        lines.append("confluent: yes (" + "; ".join(r["message"] for r in data["confluence_reasons"]) + ")")
    else:
        lines.append(f"confluent: no ({len(data['points_of_order'])} point(s) of order)")
        lines += [f"  {line}" for line in _grouped(data["confluence_reasons"])]
    lines.append("components:")
    for comp in data["components"]:
        lines += _component_text(comp)
    lines.append("garbage collection (persisted facts dropped at the end of a tick):"
                 if data["gc"]["rules"] else "garbage collection: nothing to reclaim")
    for rule in data["gc"]["rules"]:
        lines.append(f"  {rule['rule']}  ({rule['pattern']})")
        lines += [f"    {_reason(r)}" for r in rule["reasons"]]
    for kept in data["gc"]["kept"]:
        lines.append(f"  kept: {_reason(kept['reason'])}")
    lines.append(f"warnings: {data['warnings']}")
    return "\n".join(lines)


def _component_text(comp: dict) -> list[str]:
    if not comp["rules"]:
        return [f"  {comp['name']}: no rules"]
    lines = [f"  {comp['name']}: {len(comp['rules'])} rule(s); inputs {_names(comp['inputs'])}; "
             f"outputs {_names(comp['outputs'])}"]
    policy = comp["distribution_policy"]
    keyed = {name: rp["key"] for name, rp in policy["relations"].items() if rp is not None}
    if policy["partitioned"]:
        keys = ", ".join(f"{name} by {key}" for name, key in keyed.items()) or "-"
        lines.append(f"    partitioning ({policy['method']}): {keys}")
        if comp["partition_keys"]:
            lines.append(f"      valid keys (--partition {comp['name']}:N:KEY): "
                         + ", ".join(key["key"] for key in comp["partition_keys"]))
        if policy["replicate"]:
            lines.append(f"      replicate: {_names(policy['replicate'])}")
        lines += [f"      refused by the {r['rewrite']} rewrite: {_reason(r['reasons'][0])}"
                  for r in comp["partition_rewrites"]["refused"]]
    else:
        lines.append("    partitioning: none")
    if not policy["partitioned"] or policy["method"] != "co-hashing":  # why others failed (3), then its own
        tried = [r for r in policy["reasons"] if r not in policy["verdict"]]
        lines += [f"      {_reason(r)}" for r in tried[:3] + policy["verdict"]]
    lines.append("    decoupling candidates:" if comp["decouplings"] else "    decoupling candidates: -")
    for cand in comp["decouplings"]:
        heads = ", ".join(dict.fromkeys(r["head"] for r in cand["rules"]))
        if cand["rewrites"]:
            lines.append(f"      {{{heads}}} ({cand['found_by']}): {', '.join(cand['rewrites'])}")
        else:
            first = next((r for p in cand["preconditions"] if not cand["refused"] for r in p["reasons"]), None)
            why = f"; e.g. {_reason(first)}" if first else ""
            lines.append(f"      {{{heads}}} ({cand['found_by']}): no rewrite{why}")
        lines += [f"        refused by the {r['rewrite']} rewrite: {_reason(r['reasons'][0])}" for r in cand["refused"]]
        lines.append("        rules: " + ", ".join(_line(rule["where"]) for rule in cand["rules"]))
    return lines


def _line(where: str) -> str:
    """`file:line` of a `file:line:col` position."""
    return where.rsplit(":", 1)[0]


def _grouped(reasons: list) -> list[str]:
    """Reasons as text, one line for those that differ only in the async
    relation they name ("... (messages of a, b)")."""
    groups: dict = {}
    for reason in reasons:
        match = re.fullmatch(r"(.*) \(messages of (\S+)\)", _reason(reason), flags=re.S)
        text, sender = (match.group(1), match.group(2)) if match else (_reason(reason), None)
        groups.setdefault(text, []).extend([sender] if sender else [])
    return [f"{text} (messages of {', '.join(senders)})" if senders else text for text, senders in groups.items()]


def _reason(reason: dict) -> str:
    return reason["message"] if reason["where"] is None else f"{reason['where']}: {reason['message']}"


def _names(items) -> str:
    return ", ".join(sorted(items)) or "-"
