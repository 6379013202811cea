#!/usr/bin/env bash
# Every test: set-up (idempotent), then the lit suite (IR tests), pytest (Python, against eager), the wheel
# in a fresh environment, and the lit suite again on a sanitized dyn-opt. Each stage prints its time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
stage() { echo "== test.sh: $1 done in ${SECONDS}s since start"; }
"$root/scripts/setup.sh"
stage setup
cd "$root"
lit_bin=/usr/lib/llvm-22/bin/lit
"$lit_bin" -v build/test
stage lit
if [ -d test/python ]; then
  # one pytest worker per core (pytest-xdist), each file's tests in one worker, so module fixtures (the
  # torchrun launches, the corpus' models) run once; torch's own thread count stays the default
  PYTHONPATH="$root/python" "$root/.venv/bin/python" -m pytest -q -n auto --dist loadfile test/python
  stage pytest
fi
# the wheel, installed into a fresh environment with only torch, runs the quickstart
"$root/scripts/wheel_check.sh"
stage wheel
# the compiler's passes again under ASan + UBSan (docs/reliability.md)
"$root/scripts/sanitizers.sh"
stage sanitizers
