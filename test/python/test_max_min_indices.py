"""max/min(dim) with their indices (torch.return_types.max/min): the index of the first maximum, or of
the first NaN where a row has one, as eager's; unpacked, by attribute, by subscript, returned whole."""
import pytest
import torch

import dyn
from conftest import BACKENDS


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _x(device="cpu"):
    return torch.tensor([[1.0, 3.0, 3.0, -1.0], [float("nan"), 2.0, float("nan"), 5.0], [-2.0, -2.0, -2.0, -2.0]],
                        device=device)


FNS = {
    "unpacked": lambda x: tuple(x.max(1)),
    "attributes": lambda x: (x.min(dim=1).values, x.min(dim=1).indices),
    "subscript": lambda x: (torch.max(x, 0)[1], torch.min(x, -1, keepdim=True)[0]),
    "whole": lambda x: torch.max(x, 1, True),
    "int": lambda x: (x * 4).long().max(1),
    "0-d": lambda x: x[0, 1].max(0),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", FNS)
def test_max_min_dim(name, backend, device):
    fn = FNS[name]
    want = fn(_x(device))
    got = dyn.compile(fn, backend=backend, fullgraph=True)(_x(device))
    assert type(got) is type(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, equal_nan=True)
    if backend == "dyn":
        assert dyn.stats()["compiled_graphs"] == 1 and not dyn.stats()["eager_graphs"]
