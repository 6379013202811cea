"""Handlers of the recurrent layers nn.LSTM, nn.GRU and nn.RNN call (torch.lstm, torch.gru, torch.rnn_tanh,
torch.rnn_relu through torch._VF): one graph.lstm / gru / rnn library call per layer and direction, the
layers chained, a reverse direction run on the input flipped in time, the final states concatenated as
eager stacks them ([layers * directions, B, H]). Not captured: packed sequences, LSTM projections
(proj_size), dropout between layers in training (random). The cells (nn.LSTMCell, GRUCell, RNNCell: one
step) are ATen's compositions of two linear layers and the gates, written here with the same ops."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar
from .rearrange import H as REARRANGE
from .registry import torch_function

_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _recurrent(kind):
    fn = getattr(torch, kind)
    op = "rnn" if kind.startswith("rnn_") else kind

    def h(o, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first=False):
        # the packed overload is (data, batch_sizes, hx, params, ...): hx is then a tensor for lstm, params
        # one (the state) for the others
        packed = isinstance(hx, TensorVar) if kind == "lstm" else not isinstance(params, (list, tuple))
        if not isinstance(input, TensorVar) or packed:
            raise Unsupported(f"{kind} over a packed sequence")
        states = list(hx) if kind == "lstm" else [hx]
        params = list(params)
        if input.meta.dim() != 3 or not all(isinstance(t, TensorVar) for t in states + params):
            raise Unsupported(f"{kind} of other than a batched input, its states and weights")
        per, nd = (4 if has_biases else 2), (2 if bidirectional else 1)
        if len(params) != num_layers * nd * per:
            raise Unsupported(f"{kind} with projections (proj_size)")
        if train and dropout > 0 and num_layers > 1:
            raise Unsupported(f"{kind} with dropout between layers in training")
        time = 1 if batch_first else 0
        x, finals = input, [[] for _ in states]
        for layer in range(num_layers):
            outs = []
            for d in range(nd):
                k = layer * nd + d
                w = params[k * per:(k + 1) * per]
                if not has_biases:  # zeros: the same sums
                    w = w + [o.full((w[0].meta.shape[0],), 0, w[0].meta.dtype)] * 2
                xin = x if d == 0 else REARRANGE["flip"](o, x, [time])
                st = [o.slice(s, 0, k, k + 1, 1) for s in states]
                attrs = {"relu": kind == "rnn_relu", "batch_first": bool(batch_first)} if op == "rnn" else \
                    {"batch_first": bool(batch_first)}
                r = o.registered(op, fn, (xin, *st, *w), attrs, call=lambda a, *rest, _n=len(st): fn(
                    a, tuple(rest[:_n]) if kind == "lstm" else rest[0], list(rest[_n:]), True, 1, 0.0, False, False,
                    bool(batch_first)))
                outs.append(r[0] if d == 0 else REARRANGE["flip"](o, r[0], [time]))
                for j in range(len(states)):
                    finals[j].append(r[1 + j])
            x = outs[0] if nd == 1 else o.cat(outs, 2)
        return (x, *[f[0] if len(f) == 1 else o.cat(f, 0) for f in finals])
    return h


def _gates(o, x, h, w_ih, w_hh, b_ih, b_hh, n):
    """ATen's cells: linear(h, w_hh, b_hh) and linear(x, w_ih, b_ih), each cut into n gates along dim 1."""
    for t in (x, h, w_ih, w_hh) + tuple(b for b in (b_ih, b_hh) if b is not None):
        if not isinstance(t, TensorVar):
            raise Unsupported("recurrent cell of other than tensors")
    if x.meta.dim() != 2:
        raise Unsupported("recurrent cell of other than a batched input")
    size = w_hh.meta.shape[1]
    cut = lambda v: [o.slice(v, 1, k * size, (k + 1) * size, 1) for k in range(n)]  # noqa: E731
    return cut(o.linear(x, w_ih, b_ih)), cut(o.linear(h, w_hh, b_hh))


def _lstm_cell(o, input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    h, c = hx
    xi, hh = _gates(o, input, h, w_ih, w_hh, b_ih, b_hh, 4)
    g = [o.binary("add", a, b) for a, b in zip(hh, xi)]
    i, f, cell, out = o.unary("sigmoid", g[0]), o.unary("sigmoid", g[1]), o.unary("tanh", g[2]), o.unary("sigmoid", g[3])
    cy = o.binary("add", o.binary("mul", f, c), o.binary("mul", i, cell))
    return o.binary("mul", out, o.unary("tanh", cy)), cy


def _gru_cell(o, input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    xi, hh = _gates(o, input, hx, w_ih, w_hh, b_ih, b_hh, 3)
    reset = o.unary("sigmoid", o.binary("add", hh[0], xi[0]))
    update = o.unary("sigmoid", o.binary("add", hh[1], xi[1]))
    new = o.unary("tanh", o.binary("add", xi[2], o.binary("mul", hh[2], reset)))
    return o.binary("add", o.binary("mul", o.binary("sub", hx, new), update), new)


def _rnn_cell(activation):
    def h(o, input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        xi, hh = _gates(o, input, hx, w_ih, w_hh, b_ih, b_hh, 1)
        return o.unary(activation, o.binary("add", hh[0], xi[0]))
    return h


torch_function.all({getattr(torch, k): _recurrent(k) for k in _GATES})
torch_function.all({torch.lstm_cell: _lstm_cell, torch.gru_cell: _gru_cell, torch.rnn_tanh_cell: _rnn_cell("tanh"),
                    torch.rnn_relu_cell: _rnn_cell("relu")})
