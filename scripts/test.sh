#!/usr/bin/env bash
# Set up (idempotent, fast when nothing changed) and run the test suite; arguments go to pytest:
#   bash scripts/test.sh -k delta -x
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"

# Headless Chromium renders a spacetime diagram in tests/test_diagram.py (apt-get when missing).
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then AS_ROOT=()
    elif command -v sudo >/dev/null 2>&1; then AS_ROOT=(sudo -n)
    else echo "test: ERROR: need root (or sudo) to apt-get install chromium" >&2; exit 1; fi
    LOG="$(mktemp)"
    if ! { "${AS_ROOT[@]}" apt-get update -qq && "${AS_ROOT[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends chromium; } >"$LOG" 2>&1; then
        cat "$LOG" >&2; rm -f "$LOG"; echo "test: ERROR: apt-get install chromium failed" >&2; exit 1
    fi
    rm -f "$LOG"
    echo "test: installed chromium"
fi
exec "$ROOT/.venv/bin/python" -m pytest "$@"
