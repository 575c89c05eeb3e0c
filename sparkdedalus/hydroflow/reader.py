"""Read Hydroflow's `datalog!` dialect into declarations and rules.

Relations carry no location here (the node running the program is implicit);
terms, atoms and comparisons are the project's own AST nodes, their positions
those of the Rust file the text came from.

>>> from sparkdedalus.hydroflow.rust_source import Embedded
>>> decls = read(Embedded("v.rs", "out@a(x, count(y)) :~ req(x, y, a), (y > 1)", 7, 5))
>>> rule = decls[0]
>>> rule.kind, rule.head.at.name, rule.head.args[1].func, str(rule.body[1].pos)
(':~', 'a', 'count', 'v.rs:7:41')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import lark
from lark import Transformer, v_args

from sparkdedalus.hydroflow.errors import HydroflowError
from sparkdedalus.hydroflow.rust_source import Embedded
from sparkdedalus.syntax import ast


@dataclass(frozen=True)
class Snippet:
    """A Rust expression between backticks."""

    code: str
    pos: ast.Pos = field(compare=False)


@dataclass(frozen=True)
class Declaration:
    """`.input`, `.output`, `.async`, `.persist` or `.static` (kind without the dot)."""

    kind: str
    name: str
    snippets: tuple  # Snippet per backtick expression
    pos: ast.Pos = field(compare=False)


@dataclass(frozen=True)
class Target:
    """A rule's head: `name[@at](args)`; args are expressions or `ast.Aggregate`s
    (func also "choose" or "index")."""

    name: str
    at: object  # an expression or None
    args: tuple
    pos: ast.Pos = field(compare=False)


@dataclass(frozen=True)
class HfRule:
    """`head :- body` (same tick), `:+` (next tick) or `:~` (asynchronous)."""

    head: Target
    kind: str
    body: tuple  # ast.Atom, ast.Negated, ast.Comparison
    pos: ast.Pos = field(compare=False)


@lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    grammar = resources.files("sparkdedalus.hydroflow").joinpath("datalog.lark").read_text(encoding="utf-8")
    return lark.Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


def read(source: Embedded) -> list:
    """The declarations and rules of one `datalog!` text, in order;
    `HydroflowError` (located in the Rust file) on a syntax error."""
    try:
        tree = _parser().parse(source.text)
    except lark.UnexpectedInput as exc:
        line, col = exc.line, exc.column
        if isinstance(exc, lark.UnexpectedToken) and exc.token.type == "$END":  # where the raw string closes
            line, col = source.text.count("\n") + 1, len(source.text) - source.text.rfind("\n")
        raise HydroflowError([f"{source.locate(line, col)}: {_syntax_message(exc)}"]) from None
    return _Build(source).transform(tree).children


def _syntax_message(exc: lark.UnexpectedInput) -> str:
    if isinstance(exc, lark.UnexpectedToken):
        found = "end of input" if exc.token.type == "$END" else repr(str(exc.token))
        return f"syntax error in the datalog! text: unexpected {found}"
    return "syntax error in the datalog! text: unexpected character"


@v_args(meta=True)
class _Build(Transformer):
    def __init__(self, source: Embedded) -> None:
        super().__init__()
        self.source = source

    def _pos(self, meta) -> ast.Pos:
        line, col = self.source.position(meta.line, meta.column)
        return ast.Pos(self.source.file, line, col)

    def _token_pos(self, token) -> ast.Pos:
        line, col = self.source.position(token.line, token.column)
        return ast.Pos(self.source.file, line, col)

    def _snippet(self, token) -> Snippet:
        return Snippet(str(token)[1:-1], self._token_pos(token))

    def _declaration(self, kind, meta, children) -> Declaration:
        name, *snippets = children
        return Declaration(kind, str(name), tuple(self._snippet(s) for s in snippets), self._pos(meta))

    def input(self, meta, children):
        return self._declaration("input", meta, children)

    def output(self, meta, children):
        return self._declaration("output", meta, children)

    def channel(self, meta, children):
        return self._declaration("async", meta, children)

    def persist(self, meta, children):
        return self._declaration("persist", meta, children)

    def static(self, meta, children):
        return self._declaration("static", meta, children)

    def rule(self, meta, children):
        head, kind, *body = children
        return HfRule(head, str(kind), tuple(body), self._pos(meta))

    def target(self, meta, children):
        name, at, *args = children
        return Target(str(name), at, tuple(a for a in args if a is not None), self._pos(meta))

    def at_node(self, meta, children):
        return children[0]

    def aggregation(self, meta, children):
        func = str(children[0])
        var = children[1] if len(children) > 1 else None
        argument = ast.Var(str(var), self._token_pos(var)) if var is not None and var.type == "IDENT" else None
        return ast.Aggregate(func, argument, self._pos(meta))

    def negated(self, meta, children):
        return ast.Negated(children[0], self._pos(meta))

    def atom(self, meta, children):
        name, *fields = children
        return ast.Atom(str(name), tuple(f for f in fields if f is not None), None, self._pos(meta))

    def wildcard(self, meta, children):
        return ast.Wildcard(self._pos(meta))

    def predicate(self, meta, children):
        left, op, right = children
        return ast.Comparison(str(op), left, right, self._pos(meta))

    def binop(self, meta, children):
        left, op, right = children
        return ast.BinOp(str(op), left, right, self._pos(meta))

    def variable(self, meta, children):
        return ast.Var(str(children[0]), self._pos(meta))

    def integer(self, meta, children):
        return ast.Const(int(children[0]), self._pos(meta))
