import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn
from conftest import BACKENDS


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(nn.Module):
    def __init__(self, d=16, h=32):
        super().__init__()
        self.norm = RMSNorm(d)
        self.ln = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, h), nn.GELU(), nn.Linear(h, d), nn.Dropout(0.1))
        self.register_buffer("shift", torch.randn(d))
        self.act = nn.SiLU()

    def forward(self, x):
        y = self.mlp(self.ln(self.norm(x)))
        return self.act(x + y) + self.shift


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_module_matches_eager_and_shares_parameters(backend, dtype):
    torch.manual_seed(0)
    m = Block().to(dtype).eval()
    cm = dyn.compile(m, backend=backend, fullgraph=True)
    assert [k for k, _ in cm.named_parameters()] == [k for k, _ in m.named_parameters()]
    assert list(cm.state_dict()) == list(m.state_dict())
    assert all(a is b for a, b in zip(cm.parameters(), m.parameters()))
    x = torch.randn(4, 16, dtype=dtype)
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x))
        # parameters are graph inputs, never baked in: an in-place update is seen without recompiling
        m.mlp[0].weight.mul_(2)
        m.shift.add_(1)
        torch.testing.assert_close(cm(x), m(x))
    assert dyn._stats()["captures"] == 1


def test_module_graph_has_parameters_as_inputs():
    m = RMSNorm(8)
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2, 8)
    torch.testing.assert_close(cm(x), m(x))
    g = cm._dyn_forward.graphs[0][0]
    assert len(g.inputs) == 2 and "arg0.weight" in g.input_sources
    assert "dense<" in str(g)  # eps is a constant; the weight is %arg1, not a constant
    assert str(g).count("graph.constant") == 2


def test_module_attribute_change_recompiles():
    m = RMSNorm(8)
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2, 8)
    with torch.no_grad():
        cm(x)
        m.eps = 0.5
        torch.testing.assert_close(cm(x), m(x))
        m.weight = nn.Parameter(torch.randn(8))
        torch.testing.assert_close(cm(x), m(x))


def test_train_mode_dropout_runs_eagerly():
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    cm = dyn.compile(m, backend="eager")
    cm.train()
    assert m.training
    x = torch.randn(3, 4)
    cm(x)  # dropout in training mode is a graph break: eager, no error
    cm.eval()
    assert not m.training
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_with_grad_backward_works(backend):
    m = nn.Linear(4, 3)
    cm = dyn.compile(m, backend=backend)
    x = torch.randn(2, 4)
    cm(x).sum().backward()
    assert m.weight.grad is not None
    torch.testing.assert_close(m.bias.grad, torch.full((3,), 2.0))


class Attention(nn.Module):
    def __init__(self, d=32, h=4):
        super().__init__()
        self.h = h
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln(x)).split(C, dim=-1)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / k.size(-1) ** 0.5)
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return x + self.o(y)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_attention_block(backend, dtype):
    torch.manual_seed(0)
    m = Attention().to(dtype).eval()
    cm = dyn.compile(m, backend=backend, fullgraph=True)
    with torch.no_grad():
        for B, T in [(2, 8), (1, 5)]:
            x = torch.randn(B, T, 32, dtype=dtype)
            torch.testing.assert_close(cm(x), m(x))


def test_parameter_reassigned_inside_sequential_is_seen():
    m = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(3, 4)
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x))
        m[0].weight = nn.Parameter(torch.randn(4, 4))
        torch.testing.assert_close(cm(x), m(x))
        m[2].bias = nn.Parameter(torch.randn(2))
        torch.testing.assert_close(cm(x), m(x))


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 1)})
        self.cfg = {"scale": 0.5}

    def forward(self, x):
        for i in range(len(self.layers)):
            x = torch.relu(self.layers[i](x))
        for layer in self.layers[1:]:
            x = x + layer(x)
        return self.heads["a"](x) * self.cfg["scale"], self.heads["b"](x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_list_and_dict(backend):
    m = Stack().eval()
    cm = dyn.compile(m, backend=backend, fullgraph=True)
    x = torch.randn(5, 4)
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x))
        m.layers[1] = nn.Linear(4, 4)
        m.cfg["scale"] = 2.0
        torch.testing.assert_close(cm(x), m(x))


RECURRENT = {
    "lstm": lambda: torch.nn.LSTM(8, 16),
    "lstm_2_layers_batch_first": lambda: torch.nn.LSTM(8, 16, num_layers=2, batch_first=True),
    "lstm_bidirectional": lambda: torch.nn.LSTM(8, 16, num_layers=2, bidirectional=True),
    "lstm_no_bias": lambda: torch.nn.LSTM(8, 16, bias=False),
    "gru_bidirectional": lambda: torch.nn.GRU(8, 16, num_layers=2, bidirectional=True),
    "rnn_tanh": lambda: torch.nn.RNN(8, 16),
    "rnn_relu_batch_first": lambda: torch.nn.RNN(8, 16, nonlinearity="relu", batch_first=True),
}


@pytest.mark.parametrize("name", sorted(RECURRENT))
def test_recurrent_layers(name):
    """nn.LSTM/GRU/RNN: one graph, a library call per layer and direction (graph.lstm/gru/rnn), the layers
    chained and the reverse directions run on the input flipped in time; eager's values, initial states
    given or not, batched or not."""
    torch.manual_seed(0)
    m = RECURRENT[name]().eval()
    x = torch.randn(3, 5, 8)
    f = lambda x: m(x)  # noqa: E731
    with torch.no_grad():
        ex = dyn.explain(f)(x)
        assert (ex.graph_count, ex.graph_break_count) == (1, 0), ex.break_reasons[:1]
        dyn.reset()
        got, want = dyn.compile(f)(x), f(x)
        assert dyn.stats()["eager_graphs"] == []
        torch.testing.assert_close(got, want)
        layers = m.num_layers * (2 if m.bidirectional else 1)
        h0 = torch.randn(layers, 3 if m.batch_first else 5, 16)
        state = (h0, torch.randn_like(h0)) if isinstance(m, torch.nn.LSTM) else h0
        torch.testing.assert_close(dyn.compile(lambda x, s: m(x, s))(x, state), m(x, state))
        torch.testing.assert_close(dyn.compile(f)(x[0]), f(x[0]))  # unbatched


def test_recurrent_layers_not_captured():
    # projections (proj_size) and packed sequences break the graph with their reason
    m = torch.nn.LSTM(8, 16, proj_size=4).eval()
    x = torch.randn(3, 5, 8)
    with torch.no_grad():
        ex = dyn.explain(lambda x: m(x))(x)
        assert ex.graph_break_count == 1 and "proj_size" in ex.break_reasons[0]["reason"]
        torch.testing.assert_close(dyn.compile(lambda x: m(x))(x), m(x))
        for rnn in (torch.nn.GRU(8, 16).eval(), torch.nn.LSTM(8, 16).eval()):
            def packed(x, lengths, rnn=rnn):
                p = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
                return torch.nn.utils.rnn.pad_packed_sequence(rnn(p)[0])[0]
            lengths = torch.tensor([3, 2, 3, 1, 2])  # x is [T=3, B=5, 8]
            ex = dyn.explain(packed)(x, lengths)
            assert ex.graph_break_count >= 1  # packing (data-dependent) breaks before the layer
            torch.testing.assert_close(dyn.compile(packed)(x, lengths), packed(x, lengths))


CELLS = {
    "lstm_cell": lambda: torch.nn.LSTMCell(8, 16),
    "lstm_cell_no_bias": lambda: torch.nn.LSTMCell(8, 16, bias=False),
    "gru_cell": lambda: torch.nn.GRUCell(8, 16),
    "rnn_cell_tanh": lambda: torch.nn.RNNCell(8, 16),
    "rnn_cell_relu": lambda: torch.nn.RNNCell(8, 16, nonlinearity="relu"),
}


@pytest.mark.parametrize("name", sorted(CELLS))
def test_recurrent_cells(name):
    """nn.LSTMCell/GRUCell/RNNCell: ATen's composition (two linear layers, the gates), one graph compiled,
    eager's values, batched or not, with and without a given state."""
    torch.manual_seed(0)
    m = CELLS[name]().eval()
    x = torch.randn(3, 8)
    h = torch.randn(3, 16)
    state = (h, torch.randn(3, 16)) if isinstance(m, torch.nn.LSTMCell) else h
    with torch.no_grad():
        for f, args in ((lambda x: m(x), (x,)), (lambda x, s: m(x, s), (x, state)), (lambda x: m(x), (x[0],))):
            dyn.reset()
            got = dyn.compile(f, fullgraph=True)(*args)
            assert dyn.stats()["eager_graphs"] == []
            torch.testing.assert_close(got, f(*args))
