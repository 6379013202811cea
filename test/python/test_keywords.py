"""Torch's keyword names reach the capture handlers (ops/handlers/keywords.py): every parameter torch lets a
caller name, by the name torch gives it, is one the handler takes (or renames), read from torch's own
signatures and schemas so that a handler added later is checked too; and calls that name their arguments
as torch does capture as one graph with eager's values."""
import torch
import torch.nn.functional as F

import dyn
from dyn.ops.handlers import keywords
from dyn.ops.handlers.tables import METHOD_KEYWORDS, METHODS, TORCH_FUNCS, TORCH_KEYWORDS

# (torch function's or Tensor method's name, its parameter): not taken by name today
KNOWN = {
    ("unflatten", "names"),  # named tensors
    ("addmm", "out_dtype"), ("baddbmm", "out_dtype"),  # a newer argument: the call breaks the graph
    # two schemas with running statistics at different positions
    *(("_native_batch_norm_legit", n) for n in ("running_mean", "running_var", "training", "momentum", "eps")),
    # the recurrent layers' packed-sequence overload, not captured (handlers/recurrent.py)
    *((f, n) for f in ("lstm", "gru", "rnn_tanh", "rnn_relu") for n in ("data", "batch_sizes")),
}


def _unnamed(h, fn=None, method=None):
    hp = keywords.handler_parameters(h, method is not None)
    if hp is None:  # **kwargs: takes any name
        return set()
    r = (TORCH_KEYWORDS.get(fn) if fn is not None else METHOD_KEYWORDS.get(method)) or {}
    return {n for params in keywords.torch_parameters(fn, method) for n, positional in params
            if positional and n not in hp and n not in r}


def test_every_torch_keyword_reaches_its_handler():
    missing = set()
    for fn, h in TORCH_FUNCS.items():
        missing |= {(getattr(fn, "__name__", str(fn)), n) for n in _unnamed(h, fn=fn)}
    for name, h in METHODS.items():
        missing |= {(name, n) for n in _unnamed(h, method=name)}
    assert missing <= KNOWN, sorted(missing - KNOWN)
    assert KNOWN <= missing, f"named now: remove from KNOWN {sorted(KNOWN - missing)}"


def test_renames_follow_torch_positions():
    assert TORCH_KEYWORDS[F.dropout] == {"input": "x"}
    assert TORCH_KEYWORDS[torch.pow] == {"input": "a", "exponent": "b"}
    assert METHOD_KEYWORDS["transpose"] == {"dim0": "a", "dim1": "b"}
    assert METHOD_KEYWORDS["view"]["size"] is None  # the handler's *shape
    # a TorchScript overload on strings (aten::split.str's separator) is not torch.Tensor.split's
    assert "separator" not in METHOD_KEYWORDS.get("split", {})


def _keywords(x, w):
    a = F.dropout(input=x, p=0.0, training=False)
    b = torch.exp(input=a)
    c = torch.split(tensor=b, split_size_or_sections=2, dim=1)[0]
    d = F.pad(input=c, pad=(1, 1)).transpose(dim0=0, dim1=1)
    e = F.embedding(input=torch.tensor([0, 1]), weight=w)
    f = x.view(size=(4, 3)).permute(dims=(1, 0)).reshape(shape=(2, 6))
    return d.sum() + e.sum() + torch.pow(input=x, exponent=2).sum() + x.add(other=x).sum() + f


def test_keyword_calls_capture_as_one_graph():
    fn = _keywords
    x, w = torch.randn(3, 4), torch.randn(5, 2)
    dyn.reset()
    ex = dyn.explain(fn)(x, w)
    assert (ex.graph_count, ex.graph_break_count) == (1, 0), ex.break_reasons[:2]
    dyn.reset()
    torch.testing.assert_close(dyn.compile(fn, fullgraph=True)(x, w), fn(x, w))
    assert dyn.stats()["eager_graphs"] == []


def test_size_keyword_of_factories():
    """torch.zeros(size=...) names the handler's *size (it once reached its dtype: a 0-d tensor, hidden by
    broadcasting)."""
    def f(x):
        return (torch.zeros(size=(3, 4), dtype=x.dtype), torch.ones(size=(2,)), x.new_zeros(size=(1, 4)),
                torch.empty(size=(2, 2)).fill_(3))
    x = torch.randn(3, 4)
    got = dyn.compile(f, fullgraph=True)(x)
    for g, w in zip(got, f(x)):
        assert g.shape == w.shape and torch.equal(g, w)
