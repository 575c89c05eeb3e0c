"""spark-submit entry point: check Dedalus programs without starting Spark
(`sparkdedalus.shell.jobs.check_program`; `--help` for the options)."""

import sys

from sparkdedalus.shell.jobs import check_program

if __name__ == "__main__":
    sys.exit(check_program())
