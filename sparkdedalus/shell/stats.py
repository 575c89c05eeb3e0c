"""What `run` applies and reports with either engine (`run` for the reference
evaluator, `run_spark` for Spark): the GC rules of the run and the file of
`--stats`. Both import it; it imports neither."""

from __future__ import annotations

import json
import sys

from sparkdedalus.shell.options import write_text


def collected(program, args) -> list:
    """The GC rules the run applies: the analysis' unless `--gc off`."""
    from sparkdedalus.analysis.gc import gc_rules
    return gc_rules(program) if args.gc != "off" else []


def gc_stats(collect: list, persisted: list, dropped: list) -> dict:
    """The GC part of `--stats`: the rules applied, and per tick the persisted
    rows carried to the next tick and the rows GC dropped."""
    return {"gc": bool(collect), "gc_rules": [rule.text() for rule in collect],
            "persisted_rows_per_tick": persisted, "collected_rows_per_tick": dropped}


def write_stats(path: str, stats: dict) -> None:
    """`--stats`: `stats` as JSON to `path` (checked writable before the run)."""
    write_text(path, json.dumps(stats, indent=2) + "\n")
    print(f"statistics written to {path}", file=sys.stderr)
