#!/usr/bin/env bash
# Set up (idempotent) and run an example end to end; extra arguments go to the CLI.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "$ROOT/.venv/bin/sparkdedalus" run examples/broadcast.ded --ticks 5 --format table "$@"
