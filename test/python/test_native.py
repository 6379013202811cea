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


@needs_compiler
def test_malformed_ir_is_an_error_not_a_crash():
    # MLIR's parser segfaults on `array<index: ...>`; the compiler reports it. A verifier rejects
    # what the passes could not lower (a `?` dim), with its location.
    bad = IR.replace("func.func @forward", 'func.func @forward(%z: tensor<2xf32>) attributes '
                     '{dims = array<index: 1>} {\n return\n}\nfunc.func @unused', 1)
    with pytest.raises(RuntimeError, match="dense arrays of `index`"):
        dyn._C.lower(bad, "dyn-graph-to-prim")
    dynamic = ("func.func @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {\n"
               "  %0 = graph.cumulative sum %x dim 1 : tensor<?x8xf32> -> tensor<?x8xf32>\n"
               "  return %0 : tensor<?x8xf32>\n}\n")
    where = r"""loc\("graph":2:8\): error: 'graph.cumulative' op needs static shapes"""
    with pytest.raises(RuntimeError, match=where):
        dyn._C.compile(dynamic, "forward", False)


def test_extension_built():
    assert dyn._C is not None, "dyn._C is missing: build the dyn_python_ext target"
    assert dyn._C.HOOK_SUPPORTED or not (3, 11) <= __import__("sys").version_info[:2] <= (3, 12)


DENSE_IR = """module {
  func.func @forward(%arg0: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<3xi64>) {
    %0 = graph.constant dense<[[0], [1], [2], [3]]> : tensor<4x1xi64>
    %1 = graph.constant dense<[[0, 1, 2, 3, 4]]> : tensor<1x5xi64>
    %2 = graph.sub %1, %0 : tensor<1x5xi64>, tensor<4x1xi64> -> tensor<4x5xi64>
    %3 = graph.constant dense<0> : tensor<i64>
    %4 = graph.le %2, %3 : tensor<4x5xi64>, tensor<i64> -> tensor<4x5xi1>
    %5 = graph.constant dense<0.0> : tensor<f32>
    %6 = graph.where %4, %arg0, %5 : tensor<4x5xi1>, tensor<4x5xf32>, tensor<f32> -> tensor<4x5xf32>
    %7 = graph.constant dense<[5, -1, 7]> : tensor<3xi64>
    return %6, %7 : tensor<4x5xf32>, tensor<3xi64>
  }
}
"""


@needs_compiler
def test_dense_constants():
    """Non-splat constants (tril's row and column numbers, arange's values) are read-only globals on the
    CPU; the GPU launch plan (built without a GPU) gives each a workspace slot that its bytes are copied
    into before the launches."""
    c = dyn._C.compile(DENSE_IR, "forward", False, 3, 3)
    x = torch.randn(4, 5)
    out, consts = torch.empty(4, 5), torch.empty(3, dtype=torch.int64)
    c.run((x,), (out, consts))
    torch.testing.assert_close(out, x.tril())
    assert consts.tolist() == [5, -1, 7]
    g = dyn._C.compile_gpu(DENSE_IR, "forward", False, 3)
    assert g.workspace_bytes >= 3 * 256  # three constants, a 256-byte aligned slot each


FILL_IR = """
module {
  func.func @forward() -> (tensor<3x4xf64>, tensor<5xf32>) {
    %0 = graph.constant dense<1.0> : tensor<f64>
    %1 = graph.expand %0 : tensor<f64> -> tensor<3x4xf64>
    %2 = graph.constant dense<2.5> : tensor<f32>
    %3 = graph.expand %2 : tensor<f32> -> tensor<5xf32>
    return %1, %3 : tensor<3x4xf64>, tensor<5xf32>
  }
}
"""


@needs_compiler
def test_gpu_fill_constants_stay_in_kernels():
    """ones/zeros/full/fill write a splat with vector stores; the vector constant is sunk into the kernel,
    so the launch plan (built without a GPU) has only buffers to pass (float64 factories and fill failed
    on CUDA with 'a kernel operand the launch plan cannot provide')."""
    g = dyn._C.compile_gpu(FILL_IR, "forward", True, 2)
    host = g.stages[-1][1]
    launches = [line for line in host.splitlines() if "gpu.launch_func" in line]
    assert len(launches) == 2
    assert all("vector<" not in line for line in launches)


CHAIN_IR = """
module {
  func.func @forward(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %0 = graph.matmul %x, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    %1 = graph.relu %0 : tensor<64x64xf32> -> tensor<64x64xf32>
    %2 = graph.matmul %1, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    %3 = graph.relu %2 : tensor<64x64xf32> -> tensor<64x64xf32>
    %4 = graph.matmul %3, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    %5 = graph.relu %4 : tensor<64x64xf32> -> tensor<64x64xf32>
    %6 = graph.matmul %5, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    %7 = graph.relu %6 : tensor<64x64xf32> -> tensor<64x64xf32>
    %8 = graph.matmul %7, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    return %8 : tensor<64x64xf32>
  }
}
"""


@needs_compiler
def test_gpu_temporaries_share_the_workspace_by_liveness():
    """A chain of GEMMs (library calls) with a kernel between each two: eight 16 KiB temporaries, at most
    two alive at a time, so the launch plan (built without a GPU) places them in two slots' worth of
    memory rather than eight: one slot of workspace, and the 16 KiB output, which the temporaries that die
    before its first step share."""
    g = dyn._C.compile_gpu(CHAIN_IR, "forward", False, 3)
    slot = 64 * 64 * 4
    assert g.workspace_bytes == slot  # the last GEMM's operand is live beside the output it writes
    assert g.memory_plan["hosted_bytes"] >= slot
