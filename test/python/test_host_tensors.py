"""Tensors eager holds on the CPU inside a graph on CUDA (graph.Node.host): made by a factory with no
device (torch.tensor(n), torch.arange(n)), read from a CPU tensor argument, or moved with .cpu(). dyn
computes them on the GPU with the rest of the graph and gives back CPU tensors where eager has them: one
graph, compiled, each output on eager's device with eager's values.

Skipped where torch sees no CUDA device (CI); run on the GPU machine with scripts/gpu_machine.sh."""
import math
import warnings

import pytest
import torch

import dyn

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _same(got, want):
    if isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor) and got.device == want.device and got.dtype == want.dtype, \
            (got.device, want.device)
        torch.testing.assert_close(got, want)
        return
    assert type(got) is type(want) and len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)


def _check(fn, *args):
    """fn compiled is one native graph with eager's results; returns the compiled function. Each run gets
    its own copies of args (fn may update them)."""
    def fresh():
        return [a.clone() for a in args]
    want = fn(*fresh())
    dyn.reset()
    ex = dyn.explain(fn)(*fresh())
    assert (ex.graph_count, ex.graph_break_count) == (1, 0), ex.break_reasons[:2]
    dyn.reset()
    cf = dyn.compile(fn, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager warns
        got = cf(*fresh())
    _same(got, want)
    assert dyn.stats()["eager_graphs"] == []
    return cf


def test_cpu_scalar_tensor_scales_cuda_tensor():
    def f(x):  # DeBERTa's scale: torch.sqrt(torch.tensor(d, dtype=torch.float) * factor)
        return x / torch.sqrt(torch.tensor(x.size(-1), dtype=torch.float) * 3)
    _check(f, torch.randn(4, 16, device="cuda"))


def test_cpu_index_computation_moved_to_cuda():
    emb = torch.nn.Embedding(32, 4).cuda()

    def f(x):  # MPNet's relative position buckets: made on the CPU, moved with .to(x.device)
        q = torch.arange(x.size(1), dtype=torch.long)[:, None]
        k = torch.arange(x.size(1), dtype=torch.long)[None, :]
        n = torch.abs(k - q)
        large = 4 + (torch.log(n.float() / 4) / math.log(8) * 4).to(torch.long)
        large = torch.min(large, torch.full_like(large, 15))
        bucket = torch.where(n < 4, n, large).to(x.device)
        return x[:, :, None, :1] + emb(bucket)
    with torch.no_grad():
        _check(f, torch.randn(2, 8, 4, device="cuda"))


def test_type_as_and_device_reads():
    def f(x):
        t = torch.tensor(7).type_as(x)  # moved to x's device and dtype
        h = torch.arange(3)
        assert h.device.type == "cpu" and h.is_cpu and not h.is_cuda and t.is_cuda
        return x * t + h.to(x.device).to(x.dtype)
    _check(f, torch.randn(5, 3, device="cuda"))


def test_outputs_on_the_cpu():
    def f(x):
        return x * 2, torch.arange(4) + 1, (x + 1).cpu(), torch.zeros_like(torch.ones(2, 3))
    _check(f, torch.randn(3, device="cuda"))


def test_cpu_tensor_argument_read_and_updated():
    def f(x, n):
        y = x + n.to(x.device)
        n.add_(1)
        return y, n * 2
    cf = _check(f, torch.randn(4, device="cuda"), torch.tensor(3.0))
    n2 = torch.tensor(5.0)
    y, twice = cf(torch.ones(4, device="cuda"), n2)
    assert n2.item() == 6.0 and twice.device.type == "cpu" and twice.item() == 12.0
    torch.testing.assert_close(y, torch.full((4,), 6.0, device="cuda"))


def test_cpu_random_draw_breaks():
    def f(x):  # LayerDrop in eval: eager draws from the CPU's generator, then leaves the number unused
        torch.rand([])
        return x * 2
    ex = dyn.explain(f)(torch.randn(3, device="cuda"))
    assert ex.graph_break_count == 1 and "random draw on cpu" in ex.break_reasons[0]["reason"], \
        ex.break_reasons


def test_cpu_and_cuda_tensors_in_one_op_raise_as_eager():
    def f(x):  # eager: "Expected all tensors to be on the same device"
        return x + torch.arange(x.numel(), dtype=x.dtype).reshape(x.shape)
    x = torch.randn(2, 3, device="cuda")
    with pytest.raises(RuntimeError):
        f(x)
    dyn.reset()
    with pytest.raises(RuntimeError):  # not captured: the op runs eagerly and raises
        dyn.compile(f)(x)
    assert dyn.stats()["graph_breaks"] >= 1
