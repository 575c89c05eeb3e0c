"""The `type=` functions of the commands' options: each turns an option's text
into its value or raises `argparse.ArgumentTypeError`, which the parser shows
as one line, `PROG: error: argument --OPTION: MESSAGE (see --help)`, exit 2,
before the command does any work.

>>> integer(minimum=1)("3"), names("a, b"), component_count("leader:4")
(3, ('a', 'b'), ('leader', 4))
>>> integer(minimum=1)("0")
Traceback (most recent call last):
argparse.ArgumentTypeError: expected an integer >= 1, got 0
"""

from __future__ import annotations

import argparse
import os

from sparkdedalus.errors import UserError
from sparkdedalus.network import Network


def integer(minimum: int | None = None):
    """An integer option, at least `minimum` when one is given."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got '{text}'") from None
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {value}")
        return value
    return parse


def names(text: str) -> tuple:
    """Comma-separated names (A,B,..), none of them empty."""
    found = tuple(name.strip() for name in text.split(","))
    if not all(found):
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got '{text}'")
    return found


def component_count(text: str) -> tuple:
    """COMPONENT:N, N >= 1: (component, N)."""
    component, _, count = text.rpartition(":")
    if not component or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"expected COMPONENT:N with N >= 1, got '{text}'")
    return component, int(count)


def key_value(text: str) -> tuple:
    """KEY=VALUE: (key, value), both stripped; the key not empty."""
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got '{text}'")
    return key.strip(), value.strip()


def network(spec: str) -> Network:
    """A `--network` spec (`Network.parse`)."""
    try:
        return Network.parse(spec)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def writable(path: str) -> str:
    """A file the command will write: refused when it is a directory, or when
    its directory does not exist or cannot be written."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"cannot write '{path}': it is a directory")
    if not os.path.isdir(directory):
        raise argparse.ArgumentTypeError(f"cannot write '{path}': no directory '{directory}'")
    if not os.access(path if os.path.exists(path) else directory, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write '{path}': permission denied")
    return path


def write_text(path: str, text: str) -> None:
    """Write the file a `writable` option names (exit 1 when it still fails)."""
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UserError(f"cannot write '{path}': {exc.strerror or exc}") from exc


def step(kind: str, parse=str):
    """A repeatable option whose values, in the order given, are the steps of
    one list (`dest="steps"`): (kind, its parsed text)."""
    def typed(text: str) -> tuple:
        return kind, parse(text)
    typed.__name__ = kind
    return typed
