"""torch.compile(fn, backend="dyn"): TorchDynamo captures, dyn/fx translates its FX graph into the graph
dialect (for training, dyn differentiates it) and dyn's compiler runs it. Results are compared with eager; dyn.stats() shows that dyn's compiled
code ran (compiled_graphs) or why TorchDynamo's graph ran with PyTorch ops instead (eager_graphs, with a
warning: never silently)."""
import copy
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn as nn

import dyn
from conftest import ROOT, has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def compiled_natively(n=1):
    s = dyn.stats()
    return s["compiled_graphs"] == n and not s["eager_graphs"]


def test_registered_with_torchdynamo():
    from torch._dynamo.backends.registry import lookup_backend
    assert lookup_backend("dyn") is dyn.fx.backend


FUNCTIONS = [
    lambda x, y: torch.sin(x) * y + 1,
    lambda x, y: (2 - x) / (1 + y.abs()) + 2 ** y - x // 3 % 2,
    lambda x, y: torch.softmax(x @ y.t(), -1).sum(0),
    lambda x, y: (x > y) & (y > 0),
    lambda x, y: torch.where(x > 0, x, y).amax(-1, keepdim=True),
    lambda x, y: x.view(4, 2, 3).transpose(0, 1).reshape(8, 3).mean(1),
    lambda x, y: torch.cat([x, y], 0)[1:5, ::2],
    lambda x, y: torch.nn.functional.gelu(x).split(2, dim=1)[1] * -y[:, :2],
]


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k", range(len(FUNCTIONS)))
def test_functions(k, device):
    fn = FUNCTIONS[k]
    x, y = torch.randn(8, 3, device=device), torch.randn(8, 3, device=device)
    want = fn(x, y)
    got = torch.compile(fn, backend="dyn", fullgraph=True)(x, y)
    torch.testing.assert_close(got, want)
    assert compiled_natively()


def test_input_updated_in_place_and_view_returned():
    def fn(x, y):
        x.add_(y)
        x *= 2
        return x.t(), y + 1
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    x2 = x.clone()
    want = fn(x2, y)
    got = torch.compile(fn, backend="dyn")(x, y)
    torch.testing.assert_close(x, x2)
    torch.testing.assert_close(got, want)
    assert got[0].data_ptr() == x.data_ptr() and got[0].stride() == want[0].stride()  # a view of x, as eager's
    assert compiled_natively()


@pytest.mark.parametrize("device", DEVICES)
def test_mlp(device):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 4)).eval()
    model.to(device)
    x = torch.randn(5, 16, device=device)
    with torch.no_grad():
        want = model(x)
        got = torch.compile(model, backend="dyn")(x)
    torch.testing.assert_close(got, want)
    assert compiled_natively()


class Block(nn.Module):
    """A pre-norm transformer block: attention with a causal mask, then an MLP."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.heads = heads

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril().logical_not()
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        x = x + self.proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))
        return x + self.mlp(self.ln2(x))


@pytest.mark.parametrize("device", DEVICES)
def test_transformer_block_runs_dyn_code(device):
    model = Block().eval().to(device)
    x = torch.randn(2, 8, 32, device=device)
    with torch.no_grad():
        want = model(x)
        compiled = torch.compile(model, backend="dyn", fullgraph=True)
        got = compiled(x)
        again = compiled(x + 1)  # the same compiled code (TorchDynamo's guards hold)
    torch.testing.assert_close(got, want)
    with torch.no_grad():
        torch.testing.assert_close(again, model(x + 1))
    assert compiled_natively()
    assert dyn.stats()["graphs_compiled"] == 1  # dyn's compiler built the kernel once


def test_node_without_handler_runs_torchdynamo_graph_with_warning():
    def fn(x):
        return torch.searchsorted(torch.arange(6.0), x) + 1  # no dyn handler for searchsorted
    x = torch.randn(6)
    with pytest.warns(UserWarning, match="runs with PyTorch ops, not dyn's compiler: .*searchsorted"):
        got = torch.compile(fn, backend="dyn")(x)
    torch.testing.assert_close(got, fn(x))
    s = dyn.stats()
    assert s["compiled_graphs"] == 0 and len(s["eager_graphs"]) == 1
    assert "searchsorted" in s["eager_graphs"][0]["reason"]


@pytest.mark.parametrize("make", [
    lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh()),
    lambda: Block(d=16, heads=2)], ids=["mlp", "transformer_block"])
def test_training_compiles_forward_and_backward(make):
    """Inputs that require grad: dyn differentiates TorchDynamo's graph; its forward and backward are both
    dyn's code, run by one autograd node."""
    torch.manual_seed(0)
    model = make()
    ref = copy.deepcopy(model)
    x = torch.randn(2, 8, 16)
    out = torch.compile(model, backend="dyn")(x)
    out.pow(2).sum().backward()
    want = ref(x)
    want.pow(2).sum().backward()
    torch.testing.assert_close(out, want)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad)
    s = dyn.stats()
    assert s["compiled_graphs"] == 1 and s["backward_graphs"] == 1 and not s["eager_graphs"], s["eager_graphs"]
    assert s["graphs_compiled"] == 2  # forward and backward, by dyn's compiler


def test_training_graph_without_handler_runs_as_given():
    lin = nn.Linear(4, 4)
    x = torch.randn(3, 4)
    with pytest.warns(UserWarning, match="runs with PyTorch ops.*graph.cumulative has no derivative rule"):
        out = torch.compile(lambda t: torch.cumsum(lin(t), 0), backend="dyn")(x)
    out.sum().backward()
    g = lin.weight.grad.clone()
    lin.zero_grad()
    torch.cumsum(lin(x), 0).sum().backward()
    torch.testing.assert_close(g, lin.weight.grad)
    assert any("cumulative" in e["reason"] for e in dyn.stats()["eager_graphs"])


def test_entry_point_finds_dyn_without_importing_it(tmp_path):
    """An installed dyn is found through pyproject.toml's torch_dynamo_backends entry point: a dist-info
    with that entry point on sys.path, and torch.compile(backend="dyn") in a process that never imports
    dyn itself."""
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    entry = project["entry-points"]["torch_dynamo_backends"]["dyn"]
    info = tmp_path / f"dyn-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: dyn\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text(f"[torch_dynamo_backends]\ndyn = {entry}\n")
    code = textwrap.dedent("""
        import sys, torch
        assert "dyn" not in sys.modules
        x = torch.randn(5)
        got = torch.compile(lambda t: torch.relu(t) * 2, backend="dyn")(x)
        assert torch.equal(got, torch.relu(x) * 2)
        import dyn
        assert dyn.stats()["compiled_graphs"] == 1, dyn.stats()
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.path.join(ROOT, "python")]))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_training_graph_with_a_no_grad_block_and_pad():
    """TorchDynamo writes a `with torch.no_grad()` block as torch._C._set_grad_enabled calls and F.pad as
    torch._C._nn.pad (LLaMA's rotary embedding, GPT-2's loss): translated, the block's ops carry no gradient."""
    def f(x, w):
        with torch.no_grad():
            s = (x * w).abs().amax()
        return torch.nn.functional.pad(x * w / s, (1, 1)).sum(-1)

    x = torch.randn(3, 4)
    w = torch.randn(3, 4, requires_grad=True)
    out = torch.compile(f, backend="dyn")(x, w)
    (g,) = torch.autograd.grad(out.sum(), w)
    w2 = w.detach().requires_grad_(True)
    (want,) = torch.autograd.grad(f(x, w2).sum(), w2)
    torch.testing.assert_close(g, want)
    s = dyn.stats()
    assert s["backward_graphs"] == 1 and not s["eager_graphs"], s["eager_graphs"]
