"""From loaded source to a checked `Program`, reporting every error in one pass.

Order: normalise, arities, safety, aggregates, types, locations, undefined
relations, strata. Each check returns diagnostics instead of raising, so a
program with five mistakes gets five messages. Every check runs on a program
with errors too: stratification needs only the relation names and the rules'
shape, which the earlier checks never leave undefined (a relation used with two
arities is still one relation of the dependency graph).

The checks import the parts of a program from `checks.parts`, never
`sparkdedalus.program`; `Program.build` runs `checks.pipeline` and makes the
Program, and `build_program` here is that for callers of this package.
"""

from __future__ import annotations


def build_program(loaded, strict: bool = False):
    """The checked Program of `loaded` (from `syntax.loader`): `Program.build`.
    (`sparkdedalus.program` imports `checks.parts`, which runs this package's
    module first: this module imports it only here.)"""
    from sparkdedalus.program import Program
    return Program.build(loaded, strict)
