"""What a `.input`'s Rust expression means in Datalog.

* `repeat_iter([(1, "a"), ...])` (or `source_iter([...]) -> persist()`) of
  literals: facts at every tick; `source_iter([...])` alone: facts at tick 1.
* a source of host data (`repeat_iter(peers.clone())`, `source_stream(rx)`,
  `source_iter(ids)`, `repeat_iter([(num_replicas,),])`), followed only by
  `persist()` and maps that reshape tuples (`map(|p| (p,))`): a relation the
  user fills.
* anything else needs host code, and a closure inside a literal tuple is a
  Rust closure used as a value: both are `HydroflowError`s.

>>> from sparkdedalus.hydroflow.reader import Snippet
>>> from sparkdedalus.syntax.ast import Pos
>>> meaning(Snippet('repeat_iter([(3 as u32,), (4,)])', Pos("a.rs", 2, 9)), "n")
Rows(rows=((3,), (4,)), every_tick=True)
>>> meaning(Snippet('repeat_iter(peers.clone()) -> map(|p| (p,))', Pos("a.rs", 2, 9)), "peers")
HostData(code='repeat_iter(peers.clone()) -> map(|p| (p,))')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sparkdedalus.hydroflow.errors import HydroflowError

_SOURCES = ("repeat_iter", "source_iter", "source_stream", "source_stream_serde")
_RESHAPE = re.compile(r"^map\(\s*\|\s*([^|]*)\|\s*\(([^()]*)\)\s*\)$")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_LITERAL_INT = re.compile(r"^(-?[0-9]+)(?:_?[iu](?:8|16|32|64|128|size))?(?:\s+as\s+[iu](?:8|16|32|64|128|size))?$")
_LITERAL_STR = re.compile(r'^"((?:[^"\\]|\\.)*)"(?:\.to_string\(\)|\.to_owned\(\)|\.into\(\))?$')


@dataclass(frozen=True)
class Rows:
    """Literal facts: at every tick, or at tick 1 only."""

    rows: tuple
    every_tick: bool


@dataclass(frozen=True)
class HostData:
    """A relation the host program fills; the user fills it here."""

    code: str


def meaning(snippet, name: str):
    """`Rows` or `HostData` for the `.input NAME` of `snippet`, or `HydroflowError`."""
    stages = [stage.strip() for stage in _split_top(snippet.code.strip(), "->")]
    source, rest = stages[0], stages[1:]
    call = re.match(rf"^({_NAME})\s*\((.*)\)$", source, re.S)
    if call is None or call.group(1) not in _SOURCES:
        raise _needs_host_code(snippet, name, source)
    persisted = any(stage == "persist()" for stage in rest)
    for stage in rest:
        if stage != "persist()" and not _reshapes(stage):
            raise _needs_host_code(snippet, name, stage)
    argument = call.group(2).strip()
    if argument.startswith("[") and argument.endswith("]") and call.group(1) in ("repeat_iter", "source_iter"):
        rows = [_row(element, snippet, name) for element in _split_top(argument[1:-1], ",") if element.strip()]
        if None in rows:  # a value of the host's, `[(num_replicas,)]`: the user fills it
            return HostData(snippet.code.strip())
        if not rest or all(stage == "persist()" for stage in rest):
            return Rows(tuple(rows), call.group(1) == "repeat_iter" or persisted)
        raise _needs_host_code(snippet, name, rest[0])
    if "|" in argument:
        raise _closure(snippet, name)
    return HostData(snippet.code.strip())


def _reshapes(stage: str) -> bool:
    """`map(|p| (p,))`, `map(|(a, b)| (b, a))`: a map that only reorders names."""
    match = _RESHAPE.match(stage)
    if match is None:
        return False
    names = set(re.findall(_NAME, match.group(1)))
    produced = [part.strip() for part in match.group(2).split(",") if part.strip()]
    return all(re.fullmatch(rf"{_NAME}(\.[0-9]+)*", part) and part.split(".")[0] in names for part in produced)


def _row(element: str, snippet, name: str) -> tuple | None:
    """The literal values of a tuple, or None when one is the host's (a name, a call)."""
    element = element.strip()
    if not (element.startswith("(") and element.endswith(")")):
        raise HydroflowError([f"{snippet.pos}: .input {name}: a row must be a tuple literal, not {element!r}"])
    values = []
    for part in _split_top(element[1:-1], ","):
        part = part.strip()
        if not part:
            continue
        if "|" in part:
            raise _closure(snippet, name)
        values.append(_literal(part))
    return None if None in values else tuple(values)


def _literal(text: str):
    """An int, str or bool literal's value; None for anything else."""
    integer = _LITERAL_INT.match(text)
    if integer:
        return int(integer.group(1))
    string = _LITERAL_STR.match(text)
    if string:
        return bytes(string.group(1), "utf-8").decode("unicode_escape")
    if text in ("true", "false"):
        return text == "true"
    return None


def _closure(snippet, name: str) -> HydroflowError:
    return HydroflowError([f"{snippet.pos}: .input {name}: a Rust closure used as a value has no Datalog counterpart"])


def _needs_host_code(snippet, name: str, stage: str) -> HydroflowError:
    return HydroflowError([f"{snippet.pos}: .input {name} needs host code: `{stage}` is neither a source, "
                           f"persist() nor a map that reshapes tuples (write it as rules, or as a relation you fill)"])


def _split_top(text: str, separator: str) -> list[str]:
    """Split at `separator` outside brackets, strings and closures' bars."""
    parts, depth, start, i, quoted = [], 0, 0, 0, False
    while i < len(text):
        char = text[i]
        if quoted:
            if char == "\\":
                i += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            start = i + len(separator)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return parts
