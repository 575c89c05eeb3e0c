"""Parse Dedalus text into an AST `Unit`, reporting every syntax error.

>>> unit = parse_text('log(N, P)@next :- log(N, P);', file="x.ded")
>>> rule = unit.statements[0]
>>> rule.delivery, [a.name for a in rule.body]
('next', ['log'])

A statement that is one ground fact with literal arguments is read without lark
(syntax/ground_facts.py: 100,000 facts in 1.3 s instead of 13.6 s, the same AST
and positions).

Syntax errors do not stop at the first: after an error the statement around it
is blanked out (positions elsewhere stay exact) and parsing resumes, so a file
with three bad statements reports three errors.
"""

from __future__ import annotations

import gc
import re
from contextlib import contextmanager
from functools import lru_cache
from importlib import resources

import lark
from lark import Token, Transformer, v_args

from sparkdedalus.syntax import ast
from sparkdedalus.syntax.diagnostics import Diagnostic, DiagnosticError, Sources
from sparkdedalus.syntax.ground_facts import Lines, merge, split_facts, unquote

MAX_SYNTAX_ERRORS = 50

_TERMINAL_NAMES = {
    "SEMICOLON": "';'", "COMMA": "','", "LPAR": "'('", "RPAR": "')'", "LBRACE": "'{'",
    "RBRACE": "'}'", "COLON": "':'", "AT": "'@'",
    "IDENT": "a name", "INT": "an integer", "FLOAT": "a number", "STRING": "a string",
    "COMPARE": "a comparison", "PLUS": "'+'", "MINUS": "'-'", "STAR": "'*'", "SLASH": "'/'",
    "PERCENT": "'%'", "AGGREGATE": "an aggregate", "SEAL": "seal<..>", "NOTIN": "'notin'", "BANG": "'!'",
    "HASH": "'#'", "$END": "end of file",
}


@lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    grammar = resources.files("sparkdedalus.syntax").joinpath("dedalus.lark").read_text()
    return lark.Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


@lru_cache(maxsize=1)
def _keywords() -> frozenset:
    """The names lark may lex as a keyword (a string terminal that is also a
    name, and `notin`)."""
    ident = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
    return frozenset({t.pattern.value for t in _parser().terminals
                      if isinstance(t.pattern, lark.lexer.PatternStr) and ident.fullmatch(t.pattern.value)}
                     | {"notin"})


def parse_text(text: str, file: str = "<string>", sources: Sources | None = None,
               fast_facts: bool = True) -> ast.Unit:
    """Parse one file's text. Raises `DiagnosticError` listing every error.
    `fast_facts=False` hands ground facts to lark too (the tests compare)."""
    if sources is not None:
        sources.add(file, text)
    with gc_paused():
        return _parse(text, file, sources, fast_facts)


@contextmanager
def gc_paused():
    """Python's cycle collector off while parsing and checking: they make
    millions of objects and no cycle, and the collector's passes over them
    took two thirds of the time of 100,000 facts. At the end, objects made
    during the pause go to the oldest generation, where a collection would
    have moved them, without one more pass over them (0.3 s); not when the
    process has frozen objects of its own (`gc.freeze`)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_count()[0] > 100_000 and not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _parse(text: str, file: str, sources: Sources | None, fast_facts: bool) -> ast.Unit:
    errors: list[Diagnostic] = []
    work = text
    tree = None
    facts: list = []
    for _ in range(MAX_SYNTAX_ERRORS):
        split = split_facts(work, file, _keywords()) if fast_facts else None
        try:
            tree = _parser().parse(split.text if split else work)
            facts = split.facts if split else []
            break
        except lark.UnexpectedInput as exc:
            errors.append(_syntax_error(exc, work, file))
            token = getattr(exc, "token", None)
            closing = token is not None and token.type == "RBRACE" and "SEMICOLON" in (getattr(exc, "expected", None) or ())
            blanked = _blank_statement(work, exc.pos_in_stream, keep_from_offset=closing)
            if blanked == work:
                break
            work = blanked
    builder = _Builder(file)
    unit = merge(builder.transform(tree), facts) if tree is not None else []
    errors += builder.errors
    if errors:
        raise DiagnosticError(errors, sources)
    # on success `work` is `text`; without its facts it has the same comments
    return ast.Unit(tuple(unit), file=file, comments=_comments(split.text if fast_facts else text, file))


_COMMENT_SCAN = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*[\s\S]*?\*/')


def _comments(text: str, file: str) -> tuple:
    found, lines = [], Lines(text)
    for match in _COMMENT_SCAN.finditer(text):
        if match.group().startswith('"'):
            continue
        found.append(ast.Comment(match.group(), ast.Pos(file, *lines.at(match.start()))))
    return tuple(found)


def _syntax_error(exc: lark.UnexpectedInput, text: str, file: str) -> Diagnostic:
    """A missing ';' is reported at the end of the statement it should close,
    not at the start of the next line."""
    expected = getattr(exc, "expected", None) or ()
    token = getattr(exc, "token", None)
    at_end = exc.pos_in_stream is None or (token is not None and token.type == "$END")
    offset = len(text) if at_end else exc.pos_in_stream
    if "SEMICOLON" in expected:
        before = _code_end_before(text, offset)
        line = text.count("\n", 0, before) + 1
        if at_end or line < exc.line:
            col = before - (text.rfind("\n", 0, before) + 1) + 1
            return Diagnostic(ast.Pos(file, line, col), "error", "syntax error: missing ';' at the end of the statement")
    return Diagnostic(ast.Pos(file, exc.line, exc.column), "error", _describe(exc))


def _code_end_before(text: str, offset: int) -> int:
    """The offset just after the last character of code before `offset`
    (skipping white space and comments)."""
    code = _COMMENT_SCAN.sub(lambda m: m.group() if m.group().startswith('"') else " " * len(m.group()), text[:offset])
    return len(code.rstrip())


def _describe(exc: lark.UnexpectedInput) -> str:
    if isinstance(exc, lark.UnexpectedCharacters):
        return f"syntax error: unexpected character {exc.char!r}"
    expected = sorted({_terminal_name(t) for t in getattr(exc, "expected", ()) or ()})
    if isinstance(exc, lark.UnexpectedEOF) or getattr(exc, "token", None) is None \
            or exc.token.type == "$END":
        found = "end of file"
    else:
        found = repr(str(exc.token))
    hint = f", expected {_join(expected)}" if expected else ""
    return f"syntax error: unexpected {found}{hint}"


def _terminal_name(name: str) -> str:
    """A terminal as the user wrote it: anonymous keywords (lark's __ANON_k,
    e.g. '.decl' or ':-') are named by their text."""
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    for terminal in _parser().terminals:
        if terminal.name == name and isinstance(terminal.pattern, lark.lexer.PatternStr):
            return repr(terminal.pattern.value)
    return repr(name.lower())


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    if len(items) > 6:
        return "one of " + ", ".join(items[:6]) + ", ..."
    return ", ".join(items[:-1]) + " or " + items[-1]


def _blank_statement(text: str, offset: int | None, keep_from_offset: bool = False) -> str:
    """Replace the statement around `offset` by spaces, keeping newlines.
    With `keep_from_offset` (a '}' where a ';' could end the statement), inside
    a component and after balanced parentheses, the '}' closes the component:
    it is kept."""
    if offset is None:
        return text
    offset = min(offset, len(text))
    start = max(text.rfind(";", 0, offset), text.rfind("{", 0, offset), text.rfind("}", 0, offset)) + 1
    end = text.find(";", offset)
    end = len(text) if end < 0 else end + 1
    if keep_from_offset:
        code = _COMMENT_SCAN.sub(lambda m: " " * len(m.group()), text[:offset])
        if code.count("{") > code.count("}") and code.count("(", start) == code.count(")", start):
            end = offset
    if start >= end:
        return text
    middle = "".join(c if c == "\n" else " " for c in text[start:end])
    return text[:start] + middle + text[end:]


class _Builder(Transformer):
    """lark tree -> AST, collecting the errors the grammar cannot express."""

    def __init__(self, file: str):
        super().__init__()
        self.file = file
        self.errors: list[Diagnostic] = []

    # -- helpers
    def _pos(self, item) -> ast.Pos:
        if isinstance(item, Token):
            return ast.Pos(self.file, item.line, item.column)
        meta = getattr(item, "meta", item)
        return ast.Pos(self.file, getattr(meta, "line", 0), getattr(meta, "column", 0))

    def _error(self, pos: ast.Pos, message: str) -> None:
        self.errors.append(Diagnostic(pos, "error", message))

    # -- expressions
    def name(self, children):
        (tok,) = children
        pos = self._pos(tok)
        text = str(tok)
        if text in ("true", "false"):
            return ast.Const(text == "true", pos)
        if text == "_":
            return ast.Wildcard(pos)
        if "." in text:
            self._error(pos, f"'{text}' is not a valid variable name (variables cannot contain '.')")
        return ast.Var(text, pos)

    def int_const(self, children):
        return ast.Const(int(children[0]), self._pos(children[0]))

    def float_const(self, children):
        pos, value = self._pos(children[0]), float(children[0])
        if value in (float("inf"), float("-inf")):
            self._error(pos, f"'{children[0]}' is too large for a double")
        return ast.Const(value, pos)

    def string_const(self, children):
        return ast.Const(unquote(str(children[0])), self._pos(children[0]))

    def neg(self, children):
        minus, operand = children
        pos = self._pos(minus)
        if isinstance(operand, ast.Const) and type(operand.value) in (int, float):
            return ast.Const(-operand.value, pos)
        return ast.Neg(operand, pos)

    def binop(self, children):
        left, op, right = children
        return ast.BinOp(str(op), left, right, getattr(left, "pos", self._pos(op)))

    # -- atoms
    def loc_mark(self, children):
        return ("#", self._pos(children[0]))

    def time_suffix(self, children):
        (tok,) = children
        return tok

    def head_term(self, children):
        expr = children[-1]
        return ("#", expr, children[0][1]) if len(children) == 2 else expr

    def aggregate(self, children):
        (tok,) = children
        text = str(tok)
        func, rest = text.split("<", 1)
        inner = rest.rstrip(">").strip()
        pos = self._pos(tok)
        var = None if inner == "*" else ast.Var(inner, ast.Pos(self.file, pos.line, pos.col + text.index(inner)))
        func = func.strip()
        if var is None and func != "count":
            self._error(pos, f"'{func}<*>' is not an aggregate; only count<*> takes '*'")
        return ast.Aggregate(func, var, pos)

    def seal(self, children):
        (tok,) = children
        text, pos = str(tok), self._pos(tok)
        found, names = [], set()
        for match in re.finditer(r"[A-Za-z_][A-Za-z0-9_]*", text[text.index("<"):]):
            at = ast.Pos(self.file, pos.line, pos.col + text.index("<") + match.start())
            if match.group() in names:
                self._error(at, f"'{match.group()}' is sealed twice")
            names.add(match.group())
            found.append(ast.Var(match.group(), at))
        return ast.Seal(tuple(found), pos)

    def _unmark(self, args, what_pos):
        out = []
        for i, arg in enumerate(args):
            if isinstance(arg, tuple):
                if i != 0:
                    self._error(arg[2], "'#' marks the location and may only precede the first argument")
                arg = arg[1]
            out.append(arg)
        return tuple(out)

    def head(self, children):
        name, *rest = children
        suffix = rest.pop() if rest and (isinstance(rest[-1], Token) or rest[-1] is None) else None
        args = tuple(a for a in rest if a is not None)
        return ast.Atom(str(name), self._unmark(args, self._pos(name)), None, self._pos(name)), suffix

    def atom(self, children):
        name, *rest = children
        suffix = rest.pop() if rest and (isinstance(rest[-1], Token) or rest[-1] is None) else None
        items = [r for r in rest if r is not None]
        if items and isinstance(items[0], tuple):
            items = items[1:]
        args = tuple(items)
        time = None
        if suffix is not None:
            pos = self._pos(suffix)
            if suffix.type == "INT":
                time = ast.TickTime(int(suffix), pos)
                if int(suffix) < 1:
                    self._error(pos, "ticks start at 1")
            elif str(suffix) in ("next", "async", "later"):
                self._error(pos, f"'@{suffix}' belongs on a rule head, not on a body atom")
            else:
                time = ast.VarTime(ast.Var(str(suffix), pos), pos)
        return ast.Atom(str(name), args, time, self._pos(name))

    # -- literals
    def negated(self, children):
        atom = children[-1]
        first = children[0] if isinstance(children[0], Token) else None
        return ast.Negated(atom, self._pos(first) if first is not None else atom.pos)

    def comparison(self, children):
        left, op, right = children
        return ast.Comparison(str(op), left, right, self._pos(op))

    def var_tuple(self, children):
        out = []
        for tok in children:
            if tok is None:
                continue
            out.append(ast.Var(str(tok), self._pos(tok)))
        return tuple(out)

    def choose(self, children):
        keyword, keys, values = children
        pos = self._pos(keyword)
        if not values:
            self._error(pos, "choose needs at least one chosen variable: choose((Keys), (Values))")
        return ast.Choose(keys, values, pos)

    def body(self, children):
        return tuple(children)

    # -- clauses
    def fact(self, children):
        ((atom, suffix),) = children
        tick = None
        if suffix is not None:
            if suffix.type != "INT":
                self._error(self._pos(suffix), f"a fact takes a tick (@1, @2, ...), not '@{suffix}'")
            elif int(suffix) < 1:
                self._error(self._pos(suffix), "ticks start at 1")
            else:
                tick = int(suffix)
        for arg in atom.args:
            if isinstance(arg, ast.Aggregate):
                self._error(arg.pos, "a fact cannot contain an aggregate")
            elif isinstance(arg, ast.Seal):
                self._error(arg.pos, "a fact cannot be sealed; seal<..> belongs on an @async rule head")
            elif not isinstance(arg, ast.Const):
                what = f"variable '{arg.name}'" if isinstance(arg, ast.Var) else "a non-constant argument"
                self._error(getattr(arg, "pos", atom.pos),
                            f"fact '{atom.name}' has {what}; facts take constants only")
        return ast.Fact(atom, tick, atom.pos)

    def rule(self, children):
        (atom, suffix), body = children
        delivery = "now"
        if suffix is not None:
            text = str(suffix)
            if text in ("next", "async", "later"):
                delivery = "async" if text == "later" else text
            else:
                self._error(self._pos(suffix), f"a rule head takes @next, @async or @later, not '@{text}'")
        return ast.Rule(atom, delivery, body, atom.pos)

    # -- declarations
    def include(self, children):
        (tok,) = children
        return ast.Include(unquote(str(tok)), self._pos(tok))

    def column(self, children):
        name, typ = children
        if str(typ) not in ast.TYPES:
            self._error(self._pos(typ), f"unknown type '{typ}' (types: {', '.join(ast.TYPES)})")
        return ast.Column(str(name), str(typ), self._pos(name))

    def decl(self, children):
        name, *cols = children
        return ast.Decl(str(name), tuple(c for c in cols if c is not None), self._pos(name))

    def input_decl(self, children):
        name, path, fmt = children
        if fmt is not None and str(fmt) not in ast.INPUT_FORMATS:
            self._error(self._pos(fmt), f"unknown input format '{fmt}' (formats: {', '.join(ast.INPUT_FORMATS)})")
        return ast.InputDecl(str(name), unquote(str(path)), str(fmt) if fmt is not None else None, self._pos(name))

    def output_decl(self, children):
        return ast.OutputDecl(str(children[0]), self._pos(children[0]))

    def persist_decl(self, children):
        return ast.PersistDecl(str(children[0]), self._pos(children[0]))

    def component(self, children):
        name, *statements = children
        return ast.Component(str(name), tuple(statements), self._pos(name))

    def start(self, children):
        return children
