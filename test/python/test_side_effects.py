"""Side effects on objects the compiled code did not create (capture/side_effects.py): attribute writes and
deletions, changes to lists and dicts reached from arguments, globals and attributes. They are recorded
while capturing (reads after a write see it), made on the real objects after the graph in program order,
and never half made when capture breaks or falls back. Every case runs the same code eagerly on a copy of
the state and compares results and the state afterwards."""
import copy
import dataclasses

import pytest
import torch

import dyn


def graphs(cf):
    cf = getattr(cf, "_dyn_forward", cf)
    return [g for g, k, e in cf.graphs if g is not None]


def breaks(cf):
    return [b["reason"] for b in getattr(cf, "_dyn_forward", cf).breaks]


def same(a, b):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape
        torch.testing.assert_close(a, b)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in a:
            same(a[k], b[k])
    else:
        assert a == b


class Obj:
    """A plain object holding state the compiled code changes."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def state(self):
        return dict(vars(self))


# -- attributes ----------------------------------------------------------------------------------------
class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.calls = 0

    def forward(self, x):
        h = self.lin(x)
        self.calls = self.calls + 1
        self.last = h  # a tensor made in the graph, kept on the module
        return h * self.calls + self.last  # reads after the writes see them


def test_module_attribute_writes_one_graph():
    torch.manual_seed(0)
    m, ref = Counter(), Counter()
    ref.load_state_dict(m.state_dict())
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2, 3)
    with torch.no_grad():
        for _ in range(3):
            same(cm(x), ref(x))
            assert m.calls == ref.calls
            same(m.last, ref.last)
    assert breaks(cm) == []
    assert all(len(g.ops()) for g in graphs(cm))  # each call one graph (calls is guarded: 3 captures)


def test_write_then_delete_restores_missing_attribute():
    # transformers' merge_with_config_defaults: config.is_causal set for the call, deleted afterwards
    cfg = Obj(scale=2.0)

    def f(x):
        had = hasattr(cfg, "flag")
        cfg.flag = True
        y = x * cfg.scale if cfg.flag else x
        del cfg.flag
        return y + had + hasattr(cfg, "flag")
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    for _ in range(2):
        same(cf(x), f(x))
        assert not hasattr(cfg, "flag")
    assert breaks(cf) == [] and len(graphs(cf)) == 1


def test_replay_order_and_last_write_wins():
    obj = Obj(a=0)
    log = []

    class Recorder:
        def __setattr__(self, name, value):  # Python __setattr__: inlined down to object's
            object.__setattr__(self, name, value)

    rec = Recorder()

    def f(x):
        obj.a = 1
        rec.first = obj.a
        obj.a = obj.a + 1
        obj.b = x * 2
        del obj.a
        obj.a = 5
        return x + obj.a
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(2)
    out = cf(x)
    same(out, x + 5)
    assert obj.a == 5 and rec.first == 1 and log == []
    same(obj.b, x * 2)
    assert breaks(cf) == []


def test_custom_setattr_with_aliases_is_inlined():
    class Config:
        attribute_map = {"hidden": "d_model"}

        def __init__(self):
            object.__setattr__(self, "d_model", 4)

        def __setattr__(self, key, value):
            key = type(self).attribute_map.get(key, key)
            super().__setattr__(key, value)

        def __getattribute__(self, key):
            if key != "attribute_map" and key in type(self).attribute_map:
                key = type(self).attribute_map[key]
            return super().__getattribute__(key)

    cfg, ref = Config(), Config()

    def f(c, x):
        c.hidden = 3  # writes d_model
        return x * c.d_model + c.hidden
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(2)
    same(cf(cfg, x), f(ref, x))
    assert vars(cfg) == vars(ref) == {"d_model": 3}
    assert breaks(cf) == []


def test_property_setter_is_inlined():
    class P:
        def __init__(self):
            self._v = 1

        @property
        def v(self):
            return self._v

        @v.setter
        def v(self, value):
            self._v = value * 10

    p, q = P(), P()

    def f(o, x):
        o.v = 2
        return x + o.v
    same(dyn.compile(f, backend="eager")(p, torch.ones(2)), f(q, torch.ones(2)))
    assert p._v == q._v == 20


def test_missing_attribute_is_guarded():
    # a read that found nothing decided what ran: once the attribute exists, capture again
    holder = Obj()

    def f(x):
        if not hasattr(holder, "cache"):
            holder.cache = x * 0
        holder.cache = holder.cache + x
        return holder.cache * 1
    ref_holder = Obj()

    def g(x):
        if not hasattr(ref_holder, "cache"):
            ref_holder.cache = x * 0
        ref_holder.cache = ref_holder.cache + x
        return ref_holder.cache * 1
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    for _ in range(3):
        same(cf(x), g(x))
    same(holder.cache, ref_holder.cache)
    assert len(graphs(cf)) == 2  # absent / present


def test_getattr_default_is_guarded():
    o = Obj()

    def f(x):
        return x * getattr(o, "k", 1)
    cf = dyn.compile(f, backend="eager")
    x = torch.ones(2)
    same(cf(x), x)
    o.k = 3
    same(cf(x), x * 3)


# -- containers ----------------------------------------------------------------------------------------
CACHE = {}
SEEN = []


def test_global_dict_and_list_mutation():
    CACHE.clear()
    SEEN.clear()

    def f(x):
        CACHE["h"] = x * 2
        SEEN.append(len(CACHE))
        return CACHE["h"] + SEEN[-1]  # reads after the writes
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    same(cf(x), x * 2 + 1)
    assert list(CACHE) == ["h"] and SEEN == [1]
    same(CACHE["h"], x * 2)
    same(cf(x), x * 2 + 1)  # SEEN changed: guarded, captured again
    assert SEEN == [1, 1]
    assert breaks(cf) == []


def test_argument_containers_reach_the_caller():
    def f(lst, d, x):
        lst.append(x + 1)
        lst[0] = lst[0] * 2
        d["new"] = x.sum()
        d.pop("old")
        d.update(k=3)
        return len(lst) + len(d)
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(2)
    args = ([torch.ones(2)], {"old": 1, "z": None}, x)
    ref = copy.deepcopy(args)
    assert cf(*args) == f(*ref)
    same(args[0], ref[0])
    same(args[1], ref[1])
    assert breaks(cf) == [] and len(graphs(cf)) == 1


def test_in_place_operators_on_lists_and_dicts():
    state = Obj(lst=[1], d={"a": 1})

    def f(x):
        alias = state.lst
        alias += [2]  # changes state.lst itself
        dd = state.d
        dd |= {"b": 2}
        return x * len(state.lst) + len(state.d)
    cf = dyn.compile(f, backend="eager")
    same(cf(torch.ones(2)), torch.full((2,), 4.0))
    assert state.lst == [1, 2] and state.d == {"a": 1, "b": 2}


def test_aliased_containers_are_guarded():
    def f(a, b, x):
        a.append(1)
        return x * len(b)
    cf = dyn.compile(f, backend="eager")
    x = torch.ones(2)
    for a, b in (([], [0]), ([], [0])):
        same(cf(a, b, x), f(list(a), list(b), x))
    shared = []
    ref = []
    same(cf(shared, shared, x), f(ref, ref, x))  # one list through both arguments: not the same graph
    assert shared == ref == [1]


def test_old_object_kept_while_its_path_changes():
    state = Obj(lst=[0])

    def f(x):
        old = state.lst
        state.lst = [9]
        old.append(1)  # the list read before the store, not the new one
        return x + len(old)
    ref_state = Obj(lst=[0])

    def g(x):
        old = ref_state.lst
        ref_state.lst = [9]
        old.append(1)
        return x + len(old)
    lst0, ref0 = state.lst, ref_state.lst
    same(dyn.compile(f, backend="eager")(torch.zeros(1)), g(torch.zeros(1)))
    assert state.lst == ref_state.lst == [9] and lst0 == ref0 == [0, 1]


def test_returned_real_container_is_the_same_object():
    state = Obj(items=[1, 2])

    def f(x):
        state.items.append(3)
        return state.items, x * 2
    lst = state.items
    out, y = dyn.compile(f, backend="eager")(torch.ones(1))
    assert out is lst and lst == [1, 2, 3]


def test_made_container_returned_and_stored_stays_one_object():
    state = Obj()

    def f(x):
        made = [x * 2]
        state.saved = made
        return made
    cf = dyn.compile(f, backend="eager")
    out = cf(torch.ones(2))
    assert out is state.saved  # eager's identity (captured or run eagerly, never two lists)
    same(out, [torch.full((2,), 2.0)])


# -- graph breaks and fallbacks -----------------------------------------------------------------------
def test_side_effects_before_a_break_are_made_before_the_call():
    obj = Obj(flag=0)
    seen = []

    def observe():
        seen.append(obj.flag)  # Python code at the break reads the state

    def f(x):
        obj.flag = 1
        y = x * 2
        print_like(observe)
        obj.flag = obj.flag + 1
        return y + obj.flag
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    same(cf(x), x * 2 + 2)
    assert seen == [1] and obj.flag == 2
    assert breaks(cf) and all("print" in r for r in breaks(cf))


def print_like(fn):
    print(end="")  # dyn cannot capture print: a graph break here
    fn()


def test_failed_capture_leaves_no_side_effect():
    obj = Obj(a=0, lst=[])

    def f(x):
        obj.a = 1
        obj.lst.append(2)
        return x.numpy()  # cannot be captured
    with pytest.raises(dyn.Unsupported):
        dyn.compile(f, backend="eager", fullgraph=True)(torch.ones(2))
    assert obj.a == 0 and obj.lst == []  # nothing was made while capturing
    dyn.compile(f, backend="eager")(torch.ones(2))  # breaks: the effects made once, as in eager
    assert obj.a == 1 and obj.lst == [2]


def test_side_effect_in_try_block_falls_back_cleanly():
    obj = Obj(n=0)

    def f(x):
        y = x + 1
        try:
            obj.n = obj.n + 1
            z = y.numpy()  # not captured inside the try: the rest runs eagerly
        except RuntimeError:
            z = None
        return y, z, obj.n
    cf = dyn.compile(f, backend="eager")
    for k in (1, 2):
        y, z, n = cf(torch.ones(2))
        assert n == k and obj.n == k  # made exactly once per call


def test_unsupported_store_still_breaks():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("buf", torch.zeros(2))

        def forward(self, x):
            self.buf = x * 2  # a buffer (Module.__setattr__ registers it): Python makes it
            return self.buf + 1
    m = M()
    cm = dyn.compile(m, backend="eager")
    x = torch.randn(2)
    same(cm(x), x * 2 + 1)
    same(m.buf, x * 2)
    assert "buf" in m._buffers and len(breaks(cm)) == 1


# -- exceptions the traced code handles ---------------------------------------------------------------
def test_key_error_caught_in_inlined_function():
    from collections.abc import Mapping

    class Registry(Mapping):  # transformers' AttentionInterface: Mapping.get catches KeyError
        def __init__(self):
            self._m = {"a": 2}

        def __getitem__(self, k):
            return self._m[k]

        def __iter__(self):
            return iter(self._m)

        def __len__(self):
            return len(self._m)
    reg = Registry()

    def f(x):
        return x * reg.get("a", 0) + reg.get("missing", 5)
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    same(cf(torch.ones(2)), torch.full((2,), 7.0))


def test_raise_and_except_in_inlined_function():
    def lookup(d, k):
        try:
            return d[k]
        except KeyError:
            raise ValueError("missing") from None

    def f(x):
        try:
            return x * lookup({"a": 2}, "b")
        except ValueError:
            return x - 1
    cf = dyn.compile(f, backend="eager", fullgraph=True)
    same(cf(torch.ones(2)), torch.zeros(2))


def test_exception_out_of_the_frame_runs_eagerly():
    def f(x, d):
        return x * d["k"]
    cf = dyn.compile(f, backend="eager")
    with pytest.raises(KeyError):
        cf(torch.ones(2), {})
    same(cf(torch.ones(2), {"k": 3}), torch.full((2,), 3.0))


# -- ModelOutput (an OrderedDict dataclass with attribute access) -----------------------------------------
transformers = pytest.importorskip("transformers")


@dataclasses.dataclass
class Out(transformers.utils.ModelOutput):
    logits: torch.Tensor = None
    hidden: tuple = None
    loss: torch.Tensor = None


def test_model_output_returned():
    lin = torch.nn.Linear(3, 4)

    def f(x, with_loss):
        h = lin(x)
        out = Out(logits=h * 2, hidden=(x, h))
        if with_loss:
            out["loss"] = out.logits.sum()  # __setitem__ sets the attribute too
        return out
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(2, 3)
    with torch.no_grad():
        for flag in (False, True):
            got, want = cf(x, flag), f(x, flag)
            assert type(got) is Out and list(got.keys()) == list(want.keys())
            for k in want.keys():
                same(got[k], want[k])
                assert getattr(got, k) is got[k]
            assert got.to_tuple()[0] is got.logits and got[0] is got.logits
            assert (got.loss is None) == (want.loss is None)
    assert breaks(cf) == []


def test_model_output_in():
    def f(out):
        return out.logits * 2 + out[0] + out["logits"] + len(out)
    o = Out(logits=torch.randn(3))
    cf = dyn.compile(f, backend="eager")
    same(cf(o), f(o))
    o2 = Out(logits=torch.randn(3))  # a new output object per call: guarded by its items, not identity
    same(cf(o2), f(o2))
    assert breaks(cf) == [] and len(graphs(cf)) == 1
    o3 = Out(logits=torch.randn(3), loss=torch.ones(()))  # other keys: captured again
    same(cf(o3), f(o3))
    assert len(graphs(cf)) == 2


def test_model_output_gradients():
    lin, ref = torch.nn.Linear(3, 4), torch.nn.Linear(3, 4)
    ref.load_state_dict(lin.state_dict())
    x = torch.randn(2, 3)

    def f(m, x):
        out = Out(logits=m(x))
        out.loss = out.logits.square().mean()
        return out
    got = dyn.compile(f, backend="eager")(lin, x)
    want = f(ref, x)
    same(got.loss, want.loss)
    got.loss.backward()
    want.loss.backward()
    same(lin.weight.grad, ref.weight.grad)


def test_made_objects_cross_a_graph_break():
    @dataclasses.dataclass
    class State:
        h: torch.Tensor
        n: int

    def f(x):
        s = State(x * 2, 1)
        out = Out(logits=x + 1)
        print(end="")  # a graph break: s and out are handed to the rest of the frame
        s.n += 1
        return out, s.h * s.n, out.logits.sum()
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(3)
    for _ in range(2):
        got, want = cf(x), f(x)
        assert type(got[0]) is Out and list(got[0].keys()) == ["logits"]
        same(got[0].logits, want[0].logits)
        same(got[1:], want[1:])
    assert breaks(cf) and len(graphs(cf)) == 2


def test_made_object_kept_by_a_side_effect():
    class Cache:
        def __init__(self):
            self.layers = []

    holder = Obj()

    def f(x):
        c = Cache()
        c.layers.append(x * 3)
        holder.cache = c
        return x + 1
    cf = dyn.compile(f, backend="eager")
    x = torch.randn(2)
    same(cf(x), x + 1)
    first = holder.cache
    assert type(first) is Cache and len(first.layers) == 1
    same(first.layers[0], x * 3)
    cf(x)
    assert holder.cache is not first  # a new object per call, as in eager
    assert breaks(cf) == []


def test_logging_calls_run_after_the_graph(caplog):
    """logger.warning(...) and an lru_cache'd logger helper (transformers' warning_once) do not break the
    graph: the record is emitted after the graph with the same arguments, each call as eager emits it
    (the once-helper's cache keeps its record to the first call)."""
    import functools
    import logging

    logger = logging.getLogger("dyn.test.sideeffects")

    @functools.lru_cache(None)
    def warning_once(self, *args):
        self.warning(*args)

    def f(x, n):
        warning_once(logger, "once %s", "only")
        y = x + 1
        logger.warning("every call %d", n)
        return y * 2

    cf = dyn.compile(f)
    dyn.reset()
    with caplog.at_level(logging.WARNING, logger="dyn.test.sideeffects"):
        for n in range(3):
            torch.testing.assert_close(cf(torch.ones(2), 5), torch.full((2,), 4.0))
    msgs = [r.getMessage() for r in caplog.records if r.name == "dyn.test.sideeffects"]
    assert msgs == ["once only", "every call 5", "every call 5", "every call 5"]
    s = dyn.stats()
    assert s["graph_breaks"] == 0 and s["compiled_graphs"] == 1 and s["eager_graphs"] == []
