"""spark-submit entry point: check Dedalus programs without starting Spark
(`sparkdedalus.jobs.check_program`; `--help` for the options)."""

import sys

from sparkdedalus.jobs import check_program

if __name__ == "__main__":
    sys.exit(check_program())
