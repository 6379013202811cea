"""F.interpolate in every mode (ops/handlers/resample.py): compiled natively and equal to eager, on the CPU
and (where there is one) on the GPU, for sizes and scale factors that do not divide evenly."""
import pytest
import torch
import torch.nn.functional as F

import dyn
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
