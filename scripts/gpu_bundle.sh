#!/usr/bin/env bash
# Builds, on this (Debian, LLVM 22) machine, what the GPU machine needs: libDynCompiler.so with
# MLIR and LLVM linked in statically, stripped and xz-compressed, plus the libomp it was linked
# with. Output: .devbundle/ (git-ignored; pass it to the device tool's `carry`).
# The GPU machine has no LLVM/MLIR; scripts/gpu_machine.sh unpacks this there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh" >/dev/null
if [ ! -f build-static/build.ninja ]; then
  cmake -G Ninja -S . -B build-static -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DDYN_LINK_MLIR_DYLIB=OFF -DDYN_ENABLE_PYTHON=OFF
fi
ninja -C build-static DynCompiler
rm -rf .devbundle && mkdir -p .devbundle
cp build-static/lib/libDynCompiler.so .devbundle/
strip .devbundle/libDynCompiler.so
xz -T0 -6 -f .devbundle/libDynCompiler.so
cp -L /usr/lib/llvm-22/lib/libomp.so.5 .devbundle/
# pure-Python test dependencies the GPU machine lacks (no network there): expecttest for PyTorch's OpInfos
mkdir -p .devbundle/pylib
"$root/.venv/bin/python" - <<'PYEOF'
import os, shutil, expecttest
shutil.copytree(os.path.dirname(expecttest.__file__), ".devbundle/pylib/expecttest", dirs_exist_ok=True)
PYEOF
ls -la .devbundle
