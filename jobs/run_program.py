"""spark-submit entry point: run a Dedalus program with a store on the cluster
(`sparkdedalus.shell.jobs.run_program`; `--help` for the options)."""

import sys

from sparkdedalus.shell.jobs import run_program

if __name__ == "__main__":
    sys.exit(run_program())
