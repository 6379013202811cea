"""Prints the PTX held in the gpu.binary ops of MLIR text read from stdin (for ptxas)."""
import re
import sys

text = sys.stdin.read()
found = False
for match in re.finditer(r'assembly = "((?:[^"\\]|\\.)*)"', text):
    found = True
    raw = match.group(1)
    sys.stdout.write(re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), raw).replace('\\"', '"').replace("\\\\", "\\"))
if not found:
    sys.exit("no gpu.binary assembly in the input")
