"""Capture of the Python that library code (torchvision, timm) leans on: what is PyTorch is decided by the
object, never by a name prefix; functools, builtins over iterables, collections, copy.deepcopy/copy.copy,
finfo/iinfo/math and user classes are traced with their Python meaning. Every case compares with eager
PyTorch and checks how many graphs dyn made."""
import collections
import copy
import functools
import math
import sys
import types

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn
from capture_helpers.library import graphs_and_breaks, assert_same, one_graph, X


# -- what is PyTorch: by the object -------------------------------------------------------------------
def test_torchvision_code_is_traced():
    torchvision = pytest.importorskip("torchvision")
    block = torchvision.models.resnet.BasicBlock(4, 4).eval()
    x = torch.randn(2, 4, 8, 8)
    with torch.no_grad():
        one_graph(block, x)


def test_a_package_named_like_torch_is_traced():
    # a module whose name starts with "torch" (torchvision, torchaudio, torch_geometric) is a library
    mod = types.ModuleType("torchlike_ext")
    exec(compile("def act(x):\n    return x.sin() * 2\n", "/tmp/torchlike_ext/ops.py", "exec"), mod.__dict__)
    sys.modules["torchlike_ext"] = mod
    try:
        assert mod.act.__module__ == "torchlike_ext"
        one_graph(lambda x: mod.act(x) + 1, X)
    finally:
        del sys.modules["torchlike_ext"]


def test_user_wrapper_of_a_torch_function_is_traced():
    @functools.wraps(F.relu)  # copies __module__ = "torch.nn.functional": still the user's code
    def relu_twice(x):
        return F.relu(x) * 2
    assert relu_twice.__module__ == "torch.nn.functional"
    one_graph(lambda x: relu_twice(x) - 1, X)


# -- functools ---------------------------------------------------------------------------------------
def _doubled(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) * 2
    return wrapper


@_doubled
def _sin(x):
    return x.sin()


@functools.lru_cache(maxsize=None)
def _scale(n):
    return math.sqrt(n) + 1


def test_functools():
    def f(x):
        a = _sin(x)
        b = functools.partial(torch.add, alpha=2)(x, a)
        c = functools.reduce(lambda s, t: s + t, [a, b, x * 3])
        d = functools.reduce(operator_mul, [x, x], torch.ones_like(x))
        return c * _scale(3) + d
    one_graph(f, X)


def operator_mul(a, b):
    return a * b


def test_lru_cache_with_a_tensor_argument_is_traced():
    # the wrapped function is traced, as TorchDynamo does (the cache would key the tensor by identity)
    @functools.lru_cache(maxsize=None)
    def cached(t, k):
        return t * k

    def f(x):
        return cached(x, 2) + 1
    one_graph(f, X)


_probes = []


@functools.lru_cache
@torch._dynamo.assume_constant_result
def _installed():
    import importlib.metadata  # reads vars() of distributions: not traceable, not needed
    _probes.append(1)
    return bool(importlib.metadata.version("torch"))


@torch.jit.script
def _scripted(x: torch.Tensor, k: int) -> torch.Tensor:
    return torch.clamp(x * k, min=-1.0)


def test_constant_results_scripted_functions_and_dict_fromkeys():
    # transformers' install probes (assume_constant_result under lru_cache), DeBERTa's
    # torch.jit.script helpers (their Python function traced) and dict.fromkeys: one graph
    def f(x):
        names = list(dict.fromkeys(["a", "b", "a"]))
        y = _scripted(x, len(names))
        return y + 1 if _installed() else y - 1
    one_graph(f, X)
    assert _probes  # called for real, once (lru_cache)


# -- copies of a module's lists and dicts --------------------------------------------------------------
def test_copies_of_a_modules_lists_may_change():
    # torchvision's Swin: shift_size = self.shift_size.copy(); shift_size[0] = 0
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.shift = [1, 2]
            self.names = {"a": 1}

        def forward(self, x):
            s = self.shift.copy()
            s[0] = 0
            t = list(self.shift)
            t.append(5)
            d = dict(self.names)
            d["b"] = 2
            return torch.roll(x, s[0] + s[1], 0) * len(t) + len(d)
    m = M()
    one_graph(m, X)
    assert m.shift == [1, 2] and m.names == {"a": 1}


# -- builtins over iterables ------------------------------------------------------------------------
def test_map_filter_zip_enumerate():
    def f(x):
        xs = [x, x * 2, None, x * 3]
        kept = list(filter(lambda t: t is not None, xs))
        doubled = map(lambda a, b: a * b, kept, [1.0, 2.0, 3.0])
        total = sum(i * t for i, t in enumerate(doubled))
        pairs = [a + b for a, b in zip(kept, reversed(kept))]
        return total + sum(map(torch.sin, pairs)) + sum(filter(None, [0, 1, 2]))
    one_graph(f, X)


def test_map_is_lazy():
    def f(x):
        seen = []
        it = map(lambda t: seen.append(t) or t * 2, [x, x + 1, x + 2])
        first = next(it)
        return first * len(seen)  # map has called its function once so far
    one_graph(f, X)


def test_filter_on_tensor_values_breaks():
    def f(x):
        return sum(filter(lambda t: t.sum() > 0, [x, -x]))
    count, reasons = graphs_and_breaks(f, X)
    assert reasons
    assert_same(dyn.compile(f, backend="eager")(X), f(X))


# -- collections ------------------------------------------------------------------------------------
def test_ordered_dict_defaultdict_deque():
    def f(x):
        od = collections.OrderedDict(a=x, b=x * 2)
        od["c"] = x * 3
        od.move_to_end("a")
        groups = collections.defaultdict(list)
        for k, v in od.items():
            groups[k in "ab"].append(v)
        q = collections.deque([x], maxlen=3)
        q.append(x + 1)
        q.appendleft(x - 1)
        q.rotate(1)
        return sum(groups[True]) * q.popleft() + sum(od.values()) - q.pop()
    one_graph(f, X)


def test_defaultdict_with_a_user_factory_breaks():
    def f(x):
        d = collections.defaultdict(lambda: x * 0)
        return d["a"] + x
    count, reasons = graphs_and_breaks(f, X)
    assert any("default factory" in r for r in reasons)
    assert_same(dyn.compile(f, backend="eager")(X), f(X))


def test_inspect_signature_of_a_forward():
    # transformers reads its forward's signature at every call (utils/generic.py)
    import inspect

    def scaled(x, scale=2.0):
        return x * scale
    wrapped = _doubled(scaled)

    def f(x):
        params = inspect.signature(wrapped).parameters  # follows __wrapped__
        return wrapped(x, params["scale"].default) if "scale" in params else x
    one_graph(f, X)


# -- copy.deepcopy, copy.copy --------------------------------------------------------------------------
def _halve(t):
    return t / 2


class _Config:
    """A config-like plain object (transformers deep-copies its configs inside forward: get_text_config)."""

    def __init__(self):
        self.scale = 2.0
        self.shift = 1
        self.act = "relu"
        self.names = ["a", "b"]
        self.id2label = {0: "x", 1: "y"}
        self.flags = (True, None)
        self.post = _halve


def _use_copy(x, cfg):
    c = copy.deepcopy(cfg)
    c.scale = c.scale * 3  # the copy is the traced code's own object: the original keeps its values
    c.names.append("c")
    c.id2label[2] = "z"
    del c.act
    d = copy.deepcopy(c.__dict__)  # (transformers' to_dict)
    d["shift"] = 10
    return c.post(x * c.scale) + len(c.names) * c.shift + len(d["id2label"]) + hasattr(c, "act") + d["shift"]


def _config_state(cfg):
    return copy.deepcopy(vars(cfg))


def test_deepcopy_of_a_config_is_traced():
    cfg = _Config()
    before = _config_state(cfg)
    want = _use_copy(X, cfg)
    count, reasons = graphs_and_breaks(_use_copy, X, cfg)
    assert (count, reasons) == (1, [])
    assert _config_state(cfg) == before  # capturing changed nothing real
    dyn.reset()
    cf = dyn.compile(_use_copy, backend="eager", fullgraph=True)
    assert_same(cf(X, cfg), want)
    assert_same(cf(X, _Config()), want)  # another object with the same state: the same graph
    assert dyn.stats()["captures"] == 1 and _config_state(cfg) == before


def test_deepcopy_guards_the_state_of_the_original():
    # the traced code reads only the copy: the guard on the original's whole state is what notices
    # a change (without it the graph would keep the old scale and list length)
    cfg = _Config()
    cf = dyn.compile(_use_copy, backend="eager", fullgraph=True)
    assert_same(cf(X, cfg), _use_copy(X, cfg))
    changes = [lambda: setattr(cfg, "scale", 5.0), lambda: cfg.names.append("d"),
               lambda: cfg.id2label.__setitem__(1, "w"), lambda: setattr(cfg, "shift", True),
               lambda: setattr(cfg, "post", lambda t: -t), lambda: setattr(cfg, "extra", 1)]
    for k, change in enumerate(changes):
        change()
        assert_same(cf(X, cfg), _use_copy(X, cfg))
        assert dyn.stats()["captures"] == k + 2  # recaptured: the state the copy read changed
        assert_same(cf(X, cfg), _use_copy(X, cfg))
        assert dyn.stats()["captures"] == k + 2  # and the new entry hits


_GLOBAL_CFG = _Config()


def test_deepcopy_of_a_global_object():
    def f(x):
        c = copy.deepcopy(_GLOBAL_CFG)
        return x * c.scale + c.shift
    one_graph(f, X)
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    cf(X)
    _GLOBAL_CFG.scale = -3.0
    try:
        assert_same(cf(X), f(X))
    finally:
        _GLOBAL_CFG.scale = 2.0


def test_deepcopy_of_values_made_in_the_frame():
    def f(x):
        spec = {"dims": [1, 2], "name": ("a", 1.5), "cfg": _Config()}
        other = copy.deepcopy(spec)
        other["dims"].append(3)
        other["cfg"].scale = 7.0
        return x * sum(other["dims"]) + spec["cfg"].scale * other["cfg"].scale + len(spec["dims"])
    one_graph(f, X)


def test_deepcopy_returned_or_kept_is_a_new_object_per_call():
    def f(x, cfg):
        c = copy.deepcopy(cfg)
        c.scale = 3.0
        return x * c.scale, c
    cfg = _Config()
    want_t, want_c = f(X, cfg)
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    for _ in range(2):
        got_t, got_c = cf(X, cfg)
        assert_same(got_t, want_t)
        assert type(got_c) is _Config and vars(got_c) == vars(want_c)
        assert got_c.names is not cfg.names and got_c.id2label is not cfg.id2label
    assert dyn.stats()["captures"] == 1


class _Holder:
    def __init__(self):
        self.w = torch.ones(8)
        self.k = 2


class _OwnCopy:
    def __init__(self):
        self.k = 3

    def __deepcopy__(self, memo):
        c = _OwnCopy()
        c.k = self.k + 1
        return c

    def __copy__(self):
        return self.__deepcopy__(None)


def test_deepcopy_it_does_not_model_breaks():
    def f(x, o):
        return x.sin() * copy.deepcopy(o).k

    def g(x):
        return copy.deepcopy([x, 2])[0] * 2
    for fn, args, why in ((f, (X, _Holder()), "copy.deepcopy of a _Holder: it holds a Tensor"),
                          (f, (X, _OwnCopy()), "copy.deepcopy of a _OwnCopy (its copy is made by hooks"),
                          (g, (X,), "copy.deepcopy of a value holding a tensor")):
        count, reasons = graphs_and_breaks(fn, *args)
        assert reasons and all(r.startswith(why) for r in reasons), reasons
        dyn.reset()
        assert_same(dyn.compile(fn, backend="eager")(*args), fn(*args))


def test_copy_copy():
    def f(x, cfg):
        c = copy.copy(cfg)
        c.scale = 4.0  # on the copy only
        cfg.names.append("z")  # the copy holds the original's list: it sees the append
        return x * c.scale + c.shift + len(c.names) + (c.names is cfg.names)

    def g(x):
        d = {"a": x}
        e = copy.copy(d)
        e["b"] = x * 2
        return e["a"] + e["b"] + len(d) + len(copy.copy([x, x]))
    cfg, ref = _Config(), _Config()
    want = f(X, ref)
    count, reasons = graphs_and_breaks(f, X, _Config())
    assert (count, reasons) == (1, [])
    dyn.reset()
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    assert_same(cf(X, cfg), want)
    assert (cfg.scale, cfg.names) == (2.0, ["a", "b", "z"])
    assert_same(cf(X, cfg), f(X, ref))  # the list is longer now: guarded as a read, recaptured
    assert cfg.names == ref.names and dyn.stats()["captures"] == 2

    def h(x, cfg):
        return x * hasattr(copy.copy(cfg), "extra")
    ch = dyn.compile(h, backend="eager", fullgraph=True)
    assert_same(ch(X, cfg), h(X, cfg))
    cfg.extra = 1  # which attributes the copy gets is guarded
    assert_same(ch(X, cfg), h(X, cfg))
    one_graph(g, X)
    count, reasons = graphs_and_breaks(lambda x, o: x * copy.copy(o).k, X, _OwnCopy())
    assert reasons and all(r.startswith("copy.copy of a _OwnCopy") for r in reasons)


# -- numbers: finfo, iinfo, math ---------------------------------------------------------------------
def test_finfo_iinfo_math():
    def f(x):
        eps = torch.finfo(x.dtype).eps
        big = torch.iinfo(torch.int32).max
        return x.clamp(min=eps) * math.sqrt(2.0) + math.log(big) + math.floor(math.pi) + math.inf * 0.0
    want = f(X)
    count, reasons = graphs_and_breaks(f, X)
    assert (count, reasons) == (1, [])
    torch.testing.assert_close(dyn.compile(f, backend="eager")(X), want, equal_nan=True)


# -- classes ----------------------------------------------------------------------------------------
class _Scale:
    def __init__(self, s):
        self.s = s

    def __call__(self, t):
        return t * self.s


def test_user_classes_created_in_the_frame():
    def f(x):
        class Local:
            k = 3.0

            def apply(self, t):
                return t + self.k
        return _Scale(2.0)(Local().apply(x))
    one_graph(f, X)


def test_isinstance_on_library_types():
    torchvision = pytest.importorskip("torchvision")
    from torchvision.ops.misc import Conv2dNormActivation

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Conv2dNormActivation(3, 3), nn.Identity()])

        def forward(self, x):
            for b in self.blocks:
                if isinstance(b, Conv2dNormActivation) and isinstance(b, nn.Sequential):
                    x = b(x)
                elif isinstance(x, torch.Tensor) and not isinstance(x, nn.Parameter):
                    x = x * 2
            return x
    m = M().eval()
    with torch.no_grad():
        one_graph(m, torch.randn(2, 3, 8, 8))
    assert torchvision  # imported for its classes
