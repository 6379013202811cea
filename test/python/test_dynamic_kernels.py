"""Kernels over dynamic dims on the CPU (docs/dynamic_shapes.md): loop-dialect functions whose buffers have `?`
dims, compiled once and run at many sizes against PyTorch. The compiled function lists the sizes it takes after
the buffers (`buffer_sizes`: buffer index, dim)."""
import pytest
import torch

import dyn

pytestmark = pytest.mark.skipif(dyn._C is None or not getattr(dyn._C, "HAS_COMPILER", False),
                                reason="dyn._C without the compiler")

SIZES = (1, 3, 17, 1000, 70000)


# The GPU variants (docs/gpu.md, "Dynamic dims"): the same functions compiled once by compile_gpu and launched at
# every size, the launch plan evaluating its geometry, temporaries and library-call sizes from the sizes passed
# after the buffers.
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                  reason="needs a CUDA device"))]


def compiled(ir, buffers, device="cpu"):
    if device == "cuda":
        from dyn.launch import gpu_target
        return dyn._C.compile_gpu(ir, "forward", num_buffers=buffers, target=gpu_target())
    return dyn._C.compile(ir, "forward", num_buffers=buffers)


def sizes_of(c, tensors):
    pairs = c.buffer_sizes
    return [tensors[pairs[i]].shape[pairs[i + 1]] for i in range(0, len(pairs), 2)]


def run(c, inputs, outputs):
    if isinstance(c, dyn._C.CompiledGpu):
        return run_gpu(c, inputs, outputs)
    c.run(inputs, list(outputs) + sizes_of(c, list(inputs) + list(outputs)))


def run_gpu(c, inputs, outputs):
    """CPU tensors in and out: the inputs copied to the GPU, the outputs (NaN-filled there, so that an unwritten
    element shows) copied back into `outputs`."""
    ins = [t.cuda() for t in inputs]
    outs = [torch.full_like(o, float("nan"), device="cuda") if o.is_floating_point() else
            torch.empty_like(o, device="cuda") for o in outputs]
    sizes = sizes_of(c, ins + outs)
    size = c.workspace_bytes_for(sizes)
    workspace = torch.empty(size, dtype=torch.uint8, device="cuda") if size else None
    c.run(ins, outs + sizes, torch.cuda.current_stream().cuda_stream, workspace.data_ptr() if size else 0)
    torch.cuda.synchronize()
    for o, g in zip(outputs, outs):
        o.copy_(g.cpu())


ELEMENTWISE = """
func.func @forward(%x: memref<?x16xf32>, %b: memref<16xf32>, %y: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x16xf32>
  loop.kernel "add_tanh" [%n, 16] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : memref<?x16xf32>
    %w = loop.load %b[%j] : memref<16xf32>
    %s = arith.addf %v, %w : f32
    %t = math.tanh %s : f32
    loop.store %t, %y[%i, %j] : memref<?x16xf32>
  }
  return
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_elementwise_kernel_runs_at_every_size(device):
    c = compiled(ELEMENTWISE, 3, device)
    assert c.buffer_sizes == [0, 0, 2, 0]
    b = torch.randn(16)
    for n in SIZES:
        x = torch.randn(n, 16)
        y = torch.full((n, 16), float("nan"))
        run(c, [x, b], [y])
        torch.testing.assert_close(y, torch.tanh(x + b))


# A softmax over a dynamic last dim: one row per point, its reductions and write loop to runtime bounds; the
# rows of a dynamic number (1-D domain: chunked at run time).
SOFTMAX = """
func.func @forward(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  loop.kernel "softmax" [%n] {
  ^bb0(%i: index):
    %mx = loop.reduce max [%m] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      loop.yield %v : f32
    }
    %s = loop.reduce add [%m] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      loop.yield %e : f32
    }
    loop.for [%m] {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %r = arith.divf %e, %s : f32
      loop.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
  return
}
"""


@pytest.mark.parametrize("rows,cols", [(1, 1), (5, 3), (300, 77), (2, 5000), (4097, 8)])
@pytest.mark.parametrize("device", DEVICES)
def test_row_kernel_with_dynamic_rows_and_columns(rows, cols, device):
    c = compiled(SOFTMAX, 2, device)
    x = torch.randn(rows, cols)
    y = torch.empty(rows, cols)
    run(c, [x], [y])
    torch.testing.assert_close(y, torch.softmax(x, -1))


@pytest.mark.parametrize("gemm", ["runtime", "library"])
@pytest.mark.parametrize("device", DEVICES)
def test_matmul_sizes_read_from_the_buffers(gemm, device):
    # dyn's runtime matmul takes M from the buffer; ATen's (a registered library call) a descriptor built when
    # the call runs.
    if gemm == "library" and not dyn._C.HAS_LIBRARY_CALLS:
        pytest.skip("no ATen library calls in this build")
    ir = f"""
module attributes {{dyn.cpu_gemm = "{gemm}"}} {{
func.func @forward(%a: memref<?x?xf32>, %b: memref<?x8xf32>, %c: memref<?x8xf32>) {{
  loop.matmul %a, %b, %c : memref<?x?xf32>, memref<?x8xf32>, memref<?x8xf32>
  return
}}
}}"""
    c = compiled(ir, 3, device)
    for m, k in [(1, 1), (7, 33), (130, 64), (1000, 5)]:
        a, b = torch.randn(m, k), torch.randn(k, 8)
        out = torch.empty(m, 8)
        run(c, [a, b], [out])
        torch.testing.assert_close(out, a @ b)


def test_static_functions_take_no_sizes():
    ir = ELEMENTWISE.replace("?x16", "4x16").replace("""  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<4x16xf32>
""", "").replace("[%n, 16]", "[4, 16]")
    c = compiled(ir, 3)
    assert c.buffer_sizes == [] and c.num_buffers == 3


# Prim-level functions with dynamic dims go through fusion (dyn-fuse-prim-to-loop) to the same kernels: a softmax
# over rows of any length is one row kernel; a temporary of a dynamic shape feeds a GEMM.
PRIM_SOFTMAX_GEMM = """
func.func @forward(%x: tensor<?x?xf32>, %a: tensor<?x8xf32>, %w: tensor<8x4xf32>, %bias: tensor<4xf32>)
    -> (tensor<?x?xf32>, tensor<?x4xf32>) {
  %n = prim.dim %x, 0 : tensor<?x?xf32>
  %m = prim.dim %x, 1 : tensor<?x?xf32>
  %mx = prim.reduce_max %x dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %b = prim.broadcast_in_dim %mx dims [0] sizes(%n, %m) : tensor<?xf32> -> tensor<?x?xf32>
  %d = prim.sub %x, %b : tensor<?x?xf32>
  %e = prim.exp %d : tensor<?x?xf32>
  %s = prim.reduce_sum %e dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %sb = prim.broadcast_in_dim %s dims [0] sizes(%n, %m) : tensor<?xf32> -> tensor<?x?xf32>
  %r = prim.div %e, %sb : tensor<?x?xf32>
  %t = prim.tanh %a : tensor<?x8xf32>
  %y = prim.dot_general %t, %w batch [], [] contract [1], [0] : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
  %k = prim.dim %a, 0 : tensor<?x8xf32>
  %bb = prim.broadcast_in_dim %bias dims [1] sizes(%k) : tensor<4xf32> -> tensor<?x4xf32>
  %z = prim.add %y, %bb : tensor<?x4xf32>
  return %r, %z : tensor<?x?xf32>, tensor<?x4xf32>
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_prim_function_with_dynamic_dims_compiles_once(device):
    c = compiled(PRIM_SOFTMAX_GEMM, 6, device)
    w, bias = torch.randn(8, 4), torch.randn(4)
    for rows, cols, k in [(1, 1, 1), (3, 17, 5), (64, 300, 130), (1000, 2, 2)]:
        x, a = torch.randn(rows, cols), torch.randn(k, 8)
        soft, lin = torch.empty(rows, cols), torch.empty(k, 4)
        run(c, [x, a, w, bias], [soft, lin])
        torch.testing.assert_close(soft, torch.softmax(x, -1))
        torch.testing.assert_close(lin, torch.tanh(a) @ w + bias)


# Graph-level elementwise ops take dynamic dims (docs/dynamic_shapes.md): broadcasting, type promotion and a
# comparison compiled once through every stage, run at many sizes.
GRAPH_ELEMENTWISE = """
func.func @forward(%a: tensor<?x?xf32>, %b: tensor<?xf32>, %c: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xi1>) {
  %0 = graph.mul %a, %b : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %1 = graph.tanh %0 : tensor<?x?xf32> -> tensor<?x?xf32>
  %2 = graph.sub %1, %c : tensor<?x?xf32>, tensor<?x?xf64> -> tensor<?x?xf64>
  %3 = graph.gt %2, %a : tensor<?x?xf64>, tensor<?x?xf32> -> tensor<?x?xi1>
  return %2, %3 : tensor<?x?xf64>, tensor<?x?xi1>
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_graph_elementwise_ops_with_dynamic_dims_compile_once(device):
    c = compiled(GRAPH_ELEMENTWISE, 5, device)
    for rows, cols in [(1, 1), (3, 17), (129, 64), (7, 5000)]:
        a, b, cc = torch.randn(rows, cols), torch.randn(cols), torch.randn(rows, cols, dtype=torch.float64)
        out, mask = torch.empty(rows, cols, dtype=torch.float64), torch.empty(rows, cols, dtype=torch.bool)
        run(c, [a, b, cc], [out, mask])
        ref = torch.tanh(a * b).double() - cc
        # tanh is computed in float32 (as eager's): float32's tolerance for it
        torch.testing.assert_close(out, ref, rtol=1.3e-6, atol=1e-5)
        assert torch.equal(mask, out > a)


# A transformer block in the graph dialect with `?` batch and sequence dims (the ops GPT-2 captures to: layer norm,
# addmm on the merged [B*S, D] rows, reshapes sized by graph.dim arithmetic or derived from the input, slices, head
# permutes, 4-d matmuls with a dynamic K, softmax, gelu, a keepdim mean), compiled once and run at many sizes.
GRAPH_BLOCK = """
func.func @forward(%x: tensor<?x?x64xf32>, %w: tensor<64x192xf32>, %b: tensor<192xf32>, %g: tensor<64xf32>,
                   %beta: tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x4x?x?xf32>, tensor<?x?x1xf32>) {
  %B = graph.dim %x, 0 : tensor<?x?x64xf32> -> index
  %S = graph.dim %x, 1 : tensor<?x?x64xf32> -> index
  %BS = arith.muli %B, %S : index
  %ln = graph.layer_norm %x weight %g bias %beta normalized_rank 1 eps 1.0e-05 : tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  %flat = graph.reshape %ln sizes(%BS) : tensor<?x?x64xf32> -> tensor<?x64xf32>
  %qkv = graph.addmm %b, %flat, %w {alpha = 1.0 : f64, beta = 1.0 : f64} : tensor<192xf32>, tensor<?x64xf32>, tensor<64x192xf32> -> tensor<?x192xf32>
  %qkv3 = graph.reshape %qkv sizes(%B, %S) : tensor<?x192xf32> -> tensor<?x?x192xf32>
  %q = graph.slice %qkv3 dim 2 start 0 end 64 step 1 : tensor<?x?x192xf32> -> tensor<?x?x64xf32>
  %k = graph.slice %qkv3 dim 2 start 64 end 128 step 1 : tensor<?x?x192xf32> -> tensor<?x?x64xf32>
  %v = graph.slice %qkv3 dim 2 start 128 end 192 step 1 : tensor<?x?x192xf32> -> tensor<?x?x64xf32>
  %q4 = graph.reshape %q : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %k4 = graph.reshape %k : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %v4 = graph.reshape %v : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %qh = graph.permute %q4 dims [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %kt = graph.permute %k4 dims [0, 2, 3, 1] : tensor<?x?x4x16xf32> -> tensor<?x4x16x?xf32>
  %vh = graph.permute %v4 dims [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %s = graph.matmul %qh, %kt : tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32> -> tensor<?x4x?x?xf32>
  %c = graph.constant dense<2.500000e-01> : tensor<f32>
  %ss = graph.mul %s, %c : tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
  %p = graph.softmax %ss dim 3 : tensor<?x4x?x?xf32> -> tensor<?x4x?x?xf32>
  %o = graph.matmul %p, %vh : tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %ot = graph.permute %o dims [0, 2, 1, 3] : tensor<?x4x?x16xf32> -> tensor<?x?x4x16xf32>
  %y = graph.reshape %ot : tensor<?x?x4x16xf32> -> tensor<?x?x64xf32>
  %act = graph.gelu %y {approximate = "tanh"} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %r = graph.add %act, %x : tensor<?x?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %m = graph.mean %r dims [2] keepdim : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
  return %r, %p, %m : tensor<?x?x64xf32>, tensor<?x4x?x?xf32>, tensor<?x?x1xf32>
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_graph_transformer_block_with_dynamic_batch_and_sequence_compiles_once(device):
    c = compiled(GRAPH_BLOCK, 8, device)
    w, b, g, beta = torch.randn(64, 192) / 8, torch.randn(192), torch.randn(64), torch.randn(64)
    for batch, seq in [(1, 1), (2, 7), (3, 33), (1, 130)]:
        x = torch.randn(batch, seq, 64)
        r, p, m = torch.empty(batch, seq, 64), torch.empty(batch, 4, seq, seq), torch.empty(batch, seq, 1)
        run(c, [x, w, b, g, beta], [r, p, m])
        ln = torch.nn.functional.layer_norm(x, (64,), g, beta, 1e-5)
        q, k, v = (ln.reshape(-1, 64) @ w + b).reshape(batch, seq, 192).split(64, dim=2)
        heads = [t.reshape(batch, seq, 4, 16).permute(0, 2, 1, 3) for t in (q, k, v)]
        p_ref = torch.softmax(heads[0] @ heads[1].transpose(-1, -2) * 0.25, dim=3)
        y = (p_ref @ heads[2]).permute(0, 2, 1, 3).reshape(batch, seq, 64)
        r_ref = torch.nn.functional.gelu(y, approximate="tanh") + x
        torch.testing.assert_close(p, p_ref, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(r, r_ref, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(m, r_ref.mean(2, keepdim=True), rtol=1e-4, atol=1e-5)


# Sizes computed in the graph (graph.dim and index arithmetic), an expand to them, reductions over dynamic dims,
# a batched x matrix matmul with dynamic M and N, a concatenation beside dynamic dims and a derived reshape.
GRAPH_SIZES = """
func.func @forward(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %o: tensor<1x1xf32>)
    -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x2xf32>) {
  %n = graph.dim %x, 0 : tensor<?x?xf32> -> index
  %m = graph.dim %x, 1 : tensor<?x?xf32> -> index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %h = arith.ceildivsi %m, %c2 : index
  %d = arith.divsi %n, %c3 : index
  %e = arith.floordivsi %m, %c3 : index
  %a = arith.maxsi %d, %e : index
  %i = arith.minsi %h, %a : index
  %s = arith.subi %m, %i : index
  %t = arith.addi %s, %i : index
  %cols = graph.expand %o sizes(%n, %t) : tensor<1x1xf32> -> tensor<?x?xf32>
  %sum = graph.sum %x dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  %mx = graph.amax %x dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %mn = graph.amin %x dims [0, 1] : tensor<?x?xf32> -> tensor<f32>
  %r0 = graph.add %mx, %mn : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %x3 = graph.reshape %x sizes(%d, %m) : tensor<?x?xf32> -> tensor<?x3x?xf32>
  %mm = graph.matmul %x3, %w : tensor<?x3x?xf32>, tensor<?x?xf32> -> tensor<?x3x?xf32>
  %mmr = graph.reshape %mm : tensor<?x3x?xf32> -> tensor<?x?x?xf32>
  %y = graph.add %cols, %x : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %sl = graph.reshape %sum : tensor<?xf32> -> tensor<?x1xf32>
  %cat = graph.cat %sl, %sl dim 1 : tensor<?x1xf32>, tensor<?x1xf32> -> tensor<?x2xf32>
  return %y, %r0, %mmr, %cols, %cat : tensor<?x?xf32>, tensor<?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x2xf32>
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_graph_sizes_reductions_and_matmul_ranks_with_dynamic_dims(device):
    c = compiled(GRAPH_SIZES, 8, device)
    for n, k, nn in [(1, 1, 1), (4, 5, 3), (33, 17, 40)]:
        x, w, o = torch.randn(3 * n, k), torch.randn(k, nn), torch.randn(1, 1)
        outs = [torch.empty(3 * n, k), torch.empty(3 * n), torch.empty(n, 3, nn), torch.empty(3 * n, k),
                torch.empty(k, 2)]
        run(c, [x.reshape(3 * n, k), w, o], outs)
        y, r0, mm, cols, cat = outs
        torch.testing.assert_close(cols, o.expand(3 * n, k))
        torch.testing.assert_close(y, o + x)
        torch.testing.assert_close(r0, x.amax(1) + x.amin())
        torch.testing.assert_close(mm, x.reshape(n, 3, k) @ w, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(cat, torch.stack([x.sum(0)] * 2, 1), rtol=1e-5, atol=1e-5)


# Positions and embeddings at a runtime sequence length (what GPT-2's capture gives with `?` batch and sequence):
# an iota of the length, a position-ids buffer of 512 sliced to it, token and position embeddings gathered with
# `?` ids, a key/value cache sliced at a runtime offset and grown along its `?` dim.
GRAPH_POSITIONS = """
func.func @forward(%ids: tensor<?x?xi64>, %wte: tensor<500x64xf32>, %pos: tensor<1x512xi64>, %wpe: tensor<512x64xf32>,
                   %cache: tensor<1x4x?x16xf32>, %new: tensor<1x4x1x16xf32>)
    -> (tensor<?x?x64xf32>, tensor<?xi64>, tensor<?xf32>, tensor<16xf32>, tensor<1x4x?x16xf32>) {
  %B = graph.dim %ids, 0 : tensor<?x?xi64> -> index
  %S = graph.dim %ids, 1 : tensor<?x?xi64> -> index
  %BS = arith.muli %B, %S : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = graph.reshape %ids sizes(%BS) : tensor<?x?xi64> -> tensor<?xi64>
  %1 = graph.reshape %0 : tensor<?xi64> -> tensor<?x1xi64>
  %2 = graph.expand %1 : tensor<?x1xi64> -> tensor<?x64xi64>
  %3 = graph.gather %wte dim 0 index %2 : tensor<500x64xf32>, tensor<?x64xi64> -> tensor<?x64xf32>
  %4 = graph.reshape %3 sizes(%B, %S) : tensor<?x64xf32> -> tensor<?x?x64xf32>
  %5 = graph.dynamic_slice %pos, %c0, %S dim 1 : tensor<1x512xi64>, index, index -> tensor<1x?xi64>
  %6 = graph.reshape %5 : tensor<1x?xi64> -> tensor<?xi64>
  %7 = graph.reshape %6 : tensor<?xi64> -> tensor<?x1xi64>
  %8 = graph.expand %7 : tensor<?x1xi64> -> tensor<?x64xi64>
  %9 = graph.gather %wpe dim 0 index %8 : tensor<512x64xf32>, tensor<?x64xi64> -> tensor<?x64xf32>
  %10 = graph.reshape %9 : tensor<?x64xf32> -> tensor<1x?x64xf32>
  %11 = graph.add %4, %10 : tensor<?x?x64xf32>, tensor<1x?x64xf32> -> tensor<?x?x64xf32>
  %i = graph.iota sizes(%S) : tensor<?xi64>
  %f = graph.iota sizes(%BS) : tensor<?xf32>
  %s = graph.iota : tensor<16xf32>
  %n = graph.dim %cache, 2 : tensor<1x4x?x16xf32> -> index
  %kv = graph.dynamic_slice %cache, %c1, %n dim 2 : tensor<1x4x?x16xf32>, index, index -> tensor<1x4x?x16xf32>
  %grown = graph.cat %kv, %new dim 2 : tensor<1x4x?x16xf32>, tensor<1x4x1x16xf32> -> tensor<1x4x?x16xf32>
  return %11, %i, %f, %s, %grown : tensor<?x?x64xf32>, tensor<?xi64>, tensor<?xf32>, tensor<16xf32>, tensor<1x4x?x16xf32>
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_graph_positions_embeddings_and_cache_with_dynamic_dims(device):
    c = compiled(GRAPH_POSITIONS, 11, device)
    wte, wpe, pos = torch.randn(500, 64), torch.randn(512, 64), torch.arange(512)[None]
    new = torch.randn(1, 4, 1, 16)
    for batch, seq, cached in [(1, 2, 2), (2, 7, 5), (3, 130, 33)]:
        ids, cache = torch.randint(500, (batch, seq)), torch.randn(1, 4, cached, 16)
        outs = [torch.empty(batch, seq, 64), torch.empty(seq, dtype=torch.int64), torch.empty(batch * seq),
                torch.empty(16), torch.empty(1, 4, cached, 16)]
        run(c, [ids, wte, pos, wpe, cache, new], outs)
        emb, i, f, s, grown = outs
        torch.testing.assert_close(emb, wte[ids] + wpe[pos[:, :seq]])
        assert torch.equal(i, torch.arange(seq))
        assert torch.equal(f, torch.arange(batch * seq, dtype=torch.float32))
        assert torch.equal(s, torch.arange(16, dtype=torch.float32))
        assert torch.equal(grown, torch.cat([cache[:, :, 1:], new], 2))


# Attention with `?` batch and sequence dims as one library call: a boolean padding mask of runtime size, and a
# causal one with its scale; the cache grows along its `?` dim by a concatenation of two dynamic pieces.
GRAPH_ATTENTION = """
func.func @forward(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>,
                   %mask: tensor<?x1x?x?xi1>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) {
  %0 = graph.scaled_dot_product_attention %q, %k, %v mask %mask : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x1x?x?xi1> -> tensor<?x4x?x16xf32>
  %1 = graph.scaled_dot_product_attention %q, %q, %q causal scale 1.250000e-01 : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %2 = graph.cat %k, %q dim 2 : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return %0, %1, %2 : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_graph_attention_with_dynamic_batch_and_sequence(device):
    F = torch.nn.functional
    c = compiled(GRAPH_ATTENTION, 7, device)
    for batch, lq, lk in [(1, 2, 3), (2, 7, 5), (3, 33, 64)]:
        q, k, v = torch.randn(batch, 4, lq, 16), torch.randn(batch, 4, lk, 16), torch.randn(batch, 4, lk, 16)
        mask = torch.rand(batch, 1, lq, lk) > 0.3
        mask[..., 0] = True  # no fully masked row
        outs = [torch.empty(batch, 4, lq, 16), torch.empty(batch, 4, lq, 16), torch.empty(batch, 4, lk + lq, 16)]
        run(c, [q, k, v, mask], outs)
        masked, causal, cat = outs
        torch.testing.assert_close(masked, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), rtol=1e-4,
                                   atol=1e-5)
        torch.testing.assert_close(causal, F.scaled_dot_product_attention(q, q, q, is_causal=True, scale=0.125),
                                   rtol=1e-4, atol=1e-5)
        assert torch.equal(cat, torch.cat([k, q], 2))


# A small CNN with a `?` batch (what torchvision's models give once the batch is symbolic): a strided, grouped
# convolution with bias, batch_norm with running statistics, ReLU, max pooling, a transposed convolution,
# average and adaptive pooling, and the classifier's GEMM on the flattened features.
GRAPH_CNN = """
func.func @forward(%x: tensor<?x4x16x16xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>,
                   %v: tensor<8xf32>, %wt: tensor<8x4x2x2xf32>, %fc: tensor<8x10xf32>)
    -> (tensor<?x8x4x4xf32>, tensor<?x4x16x16xf32>, tensor<?x8x4x4xf32>, tensor<?x10xf32>, tensor<?x8x8x3xf32>) {
  %0 = graph.convolution %x, %w bias %b stride [2, 2] padding [1, 1] dilation [1, 1] groups 2 : tensor<?x4x16x16xf32>, tensor<8x2x3x3xf32>, tensor<8xf32> -> tensor<?x8x8x8xf32>
  %1 = graph.batch_norm %0 weight %b bias %m running_mean %m running_var %v eps 1.0e-05 : tensor<?x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<?x8x8x8xf32>
  %2 = graph.relu %1 : tensor<?x8x8x8xf32> -> tensor<?x8x8x8xf32>
  %3 = graph.max_pool %2 kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<?x8x8x8xf32> -> tensor<?x8x4x4xf32>
  %4 = graph.convolution %2, %wt stride [2, 2] padding [0, 0] dilation [1, 1] groups 1 transposed : tensor<?x8x8x8xf32>, tensor<8x4x2x2xf32> -> tensor<?x4x16x16xf32>
  %5 = graph.avg_pool %2 kernel [3, 3] stride [2, 2] padding [1, 1] : tensor<?x8x8x8xf32> -> tensor<?x8x4x4xf32>
  %6 = graph.adaptive_avg_pool %3 output_size [1, 1] : tensor<?x8x4x4xf32> -> tensor<?x8x1x1xf32>
  %n = graph.dim %x, 0 : tensor<?x4x16x16xf32> -> index
  %7 = graph.reshape %6 sizes(%n) : tensor<?x8x1x1xf32> -> tensor<?x8xf32>
  %8 = graph.matmul %7, %fc : tensor<?x8xf32>, tensor<8x10xf32> -> tensor<?x10xf32>
  %9 = graph.adaptive_max_pool %2 output_size [3] : tensor<?x8x8x8xf32> -> tensor<?x8x8x3xf32>
  return %3, %4, %5, %8, %9 : tensor<?x8x4x4xf32>, tensor<?x4x16x16xf32>, tensor<?x8x4x4xf32>, tensor<?x10xf32>, tensor<?x8x8x3xf32>
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_graph_cnn_with_dynamic_batch_compiles_once(device):
    F = torch.nn.functional
    c = compiled(GRAPH_CNN, 12, device)
    w, b, m, v = torch.randn(8, 2, 3, 3), torch.randn(8), torch.randn(8), torch.rand(8) + 0.5
    wt, fc = torch.randn(8, 4, 2, 2), torch.randn(8, 10)
    for n in (1, 2, 5, 33):
        x = torch.randn(n, 4, 16, 16)
        outs = [torch.empty(n, 8, 4, 4), torch.empty(n, 4, 16, 16), torch.empty(n, 8, 4, 4), torch.empty(n, 10),
                torch.empty(n, 8, 8, 3)]
        run(c, [x, w, b, m, v, wt, fc], outs)
        pooled, up, avg, logits, amax = outs
        h = F.relu(F.batch_norm(F.conv2d(x, w, b, stride=2, padding=1, groups=2), m, v, b, m, eps=1e-5))
        ref = F.max_pool2d(h, 3, 2, 1)
        torch.testing.assert_close(pooled, ref, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(up, F.conv_transpose2d(h, wt, stride=2), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(avg, F.avg_pool2d(h, 3, 2, 1, count_include_pad=False), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(logits, F.adaptive_avg_pool2d(ref, 1).flatten(1) @ fc, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(amax, F.adaptive_max_pool1d(h.flatten(0, 1), 3).reshape(n, 8, 8, 3))


def _gpu_compiler():
    """Whether compile_gpu works here (it needs no GPU, but the CUDA toolkit's libdevice)."""
    try:
        dyn._C.compile_gpu(ELEMENTWISE, "forward", num_buffers=3)
        return True
    except RuntimeError:
        return False


needs_gpu_compiler = pytest.mark.skipif(not _gpu_compiler(), reason="compile_gpu unavailable (no CUDA toolkit)")


@needs_gpu_compiler
def test_gpu_launch_plan_takes_the_cpu_functions_sizes():
    """compile_gpu needs no GPU: its function lists the same (buffer, dim) pairs as the CPU's, its workspace
    (the temporaries of runtime size, placed by liveness after the static ones) grows with the sizes."""
    for ir, n in [(GRAPH_BLOCK, 8), (PRIM_SOFTMAX_GEMM, 6), (GRAPH_CNN, 12), (GRAPH_ATTENTION, 7)]:
        cpu, gpu = compiled(ir, n), dyn._C.compile_gpu(ir, "forward", num_buffers=n)
        assert gpu.buffer_sizes == cpu.buffer_sizes and gpu.num_buffers == cpu.num_buffers
    gpu = dyn._C.compile_gpu(PRIM_SOFTMAX_GEMM, "forward", num_buffers=6)
    # x [n, m], a [k, 8], soft [n, m], lin [k, 4]: tanh(a) [k, 8] and its GEMM [k, 4] are temporaries
    small, large = gpu.workspace_bytes_for([3, 17, 5, 3, 17, 5]), gpu.workspace_bytes_for([3, 17, 1000, 3, 17, 1000])
    assert small == 512 and large == 32000 + 16128, (small, large)
    with pytest.raises(ValueError):
        gpu.workspace_bytes_for([1, 2])


@needs_gpu_compiler
def test_gpu_launch_plan_refuses_sizes_it_cannot_evaluate():
    """A size the launch plan cannot evaluate at run time (here a shift) is a located error: the capture then
    specializes the sizes instead (never a wrong launch)."""
    ir = ELEMENTWISE.replace("  loop.kernel \"add_tanh\" [%n, 16]",
                             "  %c1 = arith.constant 1 : index\n  %h = arith.shrui %n, %c1 : index\n"
                             "  loop.kernel \"add_tanh\" [%h, 16]")
    with pytest.raises(RuntimeError, match="cannot evaluate"):
        dyn._C.compile_gpu(ir, "forward", num_buffers=3)


COLUMN_SUM = """
func.func @forward(%x: memref<?x64xf32>, %y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  loop.kernel "colsum" [64] {
  ^bb0(%j: index):
    %s = loop.reduce add [%n] : f32 {
    ^bb0(%i: index):
      %v = loop.load %x[%i, %j] : memref<?x64xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%j] : memref<64xf32>
  }
  return
}
"""


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("rows", [1, 7, 1000, 100000, 1000003])
def test_long_dynamic_column_sum_is_split_on_the_gpu(rows):
    """A sum over `?` rows is split across blocks at run time (chunks of rows, a tree of partials): as accurate
    as eager (a serial sum a thread had ~5e-4 relative error over 100,000 rows)."""
    c = compiled(COLUMN_SUM, 2, "cuda")
    x = torch.rand(rows, 64) + 0.5  # one sign: a serial sum's error grows with the length
    y = torch.empty(64)
    run(c, [x], [y])
    torch.testing.assert_close(y, x.cuda().sum(0).cpu())
