"""GPU tests (issue: GPU path): one per kernel class, float32 and bfloat16, against eager.

Skipped where torch sees no CUDA device (CI); run on the GPU machine with scripts/gpu_machine.sh.
Every case draws fresh random inputs and checks that dyn really compiled for the GPU (no silent
eager fallback).
"""
import warnings

import pytest
import torch
import torch.nn.functional as F

import dyn

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

DTYPES = [torch.float32, torch.bfloat16]


def relative_error(value, reference):
    return ((value.double() - reference).norm() / reference.norm()).item()


def check(fn, *args, dtype):
    """Compares with the float64 result of the same function (METHOD.md): dyn's relative error must
    stay under the dtype's bound, or within 2x of eager's own error in that dtype."""
    expected = fn(*args)
    reference = fn(*[a.double() for a in args])
    compiled = dyn.compile(fn, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager warns: make it fail here
        got = compiled(*args)
    torch.cuda.synchronize()
    assert got.device == expected.device and got.dtype == expected.dtype
    assert got.shape == expected.shape
    assert torch.isfinite(got).all()
    bound = 1e-5 if dtype == torch.float32 else 8e-3
    err, eager_err = relative_error(got, reference), relative_error(expected, reference)
    assert err <= max(bound, 2 * eager_err), f"relative error {err:.2e} (eager {eager_err:.2e})"
    return got


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1000,), (64, 130), (8, 3, 257)])
def test_pointwise_broadcast(dtype, shape):
    x = torch.randn(shape, device="cuda", dtype=dtype)
    y = torch.randn(shape[-1:], device="cuda", dtype=dtype)
    check(lambda a, b: torch.cos(a) + torch.sin(b) * 2 - 1, x, y, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pointwise_vectorizable(dtype):
    x = torch.randn(1 << 20, device="cuda", dtype=dtype)
    check(lambda a: torch.relu(a * torch.sigmoid(a) * 2 + 1), x, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_trig_vectorized_with_huge_arguments(dtype):
    """cos and sin take 16-byte vectors like other pointwise kernels; arguments past libdevice's fast
    range reduction (|x| > 1e5) take its slow path lane by lane."""
    x = torch.randn(1 << 20, device="cuda", dtype=dtype) * 4
    y = torch.randn(1 << 20, device="cuda", dtype=dtype) * 4
    x[::97] *= 1e6
    y[5::89] *= -3e7
    check(lambda a, b: torch.cos(a) + torch.sin(b), x, y, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(33, 1000), (4, 65536), (1024, 64)])
def test_reduce_last_dim(dtype, shape):
    x = torch.randn(shape, device="cuda", dtype=dtype)
    check(lambda a: a.sum(-1), x, dtype=dtype)
    check(lambda a: a.amax(-1, keepdim=True), x, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1000, 33), (4096, 64), (300, 8192)])
def test_reduce_first_dim(dtype, shape):
    x = torch.randn(shape, device="cuda", dtype=dtype)
    check(lambda a: a.sum(0), x, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(16, 1000), (256, 4096)])
def test_softmax(dtype, shape):
    x = torch.randn(shape, device="cuda", dtype=dtype)
    check(lambda a: torch.softmax(a, dim=-1), x, dtype=dtype)

    def hand(a):
        m = a.amax(-1, keepdim=True)
        e = torch.exp(a - m)
        return e / e.sum(-1, keepdim=True)

    check(hand, x, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(16, 1000), (128, 4096)])
def test_rmsnorm(dtype, shape):
    x = torch.randn(shape, device="cuda", dtype=dtype)
    w = torch.randn(shape[-1], device="cuda", dtype=dtype)
    check(lambda a, b: a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + 1e-6) * b, x, w, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(16, 1000), (128, 4096)])
def test_layer_norm(dtype, shape):
    x = torch.randn(shape, device="cuda", dtype=dtype)
    w = torch.randn(shape[-1], device="cuda", dtype=dtype)
    b = torch.randn(shape[-1], device="cuda", dtype=dtype)
    check(lambda a, c, d: F.layer_norm(a, (a.shape[-1],), c, d), x, w, b, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_causal_mask_dense_constants(dtype):
    """tril's row and column numbers are dense constants: the launch plan copies them into the workspace."""
    x = torch.randn(2, 4, 64, 64, device="cuda", dtype=dtype)

    def causal_softmax(att):
        T = att.size(-1)
        mask = torch.tril(torch.ones(T, T, device=att.device, dtype=att.dtype))
        return att.masked_fill(mask == 0, float("-inf")).softmax(-1)

    check(causal_softmax, x, dtype=dtype)
    check(lambda a: a.triu(-3) * 2, x, dtype=dtype)


def exactly(fn, *args):
    """Integer results, compared bit for bit with eager (no eager fallback)."""
    compiled = dyn.compile(fn, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = compiled(*[a.clone() for a in args])
    want = fn(*[a.clone() for a in args])
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and torch.equal(g, w)


def test_integer_division_rounding():
    x = torch.randint(-1000, 1000, (4099,), device="cuda")
    exactly(lambda t: (torch.div(t, 7, rounding_mode="floor"), torch.div(t, -3, rounding_mode="trunc"),
                       torch.fmod(t, 4), t % -6, t.floor_divide(-5)), x)


def test_boolean_mask_assignment():
    def f(t):
        t[t < 0] = 0.0
        t[t[:, 0] > 1] = -1.0
        return t * 2, t

    exactly(f, torch.randn(1000, 33, device="cuda"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("idx_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("shape", [(37,), (4, 129)])
def test_embedding(dtype, idx_dtype, shape):
    """One kernel: the row index loaded per row, the weight row copied (16-byte accesses when aligned)."""
    w = torch.randn(1000, 64, device="cuda", dtype=dtype)
    idx = torch.randint(0, 1000, shape, device="cuda", dtype=idx_dtype)
    exactly(lambda i, w: (F.embedding(i, w) * 2,), idx, w)  # a copy and an exact scaling: bit for bit


@pytest.mark.parametrize("dim", [0, 1])
def test_gather_index_select_getitem(dim):
    x = torch.randn(50, 30, device="cuda")
    gi = torch.randint(0, x.shape[dim], (20, 10), device="cuda")
    pi = torch.randint(0, x.shape[dim], (17,), device="cuda", dtype=torch.int32)
    si = torch.randint(-min(x.shape), min(x.shape), (17,), device="cuda", dtype=torch.int32)
    exactly(lambda x, g, p, s: (torch.gather(x, dim, g), x.index_select(dim, p), x[s], x[:, s]), x, gi, pi, si)


def test_embedding_index_range_check_is_asynchronous():
    """CUDA index inputs are range-checked by a device-side assert (an out-of-range index would end the
    process's CUDA context, as eager's does, so only the in-range path runs here): no synchronization."""
    w = torch.randn(8, 16, device="cuda")
    idx = torch.tensor([0, 7, 3], device="cuda")
    fn = dyn.compile(lambda i, w: F.embedding(i, w), fullgraph=True)
    torch.testing.assert_close(fn(idx, w), F.embedding(idx, w))
    torch.cuda.set_sync_debug_mode("error")  # any synchronizing call raises
    try:
        fn(idx, w)
    finally:
        torch.cuda.set_sync_debug_mode("default")


@pytest.mark.parametrize("dtype,elt", [(torch.int8, "i8"), (torch.int16, "i16"),
                                       (torch.float16, "f16"), (torch.bfloat16, "bf16")])
@pytest.mark.parametrize("op", ["amax", "amin", "sum"])
def test_narrow_block_reductions(dtype, elt, op):
    """Row reductions of values narrower than a warp shuffle's 32 bits, a block per row: reduced
    widened (i32, f32) and narrowed back. Capture makes no i8/i16 tensors, so the graph is written
    out; the row sums stay within i8/i16 (small values), max/min are exact."""
    rows, n = 33, 1000
    ir = (f"func.func @forward(%x: tensor<{rows}x{n}x{elt}>) -> tensor<{rows}x{elt}> {{\n"
          f"  %0 = graph.{op} %x dims [1] : tensor<{rows}x{n}x{elt}> -> tensor<{rows}x{elt}>\n"
          f"  return %0 : tensor<{rows}x{elt}>\n}}\n")
    if dtype.is_floating_point:
        x = torch.randn(rows, n, device="cuda").to(dtype)
    else:
        x = torch.randint(-3, 4, (rows, n), device="cuda", dtype=dtype)
        if op == "sum" and dtype == torch.int8:
            x = (x != 0).to(dtype) * (torch.arange(n, device="cuda") < 100).to(dtype)  # sums <= 100
    compiled = dyn._C.compile_gpu(ir, "forward", False, 2)
    out = torch.empty(rows, device="cuda", dtype=dtype)
    size = compiled.workspace_bytes
    workspace = torch.empty(size, dtype=torch.uint8, device="cuda") if size else None
    compiled.run([x], [out], torch.cuda.current_stream().cuda_stream, workspace.data_ptr() if size else 0)
    torch.cuda.synchronize()
    expected = getattr(x.double(), op)(1)
    if dtype.is_floating_point and op == "sum":
        torch.testing.assert_close(out.double(), expected, rtol=2e-2, atol=2e-1)
    else:
        torch.testing.assert_close(out, expected.to(dtype), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,n", [((5, 7), 3), ((3, 33, 129), 65)])
def test_linear_transposed_weight(dtype, shape, n):
    """F.linear / x @ w.t() on CUDA tensors: the weight is read transposed in place by the GEMM library
    call (cuBLAS through ATen), the bias add is a dyn kernel after it."""
    x = torch.randn(shape, device="cuda", dtype=dtype)
    w = torch.randn(n, shape[-1], device="cuda", dtype=dtype)
    b = torch.randn(n, device="cuda", dtype=dtype)
    for fn, args in ((lambda a, w, b: F.linear(a, w, b), (x, w, b)), (lambda a, w: a @ w.t(), (x, w))):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # compiled for the GPU, no fallback
            got = dyn.compile(fn, fullgraph=True)(*args)
        torch.cuda.synchronize()
        expected = fn(*args)
        assert got.device == expected.device and got.dtype == expected.dtype
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


# -- library calls: GEMMs, convolutions, attention (ATen's cuBLAS/cuDNN/flash kernels between dyn's) --

@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_epilogue(dtype):
    x = torch.randn(64, 256, device="cuda", dtype=dtype)
    w = torch.randn(512, 256, device="cuda", dtype=dtype)
    b = torch.randn(512, device="cuda", dtype=dtype)
    check(lambda a, c, d: F.gelu(F.linear(a, c, d)), x, w, b, dtype=dtype)
    check(lambda a, c: torch.relu(a @ c.t()) * 2, x, w, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bmm_and_addmm(dtype):
    a = torch.randn(12, 64, 32, device="cuda", dtype=dtype)
    b = torch.randn(12, 32, 48, device="cuda", dtype=dtype)
    check(lambda p, q: torch.softmax(p @ q, -1), a, b, dtype=dtype)
    c = torch.randn(64, 48, device="cuda", dtype=dtype)
    check(lambda p, q, r: torch.addmm(r, p[0], q[0], alpha=0.5), a, b, c, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_rows_not_a_multiple_of_16_bytes(dtype):
    """A product of 1001 columns (an LM head's vocabulary) goes through rows padded to 16 bytes and one
    copy into dyn's buffer: a linear layer with and without bias, a batched product."""
    x = torch.randn(1024, 96, device="cuda", dtype=dtype)
    w = torch.randn(1001, 96, device="cuda", dtype=dtype)
    b = torch.randn(1001, device="cuda", dtype=dtype)
    check(lambda p, q: F.linear(p, q) * 2, x, w, dtype=dtype)
    check(lambda p, q, r: F.linear(p, q, r), x, w, b, dtype=dtype)
    check(lambda p, q: torch.tanh(p.view(4, 256, 96) @ q.t()), x, w, dtype=dtype)
    # an LM head's 50257 columns: chunks of about half the rows left, each GEMM writing padded rows in the
    # output's rows not written yet (float32, 700 rows: 349, 175, 87, 44, then 45 rows unpadded)
    xl = torch.randn(700, 96, device="cuda", dtype=dtype)
    wl = torch.randn(50257, 96, device="cuda", dtype=dtype) * 0.1
    bl = torch.randn(50257, device="cuda", dtype=dtype)
    check(lambda p, q, r: F.linear(p, q, r), xl, wl, bl, dtype=dtype)
    check(lambda p, q: F.linear(p, q).sum(-1), xl, wl, dtype=dtype)
    # ... and no memory beyond the output (cuBLAS's workspace is torch's, kept from the first call)
    f = dyn.compile(lambda p, q, r: F.linear(p, q, r))
    f(xl, wl, bl)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    y = f(xl, wl, bl)
    torch.cuda.synchronize()
    assert torch.cuda.max_memory_allocated() - base <= y.untyped_storage().nbytes() + (1 << 20)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv_block(dtype):
    """conv + bias + ReLU + max pool: the convolution is a library call, the rest one fused kernel. TF32
    off: with it (PyTorch's default for cuDNN) cuDNN picks TF32 kernels for some float32 convolutions in
    one layout and not in the other, and dyn runs these channels-last where eager's inputs are NCHW."""
    x = torch.randn(4, 16, 32, 32, device="cuda", dtype=dtype)
    w = torch.randn(32, 16, 3, 3, device="cuda", dtype=dtype) * 0.1
    b = torch.randn(32, device="cuda", dtype=dtype)
    with torch.backends.cudnn.flags(allow_tf32=False):
        check(lambda a, c, d: F.max_pool2d(F.relu(F.conv2d(a, c, d, padding=1)), 3, 2, 1), x, w, b, dtype=dtype)
        dw = torch.randn(16, 1, 3, 3, device="cuda", dtype=dtype)
        check(lambda a, c: F.conv2d(a, c, stride=2, padding=1, groups=16), x, dw, dtype=dtype)
        wt = torch.randn(16, 8, 2, 2, device="cuda", dtype=dtype)
        check(lambda a, c: F.conv_transpose2d(a, c, stride=2), x, wt, dtype=dtype)


DEPTHWISE = {  # (input, weight, conv): MobileNet's and EfficientNet's 3x3 and 5x5, strided, dilated, 1-d
    "3x3": ((4, 32, 28, 28), (32, 1, 3, 3), lambda a, c, d: F.conv2d(a, c, d, padding=1, groups=32)),
    "5x5_stride2": ((2, 24, 29, 29), (24, 1, 5, 5), lambda a, c, d: F.conv2d(a, c, None, 2, 2, groups=24)),
    "3x3_dilated": ((2, 16, 20, 20), (16, 1, 3, 3), lambda a, c, d: F.conv2d(a, c, d, 1, 2, 2, groups=16)),
    "1d_causal": ((2, 64, 40), (64, 1, 4), lambda a, c, d: F.conv1d(a, c, d, padding=3, groups=64)[..., :40]),
}


@pytest.mark.parametrize("dtype", DTYPES + [torch.float16])
@pytest.mark.parametrize("case", sorted(DEPTHWISE))
def test_depthwise_convolution_is_a_dyn_kernel(case, dtype):
    """Depthwise convolutions with at most 25 taps are computed by dyn's own kernel
    (dyn-decompose-depthwise-convolutions) with the batch norm and activations around them: no cuDNN call,
    no layout change, results within the dtype's bound of float64."""
    xs, ws, conv = DEPTHWISE[case]
    x = torch.randn(xs, device="cuda", dtype=dtype)
    w = torch.randn(ws, device="cuda", dtype=dtype) * 0.2
    b = torch.randn(ws[0], device="cuda", dtype=dtype)
    scale = torch.rand(ws[0], *[1] * (len(xs) - 2), device="cuda", dtype=dtype) + 0.5
    fn = lambda a, c, d, s: F.hardswish(conv(F.relu(a * s), c, d) * s)  # noqa: E731
    check(fn, x, w, b, scale, dtype=dtype)
    compiled = dyn.compile(fn, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled(x, w, b, scale)  # compiled (and its modules loaded) before the profiled call
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        compiled(x, w, b, scale)
    torch.cuda.synchronize()
    names = {e.key for e in prof.key_averages()}
    assert not any("convolution" in n for n in names), sorted(names)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("then_relu", [False, True], ids=["output", "temporary"])
def test_cudnn_convolution_writes_dyn_buffer(dtype, then_relu):
    """Where eager's convolution runs cuDNN, the library call runs the same cuDNN convolution into dyn's
    buffer (the graph's output, or a temporary a fused kernel reads), the bias added after it as eager
    adds it: eager's results bit for bit (deterministic algorithms), and no copy of a fresh result.
    On the GPU, dyn-propagate-layouts runs depthwise convolutions channels-last (cuDNN's, where eager's
    NCHW call runs ATen's depthwise kernel), and dense ones only where their activations are large (not
    these) or in a 16-bit float type (tensor cores): eager's bits are then those of eager on a
    channels-last input.
    The bias is added by the dyn kernel after the call (dyn-split-convolution-bias), not by an ATen add_."""
    cases = [  # (input, weight, conv, channels-last): 2-d with bias, strided and grouped 2-d, 3-d with
        # bias, and a depthwise 2-d one
        ((4, 16, 20, 20), (32, 16, 3, 3), lambda a, c, d: F.conv2d(a, c, d, padding=1), False),
        ((2, 16, 17, 17), (32, 4, 3, 3), lambda a, c, d: F.conv2d(a, c, None, stride=2, groups=4), False),
        ((2, 8, 6, 7, 8), (16, 8, 3, 3, 3), lambda a, c, d: F.conv3d(a, c, d, padding=1), False),
        ((2, 16, 12, 12), (16, 1, 7, 7), lambda a, c, d: F.conv2d(a, c, d, padding=3, groups=16), True),
    ]
    # the flags() context: torch.testing's OpInfo module, imported by other tests, forbids setting them
    with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=True):
        for xs, ws, conv, channels_last in cases:
            channels_last = channels_last or dtype in (torch.float16, torch.bfloat16)
            x = torch.randn(xs, device="cuda", dtype=dtype)
            w = torch.randn(ws, device="cuda", dtype=dtype) * 0.1
            b = torch.randn(ws[0], device="cuda", dtype=dtype)
            fn = (lambda a, c, d, conv=conv: torch.relu(conv(a, c, d))) if then_relu else conv
            compiled = dyn.compile(fn, fullgraph=True)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                compiled(x, w, b)
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                got = compiled(x, w, b)
            torch.cuda.synchronize()
            names = {e.key for e in prof.key_averages()}
            copies = sum(e.count for e in prof.key_averages() if e.key == "aten::copy_")
            # a dense weight goes channels-last for the call (one copy, as eager's on a channels-last input)
            assert "aten::cudnn_convolution" in names and copies <= (channels_last and ws[1] > 1), sorted(names)
            # the bias is added by the dyn kernel that reads the result (dyn-split-convolution-bias)
            assert "aten::add_" not in names, sorted(names)
            fmt = (torch.channels_last if len(xs) == 4 else torch.channels_last_3d) if channels_last else None
            want = fn(x.contiguous(memory_format=fmt) if fmt else x, w, b)
            assert torch.equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pooling(dtype):
    x = torch.randn(8, 32, 28, 28, device="cuda", dtype=dtype)
    check(lambda a: F.avg_pool2d(a, 3, 2, 1, count_include_pad=False), x, dtype=dtype)
    check(lambda a: F.adaptive_avg_pool2d(a, 1).flatten(1), x, dtype=dtype)
    check(lambda a: F.adaptive_max_pool2d(a, (5, 3)), x, dtype=dtype)
    check(lambda a: F.pad(a, (2, 2, 1, 1), mode="reflect") * 2, x, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_attention(dtype):
    q = torch.randn(2, 8, 128, 64, device="cuda", dtype=dtype)
    k = torch.randn(2, 8, 128, 64, device="cuda", dtype=dtype)
    v = torch.randn(2, 8, 128, 64, device="cuda", dtype=dtype)
    check(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), q, k, v, dtype=dtype)
    # an additive mask (check's float64 reference converts every argument; a boolean mask would change meaning)
    mask = torch.zeros(128, 128, device="cuda", dtype=dtype).masked_fill(torch.rand(128, 128, device="cuda") < 0.2,
                                                                         float("-inf"))
    mask[:, 0] = 0
    check(lambda a, b, c, m: F.scaled_dot_product_attention(a * 2, b, c, attn_mask=m), q, k, v, mask, dtype=dtype)


def test_library_calls_on_the_current_stream():
    """The plan's kernels and its library calls all run on torch's current stream (here not the default
    one), in order, without synchronizing."""
    x = torch.randn(256, 512, device="cuda")
    w = torch.randn(512, 512, device="cuda")
    fn = dyn.compile(lambda a, c: torch.relu(a @ c) @ c, fullgraph=True)
    fn(x, w)  # compiled
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda.set_sync_debug_mode("error")
        try:
            got = fn(x, w)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    s.synchronize()
    torch.testing.assert_close(got, torch.relu(x @ w) @ w, rtol=1e-4, atol=1e-3)


def test_small_cnn_compiles_for_the_gpu():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                            torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.ReLU(),
                            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10)).cuda().eval()
    x = torch.randn(8, 3, 32, 32, device="cuda")
    with torch.no_grad():
        want = m(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = dyn.compile(m, fullgraph=True)(x)
    assert dyn.stats()["compiled_graphs"] == 1 and not dyn.stats()["eager_graphs"]
    torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3)  # cuDNN's TF32 convolutions, both sides


def test_stochastic_depth_draws_eager_numbers():
    """torchvision's stochastic depth (efficientnet, convnext in train mode): an uninitialized tensor
    filled in place by bernoulli_ on the CUDA generator. The corpus run on the H100 showed backend="eager"
    differing from eager by 9.3e-04 in efficientnet_b0's train outputs (0 on the CPU): the draws must
    come from the same generator, on the same device, in the same order as eager's."""
    from torchvision.ops import stochastic_depth

    def f(x):
        return stochastic_depth(x, 0.2, "row", True) * 2 + stochastic_depth(x, 0.5, "batch", True)

    x = torch.randn(64, 4, 3, 3, device="cuda")
    g = dyn.compile(f, backend="eager")
    torch.manual_seed(0)
    ref = [f(x) for _ in range(3)]
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = [g(x) for _ in range(3)]
    for a, b in zip(ref, got):
        assert torch.equal(a, b)


def test_stochastic_depth_compiled():
    """Compiled, stochastic depth's bernoulli_ is a graph.bernoulli (dyn's Philox numbers, docs/random.md):
    each row is dropped or kept and scaled, and a seed gives the same rows again."""
    from torchvision.ops import stochastic_depth
    x = torch.randn(256, 4, 3, 3, device="cuda")
    g = dyn.compile(lambda x: stochastic_depth(x, 0.2, "row", True))
    dyn.reset()
    torch.manual_seed(0)
    out = g(x)
    assert dyn.stats()["compiled_graphs"] == 1 and dyn.stats()["eager_graphs"] == []
    kept = out.flatten(1).ne(0).any(1)
    torch.testing.assert_close(out[kept], x[kept] / 0.8)
    assert not out[~kept].any() and 0.1 < (~kept).float().mean() < 0.3
    torch.manual_seed(0)
    assert torch.equal(g(x), out)


def test_inplace_dropout_draws_eager_numbers():
    """nn.Dropout(inplace=True) (mobilenet_v3 and efficientnet classifiers): on CUDA eager's in-place
    dropout draws through bernoulli_, its out-of-place form through the fused native_dropout, so the
    eager backend must run the in-place form (the corpus run on the H100 showed backend="eager" differing
    from eager by 0.64 in efficientnet_b0's train outputs)."""
    drop = torch.nn.Dropout(0.2, inplace=True)

    def f(x, w):
        return drop(torch.relu(x @ w)).sum(-1)

    x = torch.randn(64, 32, device="cuda")
    w = torch.randn(32, 128, device="cuda", requires_grad=True)
    g = dyn.compile(f, backend="eager")
    torch.manual_seed(0)
    ref = [f(x, w) for _ in range(3)]
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = [g(x, w) for _ in range(3)]
    for a, b in zip(ref, got):
        assert torch.equal(a, b)


def test_inplace_dropout_in_training_compiled():
    """With grads, the dyn backend differentiates the graph: dyn's mask in the forward, the same mask in
    the backward (the gradient is eager's for that mask)."""
    drop = torch.nn.Dropout(0.2, inplace=True)
    x = torch.randn(64, 32, device="cuda")
    w = torch.randn(32, 128, device="cuda", requires_grad=True)
    dyn.reset()
    out = dyn.compile(lambda x, w: drop(torch.relu(x @ w)))(x, w)
    assert dyn.stats()["backward_graphs"] == 1
    h = x @ w.detach()
    scale = (out != 0).float() / 0.8
    torch.testing.assert_close(out, torch.relu(h) * scale)
    out.sum().backward()
    torch.testing.assert_close(w.grad, x.t() @ ((h > 0).float() * scale))


class _AmpBlock(torch.nn.Module):
    """Ops of each CUDA autocast list: linear/bmm (float16/bfloat16), layer_norm/exp/softmax/sum/mse_loss
    (float32, softmax and sum without a cast: fp32_set_opt_dtype), addcmul (promote)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(32, 32)
        self.ln = torch.nn.LayerNorm(32)

    def forward(self, x):
        h = self.lin(x)
        n = self.ln(h)
        s = torch.bmm(h, n.transpose(1, 2)).softmax(-1)
        return h, n, s, h.exp(), h.sum(-1), torch.addcmul(n, h, x), F.mse_loss(h, x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_autocast_cuda_casts_as_eager(dtype):
    """torch.autocast("cuda") captured with PyTorch's casts (capture/autocast.py): the eager backend
    gives eager's dtypes and values, the dyn backend eager's dtypes within a rounding of the autocast
    dtype; gradients through the eager backend are eager's (within that rounding)."""
    torch.manual_seed(0)
    m = _AmpBlock().cuda()
    x = torch.randn(4, 8, 32, device="cuda")

    def step(mod, x):
        with torch.autocast("cuda", dtype=dtype):
            return mod(x)
    with torch.no_grad():
        want = step(m, x)
        assert [w.dtype for w in want] == [dtype, torch.float32, torch.float32, torch.float32, torch.float32,
                                           torch.float32, torch.float32]
        ex = dyn.explain(step, backend="eager")(m, x)
        assert (ex.graph_count, ex.break_reasons) == (1, [])
        for backend in ("eager", "dyn"):
            got = dyn.compile(step, backend=backend)(m, x)
            assert [g.dtype for g in got] == [w.dtype for w in want]
            for g, w in zip(got, want):
                # the eager backend: a rounding of the result's own dtype (float32 computed from a
                # converted half tensor, where eager's sum/softmax read the half tensor: other kernels);
                # dyn's compiler: a rounding of the autocast dtype
                eps = torch.finfo(w.dtype if backend == "eager" else dtype).eps
                torch.testing.assert_close(g, w, rtol=eps, atol=eps * float(w.abs().max()))
    loss = lambda mod, x: sum(o.float().sum() for o in step(mod, x))  # noqa: E731
    want = loss(m, x)
    want.backward()
    grads = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    got = dyn.compile(loss, backend="eager")(m, x)
    got.backward()
    eps = torch.finfo(dtype).eps
    torch.testing.assert_close(got, want, rtol=eps, atol=eps * float(want.detach().abs()))
    for p, g in zip(m.parameters(), grads):
        torch.testing.assert_close(p.grad, g, rtol=eps, atol=eps * float(g.abs().max()))


def test_inputs_as_they_are_and_prepared():
    """Contiguous, 16-byte aligned CUDA tensors go to the kernels as they are (checked in C++); a
    contiguous view 4 bytes off (the kernels' 16-byte accesses would fault on it) and a transposed
    one are prepared first. Every call compiled, none falls back, each with eager's bits."""
    f = lambda x, y: x * 2 + y  # noqa: E731
    cf = dyn.compile(f, fullgraph=True)
    base, y = torch.randn(4097, device="cuda"), torch.randn(4096, device="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager warns: make it fail here
        for x in (base[:4096], base[1:], base[:4096].clone()):
            torch.testing.assert_close(cf(x, y), f(x, y), rtol=0, atol=0)
        m = torch.randn(64, 64, device="cuda")
        g = dyn.compile(lambda a: a * 3 - 1, fullgraph=True)
        for a in (m, m.t(), m[1:, 1:]):
            torch.testing.assert_close(g(a), a * 3 - 1, rtol=0, atol=0)
    assert dyn.stats()["internal_failures"] == 0


def test_new_sizes_on_cuda_compile_once_with_symbolic_sizes():
    """Symbolic sizes on CUDA (docs/dynamic_shapes.md): a size-only recompile makes the sequence dim symbolic,
    and the one symbolic graph's launch plan (geometry, temporaries and GEMM sizes evaluated at each call) runs
    every later length: at most two compiles, equal to eager. Batch and length both varying are two independent
    sizes: one symbolic graph takes both (as on the CPU), equal to eager."""
    m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.LayerNorm(64),
                            torch.nn.Linear(64, 32)).cuda().eval()
    dyn.reset()
    cf = dyn.compile(m)
    with torch.no_grad():
        for s in (5, 7, 9, 130, 1000, 3):
            x = torch.randn(4, s, 32, device="cuda")
            torch.testing.assert_close(cf(x), m(x), rtol=1e-4, atol=1e-4)
    s = dyn.stats()
    assert s["captures"] <= 2 and s["dynamic_entries"] == 1 and s["eager_calls"] == 0, s
    assert s["dynamic_fallbacks"] == 0 and s["internal_failures"] == 0, s
    assert sum(1 for g in dyn.last_graphs() if getattr(g, "symbolic", None)) == 1
    dyn.reset()
    cf = dyn.compile(m)
    with torch.no_grad():
        for b, s in [(2, 5), (3, 7), (4, 9)]:
            x = torch.randn(b, s, 32, device="cuda")
            torch.testing.assert_close(cf(x), m(x), rtol=1e-4, atol=1e-4)
    s = dyn.stats()
    assert s["eager_calls"] == 0 and s["dynamic_entries"] == 1 and s["captures"] <= 2, s
    assert s["dynamic_fallbacks"] == 0 and not s["dynamic_fallback_reasons"], s


def test_attention_block_with_symbolic_sequence_on_cuda():
    """A softmax over rows of runtime length, batched GEMMs with runtime M, N and K, and a sum over the `?`
    sequence dim (a thread per point looping to the runtime extent), once compiled, at many lengths."""
    def block(x, w):
        q = x @ w
        a = torch.softmax(q @ x.transpose(1, 2) / 8, dim=-1)
        return torch.tanh(a @ x) + x.sum(1, keepdim=True)

    dyn.reset()
    w = torch.randn(32, 32, device="cuda") / 6
    cf = dyn.compile(block)
    for n in (8, 9, 17, 300, 2049, 5):  # the sequence becomes symbolic at the second call
        x = torch.randn(2, n, 32, device="cuda")
        torch.testing.assert_close(cf(x, w), block(x, w), rtol=1e-4, atol=1e-4)
    s = dyn.stats()
    assert s["captures"] <= 2 and s["dynamic_entries"] == 1 and s["dynamic_fallbacks"] == 0, s


def test_symbolic_sizes_on_cuda_are_not_recorded_as_cuda_graphs():
    """mode="reduce-overhead": a CUDA graph holds one size, so a symbolic entry runs through its launch plan
    (counted in cuda_graphs_skipped_dynamic), right at every size."""
    dyn.reset()
    f = lambda x: torch.relu(x * 2 + 1).sum(-1)  # noqa: E731
    cf = dyn.compile(f, mode="reduce-overhead")
    for n in (8, 9, 10, 33, 1000, 10):
        x = torch.randn(4, n, device="cuda")
        torch.testing.assert_close(cf(x), f(x))
    s = dyn.stats()
    assert s["dynamic_entries"] == 1 and s["cuda_graphs_skipped_dynamic"] == 1, s


def test_torch_compile_backend_with_dynamic_sizes_on_cuda():
    """torch.compile(backend="dyn", dynamic=True): TorchDynamo's symbolic sizes compiled once for CUDA."""
    f = lambda x, y: torch.softmax(x @ y, -1) * 3  # noqa: E731
    cf = torch.compile(f, backend="dyn", dynamic=True)
    for m, k in [(3, 5), (17, 64), (130, 7)]:
        x, y = torch.randn(m, k, device="cuda"), torch.randn(k, 24, device="cuda")
        torch.testing.assert_close(cf(x, y), f(x, y), rtol=1e-4, atol=1e-5)
