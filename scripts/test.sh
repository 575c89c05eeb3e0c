#!/usr/bin/env bash
# Set up (idempotent, fast when nothing changed) and run the test suite; arguments go to pytest:
#   bash scripts/test.sh -k delta -x
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "$ROOT/.venv/bin/python" -m pytest "$@"
