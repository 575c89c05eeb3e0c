#!/usr/bin/env bash
# spark-submit of the pyspark install in .venv, set up for sparkdedalus' jobs:
#   bash scripts/submit.sh --master spark://127.0.0.1:P jobs/run_program.py FILE... --ticks N --store PATH
# Adds the Delta jars (resolved offline from ~/.m2 with conf/ivysettings.xml) and reads
# conf/spark-defaults.conf and conf/log4j2.properties; the driver and the executors' Python
# workers run .venv's interpreter. Arguments go to spark-submit as they are; its exit code is kept.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cluster-env.sh"

read -r PACKAGES IVY_SETTINGS < <("$PY" -c '
from sparkdedalus.plumbing.session import delta_package_conf
conf = delta_package_conf()
print(conf["spark.jars.packages"], conf["spark.jars.ivySettings"])')
# Ivy prints ":: loading settings :: file = ..." on standard output, where a job prints its facts.
set +e
"$SPARK_HOME/bin/spark-submit" --packages "$PACKAGES" --conf "spark.jars.ivySettings=$IVY_SETTINGS" "$@" \
    | { grep -v '^:: loading settings :: ' || true; }
exit "${PIPESTATUS[0]}"
