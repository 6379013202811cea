"""The C extension dyn._C (the PEP 523 frame hook, guards checked in C, the compiler core), or None where it
is not built: then capture looks entries up in Python and only the eager and custom backends run."""
import os
import sys

# dyn's JIT-compiled CPU kernels and its runtime matmul run on torch's OpenMP threads (libgomp), as ATen's
# ops do (lib/Runtime/OpenMPShim.cpp). Where they run on LLVM's OpenMP runtime instead (DYN_OPENMP=libomp, or
# no libgomp in the process), libomp's workers spin for KMP_BLOCKTIME (200 ms by default) after a parallel
# region, and every ATen op that runs within 200 ms of a dyn kernel finds its own threads competing with the
# spinning ones for the cores; workers that sleep at once cost a wake-up (a futex call) per kernel instead.
# libomp reads the variable when it first initializes, which is after this import; a value the user set (or
# OMP_WAIT_POLICY) wins. (Measured on the 2-core machine, 2026-11-26: in the history of docs/performance.md.)
if "KMP_BLOCKTIME" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
    os.environ["KMP_BLOCKTIME"] = "0"

try:
    from . import _C as C
except ImportError:
    C = None

# the frame hook: CPython 3.11 and 3.12 only (the frame layout it reads)
HOOK = bool(C is not None and getattr(C, "HOOK_SUPPORTED", 0) and (3, 11) <= sys.version_info[:2] <= (3, 12))


def have_compiler():
    return C is not None and getattr(C, "HAS_COMPILER", False)
