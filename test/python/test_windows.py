"""Convolutions, pooling, padding, attention and GEMM forms on the CPU, against eager PyTorch.

Each case is captured as one graph (fullgraph=True) and, with the dyn backend, must run compiled code
(a fallback to eager warns, and warnings fail here): convolutions and attention through the library
calls (ATen's kernels, registered by dyn._C), pooling and padding as fused dyn kernels.
"""
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn
from conftest import BACKENDS, has_compiler


def run(fn, *args, backend, rtol=None, atol=None):
    expected = fn(*args)
    compiled = dyn.compile(fn, backend=backend, fullgraph=True)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("error")  # a fallback to eager warns: make it fail here
        got = compiled(*args)
    if backend == "dyn":
        assert dyn.stats()["compiled_graphs"] >= 1 and not dyn.stats()["eager_graphs"]
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,)):
        assert g.shape == e.shape and g.dtype == e.dtype
        torch.testing.assert_close(g, e, rtol=rtol, atol=atol, equal_nan=True)
    return got


def r(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype)


CONV_CASES = {
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), [(2, 4, 17), (6, 4, 3), (6,)]),
    "conv2d_groups_dilation": (lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(2, 1), dilation=2, groups=2),
                               [(2, 4, 11, 9), (6, 2, 3, 3)]),
    "conv2d_depthwise": (lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=8), [(1, 8, 7, 7), (8, 1, 3, 3), (8,)]),
    "conv3d": (lambda x, w, b: F.conv3d(x, w, b, stride=2), [(1, 2, 7, 6, 5), (3, 2, 3, 2, 2), (3,)]),
    "conv2d_unbatched": (lambda x, w: F.conv2d(x, w, padding=1), [(3, 8, 8), (4, 3, 3, 3)]),
    "conv2d_same_even": (lambda x, w: F.conv2d(x, w, padding="same"), [(2, 3, 9, 8), (4, 3, 4, 2)]),
    "conv2d_valid": (lambda x, w: F.conv2d(x, w, padding="valid"), [(2, 3, 9, 8), (4, 3, 3, 3)]),
    "conv_transpose1d": (lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
                         [(2, 4, 9), (4, 3, 3), (3,)]),
    "conv_transpose2d_groups": (lambda x, w: F.conv_transpose2d(x, w, stride=2, groups=2, dilation=2),
                                [(1, 4, 5, 6), (4, 3, 3, 2)]),
    "conv_transpose3d": (lambda x, w: F.conv_transpose3d(x, w, stride=(1, 2, 2)), [(1, 2, 3, 4, 4), (2, 2, 2, 2, 2)]),
    "torch_conv2d": (lambda x, w, b: torch.conv2d(x, w, b, 1, 1), [(1, 3, 6, 6), (2, 3, 3, 3), (2,)]),
    "conv_relu_pool": (lambda x, w, b: F.max_pool2d(F.relu(F.conv2d(x, w, b, padding=1)), 3, 2, 1),
                       [(2, 3, 12, 12), (8, 3, 3, 3), (8,)]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_convolution(case, dtype, backend):
    fn, shapes = CONV_CASES[case]
    run(fn, *[r(*s, dtype=dtype) for s in shapes], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "zeros"])
def test_conv_padding_modes(mode, backend):
    torch.manual_seed(0)
    m = nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode=mode).eval()
    run(m, r(2, 3, 7, 8), backend=backend)


POOL_CASES = {
    "max1d": (lambda x: F.max_pool1d(x, 3, 2, 1), (2, 3, 16)),
    "max2d": (lambda x: F.max_pool2d(x, 3, 2, 1), (2, 3, 15, 14)),
    "max2d_ceil_dilation": (lambda x: F.max_pool2d(x, (3, 2), (2, 3), (1, 1), dilation=(2, 1), ceil_mode=True),
                            (1, 2, 13, 11)),
    "max3d": (lambda x: F.max_pool3d(x, 2), (1, 2, 6, 7, 5)),
    "max2d_unbatched": (lambda x: F.max_pool2d(x, 2), (3, 8, 9)),
    "avg1d": (lambda x: F.avg_pool1d(x, 4, 3, 2, ceil_mode=True), (2, 3, 17)),
    "avg2d": (lambda x: F.avg_pool2d(x, 3, 2, 1), (2, 3, 9, 10)),
    "avg2d_exclude_pad": (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), (2, 3, 10, 9)),
    "avg2d_divisor": (lambda x: F.avg_pool2d(x, 2, divisor_override=3), (1, 2, 8, 8)),
    "avg2d_large_tiles": (lambda x: F.avg_pool2d(x, 8), (1, 2, 16, 24)),
    "avg3d": (lambda x: F.avg_pool3d(x, (2, 3, 2), padding=1), (1, 2, 5, 6, 7)),
    "adaptive_avg_global": (lambda x: F.adaptive_avg_pool2d(x, 1), (2, 8, 7, 7)),
    "adaptive_avg_irregular": (lambda x: F.adaptive_avg_pool2d(x, (3, 5)), (2, 3, 10, 7)),
    "adaptive_avg_divisible": (lambda x: F.adaptive_avg_pool2d(x, (2, None)), (2, 3, 8, 6)),
    "adaptive_max_irregular": (lambda x: F.adaptive_max_pool2d(x, (4, 3)), (2, 3, 9, 10)),
    "adaptive_avg1d": (lambda x: F.adaptive_avg_pool1d(x, 5), (2, 3, 13)),
    "adaptive_max3d": (lambda x: F.adaptive_max_pool3d(x, (1, 2, 3)), (1, 2, 4, 5, 7)),
    "adaptive_avg_unbatched": (lambda x: F.adaptive_avg_pool2d(x, 3), (4, 7, 8)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", sorted(POOL_CASES))
def test_pooling(case, dtype, backend):
    fn, shape = POOL_CASES[case]
    run(fn, r(*shape, dtype=dtype), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_pool_propagates_nan_and_infinity(backend):
    x = r(1, 2, 6, 6)
    x[0, 0, 1, 1] = float("nan")
    x[0, 1, 4, 4] = float("-inf")
    x[0, 1, 0, 0] = float("inf")
    run(lambda x: F.max_pool2d(x, 3, 2, 1), x, backend=backend, rtol=0, atol=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pooling_half_precision(backend):
    for dtype in (torch.bfloat16, torch.float16):
        x = r(2, 3, 9, 9, dtype=dtype)
        run(lambda x: (F.max_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 2), F.adaptive_avg_pool2d(x, 1)), x,
            backend=backend)
        dyn.reset()


PAD_CASES = {
    "constant": (lambda x: F.pad(x, (1, 2, 0, 3), value=-1.5), (2, 3, 4)),
    "constant_crop": (lambda x: F.pad(x, (-1, 2, 1, -2)), (2, 5, 6)),
    "reflect": (lambda x: F.pad(x, (2, 3, 1, 1), mode="reflect"), (2, 3, 5, 6)),
    "replicate": (lambda x: F.pad(x, (2, 3), mode="replicate"), (2, 3, 5)),
    "circular": (lambda x: F.pad(x, (1, 2, 3, 0, 1, 1), mode="circular"), (1, 2, 3, 4, 5)),
    "pad_then_pool": (lambda x: F.max_pool2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), 2), (1, 2, 6, 6)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(PAD_CASES))
def test_pad(case, backend):
    fn, shape = PAD_CASES[case]
    run(fn, r(*shape), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pad_integers(backend):
    x = torch.randint(-5, 5, (3, 4))
    run(lambda x: F.pad(x, (1, 1), value=7), x, backend=backend)


def causal_mask(l, s):
    return torch.ones(l, s, dtype=torch.bool).tril()


ATTENTION_CASES = {
    "plain": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [(2, 4, 8, 16), (2, 4, 6, 16), (2, 4, 6, 16)]),
    "causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
               [(2, 4, 8, 16), (2, 4, 8, 16), (2, 4, 8, 16)]),
    "causal_rectangular": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                           [(1, 2, 5, 8), (1, 2, 7, 8), (1, 2, 7, 4)]),
    "scale_3d": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
                 [(3, 8, 16), (3, 10, 16), (3, 10, 32)]),
    "bool_mask": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(8, 8)),
                  [(2, 4, 8, 16), (2, 4, 8, 16), (2, 4, 8, 16)]),
    "float_mask": (lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                   [(2, 4, 8, 16), (2, 4, 6, 16), (2, 4, 6, 16), (2, 1, 8, 6)]),
    "gqa": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
            [(2, 8, 6, 16), (2, 2, 6, 16), (2, 2, 6, 16)]),
    "broadcast_kv": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),  # Falcon's one kv head
                     [(2, 4, 6, 16), (2, 1, 6, 16), (1, 1, 6, 16)]),
    "baddbmm_scores": (lambda q, k, bias: torch.softmax(bias.baddbmm(batch1=q, batch2=k.transpose(1, 2), beta=0.5,
                                                                      alpha=0.25), -1),  # BLOOM's ALiBi scores
                       [(8, 6, 16), (8, 6, 16), (8, 1, 6)]),
    "attention_block": (lambda x, w: F.scaled_dot_product_attention(
        *(t.reshape(2, 6, 4, 8).transpose(1, 2) for t in (x @ w).chunk(3, -1)), is_causal=True)
        .transpose(1, 2).reshape(2, 6, 32), [(2, 6, 32), (32, 96)]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", sorted(ATTENTION_CASES))
def test_attention(case, dtype, backend):
    fn, shapes = ATTENTION_CASES[case]
    run(fn, *[r(*s, dtype=dtype) for s in shapes], backend=backend)


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
def test_attention_boolean_mask_is_made_additive_in_a_kernel(device):
    """A boolean attention mask becomes the additive mask ATen makes of it (0 where attended, -inf
    elsewhere, in the query's dtype) in one of dyn's kernels, not three ATen ops on the host before each
    attention call: eager's results bit for bit, and no aten::where in the call."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 4, 64, 32, generator=g).to(device) for _ in range(3))
    mask = (torch.rand(64, 64, generator=g) < 0.8).to(device)
    mask[:, 0] = True
    fn = lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, attn_mask=m)  # noqa: E731
    compiled = dyn.compile(fn, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled(q, k, v, mask)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        got = compiled(q, k, v, mask)
    names = {e.key for e in prof.key_averages()}
    assert "aten::scaled_dot_product_attention" in names and "aten::where" not in names, sorted(names)
    assert torch.equal(got, fn(q, k, v, mask))


@pytest.mark.parametrize("kind", ["causal", "padded", "input"])
def test_attention_with_a_constant_causal_mask_is_causal(kind):
    """A boolean mask built from aranges that equals the causal mask in every batch (what transformers passes
    under compilation where eager passes is_causal=True) becomes is_causal: the fused kernels skip the masked
    half. A mask that differs anywhere (a padded key), or that the caller passes, stays a mask."""
    def f(q, k, v, given):
        L = q.shape[-2]
        i = torch.arange(L)
        mask = (i[None, :] <= i[:, None])[None, None].expand(q.shape[0], 1, L, L)
        if kind == "padded":
            mask = mask & (i < L - 1)
        elif kind == "input":
            mask = given
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    q, k, v = (torch.randn(2, 3, 16, 8) for _ in range(3))
    given = torch.ones(16, 16, dtype=torch.bool).tril()
    nodes = [n for n in dyn.export(f, q, k, v, given).graph.nodes if n.op == "scaled_dot_product_attention"]
    assert len(nodes) == 1
    assert (len(nodes[0].inputs), nodes[0].attrs["is_causal"]) == ((3, True) if kind == "causal" else (4, False))
    dyn.reset()
    torch.testing.assert_close(dyn.compile(f)(q, k, v, given), f(q, k, v, given))


@pytest.mark.parametrize("backend", BACKENDS)
def test_attention_bfloat16(backend):
    q, k, v = (r(2, 4, 8, 16, dtype=torch.bfloat16) for _ in range(3))
    run(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gemm_forms(backend):
    x, a, b = r(4, 5), r(4, 8), r(8, 5)
    bx, ba, bb = r(3, 4, 5), r(3, 4, 8), r(3, 8, 5)
    run(lambda x, a, b, bx, ba, bb: (torch.addmm(x, a, b), torch.addmm(x, a, b, beta=0.5, alpha=2.0),
                                     x.addmm(a, b), torch.baddbmm(bx, ba, bb, alpha=0.5), torch.bmm(ba, bb)),
        x, a, b, bx, ba, bb, backend=backend, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_half_precision(backend):
    """bf16 GEMMs have no runtime matmul in dyn: on the CPU they are library calls too."""
    a, b = r(3, 16, 32, dtype=torch.bfloat16), r(3, 32, 8, dtype=torch.bfloat16)
    w = r(12, 32, dtype=torch.bfloat16)
    run(lambda a, b, w: (a @ b, F.linear(a, w)), a, b, w, backend=backend)


def test_small_cnn_one_graph():
    """A torchvision-style block (conv, batch norm, ReLU, max pool, residual, global pool, linear) is one
    graph that the dyn backend compiles: two convolution library calls, one GEMM, the rest fused. Both
    convolutions run channels-last and what lies between them stays so (dyn-propagate-layouts): the
    input's is the one layout change left."""
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(3, 2, 1)
            self.conv2 = nn.Conv2d(8, 8, 3, 1, 1)
            self.head = nn.Linear(8, 10)

        def forward(self, x):
            x = self.pool(torch.relu(self.bn1(self.conv1(x))))
            x = torch.relu(x + self.conv2(x))
            return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    m = Net().eval()
    x = r(2, 3, 32, 32)
    got = run(m, x, backend="dyn" if has_compiler() else "eager", rtol=1e-5, atol=1e-5)
    assert got.shape == (2, 10)
    if has_compiler():
        compiled = dyn.compile(m, fullgraph=True, options={"keep_stages": True})
        with torch.no_grad():
            compiled(x)
        loop_ir = dict(compiled.stages()[0])["loop"]
        assert loop_ir.count("loop.convolution") == 2 and loop_ir.count("loop.matmul") == 1
        assert loop_ir.count("channels_last") == 2 and loop_ir.count('loop.kernel "transpose') == 1


@pytest.mark.skipif(not has_compiler(), reason="needs the dyn compiler")
@pytest.mark.parametrize("then_relu", [False, True], ids=["output", "temporary"])
def test_cpu_convolution_writes_dyn_buffer(then_relu):
    """ATen's CPU convolution has no out= form that writes a given buffer; the library call lets it
    allocate its result in dyn's buffer (the graph's output or a temporary a fused kernel reads), so
    no fresh result is copied: eager's bits (of eager on the layout dyn-propagate-layouts chose: a
    convolution whose activations outnumber its weight runs channels-last) and no aten::copy_."""
    cases = [  # (input, weight, conv, written in place): 2-d with bias, strided and grouped, 3-d, and a
        # weight-heavy one (NCHW, where oneDNN's result is reordered from a temporary: still copied);
        # results over 64 KiB (smaller ones would be copied by a memmove, not copy_)
        ((2, 8, 40, 40), (16, 8, 3, 3), lambda a, c, d: F.conv2d(a, c, d, padding=1), True),
        ((2, 16, 33, 33), (32, 4, 3, 3), lambda a, c, d: F.conv2d(a, c, None, stride=2, groups=4), True),
        ((2, 4, 12, 14, 16), (8, 4, 3, 3, 3), lambda a, c, d: F.conv3d(a, c, d, padding=1), True),
        ((1, 128, 16, 16), (256, 128, 3, 3), lambda a, c, d: F.conv2d(a, c, d, padding=1), False),
    ]
    for xs, ws, conv, in_place in cases:
        x, w, b = r(*xs), r(*ws) * 0.1, r(ws[0])
        fn = (lambda a, c, d, conv=conv: torch.relu(conv(a, c, d))) if then_relu else conv
        compiled = dyn.compile(fn, fullgraph=True)
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("error")
            compiled(x, w, b)
        with torch.no_grad():
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
                got = compiled(x, w, b)
            events = prof.key_averages(group_by_input_shape=True)
            assert any(e.key == "aten::convolution" for e in events)
            # ATen's own copies (a weight made channels-last, the bias into a slow kernel's output) are
            # eager's too; a result copied into dyn's buffer is a copy_ from and to the output's shape
            copies = [e.input_shapes for e in events if e.key == "aten::copy_"]
            assert ([list(got.shape)] * 2 not in [s[:2] for s in copies]) == in_place, copies
            channels_last = w.numel() < x.numel() + got.numel()
            fmt = (torch.channels_last if len(xs) == 4 else torch.channels_last_3d) if channels_last else None
            want = fn(x.contiguous(memory_format=fmt) if fmt else x, w, b)
        assert torch.equal(got, want)


@pytest.mark.parametrize("case", ["bool_conv", "mixed_dtypes"])
def test_not_captured(case):
    """What eager rejects is not captured: the frame runs eagerly with eager's behaviour (fullgraph raises).
    (Integer convolutions are captured: ATen's CPU kernels compute them, test_uint8.test_integer_windows_cpu.)"""
    x = r(1, 2, 6, 6)
    fns = {
        "bool_conv": lambda x: F.conv2d(x > 0, torch.ones(1, 2, 1, 1, dtype=torch.bool)),
        "mixed_dtypes": lambda x: F.conv2d(x, torch.ones(1, 2, 1, 1, dtype=torch.float64)),
    }
    with pytest.raises(dyn.Unsupported):
        dyn.compile(fns[case], fullgraph=True)(x)


@pytest.mark.parametrize("case", ["dropout", "max_indices", "adaptive_indices"])
def test_generic_nodes(case):
    """Attention with dropout (random numbers) and pooling's argmax indices have no native form: they are
    eager's own op as one generic node in the graph (no break), with eager's results (same seed, same
    random numbers)."""
    x = r(1, 2, 6, 6)
    fns = {
        "dropout": lambda q: F.scaled_dot_product_attention(q, q, q, dropout_p=0.5) * 2,
        "max_indices": lambda x: F.max_pool2d(x * 2, 2, return_indices=True),
        "adaptive_indices": lambda x: F.adaptive_max_pool2d(x + 1, 3, return_indices=True),
    }
    fn = fns[case]
    torch.manual_seed(0)
    want = fn(x)
    torch.manual_seed(0)
    got = dyn.compile(fn, backend="eager", fullgraph=True)(x)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert torch.equal(g, w)


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
def test_run_time_failure_runs_the_graph_eagerly():
    """A library call that fails at run time (here: a stand-in for the compiled function that raises
    as Compiled.run does) leaves its outputs undefined: the graph then runs with PyTorch's ops, with a
    warning, and the result is eager's."""
    fn = lambda x, w: F.conv2d(x, w, padding=1).relu()
    x, w = r(1, 2, 6, 6), r(3, 2, 3, 3)
    cf = dyn.compile(fn)
    with torch.no_grad():
        cf(x, w)
    kernel = next(k for g, k, e in cf.graphs if k is not None)

    class Failing:
        def run(self, ins, outs, *args, **kwargs):
            raise RuntimeError("library call 'convolution' failed: injected")

    kernel.compiled = Failing()
    with pytest.warns(UserWarning, match="failed at run time, running it eagerly: library call"):
        with torch.no_grad():
            got = cf(x, w)
    torch.testing.assert_close(got, fn(x, w))
    assert dyn.stats()["internal_failures"] == 1


# F.unfold / F.fold (graph.im2col / col2im): overlapping, strided, dilated and padded windows, windows that
# tile the input, a 1x1 kernel; values equal to eager's bit for bit (im2col copies; col2im adds the taps in
# eager's CPU order, bfloat16 rounded after each add as eager's CPU kernel does)
WINDOW_COLUMNS = [((8, 8), 3, 1, 1, 2), ((7, 9), (2, 3), (2, 1), (1, 0), (1, 2)), ((9, 8), 3, 2, 2, 3),
                  ((8, 12), 4, 1, 0, 4), ((9, 9), 4, 1, 0, 4), ((6, 6), 1, 1, 0, 1)]
WINDOW_DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
@pytest.mark.parametrize("device", WINDOW_DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("geometry", WINDOW_COLUMNS, ids=str)
def test_unfold_and_fold(geometry, dtype, device):
    (h, w), k, d, p, s = geometry
    torch.manual_seed(0)
    x = torch.randn(2, 3, h, w, device=device).to(dtype)
    cols = F.unfold(x, k, d, p, s).contiguous()
    for fn, arg in ((lambda x: F.unfold(x * 2, k, d, p, s) + 1, x),
                    (lambda c: F.fold(c * 2, (h, w), k, d, p, s) - 1, cols)):
        dyn.reset()
        got = dyn.compile(fn, fullgraph=True)(arg)
        assert dyn.stats()["eager_graphs"] == []
        want = fn(arg)
        if device == "cuda" and dtype != torch.float64:  # CUDA's col2im sums the taps in another order
            torch.testing.assert_close(got, want)
        else:
            assert torch.equal(got, want)


def test_unfold_and_fold_unbatched_and_refused():
    x, c = torch.randn(3, 8, 8), torch.randn(27, 36)
    assert torch.equal(dyn.compile(lambda x: F.unfold(x, 3), fullgraph=True)(x), F.unfold(x, 3))
    assert torch.equal(dyn.compile(lambda c: F.fold(c, (8, 8), 3), fullgraph=True)(c), F.fold(c, (8, 8), 3))
    b = torch.rand(1, 2, 5, 5) > 0.5  # eager's im2col takes bools, its col2im does not
    assert torch.equal(dyn.compile(lambda b: F.unfold(b, 2), fullgraph=True)(b), F.unfold(b, 2))
    with pytest.raises(dyn.Unsupported, match="fold of a torch.int64"):
        dyn.compile(lambda i: F.unfold(i, 2), fullgraph=True)(torch.ones(1, 2, 4, 4, dtype=torch.int64))


def test_lp_pool():
    """F.lp_pool1d/2d/3d (nn.LPPool*): torch's Python composition traced (a power, an average pool, the
    sign-preserving root), one graph compiled."""
    cases = [(torch.nn.LPPool1d(2, 3), torch.randn(2, 3, 10)), (torch.nn.LPPool2d(1.5, (2, 3), stride=2), torch.rand(2, 3, 8, 9)),
             (torch.nn.LPPool3d(3, 2), torch.randn(1, 2, 4, 4, 4)), (torch.nn.LPPool2d(2, 3, ceil_mode=True), torch.randn(1, 2, 8, 8))]
    for m, x in cases:
        dyn.reset()
        torch.testing.assert_close(dyn.compile(m, fullgraph=True)(x), m(x), equal_nan=True)
        assert dyn.stats()["eager_graphs"] == []
