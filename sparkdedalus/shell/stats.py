"""What `run` applies and reports with either engine (`run` for the reference
evaluator, `run_spark` for Spark): the GC rules of the run and the file of
`--stats`. Both import it; it imports neither."""

from __future__ import annotations

import json
import sys

from sparkdedalus.shell.options import write_text


def collected(program, args) -> list:
    """The GC rules the run applies in the `--gc` mode (`analysis.gc.rules_for`):
    by default only those of relations outside the declared outputs."""
    from sparkdedalus.analysis.gc import rules_for
    return rules_for(program, args.gc)


def shown_collected(rules, names) -> list:
    """The relations among `names` (those printed) that `rules` (GcRules or
    their texts) collect, sorted."""
    from sparkdedalus.analysis.gc import collected_relations
    return [name for name in collected_relations(rules) if name in set(names)]


def say_collected(relations: list) -> None:
    """One line on stderr when printed relations are garbage-collected: a fact
    a GC rule matched is not shown at later ticks, though it holds there."""
    if relations:
        print(f"sparkdedalus: garbage-collected: {', '.join(relations)} (facts GC removed are not shown, "
              f"though they hold; --gc off keeps every fact, docs/gc.md)", file=sys.stderr)


def gc_stats(collect: list, persisted: list, dropped: list) -> dict:
    """The GC part of `--stats`: the rules applied, and per tick the persisted
    rows carried to the next tick and the rows GC dropped."""
    return {"gc": bool(collect), "gc_rules": [rule.text() for rule in collect],
            "persisted_rows_per_tick": persisted, "collected_rows_per_tick": dropped}


def write_stats(path: str, stats: dict) -> None:
    """`--stats`: `stats` as JSON to `path` (checked writable before the run)."""
    write_text(path, json.dumps(stats, indent=2) + "\n")
    print(f"statistics written to {path}", file=sys.stderr)
