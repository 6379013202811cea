"""Handlers of the recurrent layers nn.LSTM, nn.GRU and nn.RNN call (torch.lstm, torch.gru, torch.rnn_tanh,
torch.rnn_relu through torch._VF): one graph.lstm / gru / rnn library call per layer and direction, the
layers chained, a reverse direction run on the input flipped in time, the final states concatenated as
eager stacks them ([layers * directions, B, H]). Not captured: packed sequences, LSTM projections
(proj_size), dropout between layers in training (random)."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar
from .rearrange import H as REARRANGE

_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _recurrent(kind):
    fn = getattr(torch, kind)
    op = "rnn" if kind.startswith("rnn_") else kind

    def h(o, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first=False):
        if not isinstance(input, TensorVar) or isinstance(hx, TensorVar) == (kind == "lstm"):
            raise Unsupported(f"{kind} over a packed sequence")  # the other overload: (data, batch_sizes, ...)
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


TORCH = {getattr(torch, k): _recurrent(k) for k in _GATES}
