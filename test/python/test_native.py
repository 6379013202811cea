"""dyn._C compiler binding: compile/run on raw pointers and tensors, lower, errors."""
import pytest
import torch

import dyn
from conftest import has_compiler

needs_compiler = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")

IR = """module {
  func.func @forward(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>) -> (tensor<4x8xf32>) {
    %0 = graph.cos %arg0 : tensor<4x8xf32> -> tensor<4x8xf32>
    %1 = graph.add %0, %arg1 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    return %1 : tensor<4x8xf32>
  }
}
"""


@needs_compiler
def test_compile_run_tensors_and_pointers():
    c = dyn._C.compile(IR, "forward", True)
    x, y = torch.randn(4, 8), torch.randn(8)
    out = torch.empty(4, 8)
    c.run((x, y), (out,))
    torch.testing.assert_close(out, torch.cos(x) + y)
    out2 = torch.empty(4, 8)
    c.run([x.data_ptr(), y.data_ptr(), out2.data_ptr()])
    torch.testing.assert_close(out2, out)
    assert [s for s, _ in c.stages][0] == "graph"
    assert c.compile_seconds > 0


@needs_compiler
def test_lower_and_errors():
    text = dyn._C.lower(IR, "dyn-graph-to-prim")
    assert "graph.cos" not in text
    with pytest.raises(RuntimeError):
        dyn._C.compile("module { func.func @forward( }", "forward", False)
    with pytest.raises(RuntimeError):
        dyn._C.lower(IR, "no-such-pass")


def test_extension_built():
    assert dyn._C is not None, "dyn._C is missing: build the dyn_python_ext target"
    assert dyn._C.HOOK_SUPPORTED or not (3, 11) <= __import__("sys").version_info[:2] <= (3, 12)
