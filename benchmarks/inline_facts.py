#!/usr/bin/env python
"""`check` of a program whose facts are written inline (issue 50): facts per second.

    .venv/bin/python benchmarks/inline_facts.py                          # 100,000 facts
    .venv/bin/python benchmarks/inline_facts.py --sizes 10000,100000 --lark 10000

The program (`program_text`) is a generated university in the style of LUBM:
triples such as `triple("http://www.Department3.University1.edu/GraduateStudent42",
"memberOf", "http://www.Department3.University1.edu");`, names with escaped quotes,
ages with integers, floats and ticks, a few rules over them. Each size is written to
a temporary file and `sparkdedalus check FILE` runs on it in a child process, as a
user runs it (imports included), `--repeat` times. With `--lark N`, the program of
N facts is also parsed in this process by lark alone (`parse_text(...,
fast_facts=False)`, the parser before the fast path of syntax/ground_facts.py) and
with the fast path, and the two ASTs compared.

Prints JSON lines on standard output: "load" at the start and end, "check" per size
(facts, bytes, the median wall seconds and the median CPU seconds of the child, which
a busy machine does not stretch, facts per second of the wall time, the exit code of
every run: the script exits 1 when one is not 0), "parse" per `--lark` size (seconds
of each parser, the speed-up, whether the ASTs are equal).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from engine import emit, load, log  # noqa: E402

RULES = """\
// a generated university (LUBM-style), its facts inline
type_of(X, C) :- triple(X, "type", C);
member(X, D) :- triple(X, "memberOf", D);
in_university(X, U) :- member(X, D), triple(D, "subOrganizationOf", U);
senior(X, A) :- age(X, A, _, _), A > 50;
"""


def program_text(facts: int) -> str:
    """The rules, then `facts` facts: triples, names and ages, in turn."""
    lines = [RULES]
    for i in range(facts):
        department = f"http://www.Department{i % 15}.University{i // 5000}.edu"
        person = f"{department}/GraduateStudent{i}"
        kind = i % 5
        if kind == 0:
            lines.append(f'triple("{person}", "type", "GraduateStudent");')
        elif kind == 1:
            lines.append(f'triple("{person}", "memberOf", "{department}");')
        elif kind == 2:
            lines.append(f'triple("{department}", "subOrganizationOf", "http://www.University{i // 5000}.edu");')
        elif kind == 3:
            lines.append(f'name("{person}", "Student \\"{i}\\"; the {i % 7}th");')
        else:
            lines.append(f'age("{person}", {20 + i % 60}, {i % 1000 * 0.25}, -{i % 3})@{1 + i % 4};')
    return "\n".join(lines) + "\n"


def check_seconds(path: Path, repeat: int) -> tuple[float, float, list]:
    """The median wall seconds and CPU seconds (user and system) of
    `sparkdedalus check path`, and the exit codes."""
    seconds, cpu, codes = [], [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run([str(REPO / ".venv" / "bin" / "sparkdedalus"), "check", str(path)],
                                capture_output=True, text=True)
        seconds.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        codes.append(result.returncode)
        if result.returncode != 0:
            log(result.stderr[-2000:])
    return statistics.median(seconds), statistics.median(cpu), codes


def compare_parsers(facts: int) -> None:
    from sparkdedalus.syntax.parser import parse_text
    text = program_text(facts)
    timings, units = {}, {}
    for name, fast in (("lark", False), ("fast", True)):
        started = time.perf_counter()
        units[name] = parse_text(text, "inline.ded", fast_facts=fast)
        timings[name] = time.perf_counter() - started
    emit("parse", facts=facts, lark_seconds=round(timings["lark"], 3), fast_seconds=round(timings["fast"], 3),
         speedup=round(timings["lark"] / timings["fast"], 1), same_ast=units["lark"] == units["fast"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000", help="facts per program, comma separated")
    parser.add_argument("--repeat", type=int, default=3, help="runs of check per size (the median)")
    parser.add_argument("--lark", default="", help="sizes to parse with lark alone too (slow: 3,000 facts a second)")
    args = parser.parse_args()
    load("start")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for facts in [int(s) for s in args.sizes.split(",") if s]:
            path = Path(tmp) / f"inline_{facts}.ded"
            path.write_text(program_text(facts))
            seconds, cpu, codes = check_seconds(path, args.repeat)
            emit("check", facts=facts, bytes=path.stat().st_size, seconds=round(seconds, 3),
                 cpu_seconds=round(cpu, 3), facts_per_s=round(facts / seconds), exit_codes=codes)
            failed |= any(codes)
    for facts in [int(s) for s in args.lark.split(",") if s]:
        compare_parsers(facts)
    load("end")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
