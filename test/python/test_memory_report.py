"""dyn.explain's memory per graph (capture/memory.py): the GPU plan (temporaries placed by liveness in one
workspace), a training graph's saved values, and each call's peak measured by the allocators: the host
allocator's live bytes on the CPU, torch's on CUDA, where a compiled graph's peak must not exceed eager's."""
import pytest
import torch
from torch import nn

import dyn
from dyn.native import C as _C
from conftest import has_compiler

needs_compiler = pytest.mark.skipif(not has_compiler(), reason="needs the compiler core")
TARGET = "chip=sm_90 sm-count=132 threads-per-sm=2048"


def exp_chain(x, w):
    # each GEMM's operand is a temporary (an elementwise value a library call reads): 1 MiB each, in turn
    a = torch.exp(x * 0.01) @ w
    b = torch.exp(a * 0.01) @ w
    c = torch.exp(b * 0.01) @ w
    return c.sum()


@needs_compiler
def test_host_allocator_counts_live_bytes_and_their_peak():
    x, w = torch.randn(512, 512), torch.randn(512, 512)
    out = dyn.explain(exp_chain)(x, w)
    m = out.memory[0]
    assert m["device"] == "cpu" and m["plan"]["forward"] is None  # the CPU frees temporaries as they die
    # the three GEMM operands (1 MiB each) and the GEMM results they feed are temporaries; the largest
    # live at once holds at least one operand and one result, and not all six
    assert (2 << 20) <= m["temporary_peak_bytes"] < (6 << 20)
    assert m["held_bytes"] == 4  # the scalar output
    assert "Memory per Graph:" in str(out) and "temporaries" in str(out)
    # the compiled function frees what it allocates: live bytes return to where they were
    f = dyn.compile(exp_chain)
    f(x, w)
    before = _C.host_cache_stats()["live_bytes"]
    f(x, w)
    assert _C.host_cache_stats()["live_bytes"] == before


@needs_compiler
def test_training_graph_reports_its_saved_values():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256))
    x = torch.randn(64, 256)
    out = dyn.explain(m)(x)
    assert out.backends[0]["backend"] == "dyn (cpu, forward and backward)"
    mem = out.memory[0]
    # the second Linear's weight gradient reads the GELU output (or its input): 64 x 512 floats at least,
    # and not more than the forward's values (input, pre-activation, activation, output)
    assert 64 * 512 * 4 <= mem["plan"]["saved_bytes"] <= 64 * (256 + 512 + 512 + 256) * 4
    assert "saved for the backward" in str(out)


def _gpu_plan(fn, *args):
    g = dyn.explain(fn)(*args).graphs[0]
    n = len(g.inputs) + len(g.outputs)
    try:
        return _C.compile_gpu(g.mlir(), "forward", False, n, TARGET)
    except RuntimeError as e:  # no CUDA toolkit on this machine
        pytest.skip(str(e).splitlines()[0])


@needs_compiler
def test_gpu_temporaries_share_the_workspace_by_liveness():
    if not hasattr(_C, "compile_gpu"):
        pytest.skip("no GPU compiler")
    c = _gpu_plan(exp_chain, torch.randn(512, 512), torch.randn(512, 512))
    p = c.memory_plan
    assert p["workspace_bytes"] == c.workspace_bytes
    assert p["temporaries"] >= 4 and p["runtime_sized"] == 0 and p["scratch_buffers"] == 0
    # six 1 MiB values whose lifetimes follow one another: fewer bytes than each in a buffer of its own
    assert p["temporary_bytes"] >= 4 << 20
    assert p["workspace_bytes"] + p["constant_bytes"] <= p["temporary_bytes"] // 2 + p["constant_bytes"]
    assert p["workspace_bytes"] >= 2 << 20  # an operand and the GEMM result it feeds live at once


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@needs_compiler
# Known gap (H200, 2026-12-02): the training step peaks 1.6 MB (about the input's 1.5 MiB, which the first
# convolution reads channels-last) above eager's 106 MB; not located. The corpus's CNNs are at or below eager's.
@pytest.mark.parametrize("train", [False, pytest.param(True, marks=pytest.mark.xfail(
    reason="training peak 1.6 MB above eager's on this small CNN (not located)", strict=False))],
    ids=["eval", "train"])
def test_cuda_peak_at_most_eagers(train):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                      nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10)).cuda().train(train)
    x = torch.randn(32, 3, 64, 64, device="cuda")

    def peak(fn):
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        with torch.set_grad_enabled(train):
            y = fn(x)
            if train:
                y.sum().backward()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base, y

    with torch.set_grad_enabled(train):
        out = dyn.explain(m)(x)
    mem = out.memory[0]
    assert mem["device"] == "cuda" and mem["plan"]["forward"] is not None
    assert mem["peak_bytes"] >= mem["held_bytes"] > 0
    m.zero_grad(set_to_none=True)
    eager_peak, _ = peak(m)
    m.zero_grad(set_to_none=True)
    f = dyn.compile(m)
    peak(f)  # compiles
    m.zero_grad(set_to_none=True)
    dyn_peak, y = peak(f)
    assert dyn.stats()["eager_graphs"] == []
    # the compiled call allocates its outputs before its first kernel (eager its last layer's at the end):
    # torch's allocator gives them 512-byte blocks
    out_bytes = -(-y.untyped_storage().nbytes() // 512) * 512
    assert dyn_peak <= eager_peak + out_bytes, (dyn_peak, eager_peak, mem)


def lm_head(x, w1, w2, wv):
    # the layers' values die before the last GEMM writes the 4 MiB logits; its operand lives beside them
    h = torch.nn.functional.gelu(x @ w1) @ w2
    return torch.tanh(h) @ wv


def _lm_args(device="cpu"):
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(*s, generator=g) / s[0] ** 0.5).to(device)
            for s in ((256, 512), (512, 1024), (1024, 512), (512, 4096))]


@needs_compiler
def test_gpu_temporaries_live_in_an_output_before_its_first_step():
    if not hasattr(_C, "compile_gpu"):
        pytest.skip("no GPU compiler")
    p = _gpu_plan(lm_head, *_lm_args()).memory_plan
    # x @ w1 and its GELU (1 MiB each, or one buffer written in place) die before the logits' GEMM: they are
    # placed in the logits' buffer; the last GEMM's operand (0.5 MiB) is live beside the logits, in the workspace
    assert p["hosted_bytes"] >= 1 << 20
    assert (512 << 10) <= p["workspace_bytes"] < (1 << 20)
    assert p["live_bytes"] <= p["workspace_bytes"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@needs_compiler
@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_cuda_outputs_holding_temporaries_give_eagers_results(mode):
    args = _lm_args("cuda")
    f = dyn.compile(lm_head, mode=mode) if mode else dyn.compile(lm_head)
    for k in range(3):  # new inputs each call (CUDA graph replays too)
        args[0] = torch.randn(256, 512, device="cuda") / 16
        torch.testing.assert_close(f(*args), lm_head(*args))
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    lm_head(*args)
    torch.cuda.synchronize()
    eager_peak = torch.cuda.max_memory_allocated() - base
    y = None
    if mode is None:
        torch.cuda.reset_peak_memory_stats()
        y = f(*args)
        torch.cuda.synchronize()
        assert torch.cuda.max_memory_allocated() - base <= eager_peak, (torch.cuda.max_memory_allocated() - base,
                                                                          eager_peak)
    assert dyn.stats()["eager_graphs"] == []
    del y
