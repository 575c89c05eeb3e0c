# Sourced by cluster-start.sh, cluster-stop.sh and submit.sh: Spark from the pyspark install in
# .venv, conf/ as Spark's configuration directory (spark-defaults.conf, and log4j2.properties:
# warnings only), everything bound to 127.0.0.1, Python workers on the venv's interpreter.
# Sets ROOT, PY and CLUSTER_DIR (the default state directory of the local cluster).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || { echo "$(basename "$0"): $PY not found; run scripts/setup.sh first" >&2; exit 1; }
SPARK_HOME="$("$PY" -c 'import importlib.util; print(importlib.util.find_spec("pyspark").submodule_search_locations[0])')"
export SPARK_HOME
export SPARK_CONF_DIR="$ROOT/conf"
export SPARK_LOCAL_IP=127.0.0.1
export PYSPARK_PYTHON="$PY"
CLUSTER_DIR="$ROOT/runs/cluster"
