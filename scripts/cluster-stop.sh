#!/usr/bin/env bash
# Stop the local cluster started by scripts/cluster-start.sh:
#   bash scripts/cluster-stop.sh [--dir DIR]
# Sends TERM to the workers (which stop their executors) and the master, waits up to 30 s, then
# KILLs what is left, and removes the pid files. Only processes whose pid file is in DIR (default
# runs/cluster) and that are still Spark daemons are signalled; with none running it does nothing,
# so it is safe to call twice.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cluster-env.sh"

DIR="$CLUSTER_DIR"
case "$#:${1:-}" in
    0:) ;;
    2:--dir) DIR="$2" ;;
    *) echo "usage: cluster-stop.sh [--dir DIR]" >&2; exit 2 ;;
esac

running=()
for name in worker1 worker2 master; do
    file="$DIR/$name.pid"
    [ -f "$file" ] || continue
    pid="$(cat "$file")"
    if ps -ww -o args= -p "$pid" 2>/dev/null | grep -q 'org\.apache\.spark\.deploy\.'; then
        kill -TERM "$pid" 2>/dev/null || true
        running+=("$pid")
    fi
    rm -f "$file"
done
if [ ${#running[@]} -eq 0 ]; then
    echo "cluster-stop.sh: no cluster running in $DIR" >&2
    exit 0
fi
for _ in $(seq 60); do
    alive=()
    for pid in "${running[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then alive+=("$pid"); fi
    done
    [ ${#alive[@]} -eq 0 ] && break
    sleep 0.5
done
if [ ${#alive[@]} -gt 0 ]; then
    kill -KILL "${alive[@]}" 2>/dev/null || true
fi
rm -f "$DIR/master-url"
echo "cluster-stop.sh: stopped ${#running[@]} daemon(s) in $DIR" >&2
