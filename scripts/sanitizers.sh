#!/usr/bin/env bash
# dyn-opt (every dialect, pass and pipeline of the compiler, linked statically) built with
# AddressSanitizer + UndefinedBehaviorSanitizer in a second build directory (build-asan/), then the lit
# suite on it: every pass and pipeline test and the fuzzer's CI seed (test/fuzz/dyn-opt-fuzz.test). Any
# report fails the run (UBSan does not recover). Leak checking is off: MLIR's registries are
# process-lifetime allocations by design. The tests of the shared libraries (C API, CMake package,
# plugin) are left out: a sanitized shared library needs the sanitizer runtime loaded by its host.
# Optimized at -O1, the sanitizers' usual level: the same checks, and the heavy MLIR TUs compile faster
# than at the default -O3 (CI's time limit on slower machines).
# Usage: scripts/sanitizers.sh (after scripts/setup.sh); docs/reliability.md says what it takes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
if [ ! -f build-asan/build.ninja ]; then
  cmake -G Ninja -S . -B build-asan \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" \
    -DCMAKE_EXE_LINKER_FLAGS="-fuse-ld=lld $san" -DCMAKE_SHARED_LINKER_FLAGS="-fuse-ld=lld $san" \
    -DCMAKE_MODULE_LINKER_FLAGS="-fuse-ld=lld $san" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DPython3_EXECUTABLE="$root/.venv/bin/python" \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
cmake --build build-asan --target dyn-opt
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
/usr/lib/llvm-22/bin/lit -q build-asan/test --filter-out "CAPI/|Package/|Plugin/"
