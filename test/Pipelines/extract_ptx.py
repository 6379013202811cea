"""Prints the PTX held in the gpu.binary ops of MLIR text read from stdin (for ptxas): their PTX
objects, or the `dyn.ptx` attribute beside a cubin (dyn-gpu-modules-to-ptx{cubin}); with an
argument N, only the N-th module's (ptxas takes one module a file)."""
import re
import sys

text = sys.stdin.read()
only = int(sys.argv[1]) if len(sys.argv) > 1 else None
found = False
for i, match in enumerate(re.finditer(r'(?:assembly|dyn\.ptx) = "((?:[^"\\]|\\.)*)"', text)):
    if only is not None and i != only:
        continue
    found = True
    raw = match.group(1)
    sys.stdout.write(re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), raw).replace('\\"', '"').replace("\\\\", "\\"))
if not found:
    sys.exit("no gpu.binary assembly in the input")
