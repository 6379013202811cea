"""F.interpolate in every mode (ops/handlers/resample.py): compiled natively and equal to eager, on the CPU
and (where there is one) on the GPU, for sizes and scale factors that do not divide evenly."""
import pytest
import torch
import torch.nn.functional as F

import dyn
import opinfo_check as oc
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
CASES = [
    ("nearest", 3, dict(size=(7, 2, 5))), ("nearest", 2, dict(scale_factor=1.7)),
    ("nearest-exact", 1, dict(scale_factor=0.6)), ("nearest-exact", 2, dict(size=(9, 4))),
    ("linear", 1, dict(size=11, align_corners=True)), ("linear", 1, dict(scale_factor=2.5)),
    ("bilinear", 2, dict(size=(7, 3), align_corners=False)), ("bilinear", 2, dict(scale_factor=(1.5, 0.7))),
    ("bilinear", 2, dict(scale_factor=1.3, recompute_scale_factor=True)),
    ("bicubic", 2, dict(size=(9, 5), align_corners=True)), ("bicubic", 2, dict(scale_factor=2.2)),
    ("trilinear", 3, dict(size=(3, 5, 4))), ("area", 2, dict(size=(3, 4))), ("area", 1, dict(size=5)),
]


@pytest.mark.parametrize("device", DEVICES)
# bfloat16: dyn resamples in float32 and rounds once; eager's CPU kernels round intermediate values, which
# differs near zero by about a bfloat16 ulp of the inputs (docs/op_families.md): the OpInfos check it
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: f"{CASES[i][0]}-{i}")
def test_interpolate(device, dtype, case):
    mode, nd, kw = CASES[case]
    torch.manual_seed(case)
    x = torch.randn((2, 3) + (6, 5, 4)[:nd], device=device).to(dtype)
    fn = lambda x: F.interpolate(x, mode=mode, **kw)  # noqa: E731
    want = fn(x)
    got = dyn.compile(fn, backend="dyn", fullgraph=True)(x)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] == 1, stats
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want)


def _grid_native(fn, *args):
    dyn.reset()
    got = dyn.compile(fn, backend="dyn", fullgraph=True)(*args)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] >= 1, stats
    return got


_GRID_CASES = [(nd, mode, pad, al) for nd in (2, 3) for mode in ((0, 1, 2) if nd == 2 else (0, 1))
               for pad in (0, 1, 2) for al in (False, True)]


@pytest.mark.parametrize("nd,mode,pad,align", _GRID_CASES)
def test_grid_sampler_every_mode_and_non_finite_grid(nd, mode, pad, align):
    """grid_sampler_2d/3d (handlers/grid_sample.py) equal to eager for every mode, padding and
    align_corners, with grid points far outside [-1, 1], on its bounds, NaN and infinite (the CPU's
    vectorized 2-d kernel and its scalar 3-d kernel treat these differently)."""
    torch.manual_seed(nd * 100 + mode * 10 + pad)
    x = torch.randn(2, 3, *[4, 5, 6][:nd])
    g = torch.randn(2, *[3, 6, 7][:nd], nd) * 3
    g.view(-1)[:12] = torch.tensor([float("nan"), 0., 0., float("nan"), float("inf"), 0.3, -float("inf"), 0.5,
                                    1e20, -1e20, 1.0, -1.0])
    fn = torch.grid_sampler_2d if nd == 2 else torch.grid_sampler_3d
    f = lambda x, g: fn(x, g, mode, pad, align)  # noqa: E731
    torch.testing.assert_close(_grid_native(f, x, g), f(x, g), equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_grid_sample_functional(dtype):
    x, g = torch.randn(1, 2, 7, 8, dtype=dtype), (torch.rand(1, 5, 4, 2) * 2.4 - 1.2).to(dtype)
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            f = lambda x, g: (F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=True),  # noqa: E731
                              torch.grid_sampler(x, g, 0, 1, False))
            want, exact = f(x, g), f(x.double(), g.double())
            for k, (got, w) in enumerate(zip(_grid_native(f, x, g), want)):
                assert got.dtype == w.dtype
                try:
                    torch.testing.assert_close(got, w)
                except AssertionError:
                    # bfloat16 is computed in float32 and rounded once: where it differs from eager's, it is
                    # at least as close to the exact values (the OpInfo test's rule)
                    if dtype != torch.bfloat16 or not oc._closer_to_exact(got, w, exact[k]):
                        raise


def test_grid_sample_grid_requiring_grad_breaks():
    x, g = torch.randn(1, 1, 4, 4), torch.rand(1, 2, 2, 2, requires_grad=True)
    with pytest.raises(dyn.Unsupported, match="grid that requires grad"):
        dyn.compile(lambda x, g: F.grid_sample(x, g, align_corners=False), backend="dyn", fullgraph=True)(x, g)
