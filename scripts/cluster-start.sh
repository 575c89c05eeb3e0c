#!/usr/bin/env bash
# Start a local Spark standalone cluster: one master and two workers (1 core and 2 GiB each),
# background processes of the pyspark install in .venv, all on 127.0.0.1:
#   bash scripts/cluster-start.sh [--dir DIR] [--port P] [--webui-port W]
# DIR (default runs/cluster) holds the pid files, the logs and the workers' work directories
# (executor logs). P and W default to free ports. Waits until the master reports two ALIVE
# workers, then prints the master URL (spark://127.0.0.1:P) on stdout and writes it to
# DIR/master-url. Exit 1, with the cluster stopped again, when that takes over two minutes.
# Stop it with: bash scripts/cluster-stop.sh [--dir DIR]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cluster-env.sh"

usage() { echo "usage: cluster-start.sh [--dir DIR] [--port P] [--webui-port W]" >&2; exit 2; }
DIR="$CLUSTER_DIR" PORT="" UI_PORT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) [ $# -ge 2 ] || usage; DIR="$2"; shift 2 ;;
        --port) [ $# -ge 2 ] || usage; PORT="$2"; shift 2 ;;
        --webui-port) [ $# -ge 2 ] || usage; UI_PORT="$2"; shift 2 ;;
        *) usage ;;
    esac
done
DIR="$(mkdir -p "$DIR" && cd "$DIR" && pwd)"

for name in master worker1 worker2; do
    if [ -f "$DIR/$name.pid" ] && kill -0 "$(cat "$DIR/$name.pid")" 2>/dev/null; then
        echo "cluster-start.sh: a cluster is already running in $DIR (stop it: scripts/cluster-stop.sh --dir $DIR)" >&2
        exit 1
    fi
done
if [ -z "$PORT" ] || [ -z "$UI_PORT" ]; then
    read -r FREE1 FREE2 < <("$PY" -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))')
    PORT="${PORT:-$FREE1}" UI_PORT="${UI_PORT:-$FREE2}"
fi

daemon() {  # daemon NAME CLASS ARGS...: start spark-class in the background, pid and log in DIR
    local name="$1"
    shift
    nohup "$SPARK_HOME/bin/spark-class" "$@" >"$DIR/$name.log" 2>&1 </dev/null &
    echo $! >"$DIR/$name.pid"
}
# The master's REST submission server would listen on 6066 on every interface: off.
SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false" \
    daemon master org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$PORT" --webui-port "$UI_PORT"
for n in 1 2; do
    mkdir -p "$DIR/worker$n"
    daemon "worker$n" org.apache.spark.deploy.worker.Worker "spark://127.0.0.1:$PORT" \
        --cores 1 --memory 2g --host 127.0.0.1 --webui-port 0 --work-dir "$DIR/worker$n"
done

# Poll the master's web UI (JSON) until two workers are ALIVE; give up when a daemon exits.
if URL="$("$PY" - "$UI_PORT" "$DIR" <<'EOF_PY'
import json, os, sys, time, urllib.request
ui_port, state = sys.argv[1], sys.argv[2]
pids = [int(open(os.path.join(state, f"{name}.pid")).read()) for name in ("master", "worker1", "worker2")]
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    for pid in pids:
        with open(f"/proc/{pid}/stat") as stat:  # our own children: exited ones are zombies
            if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                sys.exit(f"a daemon (pid {pid}) exited")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as answer:
            status = json.load(answer)
        if sum(worker["state"] == "ALIVE" for worker in status["workers"]) >= 2:
            print(status["url"])
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.5)
sys.exit("no two ALIVE workers after 120 s")
EOF_PY
)"; then
    echo "$URL" >"$DIR/master-url"
    echo "cluster-start.sh: master $URL (web UI http://127.0.0.1:$UI_PORT), 2 workers; state in $DIR" >&2
    echo "$URL"
else
    tail -n 20 "$DIR"/master.log "$DIR"/worker1.log "$DIR"/worker2.log >&2
    bash "$ROOT/scripts/cluster-stop.sh" --dir "$DIR" >&2
    echo "cluster-start.sh: the cluster did not start (logs above, in $DIR)" >&2
    exit 1
fi
