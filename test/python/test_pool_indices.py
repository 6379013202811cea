"""max_pool/adaptive_max_pool with return_indices and max_unpool (WindowOps._window_max, handlers/windows.py):
compiled natively and equal to eager, indices included (the first maximum of a window, the last NaN where
there is one), on the CPU and (where there is one) on the GPU."""
import pytest
import torch
import torch.nn.functional as F

import dyn
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _native(fn, *args):
    got = dyn.compile(fn, backend="dyn", fullgraph=True)(*args)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] == 1, stats
    return got


CASES = [
    (1, lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True)),
    (2, lambda x: F.max_pool2d(x, (3, 2), (2, 1), (1, 0), (1, 2), ceil_mode=True, return_indices=True)),
    (3, lambda x: F.max_pool3d(x, 2, return_indices=True)),
    (2, lambda x: F.max_pool2d_with_indices(x, 2)),
    (1, lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True)),
    (2, lambda x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True)),
    (3, lambda x: F.adaptive_max_pool3d(x, (2, 3, 1), return_indices=True)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_pool_indices(device, case):
    nd, fn = CASES[case]
    torch.manual_seed(case)
    x = torch.randn((2, 3) + (7, 6, 5)[:nd], device=device)
    x.view(-1)[::7] = 0.5  # ties: the first maximum of a window
    x.view(-1)[5] = float("nan")  # a NaN wins, the last one of its window
    x.view(-1)[6] = float("nan")
    want, got = fn(x), _native(fn, x)
    torch.testing.assert_close(got[0], want[0], equal_nan=True)
    torch.testing.assert_close(got[1], want[1])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_roundtrip(device, nd):
    torch.manual_seed(nd)
    x = torch.randn((2, 3) + (6, 4, 4)[:nd], device=device)
    pool, unpool = getattr(F, f"max_pool{nd}d"), getattr(F, f"max_unpool{nd}d")
    fn = lambda x: unpool(*pool(x, 2, return_indices=True), 2, output_size=x.shape[2:])  # noqa: E731
    torch.testing.assert_close(_native(fn, x), fn(x))


def test_max_unpool_index_out_of_range_raises():
    f = dyn.compile(lambda v, i: F.max_unpool1d(v, i, 2), backend="dyn")
    v = torch.randn(1, 1, 3)
    f(v, torch.tensor([[[0, 3, 5]]]))
    with pytest.raises((IndexError, RuntimeError)):
        f(v, torch.tensor([[[0, 3, 6]]]))
