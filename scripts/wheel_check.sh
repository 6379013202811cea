#!/usr/bin/env bash
# The installable package: builds the wheel from this checkout (pyproject.toml, reusing build/), installs it into
# a fresh virtual environment whose only packages are torch and what torch requires, and runs the quickstart
# and the torch.compile backend's entry point from outside the checkout. The fresh environment sees torch
# through links into the developer venv's site-packages (torch's own files, no 3 GB download).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
rm -rf build/wheelhouse
"$root/.venv/bin/pip" wheel -q --no-build-isolation --no-deps -w build/wheelhouse . 2>&1 | tail -20
wheel=$(ls build/wheelhouse/dyn-*.whl)
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
python3 -m venv "$fresh/venv"
site=$("$fresh/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
# torch and its requirements, by their distributions' files, linked into one directory on the fresh path
"$root/.venv/bin/python" - "$fresh/torch-only" <<'PYEOF'
import os, re, sys
from importlib import metadata
out = sys.argv[1]
os.makedirs(out)
todo, seen = ["torch"], set()
while todo:
    name = re.split(r"[ ;<>=!~\[]", todo.pop(), maxsplit=1)[0].lower().replace("_", "-")
    if name in seen:
        continue
    seen.add(name)
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        continue  # an optional requirement not installed
    todo += [r for r in (dist.requires or []) if "extra ==" not in r]
    base = dist.locate_file("")
    for top in {f.parts[0] for f in dist.files or [] if not f.parts[0].startswith("..")}:
        src, dst = os.path.join(base, top), os.path.join(out, top)
        if os.path.exists(src) and not os.path.exists(dst) and top != "__pycache__":
            os.symlink(src, dst)
PYEOF
echo "$fresh/torch-only" > "$site/torch-only.pth"
"$fresh/venv/bin/pip" install -q --no-deps "$wheel"
cd "$fresh"
# torch warns that numpy is absent: this environment holds torch alone on purpose
export PYTHONWARNINGS="ignore:Failed to initialize NumPy:UserWarning"
"$fresh/venv/bin/python" - <<'PYEOF'
import importlib.util, sys
for absent in ("transformers", "numpy", "pytest"):
    assert importlib.util.find_spec(absent) is None, f"{absent} is importable: the environment is not fresh"
import dyn, dyn._C
assert dyn.__file__.startswith(sys.prefix), dyn.__file__
assert dyn._C.HAS_COMPILER
from importlib.metadata import entry_points
assert [e.value for e in entry_points(group="torch_dynamo_backends") if e.name == "dyn"] == ["dyn.fx:backend"]
import torch
f = torch.compile(lambda x: torch.relu(x) * 2, backend="dyn")
x = torch.randn(64)
assert torch.equal(f(x), torch.relu(x) * 2)
print("dyn from the wheel:", dyn.__file__)
PYEOF
"$fresh/venv/bin/python" "$root/examples/quickstart.py"
