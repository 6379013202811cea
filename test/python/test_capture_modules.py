"""nn.Modules: containers, custom forwards, buffers, hooks, train/eval, state dicts and gradients, each
compiled with dyn and compared with eager PyTorch."""
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn
from capture_helpers.compare import same, captures
from conftest import BACKENDS


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def check_module(m, *inputs, backend="eager", fullgraph=False, grad=False):
    cm = dyn.compile(m, backend=backend, fullgraph=fullgraph)
    assert list(cm.state_dict()) == list(m.state_dict())
    ctx = torch.enable_grad() if grad else torch.no_grad()
    with ctx:
        for _ in range(2):
            same(cm(*inputs), m(*inputs))
    return cm


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_sequential_mlp(backend):
    m = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))
    check_module(m, torch.randn(5, 6), backend=backend, fullgraph=True)


class _ListNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = x + layer(x) * (i + 1)
        return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_modulelist_loop(backend):
    check_module(_ListNet(), torch.randn(2, 4), backend=backend, fullgraph=True)


class _DictNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)})

    def forward(self, x, head):
        return self.heads[head](x)


def test_module_moduledict_select():
    m = _DictNet()
    cm = dyn.compile(m, backend="eager", fullgraph=True)
    x = torch.randn(2, 4)
    with torch.no_grad():
        for h in ("cls", "reg", "cls"):
            same(cm(x, h), m(x, h))
    assert captures() == 2


class _Residual(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_custom_forward_with_submodules(backend):
    m = nn.Sequential(_Residual(), _Residual())
    check_module(m, torch.randn(3, 8), backend=backend, fullgraph=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_layernorm(backend):
    m = nn.LayerNorm(6)
    with torch.no_grad():
        m.weight.normal_()
        m.bias.normal_()
    check_module(m, torch.randn(2, 3, 6), backend=backend, fullgraph=True)


class _EmbedBag(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.proj = nn.Linear(4, 2)

    def forward(self, ids):
        return self.proj(self.emb(ids).mean(1))


def test_module_embedding():
    check_module(_EmbedBag(), torch.randint(0, 10, (3, 5)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_dropout_in_eval(backend):
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.ReLU()).eval()
    check_module(m, torch.randn(3, 4), backend=backend, fullgraph=True)


class _DropBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.drop = nn.Dropout(1.0)  # deterministic in training: everything is zeroed

    def forward(self, x):
        return self.drop(self.lin(x)) + 1


def test_module_train_eval_switching():
    m = _DropBranch()
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2, 4)
    with torch.no_grad():
        for mode in (False, True, False, True):
            cm.train(mode)
            assert m.training == mode and m.drop.training == mode
            same(cm(x), m(x))
        cm.eval()
        assert not m.training and not m.drop.training
        same(cm(x), m(x))


def test_module_state_dict_keys_and_load():
    m = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    m.register_buffer("extra", torch.ones(2))
    cm = dyn.compile(m, backend="eager")
    assert list(cm.state_dict()) == list(m.state_dict())
    x = torch.randn(2, 3)
    with torch.no_grad():
        same(cm(x), m(x))
        sd = {k: torch.randn_like(v) for k, v in m.state_dict().items()}
        cm.load_state_dict(sd)
        for k, v in m.state_dict().items():
            torch.testing.assert_close(v, sd[k])
        same(cm(x), m(x))


def test_module_parameter_sharing_and_optimizer_step():
    m = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.Linear(3, 1))
    cm = dyn.compile(m, backend="eager")
    assert all(a is b for a, b in zip(cm.parameters(), m.parameters()))
    opt = torch.optim.SGD(cm.parameters(), lr=0.5)
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    for _ in range(3):
        opt.zero_grad()
        loss = ((cm(x) - y) ** 2).mean()
        ref = ((m(x) - y) ** 2).mean()
        same(loss, ref)
        loss.backward()
        opt.step()
    with torch.no_grad():
        same(cm(x), m(x))


class _WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.randn(4))
        self.register_buffer("inv_std", torch.rand(4) + 0.5)
        self.lin = nn.Linear(4, 2)

    def forward(self, x):
        return self.lin((x - self.mean) * self.inv_std)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_buffers_are_inputs(backend):
    m = _WithBuffers()
    cm = check_module(m, torch.randn(3, 4), backend=backend, fullgraph=True)
    m.mean.add_(1)
    x = torch.randn(3, 4)
    with torch.no_grad():
        same(cm(x), m(x))
    assert captures() == 1


class _KwargForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, *, mask=None, scale=1.0):
        h = self.lin(x) * scale
        if mask is not None:
            h = h.masked_fill(mask, 0.0)
        return h


def test_module_forward_with_keyword_arguments():
    m = _KwargForward()
    cm = dyn.compile(m, backend="eager", fullgraph=True)
    x = torch.randn(2, 4)
    mask = torch.rand(2, 4) > 0.5
    with torch.no_grad():
        same(cm(x), m(x))
        same(cm(x, mask=mask, scale=2.0), m(x, mask=mask, scale=2.0))


class _DictOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 3)
        self.dec = nn.Linear(3, 4)

    def forward(self, x):
        z = self.enc(x)
        return {"z": z, "recon": self.dec(z), "loss_terms": (z.pow(2).mean(),)}


def test_module_returns_dict():
    check_module(_DictOut(), torch.randn(2, 4), fullgraph=True)


class _HelperMethod(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(4, 4)
        self.k = nn.Linear(4, 4)

    def scores(self, x):
        return self.q(x) @ self.k(x).t() / math.sqrt(x.size(-1))

    def forward(self, x):
        return torch.softmax(self.scores(x), dim=-1) @ x


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_helper_method(backend):
    check_module(_HelperMethod(), torch.randn(5, 4), backend=backend, fullgraph=True)


class _Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Linear(4, 4)
        self.seq = nn.Sequential(self.shared, nn.ReLU(), self.shared)

    def forward(self, x):
        return self.seq(x) + self.shared(x)


def test_module_shared_submodule_used_twice():
    m = _Tied()
    cm = check_module(m, torch.randn(3, 4), fullgraph=True)
    assert list(cm.state_dict()) == list(m.state_dict())
    with torch.no_grad():
        m.shared.weight.mul_(0.5)
        x = torch.randn(3, 4)
        same(cm(x), m(x))


def test_module_identity_flatten():
    m = nn.Sequential(nn.Identity(), nn.Flatten(), nn.Linear(12, 6))
    check_module(m, torch.randn(2, 3, 4), fullgraph=True)


def test_module_unflatten():
    m = nn.Sequential(nn.Linear(4, 6), nn.Unflatten(1, (2, 3)))
    check_module(m, torch.randn(2, 4), fullgraph=True)


class _ParamList(nn.Module):
    def __init__(self):
        super().__init__()
        self.ws = nn.ParameterList([nn.Parameter(torch.randn(3, 3)) for _ in range(3)])
        self.b = nn.Parameter(torch.zeros(3))

    def forward(self, x):
        for w in self.ws:
            x = torch.tanh(x @ w)
        return x + self.b


def test_module_parameter_list():
    check_module(_ParamList(), torch.randn(2, 3), fullgraph=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_gradients_match_eager(backend):
    torch.manual_seed(1)
    m1 = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 1))
    m2 = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 1))
    m2.load_state_dict(m1.state_dict())
    cm = dyn.compile(m1, backend=backend)
    x = torch.randn(5, 4)
    cm(x).sum().backward()
    m2(x).sum().backward()
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        torch.testing.assert_close(p1.grad, p2.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_batchnorm_eval(backend):
    m = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU())
    with torch.no_grad():
        m[1].running_mean.normal_()
        m[1].running_var.uniform_(0.5, 2.0)
    m.eval()
    check_module(m, torch.randn(3, 4), backend=backend, fullgraph=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_activation_zoo(backend):
    m = nn.Sequential(nn.Linear(5, 5), nn.GELU(), nn.SiLU(), nn.LeakyReLU(0.1), nn.Sigmoid(), nn.Tanh(),
                      nn.Hardtanh(), nn.ReLU6(), nn.Softmax(dim=-1), nn.LogSoftmax(dim=-1))
    check_module(m, torch.randn(4, 5), backend=backend, fullgraph=True)


class _Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = dyn.compile(nn.Linear(3, 3), backend="eager")
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        return self.head(torch.relu(self.inner(x)))


def test_module_containing_a_compiled_module():
    m = _Outer()
    cm = check_module(m, torch.randn(2, 3), fullgraph=True)
    assert list(cm.state_dict()) == list(m.state_dict())


class _ScaledLinear(nn.Linear):
    def forward(self, x):
        return super().forward(x) * 2


def test_module_subclass_calls_super_forward():
    check_module(_ScaledLinear(3, 2), torch.randn(4, 3), fullgraph=True)


class _WithProperty(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self._temp = 2.0

    @property
    def temperature(self):
        return self._temp * 0.5

    def forward(self, x):
        return torch.softmax(self.lin(x) / self.temperature, dim=-1)


def test_module_property():
    check_module(_WithProperty(), torch.randn(2, 3), fullgraph=True)


def test_module_forward_hooks_respected():
    m = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
    m[0].register_forward_hook(lambda mod, inp, out: out * 2)
    m[2].register_forward_pre_hook(lambda mod, inp: (inp[0] + 1,))
    check_module(m, torch.randn(4, 3))


def test_module_dtype_cast_after_compile():
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2, 3)
    with torch.no_grad():
        same(cm(x), m(x))
        m.double()
        same(cm(x.double()), m(x.double()))


class _PlainListOfModules(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(3, 3)
        self.blocks = [self.first, nn.Tanh(), self.first]  # a plain list: no new registration

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def test_module_plain_python_list_of_modules():
    check_module(_PlainListOfModules(), torch.randn(2, 3), fullgraph=True)


class _VarArgs(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, *xs, reduce="sum"):
        hs = [self.lin(x) for x in xs]
        return torch.stack(hs).sum(0) if reduce == "sum" else torch.stack(hs).mean(0)


def test_module_forward_with_varargs():
    m = _VarArgs()
    cm = dyn.compile(m, backend="eager", fullgraph=True)
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    with torch.no_grad():
        same(cm(a, b), m(a, b))
        same(cm(a, b, a, reduce="mean"), m(a, b, a, reduce="mean"))


def test_module_run_only_mode():
    m = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2, 3)
    with torch.no_grad():
        same(cm(x), m(x))
        n = captures()
        with dyn.run():
            same(cm(x), m(x))
            y = torch.randn(5, 3)
            same(cm(y), m(y))
        assert captures() == n
