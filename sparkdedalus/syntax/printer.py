"""Print an AST back to canonical Dedalus text; ``parse(print(u)) == u``.

>>> from sparkdedalus.syntax.parser import parse_text
>>> print(format_unit(parse_text('p(X,Y)@next:-q(X,Y),!r(X) ,Y>1+2*3;')), end="")
p(X, Y)@next :- q(X, Y), notin r(X), Y > 1 + 2 * 3;
"""

from __future__ import annotations

import json

from sparkdedalus.syntax import ast

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}
_UNARY = 3
_ATOMIC = 4


def format_expr(expr, context: int = 0) -> str:
    """An expression, parenthesised only where the precedence requires it."""
    text, prec = _expr(expr)
    return f"({text})" if prec < context else text


def _expr(expr) -> tuple[str, int]:
    if isinstance(expr, ast.Var):
        return expr.name, _ATOMIC
    if isinstance(expr, ast.Wildcard):
        return "_", _ATOMIC
    if isinstance(expr, ast.Const):
        return format_const(expr.value), (_UNARY if _is_negative(expr.value) else _ATOMIC)
    if isinstance(expr, ast.Neg):
        return "-" + format_expr(expr.operand, _UNARY), _UNARY
    if isinstance(expr, ast.BinOp):
        prec = _PRECEDENCE[expr.op]
        # left-associative: the right operand needs parentheses at equal precedence
        return f"{format_expr(expr.left, prec)} {expr.op} {format_expr(expr.right, prec + 1)}", prec
    if isinstance(expr, ast.Aggregate):
        return f"{expr.func}<{expr.var.name if expr.var else '*'}>", _ATOMIC
    if isinstance(expr, ast.Seal):
        return f"seal<{', '.join(v.name for v in expr.vars)}>", _ATOMIC
    raise TypeError(f"not an expression: {expr!r}")


def _is_negative(value) -> bool:
    return not isinstance(value, (bool, str)) and value < 0


def format_const(value) -> str:
    """A constant as Dedalus text: strings double-quoted with escapes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        text = repr(value)
        # the grammar's FLOAT needs digits on both sides of a '.': 1e+20 -> 1.0e+20
        return text.replace("e", ".0e") if "e" in text and "." not in text else text
    return str(value)


def format_atom(atom: ast.Atom) -> str:
    text = f"{atom.name}({', '.join(format_expr(a) for a in atom.args)})"
    if isinstance(atom.time, ast.TickTime):
        text += f"@{atom.time.tick}"
    elif isinstance(atom.time, ast.VarTime):
        text += f"@{atom.time.var.name}"
    return text


def format_literal(lit) -> str:
    if isinstance(lit, ast.Atom):
        return format_atom(lit)
    if isinstance(lit, ast.Negated):
        return "notin " + format_atom(lit.atom)
    if isinstance(lit, ast.Comparison):
        return f"{format_expr(lit.left)} {lit.op} {format_expr(lit.right)}"
    if isinstance(lit, ast.Choose):
        keys = ", ".join(v.name for v in lit.keys)
        values = ", ".join(v.name for v in lit.values)
        return f"choose(({keys}), ({values}))"
    raise TypeError(f"not a literal: {lit!r}")


def format_rule(rule: ast.Rule) -> str:
    suffix = "" if rule.delivery == "now" else f"@{rule.delivery}"
    body = ", ".join(format_literal(lit) for lit in rule.body)
    return f"{format_atom(rule.head)}{suffix} :- {body};"


def format_statement(stmt, indent: str = "") -> str:
    if isinstance(stmt, ast.Rule):
        return indent + format_rule(stmt)
    if isinstance(stmt, ast.Fact):
        tick = "" if stmt.tick is None else f"@{stmt.tick}"
        return f"{indent}{format_atom(stmt.atom)}{tick};"
    if isinstance(stmt, ast.Include):
        return f"{indent}include {format_const(stmt.path)};"
    if isinstance(stmt, ast.Decl):
        cols = ", ".join(f"{c.name}: {c.type}" for c in stmt.columns)
        return f"{indent}.decl {stmt.name}({cols})"
    if isinstance(stmt, ast.InputDecl):
        # without a format clause, ';' keeps a next statement named `format` apart
        fmt = f" format {stmt.format}" if stmt.format else ";"
        return f"{indent}.input {stmt.name} from {format_const(stmt.path)}{fmt}"
    if isinstance(stmt, ast.OutputDecl):
        return f"{indent}.output {stmt.name}"
    if isinstance(stmt, ast.PersistDecl):
        return f"{indent}.persist {stmt.name}"
    if isinstance(stmt, ast.Component):
        inner = "\n".join(format_statement(s, indent + "    ") for s in stmt.statements)
        return f"{indent}component {stmt.name} {{\n{inner}\n{indent}}}" if inner else \
            f"{indent}component {stmt.name} {{\n{indent}}}"
    raise TypeError(f"not a statement: {stmt!r}")


def format_unit(unit: ast.Unit) -> str:
    """A whole file, one statement per line, comments kept in place and
    blank lines between groups kept (at most one)."""
    writer = _UnitWriter(unit.comments)
    writer.statements(unit.statements, "")
    writer.comments_before(None, "")
    return "".join(line + "\n" for line in writer.lines)


class _UnitWriter:
    def __init__(self, comments):
        self.pending = sorted(comments, key=lambda c: (c.pos.line, c.pos.col))
        self.lines: list[str] = []
        self.last_line = 0

    def _place(self, line: int, text: str) -> None:
        if self.lines and line > self.last_line + 1:
            self.lines.append("")
        self.lines.append(text)
        self.last_line = line + text.count("\n")  # a /* */ comment may span lines

    def comments_before(self, line: int | None, indent: str) -> None:
        while self.pending and (line is None or self.pending[0].pos.line < line):
            comment = self.pending.pop(0)
            self._place(comment.pos.line, indent + comment.text)

    def statements(self, statements, indent: str) -> None:
        for stmt in statements:
            line = stmt.pos.line
            self.comments_before(line, indent)
            if isinstance(stmt, ast.Component):
                self._place(line, f"{indent}component {stmt.name} {{")
                self.statements(stmt.statements, indent + "    ")
                self.lines.append(f"{indent}}}")
                self.last_line += 1  # the closing brace's own line: no blank line after it
                continue
            text = format_statement(stmt, indent)
            while self.pending and self.pending[0].pos.line == line:
                text += " " + self.pending.pop(0).text
            self._place(line, text)
