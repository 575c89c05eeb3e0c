"""`sparkdedalus why`: how a fact was derived, on the reference evaluator or Spark.

    sparkdedalus why FILE... --ticks N 'rel(args)@T' [--network SPEC] [--seed S]
                     [--inputs DIR] [--format text|json|html] [--out FILE]
                     [--engine reference|spark] [--master URL | --remote URL]

Runs ticks 1..N with provenance (`reference.provenance`; on Spark
`run.provenance`, collected: `spark.provenance.Collected`) and prints every
derivation of `rel(args)` at tick T (`reference.why`): an indented tree with the
rules (file:line), the body facts, the messages (sender, send tick, receiver,
arrival tick) and the negated atoms ("was absent"), or, for a fact that does not
hold, the rule that came closest and its missing body atoms. `--format json`
prints the same as a graph (docs/provenance.md); `--format html --out FILE`
writes it drawn on a spacetime grid (`diagram.why`), a self-contained page, and
prints one line (as `diagram` does, the page goes to a file, never to stdout).
Exit codes: 0 the fact holds, 1 it does not (or program and data errors), 2
usage errors (a bad fact pattern among them).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace

from sparkdedalus.errors import UsageError
from sparkdedalus.network import Network
from sparkdedalus.shell.check import add_hidden_strict
from sparkdedalus.shell.options import integer, key_value, network, writable, write_text
from sparkdedalus.shell.run_spark import DEFAULT_MASTER

FORMATS = ("text", "json", "html")


def add_parser(commands) -> None:
    parser = commands.add_parser("why", help="how a fact was derived (or why it does not hold), every derivation")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("fact", metavar="'rel(args)@T'", help="the fact and its tick, e.g. 'log(\"c\", \"hi\")@2'")
    parser.add_argument("--ticks", metavar="N", required=True, type=integer(minimum=1), help="run ticks 1..N")
    parser.add_argument("--network", metavar="SPEC", default=Network(), type=network,
                        help="delays and failures, as for run (default: every message arrives at t+1)")
    parser.add_argument("--seed", metavar="S", type=integer(), help="seed of the delay model and of choose")
    parser.add_argument("--inputs", metavar="DIR", help="directory .input paths are relative to (default: the program's)")
    parser.add_argument("--format", default="text", choices=FORMATS,
                        help="text (default), json, or html (the derivation graph, written to --out)")
    parser.add_argument("--out", metavar="FILE", type=writable, help="the HTML file --format html writes")
    parser.add_argument("--engine", default="reference", choices=("reference", "spark"),
                        help="reference (default) or spark (the same answer, from Spark's provenance)")
    parser.add_argument("--master", metavar="URL", default=DEFAULT_MASTER, help="Spark master (default local[2])")
    parser.add_argument("--remote", metavar="URL", help="use Spark Connect at URL")
    parser.add_argument("--conf", metavar="KEY=VALUE", action="append", default=[], type=key_value,
                        help="a Spark setting for the session the command creates (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="keep Spark's own log output")
    add_hidden_strict(parser)
    parser.set_defaults(handler=handle, ui=False)


def handle(args, new_session=None) -> int:
    """`why`; with `--engine spark`, `new_session(args)` makes the Spark session
    (default: the one --master or --remote asks for, as `run` makes it)."""
    from sparkdedalus.program import Program
    from sparkdedalus.reference.why import why
    ticks = args.ticks
    if (args.format == "html") != (args.out is not None):
        raise UsageError("--format html writes a file: give --out FILE" if args.out is None
                         else "--out goes with --format html (text and json are printed)")
    network = args.network if args.seed is None else replace(args.network, seed=args.seed)
    relation, row, tick = parse_fact(args.fact)
    if not 1 <= tick <= ticks:
        raise UsageError(f"fact pattern '{args.fact}': tick {tick} is outside the run (ticks 1..{ticks})")
    program = Program.from_files(*args.files, strict=args.strict)
    if program.warnings:
        print(program.render_warnings(), file=sys.stderr)
    if relation not in program.relations:
        raise UsageError(f"fact pattern '{args.fact}': unknown relation '{relation}'")
    trace = _trace(args, new_session, program, ticks, network)
    try:
        answer = why(trace, relation, row, tick)
    except ValueError as exc:  # the row does not fit the relation's columns
        raise UsageError(f"fact pattern '{args.fact}': {exc}") from None
    if args.format == "html":
        from sparkdedalus.diagram.why import html_text, summary
        write_text(args.out, html_text(answer.to_json(), answer.text()))
        print(f"wrote {args.out}: {summary(answer.to_json())}")
    else:
        print(json.dumps(answer.to_json(), indent=2) if args.format == "json" else answer.text())
    return 0 if answer.holds else 1


def _trace(args, new_session, program, ticks: int, network):
    """The run with provenance, as `reference.why` reads it: the reference
    evaluator's trace, or the Spark run's, collected."""
    if args.engine == "reference":
        from sparkdedalus.reference import run
        return run(program, ticks=ticks, network=network, inputs_dir=args.inputs, provenance=True)
    from sparkdedalus.shell.run_spark import command_session
    from sparkdedalus.spark.engine import Engine
    from sparkdedalus.spark.provenance import Collected
    args.conf_settings = dict(args.conf)
    spark = command_session(args, new_session)
    return Collected(Engine(spark).run(program, ticks=ticks, network=network, inputs_dir=args.inputs,
                                       provenance=True))


def parse_fact(text: str) -> tuple:
    """(relation, row, tick) of `rel(constants)@T`; a one-line `UsageError` otherwise.

    >>> parse_fact('log("c", "hi")@2')
    ('log', ('c', 'hi'), 2)
    >>> parse_fact('log("c", X)@2')
    Traceback (most recent call last):
      ...
    sparkdedalus.errors.UsageError: fact pattern 'log("c", X)@2': fact 'log' has variable 'X'; facts take constants only
    """
    from sparkdedalus.syntax import ast
    from sparkdedalus.syntax.diagnostics import DiagnosticError
    from sparkdedalus.syntax.parser import parse_text
    try:
        statements = parse_text(text.strip().rstrip(";") + ";", file="<fact>").statements
    except DiagnosticError as exc:
        message = next(d.message for d in exc.diagnostics if d.is_error)
        raise UsageError(f"fact pattern '{text}': {message}") from None
    if len(statements) != 1 or not isinstance(statements[0], ast.Fact) or statements[0].tick is None:
        raise UsageError(f"fact pattern '{text}': expected one fact with its tick, e.g. 'log(\"c\", \"hi\")@2'")
    fact = statements[0]
    return fact.atom.name, tuple(arg.value for arg in fact.atom.args), fact.tick
