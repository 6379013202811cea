"""What model libraries (transformers) do around their forwards, captured as one graph and compared with
eager: compiler queries (`torch.compiler.is_compiling()` answers as under TorchDynamo), `@wraps`
decorators with `*args, **kwargs`, mutation of the frame's own `**kwargs` (a new dict per call) and
of an inlined callee's, `**kwargs` forwarded through several levels."""
import functools

import pytest
import torch

import dyn


def graphs(cf):
    cf = getattr(cf, "_dyn_forward", cf)
    return [g for g, k, e in cf.graphs if g is not None]


def breaks(cf):
    return [b["reason"] for b in getattr(cf, "_dyn_forward", cf).breaks]


def one_graph(fn, *args, calls=2, **kwargs):
    """fn compiled: one graph, no break, results equal eager's on every call."""
    cf = dyn.compile(fn, backend="eager")
    for _ in range(calls):
        got, want = cf(*args, **kwargs), fn(*args, **kwargs)
        torch.testing.assert_close(got, want)
    assert breaks(cf) == [] and len(graphs(cf)) == 1
    return cf


def test_is_compiling_is_true_while_capturing():
    def f(x):
        if torch.compiler.is_compiling():
            return x + 1
        return x - 1
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    # TorchDynamo's answer: the compiled code takes the compiling side, eager the other
    torch.testing.assert_close(cf(x), x + 1)
    torch.testing.assert_close(f(x), x - 1)
    assert breaks(cf) == [] and len(graphs(cf)) == 1


def test_scripting_and_tracing_queries_are_false():
    def f(x):
        if torch.jit.is_scripting() or torch.jit.is_tracing() or torch.compiler.is_exporting():
            return x - 1
        return x * 2
    one_graph(f, torch.randn(3))


def test_wraps_decorator_with_kwargs_top_frame():
    def deco(func):
        @functools.wraps(func)
        def wrapper(self, *args, **kwargs):
            scale = kwargs.pop("scale", 2.0)  # the frame's own **kwargs: mutating it is local
            kwargs["bias"] = kwargs.get("bias", 0.0) + 1
            return func(self, *args, **kwargs) * scale
        return wrapper

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        @deco
        def forward(self, x, bias=0.0):
            return self.lin(x) + bias

    m, x = M(), torch.randn(2, 4)
    cm = dyn.compile(m, backend="eager")
    kw = {"scale": 3.0, "bias": 0.5}
    for _ in range(2):
        torch.testing.assert_close(cm(x, **kw), m(x, **kw))
        torch.testing.assert_close(cm(x), m(x))
    assert kw == {"scale": 3.0, "bias": 0.5}  # the caller's dict is not the frame's
    assert breaks(cm) == [] and len(graphs(cm)) == 2  # two keyword signatures


def test_kwargs_dict_guarded_by_keys_and_items():
    def f(x, **kw):
        kw.setdefault("k", 1)
        return x * kw["k"] + len(kw)
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    for kw in ({}, {"k": 2}, {"k": 2}, {"k": 3}, {"k": 2, "j": None}):
        torch.testing.assert_close(cf(x, **kw), f(x, **kw))
    assert breaks(cf) == []
    assert len(graphs(cf)) == 4  # {} / k=2 / k=3 / k=2,j: the repeated call hits


def test_inlined_callee_mutates_its_kwargs():
    def inner(x, **kwargs):
        kwargs["y"] = kwargs.pop("z") * 2
        kwargs.update(w=1)
        return x + kwargs["y"] + kwargs["w"]

    def outer(x, **kwargs):
        return inner(x, z=3, **kwargs)
    one_graph(outer, torch.randn(3))
    one_graph(outer, torch.randn(3), q=1)


def test_kwargs_forwarded_through_levels():
    def leaf(x, *, scale=1.0, shift=0.0, **unused):
        return x * scale + shift

    def mid(x, *args, **kwargs):
        return leaf(x, *args, **kwargs) + 1

    def top(x, **kwargs):
        kwargs["shift"] = kwargs.get("shift", 0.5)
        return mid(x, **kwargs)
    x = torch.randn(4)
    one_graph(top, x, scale=2.0)
    one_graph(top, x, scale=2.0, shift=1.0, other="ignored")


def test_kwargs_tensor_items_are_inputs():
    def f(x, **kw):
        return x + kw.pop("t") * kw.get("k", 1)
    cf = dyn.compile(f, backend="eager")
    x, t = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(cf(x, t=t), f(x, t=t))
    t2 = torch.randn(3)
    torch.testing.assert_close(cf(x, t=t2), f(x, t=t2))  # a new tensor, the same graph
    assert len(graphs(cf)) == 1


@pytest.mark.parametrize("pop_default", [True, False])
def test_kwargs_pop_missing_key(pop_default):
    def f(x, **kw):
        return x + (kw.pop("a", 5) if pop_default else kw.pop("a"))
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(2)
    if pop_default:
        torch.testing.assert_close(cf(x), f(x))
    else:
        with pytest.raises(KeyError):
            cf(x)


class _Cfg:
    def __init__(self, scale, act="relu"):
        self.scale, self.act = scale, act


class _OtherCfg(_Cfg):
    pass


def test_plain_object_argument_guarded_by_type_and_what_was_read():
    # a new config object per call with the same contents hits the same graph; a changed attribute or
    # another class captures again (its attributes are guarded one by one, its type exactly)
    def f(x, cfg):
        y = x * cfg.scale
        return torch.relu(y) if isinstance(cfg, _OtherCfg) or cfg.act == "relu" else torch.tanh(y)
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(4)
    for cfg in (_Cfg(2.0), _Cfg(2.0), _Cfg(3.0), _Cfg(2.0, "tanh"), _OtherCfg(2.0, "tanh"), _Cfg(2.0)):
        torch.testing.assert_close(cf(x, cfg), f(x, cfg))
    assert breaks(cf) == [] and len(graphs(cf)) == 4


def test_plain_objects_in_a_list_argument():
    def f(x, layers):
        for cfg in layers:
            x = x * cfg.scale
        return x
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    for k in (2.0, 2.0, 5.0):
        layers = [_Cfg(k), _Cfg(1.5)]
        torch.testing.assert_close(cf(x, layers), f(x, layers))
    assert len(graphs(cf)) == 2


def test_parameterless_module_made_inside_forward():
    # transformers' BertForMaskedLM makes its loss module in forward: loss_fct = CrossEntropyLoss()
    def f(logits):
        act = torch.nn.GELU(approximate="tanh")
        return torch.nn.LogSoftmax(dim=-1)(act(logits)).mean()
    logits = torch.randn(2, 5, 7, requires_grad=True)
    ref = logits.detach().clone().requires_grad_()
    cf = one_graph(f, logits)
    cf(logits).backward()
    f(ref).backward()
    torch.testing.assert_close(logits.grad, ref.grad)


class _Act(torch.nn.Module):
    """transformers' activations: ACT2FN["silu"] makes one at every call."""
    def __init__(self, slope=1.0):
        super().__init__()
        self.slope = slope

    def forward(self, x):
        return torch.nn.functional.silu(x) * self.slope


_MADE = []


class _Counted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        global _MADE
        _MADE = _MADE + [1]  # a side effect eager repeats at every call

    def forward(self, x):
        return x + len(_MADE)


def test_user_module_made_inside_forward():
    """A user's module class made inside forward from constant arguments is made once while capturing; one
    whose __init__ assigns a global is not (eager makes it, and changes the global, at every call)."""
    cf = one_graph(lambda x: _Act(0.5)(x) + _Act()(x), torch.randn(4))
    x = torch.randn(4)
    torch.testing.assert_close(cf(x), _Act(0.5)(x) + _Act()(x))
    f = lambda x: _Counted()(x) * 2  # noqa: E731
    cg = dyn.compile(f, backend="eager")
    before = len(_MADE)
    got = [cg(x) for _ in range(3)]
    assert len(_MADE) == before + 3
    torch.testing.assert_close(got[-1], (x + len(_MADE)) * 2)


def test_module_with_parameters_made_inside_forward_is_not_captured():
    def f(x):
        return torch.nn.Linear(3, 3)(x)  # random weights drawn at every call: eager's
    torch.manual_seed(0)
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(2, 3)
    torch.manual_seed(1)
    got = cf(x)
    torch.manual_seed(1)
    want = f(x)
    torch.testing.assert_close(got, want)
    assert any("parameters" in r for r in breaks(cf))


def test_inspect_signature_of_a_method():
    # transformers' apply_chunking_to_forward: len(inspect.signature(forward_fn).parameters)
    import inspect

    class M(torch.nn.Module):
        def chunk(self, h):
            return h * 2

        def forward(self, x):
            n = len(inspect.signature(self.chunk).parameters)
            return self.chunk(x) + n
    m = M()
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(cm(x), m(x))
    assert breaks(cm) == [] and len(graphs(cm)) == 1


def test_one_object_through_two_paths_stays_one():
    # read through the second path, the first answered: the two must stay one object to hit
    def f(x, a, b):
        return x * a[0] + x * b[0]
    cf = dyn.compile(f, backend="eager")
    x, same_list = torch.ones(2), [2.0]
    torch.testing.assert_close(cf(x, same_list, same_list), f(x, same_list, same_list))
    a, b = [2.0], [5.0]
    torch.testing.assert_close(cf(x, a, b), f(x, a, b))
    t = [torch.full((2,), 3.0)]
    torch.testing.assert_close(cf(x, t, t), f(x, t, t))  # one traced copy for both
    t1, t2 = [torch.full((2,), 3.0)], [torch.full((2,), -1.0)]
    torch.testing.assert_close(cf(x, t1, t2), f(x, t1, t2))

    def g(x, layers):
        return x * layers[0].scale + layers[1].scale
    cg = dyn.compile(g, backend="eager")
    o = _Cfg(2.0)
    torch.testing.assert_close(cg(x, [o, o]), g(x, [o, o]))
    two = [_Cfg(2.0), _Cfg(7.0)]
    torch.testing.assert_close(cg(x, two), g(x, two))


def test_written_object_distinct_from_the_others():
    def f(x, a, b):
        a.scale = a.scale + 1  # a write to one plain object, a read of another
        return x * b.scale
    cf = dyn.compile(f, backend="eager")
    x = torch.ones(2)
    a, b, ra, rb = _Cfg(1.0), _Cfg(1.0), _Cfg(1.0), _Cfg(1.0)
    torch.testing.assert_close(cf(x, a, b), f(x, ra, rb))
    one, ref = _Cfg(1.0), _Cfg(1.0)
    torch.testing.assert_close(cf(x, one, one), f(x, ref, ref))  # the same object: the read sees the write
    assert one.scale == ref.scale == 2.0


_SENTINEL = _Cfg(0.0)


def test_identity_of_a_plain_object_is_guarded_where_used():
    # guarded by type, a plain object is guarded by identity once `is` (or ==, in, a key) looks at it
    def f(x, cfg):
        return x * 2 if cfg is _SENTINEL else x * cfg.scale
    cf = dyn.compile(f, backend="eager")
    x = torch.ones(2)
    torch.testing.assert_close(cf(x, _Cfg(0.0)), f(x, _Cfg(0.0)))
    torch.testing.assert_close(cf(x, _SENTINEL), f(x, _SENTINEL))  # same type, same contents, another answer

    def g(x, a, b):
        return x + (1 if a is b else 0)
    cg = dyn.compile(g, backend="eager")
    o, p = _Cfg(1.0), _Cfg(1.0)
    torch.testing.assert_close(cg(x, o, p), g(x, o, p))
    torch.testing.assert_close(cg(x, o, o), g(x, o, o))

    def h(x, cfg, known):
        return x * (3 if cfg in known else 1)
    ch = dyn.compile(h, backend="eager")
    torch.testing.assert_close(ch(x, o, [p]), h(x, o, [p]))
    torch.testing.assert_close(ch(x, p, [p]), h(x, p, [p]))


class _Holder:
    def __init__(self, cache):
        self.cache = cache


def test_new_objects_per_call_hit_the_same_graph():
    # transformers hands a new ModelOutput and cache objects to the code after a graph break at every call
    def f(x, holder):
        return x * holder.cache.scale
    cf = dyn.compile(f, backend="eager")
    x = torch.ones(2)
    for _ in range(3):
        holder = _Holder(_Cfg(2.0))
        torch.testing.assert_close(cf(x, holder), f(x, holder))
    assert len(graphs(cf)) == 1


@pytest.mark.parametrize("name", ["hf_gpt2_eager", "hf_bert_eager", "hf_llama_eager", "hf_t5_eager"])
def test_transformers_second_call_hits(name):
    # the side effects (config writes, the output collector) leave the state the guards read as it was, and
    # the objects made per call (ModelOutput, caches) are guarded by type: later calls capture nothing
    pytest.importorskip("transformers")
    import importlib.util
    import os
    spec = importlib.util.spec_from_file_location(
        "dyn_corpus", os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "corpus.py"))
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    case = corpus.build(name, "small")
    case.model.eval()
    args, kwargs = case.inputs("eval")
    cm = dyn.compile(case.model, backend="eager")
    session = dyn.session.current()
    with torch.no_grad():
        want = case.model(*args, **kwargs)
        cm(*args, **kwargs)
        captures = session.counters["captures"]
        for _ in range(2):
            got = cm(*args, **kwargs)
    assert session.counters["captures"] == captures
    assert type(got) is type(want) and list(got.keys()) == list(want.keys())
    torch.testing.assert_close(got[0], want[0])


def test_typing_subscripts_and_jit_annotate():
    """timm's CrossViT: `torch.jit.annotate(List[torch.Tensor], [])` in forward (typing's cached subscript
    of a class, and TorchScript's hint that returns its value)."""
    from typing import Dict, List, Tuple

    def f(x):
        outs = torch.jit.annotate(List[torch.Tensor], [])
        for k in range(2):
            outs.append(x * k)
        t = torch.jit.annotate(the_value=(x, 1), the_type=Tuple[torch.Tensor, int])
        d = torch.jit.annotate(Dict[str, torch.Tensor], {})
        d["a"] = t[0] + 1
        return torch.cat(outs) + d["a"].sum()
    x = torch.randn(3)
    torch.testing.assert_close(one_graph(f, x)(x), f(x))


def test_values_computed_from_constants_are_read_while_capturing():
    """Python reading a tensor computed from constants alone (.item(), int(), a branch, an arange bound:
    Funnel's pooled positions, built with new_tensor and arange) gets its value with nothing to guard and
    no graph break; a tensor that depends on an input still breaks."""
    def f(x):
        pos = torch.arange(0, 8, 1.0)
        pooled = torch.cat([pos.new_tensor([-1]), pos[1:-1][::2]], 0)
        lo, hi = pooled[0] - pos[0], pooled[0] - pos[-1]
        rel = torch.arange(lo, hi - 1, -2, dtype=torch.long)
        n = int(rel.numel() * (rel.sum() < 0))
        if rel.max() > -2:
            x = x + rel.sum().item()
        return x * n + torch.tensor(rel.tolist()).float().mean()
    x = torch.randn(3)
    torch.testing.assert_close(one_graph(f, x)(x), f(x))

    def g(x):
        if x.sum() > 0:
            return x
        return -x
    ex = dyn.explain(g)(torch.ones(3))
    assert ex.graph_break_count == 1 and "data-dependent" in ex.break_reasons[0]["reason"]


def test_numpy_keyword_names():
    # torch's argument parser takes NumPy's axis= and keepdims= (Funnel: torch.cat(..., axis=axis))
    def f(x):
        return torch.cat([x, x], axis=0).sum(axis=1, keepdims=True) + x.amax(axis=-1, keepdims=True).sum()
    x = torch.randn(3, 4)
    torch.testing.assert_close(one_graph(f, x)(x), f(x))


@pytest.mark.parametrize("mode", ["generic", "pointwise"])
@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_associative_scan(mode, n):
    """torch's associative_scan (transformers' Mamba selective scan while compiling): traced as torch's
    generic_associative_scan, one graph, equal to eager's (generic mode) and to a sequential scan."""
    from torch._higher_order_ops.associative_scan import associative_scan

    def combine(left, right):
        return left[0] * right[0], right[0] * left[1] + right[1]

    def f(a, b):
        return associative_scan(combine, (a * 1, b), dim=2, combine_mode=mode)[1] * 2
    a, b = torch.rand(2, 3, n, 4), torch.randn(2, 3, n, 4)
    got = dyn.compile(f, fullgraph=True)(a, b)
    state, states = torch.zeros(2, 3, 4), []
    for i in range(n):
        state = a[:, :, i] * state + b[:, :, i]
        states.append(state)
    torch.testing.assert_close(got, torch.stack(states, 2) * 2)
    if mode == "generic":  # eager runs it on the CPU (pointwise mode needs torch.compile)
        assert torch.equal(got, f(a, b))


def test_associative_scan_generic_mode_needs_an_elementwise_combine():
    from torch._higher_order_ops.associative_scan import associative_scan
    x = torch.randn(7, 3)
    rev = dyn.compile(lambda x: associative_scan(lambda a, b: a + b, x, dim=0, reverse=True, combine_mode="generic"),
                      fullgraph=True)
    torch.testing.assert_close(rev(x), x.flip(0).cumsum(0).flip(0))
    ex = dyn.explain(lambda x: associative_scan(lambda a, b: a + b.sum(), x, dim=0, combine_mode="generic"))(x)
    assert ex.graph_break_count == 1 and "not shown elementwise" in ex.break_reasons[0]["reason"]


def test_iterating_a_tensor():
    """for r in x, a, b = x, zip(x, y), sum(x), list(x), [*x] (torchvision's detection code zips tensors):
    x's rows as eager gives them (unbind: views, so r.mul_(2) writes x), up to 64 rows; more, or a 0-d
    tensor, breaks the graph (eager raises for a 0-d one)."""
    def f(x, y):
        c, d = x
        e, *rest = x
        total = sum(x) + sum(r * 2 for r in y)
        return torch.stack([a + b for a, b in zip(x, y)]) + c * d + e + rest[0] + total + torch.stack(list(x))
    x, y = torch.randn(2, 4), torch.randn(2, 4)
    torch.testing.assert_close(one_graph(f, x, y)(x, y), f(x, y))

    def write(x):
        for r in x:
            r.mul_(2)
        return x + 1
    a = torch.randn(3, 4)
    b = a.clone()
    torch.testing.assert_close(dyn.compile(write, fullgraph=True)(a), write(b))
    torch.testing.assert_close(a, b)
    ex = dyn.explain(lambda x: sum(r for r in x))(torch.randn(100, 2))
    assert ex.graph_break_count == 1 and "more than 64 rows" in ex.break_reasons[0]["reason"]
    with pytest.raises(TypeError, match="0-d"):
        dyn.compile(lambda x: [r for r in x])(torch.tensor(1.0))


def test_where_of_a_condition_alone_breaks_with_its_reason():
    # torch.where(cond) is nonzero(as_tuple=True) (torchvision's remove_small_boxes): a data-dependent shape
    ex = dyn.explain(lambda x: torch.where(x > 0)[0] * 2)(torch.randn(5))
    assert ex.graph_break_count == 1 and "data-dependent" in ex.break_reasons[0]["reason"]
    x, out = torch.randn(5), torch.empty(5)
    r = dyn.compile(lambda x, out: torch.where(x > 0, x, -x, out=out), fullgraph=True)(x, out)
    assert r is out and torch.equal(out, x.abs())
