"""Reduction epilogues and merged small kernels (dyn-fuse-prim-to-loop, docs/pipeline.md "Fusion"): a batch
norm's training forward updates its running mean and variance at the end of the kernels that sum its channels
(the epilogue reads the sums as just computed), and the num_batches_tracked increments of all the norms are one
kernel. The running statistics, the counters, the outputs and the gradients must equal eager's, over several
steps (each step reads the statistics the one before wrote)."""
import copy
import re

import pytest
import torch
import torch.nn as nn

import dyn

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
# float64 on both: at initialization the conv bias's and the middle batch norm's weight gradients are zero
# mathematically (a batch norm's input gradient is orthogonal to its input and to the ones), so in float32
# both sides compare rounding noise
PLACES = [("cpu", torch.float64), pytest.param("cuda", torch.float64, marks=needs_cuda)]


def _net():
    return nn.Sequential(nn.BatchNorm2d(16), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32),
                         nn.ReLU(), nn.BatchNorm2d(32, momentum=None))


def _kernels(text):
    """(domain, number of loop.reduce, number of loop.store) of each loop.kernel of a loop stage."""
    out = []
    for part in re.split(r"loop\.kernel ", text)[1:]:
        domain = re.match(r'"[^"]*" \[([^\]]*)\]', part).group(1)
        out.append((domain, part.count("loop.reduce"), part.count("loop.store")))
    return out


@pytest.mark.parametrize("device,dtype", PLACES)
def test_running_statistics_match_eager(device, dtype, tmp_path, monkeypatch):
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    m = _net().to(device, dtype).train()
    ref = copy.deepcopy(m)
    dyn.reset()
    compiled = dyn.compile(m)
    tol = {} if dtype == torch.float64 else dict(rtol=1e-4, atol=1e-5)
    for step in range(3):
        x = torch.randn(4, 16, 8, 8, device=device, dtype=dtype)
        g = torch.randn(4, 32, 8, 8, device=device, dtype=dtype)
        y, want = compiled(x), ref(x)
        torch.testing.assert_close(y, want, **tol)
        (y * g).sum().backward()
        (want * g).sum().backward()
        for (name, b), c in zip(m.named_buffers(), ref.buffers()):
            torch.testing.assert_close(b, c, **tol, msg=f"step {step}: {name}")
        for (name, p), q in zip(m.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, **tol, msg=f"step {step}: {name}")
    s = dyn.stats()
    assert s["eager_graphs"] == [], s
    forward = "".join(p.read_text() for p in sorted(tmp_path.rglob("*forward.loop.mlir")))
    kernels = _kernels(forward)
    assert kernels, "no forward loop stage dumped"
    # the three num_batches_tracked increments: one kernel of three stores
    assert [k for k in kernels if k[0] == ""] == [("", 0, 3)], kernels
    # no per-channel kernel without a reduction: each running-statistics update runs after its sum
    assert not [k for k in kernels if re.fullmatch(r"\d+", k[0]) and k[1] == 0], kernels
    # each norm's statistics in one pass over its input: a small kernel takes the shift (the mean of the
    # first samples), then one kernel both shifted sums and both running-statistics updates (and, for the
    # backward, the sums themselves); momentum=None's cumulative average too
    reducing = [k for k in kernels if k[1] > 0]
    assert sorted((k[1], k[2] if k[1] == 1 else k[2] >= 4) for k in reducing) == [(1, 1)] * 3 + [(2, True)] * 3, \
        kernels


@pytest.mark.parametrize("device,dtype", PLACES)
def test_large_batch_norm_loads_its_scale_and_shift(device, dtype, tmp_path, monkeypatch):
    """Over 4M points a batch norm's per-channel scale and shift get buffers, computed in its moments'
    kernel (dyn-fuse-prim-to-loop's broadcast invariants), and the normalization loads them: the outputs,
    the running statistics and the gradients must still be eager's."""
    monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
    monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    m = nn.Sequential(nn.BatchNorm2d(64), nn.ReLU()).to(device, dtype).train()
    ref = copy.deepcopy(m)
    dyn.reset()
    x = torch.randn(16, 64, 64, 64, device=device, dtype=dtype)  # 4.2M points
    g = torch.randn_like(x)
    xs, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
    y, want = dyn.compile(m)(xs), ref(xr)
    torch.testing.assert_close(y, want)
    (y * g).sum().backward()
    (want * g).sum().backward()
    torch.testing.assert_close(xs.grad, xr.grad)
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=name)
    for (name, b), c in zip(m.named_buffers(), ref.buffers()):
        torch.testing.assert_close(b, c, msg=name)
    assert dyn.stats()["eager_graphs"] == []
    forward = "".join(p.read_text() for p in sorted(tmp_path.rglob("*forward.loop.mlir")))
    kernels = re.split(r"loop\.kernel ", forward)[1:]
    big = [k for k in kernels if k.startswith('"') and "[16, 64, 64, 64]" in k.split("{")[0] and "loop.reduce" not in k]
    assert big, "no normalization kernel over the activation"
    # the normalization reads the per-channel values; the rsqrt of the variance runs once per channel
    assert all("math.rsqrt" not in k and "arith.divf" not in k for k in big), big
    assert any("math.rsqrt" in k for k in kernels if k.split("{")[0].strip().endswith("[64]"))
