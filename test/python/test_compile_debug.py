"""DYN_COMPILE_DEBUG=1 dumps every stage's IR of each compiled graph into a folder."""
import os

import pytest
import torch

import dyn
from dyn import backends


@pytest.mark.skipif(not backends.have_compiler(), reason="needs the compiler core")
def test_compile_debug_dumps_every_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    dyn.reset()

    def f(x, y):
        return torch.cos(x) + torch.sin(y)

    x, y = torch.randn(8, 4), torch.randn(4)
    torch.testing.assert_close(dyn.compile(f)(x, y), f(x, y))
    graphs = sorted(os.listdir(tmp_path))
    assert len(graphs) == 1
    files = sorted(os.listdir(tmp_path / graphs[0]))
    assert files == ["0_graph.mlir", "1_prim.mlir", "2_loop.mlir", "3_llvm.mlir"]
    text = {name: (tmp_path / graphs[0] / name).read_text() for name in files}
    assert "graph.cos" in text["0_graph.mlir"] and "graph.sin" in text["0_graph.mlir"]
    assert "prim.cos" in text["1_prim.mlir"]
    assert "loop.kernel" in text["2_loop.mlir"]
    assert "llvm.func @forward" in text["3_llvm.mlir"]


@pytest.mark.skipif(not backends.have_compiler(), reason="needs the compiler core")
def test_no_dump_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("DYN_COMPILE_DEBUG", raising=False)
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    dyn.reset()
    x = torch.randn(5)
    dyn.compile(lambda a: a * 2)(x)
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(not backends.have_compiler(), reason="needs the compiler core")
def test_a_graph_that_fails_to_compile_leaves_its_ir(tmp_path, monkeypatch):
    """A compile that fails (the graph then runs eagerly, with the reason reported) leaves the IR it was given
    and the compiler's located diagnostics as graph_<n>/failed.mlir: the input to reproduce it with dyn-opt."""
    from dyn.launch import compile_native
    from dyn.native import C
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    dyn.reset()
    ir = ("module {\n  func.func @forward(%arg0: tensor<4xf32>) -> (tensor<4xf32>) {\n"
          "    %0 = graph.no_such_op %arg0 : tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n")
    with pytest.raises(RuntimeError):
        compile_native(C.compile, ir, "forward", False, 3, 2)
    [failed] = list(tmp_path.rglob("failed.mlir"))
    text = failed.read_text()
    assert text.startswith(ir) and "graph.no_such_op" in text.split(ir, 1)[1]
