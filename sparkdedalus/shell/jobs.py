"""The spark-submit jobs of `jobs/`: the CLI's `run` and `check` as entry
points for a Spark cluster (docs/cluster.md).

    spark-submit jobs/run_program.py FILE... --ticks N --store PATH [--network SPEC] [--seed S] [--resume]
                 [--commit-every K] [--conf KEY=VALUE]...
    spark-submit jobs/check_program.py FILE... [--strict]     (plain `python` works too: no Spark needed)

Same options, output and exit codes as `sparkdedalus run` and `check`: 0
success, 1 program or data errors, 2 usage errors, each in one line; a
traceback only with --debug. The run job runs in the session spark-submit
configured (master, Delta jars, settings, driver memory) with its own --conf
settings applied, and stops it at the end.
"""

from __future__ import annotations

import argparse

from sparkdedalus.shell import check, run
from sparkdedalus.shell.cli import OneLineParser, add_debug_argument, dispatch


def _parser(job: str, description: str, example: str) -> OneLineParser:
    parser = OneLineParser(prog=job, description=description, epilog=f"example (docs/cluster.md):\n  {example}",
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_debug_argument(parser)
    return parser


def run_program(argv: list[str] | None = None) -> int:
    """jobs/run_program.py: `sparkdedalus run --store` in the submitted session."""
    parser = _parser("run_program.py",
                     "Run a Dedalus program on the cluster spark-submit connects to, committing every tick\n"
                     "to the run directory PATH (Delta tables), and print the facts of one tick.",
                     "bash scripts/submit.sh --master spark://127.0.0.1:7077 jobs/run_program.py \\\n"
                     "      examples/broadcast.ded --ticks 5 --store runs/b\n"
                     "  (scripts/submit.sh: spark-submit with the Delta jars and conf/)")
    run.add_arguments(parser, session_options=False)
    args = parser.parse_args(argv)
    sessions = []

    def submitted_session(args):
        from pyspark.sql import SparkSession
        builder = SparkSession.builder
        for key, value in args.conf_settings.items():
            builder = builder.config(key, value)
        sessions.append(builder.getOrCreate())
        return sessions[-1]

    args.handler = lambda args: run.handle(args, submitted_session)
    try:
        return dispatch(args, parser.prog)
    finally:
        for spark in sessions:
            spark.stop()


def check_program(argv: list[str] | None = None) -> int:
    """jobs/check_program.py: `sparkdedalus check`, without starting Spark."""
    parser = _parser("check_program.py",
                     "Check Dedalus programs: diagnostics as file:line:col and exit 1 when one is invalid.\n"
                     "Starts no Spark session.",
                     "spark-submit jobs/check_program.py examples/two_phase_commit.ded --strict")
    check.add_arguments(parser)
    return dispatch(parser.parse_args(argv), parser.prog)
