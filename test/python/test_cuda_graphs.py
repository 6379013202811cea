"""mode="reduce-overhead" on CUDA (dyn/cuda_graphs.py): each compiled launch plan recorded once as a CUDA
graph and replayed. Every call must equal the launch plan's result (and eager's), outputs of earlier calls
must survive later replays, inputs that move must still be read, and stats() must say what replayed.

Skipped where torch sees no CUDA device (CI); run on the GPU machine with scripts/gpu_machine.sh."""
import warnings

import pytest
import torch
import torch.nn.functional as F

import dyn

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


class Block(torch.nn.Module):
    """GEMMs (library calls), layer norm and softmax (row kernels), a position table (a dense constant
    uploaded into the workspace once) and a residual."""

    def __init__(self, d=64):
        super().__init__()
        self.lin1, self.lin2, self.ln = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d), torch.nn.LayerNorm(d)

    def forward(self, x):
        pos = torch.arange(x.shape[1], device=x.device, dtype=x.dtype)[:, None] / 7.0
        h = self.ln(x + pos)
        return x + self.lin2(F.gelu(self.lin1(h))), h.softmax(-1)


def _compiled(fn):
    dyn.reset()
    return dyn.compile(fn, mode="reduce-overhead")


@torch.no_grad()
def test_replays_equal_the_launch_plan_and_keep_earlier_outputs():
    m = Block().cuda().eval()
    plain, graphed = dyn.compile(m), _compiled(m)
    xs = [torch.randn(4, 16, 64, device="cuda") for _ in range(5)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a failed recording or an eager fallback warns
        got = [graphed(x) for x in xs]
    st = dyn.stats()
    assert st["cuda_graphs"] == 1 and st["cuda_graph_replays"] == 4 and st["eager_graphs"] == []
    for x, g in zip(xs, got):  # earlier outputs are copies: later replays did not overwrite them
        for a, b, c in zip(g, plain(x), m(x)):
            assert torch.equal(a, b)
            torch.testing.assert_close(a, c)


@torch.no_grad()
def test_an_input_read_in_place_that_moves_runs_through_the_launch_plan():
    def f(x, w):
        return torch.relu(x @ w) * 2

    g = _compiled(f)
    x, w = torch.randn(32, 48, device="cuda"), torch.randn(48, 24, device="cuda")
    for _ in range(3):  # x moves (copied into the graph's buffer), w stays (read in place)
        xi = torch.randn_like(x)
        torch.testing.assert_close(g(xi, w), f(xi, w))
    w2 = w.clone() * -1  # another tensor at another address: the graph must not read the old w
    torch.testing.assert_close(g(x, w2), f(x, w2))
    w.mul_(3)  # in place, same address: the replay reads the new values
    torch.testing.assert_close(g(x, w), f(x, w))
    st = dyn.stats()
    assert st["cuda_graphs"] == 1 and st["cuda_graph_misses"] >= 1


@torch.no_grad()
def test_random_ops_draw_a_new_seed_every_replay():
    def f(x):
        return F.dropout(x, 0.5, training=True)

    g = _compiled(f)
    x = torch.ones(4096, device="cuda")
    torch.manual_seed(0)
    a = [g(x) for _ in range(4)]
    torch.manual_seed(0)
    b = [g(x) for _ in range(4)]
    for u, v in zip(a, b):  # reproducible under a seed
        assert torch.equal(u, v)
    assert not torch.equal(a[2], a[3])  # each replay draws new numbers
    for u in a:
        kept = (u != 0).float().mean().item()
        assert 0.4 < kept < 0.6 and torch.all((u == 0) | (u == 2))
    assert dyn.stats()["cuda_graph_replays"] >= 4
