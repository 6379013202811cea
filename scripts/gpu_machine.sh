#!/usr/bin/env bash
# Runs ON the GPU machine (Ubuntu 24.04, Python 3.12, torch 2.11+cu130, g++ 13, cmake, ninja,
# pybind11; no LLVM/MLIR, no network), in the repository root, with .devbundle/ carried from
# scripts/gpu_bundle.sh:
#   1. unpack the self-contained core, 2. build the thin Python extension against Python 3.12,
#   3. run every pytest (CPU and GPU), 4. run the GPU benchmark and the cache-hit overhead benchmark.
# Logs go to $OUT when set. Usage: scripts/gpu_machine.sh [tests|bench|all|opinfo|models [models.py flags]]
#   opinfo: the OpInfo tests on CUDA (test_opinfo.py -k cuda), the torch.compile backend's and conversions' tests.
#   models: the model corpus, benchmarks/models.py --device cuda --size full (table in models.log, records in
#   models.json); extra flags go to models.py, e.g. `models --models hf_gpt2_sdpa,tv_resnet50 --no-inductor`
#   (inductor compiles every model twice: split the corpus over several calls to stay within 10 minutes).
set -uo pipefail
what="${1:-all}"
shift || true
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
PY="${PY:-/opt/torch/.venv/bin/python3}"
out="${OUT:-/tmp/dyn-out}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$root/python:$root/.devbundle/pylib"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader || true

"$PY" - <<'PYEOF' || exit 1
import lzma, shutil
with lzma.open(".devbundle/libDynCompiler.so.xz") as src, open(".devbundle/libDynCompiler.so", "wb") as dst:
    shutil.copyfileobj(src, dst)
PYEOF
pybind11_dir="$("$PY" -m pybind11 --cmakedir)"
cmake -G Ninja -S scripts/gpu_machine -B /tmp/dyn-ext -DCMAKE_BUILD_TYPE=Release \
  -DPython3_EXECUTABLE="$PY" -Dpybind11_DIR="$pybind11_dir" > "$out/ext-configure.log" 2>&1 \
  || { tail -30 "$out/ext-configure.log"; exit 1; }
ninja -C /tmp/dyn-ext > "$out/ext-build.log" 2>&1 || { tail -30 "$out/ext-build.log"; exit 1; }
"$PY" -c "import dyn, dyn._C as c; print('dyn._C ok', getattr(c, 'HAS_COMPILER', '?'))" || exit 1

status=0
if [ "$what" = all ] || [ "$what" = tests ]; then
  "$PY" -m pytest -q test/python -p no:cacheprovider 2>&1 | tee "$out/pytest.log" | tail -40
  status=${PIPESTATUS[0]}
fi
if [ "$what" = opinfo ]; then
  "$PY" -m pytest -q -p no:cacheprovider -rf test/python/test_opinfo.py -k "not test_opinfo or cuda or claims" \
    test/python/test_torch_compile_backend.py test/python/test_float_conversions.py \
    test/python/test_max_min_indices.py 2>&1 \
    | tee "$out/opinfo.log" | tail -60
  status=${PIPESTATUS[0]}
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  "$PY" benchmarks/gpu_bench.py 2>&1 | tee "$out/gpu_bench.log"
  "$PY" benchmarks/guard_overhead.py 2>&1 | tee "$out/guard_overhead.log"
fi
if [ "$what" = models ]; then
  "$PY" benchmarks/models.py --device cuda --size full --json "$out/models.json" "$@" 2>&1 | tee "$out/models.log"
  status=${PIPESTATUS[0]}
fi
exit $status
