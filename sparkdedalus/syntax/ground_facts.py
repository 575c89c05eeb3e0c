"""A fast path for ground facts written inline: a statement that is one fact with
literal arguments (`edge(1, 2);`, `name("a", -2.5)@3;`) is read by a regular
expression and blanked out of the text (newlines kept, so every other position
is unchanged) before lark parses the rest: lark's tree of the facts and its
transformer took ten times as long (issue 50).

>>> text = 'p(X) :- q(X);\\nq("a;b", -2)@3; q(true, 1.5);\\nr(1);'
>>> found = split_facts(text, "x.ded", frozenset({"component", "include"}))
>>> found.text.split("\\n"), len(found.text) == len(text)   # r(1) ends the text: lark reads it
(['p(X) :- q(X);', '                             ', 'r(1);'], True)
>>> [(str(fact.pos), fact.tick, fact.atom.args) for _, fact in found.facts]  # doctest: +NORMALIZE_WHITESPACE
[('x.ded:2:1', 3, (Const(value='a;b'), Const(value=-2))),
 ('x.ded:2:17', None, (Const(value=True), Const(value=1.5)))]
>>> str(found.facts[0][1].atom.args[1].pos)   # a negative number is at its '-'
'x.ded:2:10'

What lark would read differently stays in the text, lark reads it and reports
its errors, at the same positions: a fact with a variable, an expression, a
comment or `#` inside, `@0`, `@next`, a number too large, a string that
`unquote` refuses, a relation named like a keyword. A fact is taken only where a
statement starts (after `;`, `{`, `}` or at the start, outside strings and
comments) and only when the next statement starts with a name that is no
keyword or with `.decl`/`.input`/`.output`/`.persist`: lark's contextual lexer
reads the token after a statement by the state that statement left, so such a
token reads the same with or without the fact before it, and a syntax error (in
the text with the facts or without) is met at the same token with the same
expected terminals. The last statement of a text, or one before `}`, stays too.
"""

from __future__ import annotations

import ast as pyast
import math
import re
from dataclasses import dataclass, replace

from sparkdedalus.syntax import ast

# What lark skips between tokens (dedalus.lark: WS, COMMENT, BLOCK_COMMENT).
_GAP = r"(?:[ \t\f\r\n]+|//[^\n]*|/\*[\s\S]*?\*/)*"
_WS = r"[ \t\f\r\n]*"
_NAME = r"[A-Za-z_][A-Za-z0-9_.]*"
# dedalus.lark's STRING, "(\\.|[^"\\\n])*", unrolled (the same strings, faster).
_STRING = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
# What lark skips, then the head of a fact if one is there: its name and "(".
_START = re.compile(rf"{_GAP}(?:({_NAME}){_WS}\({_WS})?")
# An argument and what follows it: groups minus, FLOAT, INT, STRING, bool, ',' or ')'.
_ARG = re.compile(rf"(?:(-{_WS})?(?:([0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?)|([0-9]+))|({_STRING})|(true|false))"
                  rf"{_WS}([,)]){_WS}")
_TAIL = re.compile(rf"{_WS}(?:@{_WS}([0-9]+){_WS})?;")
# The rest of a statement up to its ';', '{' or '}', strings and comments skipped.
_REST = re.compile(rf'(?:[^;{{}}"/]+|{_STRING}|//[^\n]*|/\*[\s\S]*?\*/|["/])*')
# A token that begins a statement in every context: a name (no keyword) or a directive.
_SAFE_NEXT = re.compile(rf"({_NAME})|\.(?:decl|input|output|persist)")


# What Python's reading of a string literal may change or refuse.
_NOT_PLAIN = re.compile(r"[\\\r\0\ud800-\udfff]")


def unquote(token: str) -> str:
    """The value of a STRING token: Python's reading of the literal
    (`ast.literal_eval`), which a string without escapes, carriage returns,
    NULs and lone surrogates is without its quotes."""
    if _NOT_PLAIN.search(token) is None:
        return token[1:-1]
    return pyast.literal_eval(token)


@dataclass(frozen=True)
class Split:
    """`text` with the facts read here blanked; `facts`: (component, Fact) in
    source order, component -1 for the top level, k for the k-th component."""

    text: str
    facts: list


def split_facts(text: str, file: str, keywords: frozenset) -> Split:
    """Read the ground facts of `text` that lark would read the same way;
    `keywords` are the names lark may lex as keywords."""
    facts, pieces = [], []
    pending, kept = None, 0
    depth, component = 0, -1
    lines = Lines(text)
    pos, end = 0, len(text)
    while True:
        start = _START.match(text, pos)
        name = start.group(1)
        pos = start.start(1) if name is not None else start.end()
        if pending is not None:
            after = name
            if after is None:
                directive = _SAFE_NEXT.match(text, pos)
                after = directive and (directive.group(1) or ".")
            if after is not None and after not in keywords:
                where, begin, stop, fact = pending
                facts.append((where, fact))
                pieces += (text[kept:begin], _blank(text, begin, stop))
                kept = stop
            pending = None
        if pos >= end:
            break
        if name is not None and name not in keywords:
            read = _read(text, pos, start.end(), name, file, lines)
            if read is not None:
                pending = (component if depth else -1, pos, *read)
                pos = read[0]
                continue
        pos = _REST.match(text, pos).end()
        if pos < end:
            char = text[pos]
            pos += 1
            if char == "{":
                depth += 1
                component += depth == 1
            elif char == "}":
                depth = max(depth - 1, 0)
    if not facts:
        return Split(text, [])
    pieces.append(text[kept:])
    return Split("".join(pieces), facts)


def merge(statements: list, facts: list) -> list:
    """Lark's `statements` (of the blanked text) with `facts` put back in
    source order, those of a component into that component."""
    if not facts:
        return list(statements)
    inside: dict[int, list] = {}
    for where, fact in facts:
        inside.setdefault(where, []).append(fact)
    statements = list(statements)
    components = [i for i, s in enumerate(statements) if isinstance(s, ast.Component)]
    for where, found in inside.items():
        if where >= 0:
            at = components[where]
            statements[at] = replace(statements[at], statements=tuple(_in_order(statements[at].statements, found)))
    return _in_order(statements, inside.get(-1, []))


def _in_order(statements, facts: list) -> list:
    return sorted([*statements, *facts], key=lambda s: (s.pos.line, s.pos.col))


def _read(text: str, start: int, at: int, name: str, file: str, lines: "Lines"):
    """(end, Fact) of the fact at `start` whose arguments begin at `at`, or
    None where lark would read it otherwise or report an error."""
    line, col = lines.at(start)
    same_line = text.find("\n", start)  # arguments before it are on the fact's line
    if same_line < 0:
        same_line = len(text)
    args = []
    if text.startswith(")", at):
        at += 1
    else:
        close = ","
        while close == ",":
            arg = _ARG.match(text, at)
            if arg is None:
                return None
            minus, real, integer, string, boolean, close = arg.groups()
            try:
                if string is not None:
                    value = unquote(string)
                elif integer is not None:
                    value = int(integer)
                elif real is not None:
                    value = float(real)
                    if math.isinf(value):
                        return None
                else:
                    value = boolean == "true"
            except (ValueError, SyntaxError):
                return None
            where = ast.Pos(file, line, col + at - start) if at < same_line else ast.Pos(file, *lines.at(at))
            args.append(ast.Const(-value if minus else value, where))
            at = arg.end()
    tail = _TAIL.match(text, at)
    if tail is None:
        return None
    tick = tail.group(1)
    if tick is not None:
        tick = int(tick)
        if tick < 1:
            return None
    pos = ast.Pos(file, line, col)
    return tail.end(), ast.Fact(ast.Atom(name, tuple(args), None, pos), tick, pos)


def _blank(text: str, start: int, end: int) -> str:
    if text.find("\n", start, end) < 0:
        return " " * (end - start)
    return re.sub(r"[^\n]", " ", text[start:end])


class Lines:
    """1-based (line, column) of offsets of `text`, quickest asked for in
    increasing order."""

    def __init__(self, text: str):
        self.text, self.line, self.offset = text, 1, 0

    def at(self, offset: int) -> tuple[int, int]:
        if offset < self.offset:
            self.line, self.offset = 1, 0
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line, offset - self.text.rfind("\n", 0, offset)
