#!/usr/bin/env bash
# Every test: set-up (idempotent), then the lit suite (IR tests), pytest (Python, against eager), the wheel
# in a fresh environment, and the lit suite again on a sanitized dyn-opt.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
cd "$root"
lit_bin=/usr/lib/llvm-22/bin/lit
"$lit_bin" -v build/test
if [ -d test/python ]; then
  PYTHONPATH="$root/python" "$root/.venv/bin/python" -m pytest -q test/python
fi
# the wheel, installed into a fresh environment with only torch, runs the quickstart
"$root/scripts/wheel_check.sh"
# the compiler's passes again under ASan + UBSan (docs/reliability.md)
"$root/scripts/sanitizers.sh"
