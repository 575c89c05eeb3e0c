#!/usr/bin/env bash
# Set up (idempotent), run an example end to end with its ticks committed to Delta
# tables in runs/broadcast, read one relation back from them, and draw the run as a
# spacetime diagram (runs/broadcast.html); extra arguments go to `sparkdedalus run`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"
rm -rf runs/broadcast
"$ROOT/.venv/bin/sparkdedalus" run examples/broadcast.ded --ticks 5 --format table --store runs/broadcast "$@"
echo
echo "== runs/broadcast: log at tick 3, read back from its Delta table (delta-rs, no Spark) =="
"$ROOT/.venv/bin/sparkdedalus" show runs/broadcast log --at 3
echo
"$ROOT/.venv/bin/sparkdedalus" diagram runs/broadcast --out runs/broadcast.html --relation log
echo "== spacetime diagram: open runs/broadcast.html in a browser =="
