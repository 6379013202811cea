"""Sibling reductions (dyn-fuse-prim-to-loop): reductions over the same domain and reduced dims that read the
same buffers, neither reading the other, are one kernel with a loop.reduce each (docs/gpu.md: split column
sums fold them in one sweep). Batch norm's backward has two, sum(dy) and sum(dy * xhat) per channel: the
norms' training gradients must equal eager's, and the backward computes both sums in one kernel."""
import copy
import re

import pytest
import torch
import torch.nn as nn

import dyn

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
# float64 on the CPU (against eager's float64); float32 on CUDA (against float64, as accurate as eager)
PLACES = [("cpu", torch.float64), pytest.param("cuda", torch.float32, marks=needs_cuda)]


def _kernels(text):
    """Each loop.kernel of a loop stage with the number of loop.reduce in it."""
    parts = re.split(r"loop\.kernel ", text)[1:]
    return [p.count("loop.reduce") for p in parts]


def _check(module, shape, device, dtype, channels_last=False, tmp_path=None, monkeypatch=None):
    if tmp_path is not None:
        monkeypatch.setenv("DYN_COMPILE_DEBUG", "1")
        monkeypatch.setenv("DYN_COMPILE_DEBUG_DIR", str(tmp_path))
    torch.manual_seed(0)
    m = module.to(device, dtype)
    ref = copy.deepcopy(m)
    ref64 = copy.deepcopy(m).double()
    x = torch.randn(shape, device=device, dtype=dtype)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    x.requires_grad_()
    xr = x.detach().clone().requires_grad_()
    x64 = x.detach().double().requires_grad_()
    dyn.reset()
    y = dyn.compile(m)(x)
    g = torch.randn(y.shape, device=device, dtype=dtype)
    (y * g).sum().backward()
    (ref(xr) * g).sum().backward()
    (ref64(x64) * g.double()).sum().backward()
    s = dyn.stats()
    assert s["backward_graphs"] == 1 and s["eager_graphs"] == [], s
    pairs = [("x.grad", x.grad, xr.grad, x64.grad)]
    pairs += [(name, p.grad, q.grad, r.grad)
              for (name, p), q, r in zip(m.named_parameters(), ref.parameters(), ref64.parameters())]
    pairs += [(name, b, c, d) for (name, b), c, d in zip(m.named_buffers(), ref.buffers(), ref64.buffers())]
    for name, mine, eager, exact in pairs:
        if dtype == torch.float64:
            torch.testing.assert_close(mine, eager, msg=name)
        else:
            # float32 against float64 (torch._dynamo's fp64 oracle): two summation orders of a conv's weight
            # gradient (terms of 1e2) differ by 1e-5 where the sum is near 0, past any rtol; dyn's error must be
            # within twice eager's
            err = lambda t: (t.double() - exact.double()).pow(2).mean().sqrt().item()  # noqa: E731
            assert err(mine) <= 2 * err(eager) + 1e-6, (name, err(mine), err(eager))
    if tmp_path is None:
        return None
    return "".join(p.read_text() for p in sorted(tmp_path.rglob("*backward.loop.mlir")))


@pytest.mark.parametrize("device,dtype", PLACES)
@pytest.mark.parametrize("channels_last", [False, True])
def test_batch_norm_backward_sums_share_a_kernel(device, dtype, channels_last, tmp_path, monkeypatch):
    backward = _check(nn.BatchNorm2d(64), (8, 64, 16, 16), device, dtype, channels_last, tmp_path, monkeypatch)
    counts = _kernels(backward)
    # sum(dy) and sum(dy * xhat) in one kernel; the input gradient's kernel reads both
    assert counts.count(2) == 1 and sum(counts) == 2, counts


class _GroupNorm(nn.Module):
    """Group norm composed of reductions (graph.group_norm has no derivative rule of its own): its backward
    has per-(sample, group) sibling sums and per-channel ones for the affine parameters."""

    def __init__(self, groups, channels):
        super().__init__()
        self.groups = groups
        self.weight = nn.Parameter(torch.randn(channels))
        self.bias = nn.Parameter(torch.randn(channels))

    def forward(self, x):
        n, c = x.shape[:2]
        h = x.reshape(n, self.groups, -1)
        mean = h.mean(-1, keepdim=True)
        var = ((h - mean) ** 2).mean(-1, keepdim=True)
        h = ((h - mean) / torch.sqrt(var + 1e-5)).reshape(x.shape)
        shape = (1, c) + (1,) * (x.dim() - 2)
        return h * self.weight.reshape(shape) + self.bias.reshape(shape)


@pytest.mark.parametrize("device,dtype", PLACES)
@pytest.mark.parametrize("make,shape", [
    (lambda: nn.BatchNorm1d(32), (16, 32)),
    (lambda: nn.BatchNorm1d(12), (4, 12, 50)),
    (lambda: nn.BatchNorm2d(6, affine=False), (3, 6, 5, 7)),
    (lambda: nn.LayerNorm(48), (4, 10, 48)),
    (lambda: nn.LayerNorm((6, 8), elementwise_affine=False), (5, 6, 8)),
    (lambda: _GroupNorm(4, 16), (2, 16, 6, 6)),
    (lambda: _GroupNorm(1, 8), (3, 8, 4, 4)),
])
def test_norm_training_gradients_match_eager(device, dtype, make, shape):
    _check(make(), shape, device, dtype)


@pytest.mark.parametrize("device,dtype", PLACES)
def test_batch_norm_in_a_conv_block_channels_last(device, dtype):
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                        nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        _check(net, (4, 3, 12, 12), device, dtype, channels_last=True)
