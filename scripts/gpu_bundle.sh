#!/usr/bin/env bash
# Builds, on this (Debian, LLVM 22) machine, what the GPU machine needs: libDynCompiler.so with
# MLIR and LLVM linked in statically, stripped and xz-compressed, plus the libomp it was linked
# with and the generated header the extension includes. Output: .devbundle/ (git-ignored; pass
# it to the device tool's `carry`).
# The GPU machine has no LLVM/MLIR; scripts/gpu_machine.sh unpacks this there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh" >/dev/null
# the developer build's objects, linked with MLIR and LLVM statically (lib/CMakeLists.txt)
ninja -C build DynCompilerStandalone
rm -rf .devbundle && mkdir -p .devbundle
cp build/standalone/libDynCompiler.so .devbundle/
strip .devbundle/libDynCompiler.so
xz -T0 -6 -f .devbundle/libDynCompiler.so
cp -L /usr/lib/llvm-22/lib/libomp.so.5 .devbundle/
# the registry's generated ATen glue, which the extension's aten_calls.cpp includes (no dyn-tblgen there)
mkdir -p .devbundle/include/dyn/Dialect/Graph/IR
cp build/include/dyn/Dialect/Graph/IR/AtenCalls.inc .devbundle/include/dyn/Dialect/Graph/IR/
# pure-Python test dependencies the GPU machine lacks (no network there): expecttest for PyTorch's OpInfos
mkdir -p .devbundle/pylib
"$root/.venv/bin/python" - <<'PYEOF'
import os, shutil, expecttest
shutil.copytree(os.path.dirname(expecttest.__file__), ".devbundle/pylib/expecttest", dirs_exist_ok=True)
PYEOF
ls -la .devbundle
