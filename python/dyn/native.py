"""The C extension dyn._C (the PEP 523 frame hook, guards checked in C, the compiler core), or None where it
is not built: then capture looks entries up in Python and only the eager and custom backends run."""
import sys

try:
    from . import _C as C
except ImportError:
    C = None

# the frame hook: CPython 3.11 and 3.12 only (the frame layout it reads)
HOOK = bool(C is not None and getattr(C, "HOOK_SUPPORTED", 0) and (3, 11) <= sys.version_info[:2] <= (3, 12))


def have_compiler():
    return C is not None and getattr(C, "HAS_COMPILER", False)
