"""Inputs read through their strides (graph/layouts.py): an expanded, transposed or sliced input is passed
to compiled code as the memory it lies in, with view ops in the graph, not copied first. Results equal
eager's; the memory test runs in a fresh process and checks its peak resident size."""
import os
import subprocess
import sys
import warnings

import pytest
import torch

import dyn
from conftest import has_compiler
from dyn.graph.layouts import layout_of

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _inputs(device):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(4, 6, 8, generator=g).to(device)
    r = lambda *s: torch.randn(*s, generator=g).to(device)  # noqa: E731
    return {
        "transposed": a.transpose(0, 1),
        "permuted": a.permute(2, 0, 1),
        "channels_last": r(2, 3, 4, 5).contiguous(memory_format=torch.channels_last),
        "sliced": a[:, 1:4],
        "stepped": a[:, :, ::2],
        "sliced_stepped": a[1:3, ::2, 1::3],
        "offset": a[1:, 2:, 3:],
        "column": a[..., 1],
        "transposed_sliced": a.transpose(1, 2)[:, 1:],
        "expanded_scalar": r(1).expand(10, 7),
        "expanded_row": r(1, 5).expand(4, 5),
        "expanded_column": r(3, 1).expand(3, 5),
        "expanded_sliced": r(4, 1, 6)[:, :, 1:5].expand(4, 3, 4),
        "interleaved": r(5, 7)[:, ::2].t(),  # strides that do not nest: made contiguous
    }


FNS = {
    "pointwise": lambda x, y: x * 2 + y,
    "reduction": lambda x, y: (x - y).sum(-1),
    "gemm": lambda x, y: x @ y.transpose(-1, -2),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fn", list(FNS))
@pytest.mark.parametrize("case", list(_inputs("cpu")))
def test_strided_inputs_equal_eager(case, fn, device):
    x = _inputs(device)[case]
    y = torch.randn(x.shape, generator=torch.Generator().manual_seed(1)).to(device)  # contiguous
    f = FNS[fn]
    compiled = dyn.compile(f, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for args in ((x, y), (y, x)):
            dyn.reset()
            got = compiled(*args)
            assert dyn.stats()["compiled_graphs"] == 1 and not dyn.stats()["eager_graphs"]
            torch.testing.assert_close(got, f(*args))


def test_layouts_read_the_memory_in_place():
    """Each layout, applied to the memory from the tensor's first element, gives the tensor: checked on
    the real storage (elements past the storage, which the view never reads, are NaN)."""
    for case, t in _inputs("cpu").items():
        lay = layout_of(tuple(t.shape), tuple(t.stride()))
        if case == "interleaved":
            assert lay is None
            continue
        assert lay is not None, case
        n = 1
        for s in lay.base_shape:
            n *= s
        store = torch.empty(0).set_(t.untyped_storage())[t.storage_offset():]
        base = torch.cat([store, torch.full((max(0, n - store.numel()),), float("nan"))])[:n]
        v = base.reshape(lay.base_shape)
        for dim, start, end, step in lay.slices:
            v = v[(slice(None),) * dim + (slice(start, end, step),)]
        if lay.perm is not None:
            v = v.permute(lay.perm)
        if lay.expand:
            v = v.expand(lay.shape)
        assert torch.equal(v, t), case
    assert layout_of((4, 5), (5, 1)) is None  # contiguous: its own base
    assert layout_of((2, 3, 4), (0, 0, 0)).base_shape == (1, 1, 1)


_PEAK = r"""
import resource, sys, torch
sys.path.insert(0, sys.argv[1])
import dyn
x = torch.ones(1).expand(2 ** 27)  # 512 MiB if materialized as float32
f = lambda x: (x * 3).sum()
dyn.compile(f)(torch.ones(1).expand(2 ** 10))  # the JIT's one-time set-up, outside the measurement
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
got = dyn.compile(f)(x)
grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
assert dyn.stats()["compiled_graphs"] >= 1 and not dyn.stats()["eager_graphs"], dyn.stats()
print(grew, got.item())
"""


def test_expanded_input_is_not_materialized():
    """x = torch.ones(1).expand(2**27) costs eager nothing: compiled, the process's peak memory grows by
    less than a quarter of the 512 MiB a copy would take (compiling the graph takes some)."""
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")
    out = subprocess.run([sys.executable, "-c", _PEAK, root], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    grew_mib, value = map(float, out.stdout.split())
    assert value == 3.0 * 2 ** 27
    assert grew_mib < 128, f"peak memory grew by {grew_mib:.0f} MiB"
