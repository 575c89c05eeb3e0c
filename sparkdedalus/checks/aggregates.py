"""Aggregates and choose used as the dialect allows."""

from __future__ import annotations

from sparkdedalus.checks.parts import Rule
from sparkdedalus.syntax import ast
from sparkdedalus.syntax.ast import expr_vars
from sparkdedalus.syntax.diagnostics import Diagnostic


def check_aggregates(rules: list[Rule]) -> list[Diagnostic]:
    errors = []
    for rule in rules:
        grouped = {v.name for arg in rule.head.args if not isinstance(arg, ast.Aggregate) for v in expr_vars(arg)}
        for agg in rule.aggregates:
            if agg.var is not None and agg.var.name in grouped:
                errors.append(Diagnostic(agg.pos, "error",
                                         f"variable '{agg.var.name}' is both a group-by key and aggregated "
                                         f"in {agg.func}<{agg.var.name}>"))
        choose = rule.choose
        if choose is None:
            continue
        if rule.aggregates:
            errors.append(Diagnostic(choose.pos, "error", "choose and aggregates cannot be combined in one rule"))
        if len([lit for lit in rule.body if isinstance(lit, ast.Choose)]) > 1:
            errors.append(Diagnostic(choose.pos, "error", "a rule may have at most one choose"))
        overlap = {v.name for v in choose.keys} & {v.name for v in choose.values}
        for name in sorted(overlap):
            errors.append(Diagnostic(choose.pos, "error",
                                     f"variable '{name}' is both a key and a chosen value of choose"))
    return errors
