#!/usr/bin/env bash
# The main job: set-up (idempotent), then the quickstart.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
cd "$root"
PYTHONPATH="$root/python" exec "$root/.venv/bin/python" examples/quickstart.py "$@"
