"""The op registry (include/dyn/Dialect/Graph/IR/GraphOpRegistry.td) and what is generated from it:
python/dyn/_ops_generated.py must be what dyn-tblgen generates from the .td now (the ops and their derivative rules,
GraphDerivatives.td; regenerated and diffed),
and every name it gives must exist in PyTorch and in capture's tables."""
import os
import subprocess

import pytest
import torch

import dyn._ops_generated as gen
from dyn.ops.handlers import METHODS, TORCH_FUNCS
from dyn.ops.handlers.tables import TORCH_OPS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DYN_BUILD_DIR", os.path.join(ROOT, "build"))
TBLGEN = os.path.join(BUILD, "bin", "dyn-tblgen")


def _generate(action):
    mlir_include = "/usr/lib/llvm-22/include"
    return subprocess.run(
        [TBLGEN, action, "-I", os.path.join(ROOT, "include"), "-I", mlir_include,
         os.path.join(ROOT, "include/dyn/Dialect/Graph/IR/GraphDerivatives.td")],
        check=True, capture_output=True, text=True).stdout


@pytest.mark.skipif(not os.path.exists(TBLGEN), reason="dyn-tblgen not built (build/bin/dyn-tblgen)")
def test_generated_python_matches_registry():
    with open(os.path.join(ROOT, "python/dyn/_ops_generated.py")) as f:
        committed = f.read()
    assert committed == _generate("-gen-ops-py"), \
        "python/dyn/_ops_generated.py is out of date: run `ninja -C build dyn-update-generated`"


@pytest.mark.skipif(not os.path.exists(TBLGEN), reason="dyn-tblgen not built (build/bin/dyn-tblgen)")
def test_docs_op_list_matches_registry():
    with open(os.path.join(ROOT, "docs/ops.md")) as f:
        doc = f.read()
    assert _generate("-gen-ops-doc") in doc, \
        "the op list in docs/ops.md is out of date: run `ninja -C build dyn-update-generated`"


def _resolve(path):
    obj = torch
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", sorted(gen.OPS))
def test_registered_names_exist_and_are_claimed(name):
    d = gen.OPS[name]
    assert name in gen.EAGER and name in gen.EXPR
    assert name in gen.FAMILIES[d.family]
    for t in d.torch_names:
        if t.startswith("torch.ops."):  # a library's custom op, found by name when called (it may load later)
            assert t[len("torch.ops."):] in TORCH_OPS, f"{t} has no capture handler"
        elif t.startswith("torch."):
            assert _resolve(t) in TORCH_FUNCS, f"{t} has no capture handler"
        elif t.startswith("Tensor."):
            attr = t[len("Tensor."):]
            assert hasattr(torch.Tensor, attr), t
            assert attr in METHODS, f"{t} has no capture handler"
        else:
            assert t.startswith("aten."), t
            assert hasattr(torch.ops.aten, t[len("aten."):]), t
