#!/usr/bin/env bash
# One-time set-up on a fresh Debian 12 machine: system packages, the Python venv, the build.
# Idempotent: each step is skipped when its result is already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

pkgs="libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools libomp-22-dev clang-22 lld-22 \
      ninja-build ccache cmake libclang-rt-22-dev zlib1g-dev libzstd-dev python3-dev python3-venv"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  sudo_if_needed apt-get update -q
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
fi

# The venv: torch pinned to the GPU machine's version.
venv="$root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import torch, pybind11, pytest" >/dev/null 2>&1; then
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q torch==2.11.0 numpy pybind11 pytest scipy
fi
# The model corpus (benchmarks/corpus.py): torchvision and transformers pinned to the GPU machine's
# versions, timm from PyPI; torch stays pinned so pip cannot move it.
if ! "$venv/bin/python" -c "
import torchvision, transformers, timm
assert torchvision.__version__.startswith('0.26.0') and transformers.__version__ == '5.17.0'
" >/dev/null 2>&1; then
  "$venv/bin/pip" install -q torch==2.11.0 torchvision==0.26.0 transformers==5.17.0 timm==1.0.31
fi

# The wheel's build backend (pyproject.toml; scripts/wheel_check.sh builds without isolation).
if ! "$venv/bin/python" -c "import scikit_build_core" >/dev/null 2>&1; then
  "$venv/bin/pip" install -q "scikit-build-core>=0.10"
fi

# PyTorch's OpInfo database (test/python/test_opinfo.py, benchmarks/opinfo_coverage.py) imports expecttest.
if ! "$venv/bin/python" -c "import expecttest" >/dev/null 2>&1; then
  "$venv/bin/pip" install -q expecttest==0.3.0
fi

# pytest-xdist: scripts/test.sh runs pytest with one worker per core.
if ! "$venv/bin/python" -c "import xdist" >/dev/null 2>&1; then
  "$venv/bin/pip" install -q pytest-xdist==3.8.0
fi

# Configure once; later runs only rebuild what changed.
if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DPython3_EXECUTABLE="$venv/bin/python" \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
cmake --build build
