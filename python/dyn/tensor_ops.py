"""Captured tensor operations: each takes TensorVars / Python scalars, computes the result's meta
tensor by running the real torch op on meta tensors (PyTorch's own broadcasting and type promotion),
and adds graph-dialect nodes. Composite ops decompose into graph ops here."""
import math
import operator
import warnings
import weakref

import torch
import torch.nn.functional as F

from .errors import Unsupported
from .graph import _ELT, UNARY


class TensorVar:
    """A symbolic tensor: an SSA node of the graph being captured plus its meta tensor.

    In-place ops rebind `node`, so every Python reference to this TensorVar sees the new value.
    input_index: the graph input this TensorVar stands for (the real tensor of the caller), else None.
    view: a _View when this tensor is a view of another one (it shares that tensor's memory), else None.
    alias: the _Storage of a tensor that views were taken from (it is their base), else None.
    fresh: a copy that shares its node with another TensorVar (clone)."""
    __slots__ = ("tracer", "node", "fresh", "input_index", "view", "alias", "__weakref__")

    def __init__(self, tracer, node, fresh=False):
        self.tracer, self.node, self.fresh = tracer, node, fresh
        self.input_index = self.view = self.alias = None

    @property
    def meta(self):
        return self.node.meta

    def __repr__(self):
        return f"TensorVar({self.node.name}, {tuple(self.meta.shape)}, {self.meta.dtype})"


class _Storage:
    """The memory a base tensor shares with its views: the base (held weakly: once no Python value holds
    it, nothing can observe it through the base), its current value `node`, its views (weakly) and
    `shadow`, a meta tensor with the base's layout: the real strides of a graph input (exact), contiguous
    for a computed tensor (a model: dyn does not know the layout eager gives a computed tensor)."""
    __slots__ = ("base", "node", "views", "input_index", "shadow")

    def __init__(self, base):
        self.base = weakref.ref(base)
        self.node = base.node
        self.views = []
        self.input_index = base.input_index
        self.shadow = _shadow(base)

    def live_views(self):
        vs = [v for v in (r() for r in self.views) if v is not None]
        if len(vs) != len(self.views):
            self.views = [weakref.ref(v) for v in vs]
        return vs


class _View:
    """How a view was made from its base's memory: `steps` replay it on the base's value (graph ops) or
    on the base's shadow (meta: sizes, strides, storage offset). exact: the steps make a view in eager
    whatever the base's layout (False after reshape/flatten/contiguous of a computed tensor, which are
    views or copies depending on that layout)."""
    __slots__ = ("storage", "steps", "shadow", "exact")

    def __init__(self, storage, steps, shadow, exact):
        self.storage, self.steps, self.shadow, self.exact = storage, steps, shadow, exact


def _shadow(x):
    """A meta tensor with x's layout: the real input's strides, contiguous for a computed tensor."""
    if x.input_index is not None:
        t = x.tracer.input_tensors[x.input_index]
        return torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="meta")
    return torch.empty(tuple(x.meta.shape), dtype=x.meta.dtype, device="meta")


# View steps: ('view', shape) ('reshape', shape) ('permute', dims) ('expand', shape) ('getitem', index)
# ('contig',) ('detach',). 'reshape' and 'contig' are views only when the layout allows (else copies).
_MAYBE_VIEW = ("reshape", "contig")
_ALIAS_STEPS = ("contig", "detach")  # x itself as a new tensor object


def _meta_step(s, step):
    k = step[0]
    if k == "view":
        return s.view(step[1])
    if k == "reshape":
        return s.reshape(step[1])
    if k == "permute":
        return s.permute(step[1])
    if k == "expand":
        return s.expand(step[1])
    if k == "getitem":
        return s[step[1]]
    if k == "detach":
        return s
    return s.contiguous()


SCALARS = (int, float, bool)


def _meta(v):
    return v.meta if isinstance(v, TensorVar) else v


def _fits_int64(*vals):
    """Python ints beyond int64 make eager raise OverflowError (and the meta computation too)."""
    for v in vals:
        if type(v) is int and not -(1 << 63) <= v < (1 << 63):
            raise Unsupported(f"the Python int {v} does not fit in int64 (eager raises)")


def node_requires_grad(tr, n, memo):
    """Whether eager's tensor for node n requires grad: an input's flag; a floating result computed
    with grad enabled (the traced block's mode, else the caller's, then guarded) from one that does.
    Detached values and integer or bool results never do."""
    r = memo.get(n)
    if r is None:
        if n.op == "input":
            r = bool(tr.input_tensors[n.index].requires_grad)
        elif n.op == "detach" or not (n.meta.dtype.is_floating_point or n.meta.dtype.is_complex):
            r = False
        else:
            grad = n.attrs.get("grad_enabled")
            if grad is None:
                tr.reads_grad_mode = True
                grad = torch.is_grad_enabled()
            r = grad and any(node_requires_grad(tr, i, memo) for i in n.inputs)
        memo[n] = r
    return r


# Eager's kernels reject some dtypes (and scalar operands) that the meta kernels accept: abs, relu, floor
# and ceil of bools, subtraction with a bool, bool ** bool, integer ** negative integer, leaky_relu of
# integers. eager_accepts runs the real op once on small tensors (size 2 in every dim) of the operands'
# dtypes and ranks (the same type promotion), on the CPU and on the graph's device, and remembers the
# answer: an op either rejects is not captured (eager runs it).
_EAGER_OK = {}


def _probe_sig(v):
    if isinstance(v, (TensorVar, torch.Tensor)):
        m = v.meta if isinstance(v, TensorVar) else v
        return ("T", m.dtype, m.dim())
    if isinstance(v, float) and v != v:
        return (float, "nan")
    return (type(v), v)


def _probe_value(v, device):
    if isinstance(v, (TensorVar, torch.Tensor)):
        m = v.meta if isinstance(v, TensorVar) else v
        # not one element: eager has fast paths for those
        return torch.ones((2,) * m.dim(), dtype=m.dtype, device=device)
    return v


def eager_accepts(what, fn, *args, _device=None, **kwargs):
    """Raises Unsupported (the frame then runs eagerly, where eager raises) when eager's kernel raises for
    fn(*args, **kwargs) with args' dtypes, on the CPU or on _device (the graph's, where kernels may take
    other dtypes: CUDA's abs takes bools); TensorVars (and tensors) stand for tensors of their dtype and
    rank, other arguments are passed as they are."""
    devices = ["cpu"]
    if _device is not None and torch.device(_device).type != "cpu":
        devices.append(torch.device(_device))
    try:
        key = (fn, tuple(_probe_sig(a) for a in args), tuple(sorted((k, _probe_sig(v)) for k, v in kwargs.items())),
               str(devices[-1]))
        hash(key)
    except TypeError:
        key = None
    err = _EAGER_OK.get(key, False) if key is not None else False
    if err is False:
        err = None
        for device in devices:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fn(*[_probe_value(a, device) for a in args], **{k: _probe_value(v, device) for k, v in kwargs.items()})
            except Exception as e:  # eager rejects these operands
                err = f"{type(e).__name__}: {e}"
                break
        if key is not None:
            if len(_EAGER_OK) > 4096:
                _EAGER_OK.clear()
            _EAGER_OK[key] = err
    if err is not None:
        raise Unsupported(f"{what}: eager raises {err}")


def _norm_dim(d, ndim):
    d = operator.index(d)
    nd = max(ndim, 1)
    if not -nd <= d < nd:
        raise Unsupported(f"dim {d} out of range for rank {ndim}")
    return d % nd if ndim else 0


def _norm_dims(dim, ndim):
    if dim is None:
        return list(range(ndim))
    if isinstance(dim, (list, tuple, torch.Size)):
        return sorted({_norm_dim(d, ndim) for d in dim}) if len(dim) else list(range(ndim))
    return [_norm_dim(dim, ndim)]


class Ops:
    """Op builders bound to one tracer (graph + device)."""

    def __init__(self, tracer):
        self.tr = tracer
        self.g = tracer.graph

    def var(self, node):
        return TensorVar(self.tr, node)

    def node(self, op, inputs, meta, **attrs):
        return self.var(self.g.add(op, [i.node for i in inputs], meta, **attrs))

    def check(self, *xs):
        for x in xs:
            if not isinstance(x, TensorVar):
                raise Unsupported(f"expected a tensor, got {type(x).__name__}")

    def const(self, value, dtype):
        if isinstance(value, TensorVar):
            return value
        if not isinstance(value, SCALARS):
            raise Unsupported(f"unsupported scalar operand {type(value).__name__}")
        if not dtype.is_floating_point and dtype != torch.bool:
            # a Python number that the integer type cannot hold: eager wraps it in some ops (int32 + 2**40)
            # and raises in others (fill, clamp): not captured
            if isinstance(value, float) and not math.isfinite(value):
                raise Unsupported(f"{value} as a {dtype} constant")
            info = torch.iinfo(dtype)
            if not info.min <= int(value) <= info.max:
                raise Unsupported(f"{value} does not fit in {dtype}")
        self.g.device = self.tr.device  # constants are made on the device the graph runs on
        return self.var(self.g.constant(value, dtype))

    def accepts(self, what, fn, *args, **kwargs):
        """eager_accepts on the CPU and on the device the graph runs on."""
        eager_accepts(what, fn, *args, _device=self.tr.device, **kwargs)

    def detach(self, x):
        """x's value cut from autograd (the eager backend runs Tensor.detach; no op in the graph dialect)."""
        return self.var(self.g.add("detach", [x.node], x.meta))

    def needs_grad(self, *vals):
        """Whether autograd records an op added now on any of vals: one requires grad (a floating tensor
        reached from an input that requires grad) and the traced code's grad mode is on (then read, so
        guarded). Decompositions whose gradient differs from eager's own backward formula (at ties,
        bounds, zeros) take an exact form, or are not captured, only then."""
        memo = {}
        if not any(isinstance(v, TensorVar) and node_requires_grad(self.tr, v.node, memo) for v in vals):
            return False
        return self.tr.grad_enabled()

    DENSE_LIMIT = 1 << 16  # elements of one dense constant (its text and its memory grow with it)

    def dense(self, values):
        """A constant tensor holding `values` (a real tensor computed while capturing from constants,
        like torch.arange's): a dense graph.constant, a splat when every element is the same."""
        values = values.detach().to("cpu").contiguous()
        shape, dtype = tuple(values.shape), values.dtype
        if dtype not in _ELT:
            raise Unsupported(f"constant tensor of dtype {dtype}")
        flat = values.reshape(-1)
        if not flat.numel():
            return self.full(shape, False if dtype == torch.bool else 0, dtype)
        if bool((flat == flat[0]).all()):
            return self.full(shape, flat[0].item(), dtype)
        if flat.numel() > self.DENSE_LIMIT:
            raise Unsupported(f"constant tensor of {flat.numel()} elements (more than {self.DENSE_LIMIT})")
        self.g.device = self.tr.device
        return self.var(self.g.dense(values))

    # -- aliasing: views and in-place updates ------------------------------------------------------
    def fresh_copy(self, x):
        """A new tensor with x's value (eager made a copy): shares x's node until either is updated."""
        return TensorVar(self.tr, x.node, fresh=True)

    def copy(self, x):
        """x's value as a new node (an identity reshape), so that no other TensorVar holds it."""
        return self.var(self.g.add("reshape", [x.node], x.meta))

    def _apply(self, x, step):
        k = step[0]
        if k in ("view", "reshape"):
            return self.reshape(x, step[1])
        if k == "permute":
            return self.permute(x, step[1])
        if k == "expand":
            return self.expand(x, step[1])
        if k == "getitem":
            return self.getitem(x, step[1])
        if k == "detach":  # the same value, cut from autograd (the eager backend runs Tensor.detach)
            return self.var(self.g.add("detach", [x.node], x.meta))
        return x  # contig

    def _replay(self, base, steps):
        for step in steps:
            base = self._apply(base, step)
        return base

    def view_op(self, x, step):
        """x viewed by `step`; the result is recorded as a view of x's base (it shares its memory)."""
        self.check(x)
        if step[0] == "reshape" and tuple(step[1]) == tuple(x.meta.shape):
            step = ("view", step[1])  # the same shape: a view whatever the layout
        r = self._apply(x, step)
        # eager's view ops return a new tensor object even when nothing changes (x.view_as(x), x[...]):
        # r is then a new TensorVar for x's value, a view of x's memory
        info = x.view
        if info is None:
            st = x.alias
            if st is None:
                st = x.alias = _Storage(x)
            steps, shadow, exact = (), st.shadow, True
        else:
            st, steps, shadow, exact = info.storage, info.steps, info.shadow, info.exact
        s = None
        if shadow is not None:
            try:
                s = _meta_step(shadow, step)
            except RuntimeError as e:
                if st.input_index is not None and exact:
                    raise Unsupported(f"view of an input: {e}")  # eager raises too
                exact = False  # a model layout: eager's may allow the view
        if step[0] in _MAYBE_VIEW:
            if st.input_index is None or not exact:
                exact = False
            elif s is not shadow and s._base is not st.shadow:
                return r if r is not x else self.fresh_copy(x)  # eager copies (the layout forbids a view)
        if r is x:
            r = TensorVar(self.tr, x.node)
        r.view = _View(st, steps + (step,), s, exact)
        st.views.append(weakref.ref(r))
        return r

    def contiguous(self, x):
        self.check(x)
        info = x.view
        if info is None and x.input_index is not None:
            if x.tracer.input_tensors[x.input_index].is_contiguous():
                return x
            return self.fresh_copy(x)
        if info is not None and info.exact and info.storage.input_index is not None:
            return x if info.shadow.is_contiguous() else self.fresh_copy(x)
        return self.view_op(x, ("contig",))

    def dest_shadow(self, x):
        """A fresh meta tensor with x's layout (for checking an in-place op the way eager does)."""
        s = x.view.shadow if x.view is not None else x.alias.shadow if x.alias is not None else None
        if s is None:
            s = _shadow(x) if x.view is None else torch.empty(tuple(x.meta.shape), dtype=x.meta.dtype, device="meta")
        return torch.empty_strided(tuple(s.shape), tuple(s.stride()), dtype=s.dtype, device="meta")

    def check_inplace(self, x, run):
        """Runs the real in-place op on a meta tensor laid out like x: raises where eager raises (result
        type that cannot be cast to x's, a broadcast that would change x's shape)."""
        try:
            run(self.dest_shadow(x))
        except (RuntimeError, TypeError, ValueError, IndexError) as e:
            raise Unsupported(f"in-place op: {e}")

    def _layout(self, v):
        """(size, stride, offset) of v in its base's memory, where exact."""
        if v.view is not None:
            s = v.view.shadow if v.view.exact else None
        else:
            s = v.alias.shadow if v.alias is not None else None
        return None if s is None else (tuple(s.shape), tuple(s.stride()), s.storage_offset())

    def _storage_of(self, v):
        return v.view.storage if v.view is not None else v.alias

    def mutate(self, x, new, operands=(), grad=True):
        """Updates x in place to the value `new` (broadcast to x's shape, converted to x's dtype). Every
        view sharing x's memory sees the new value; a graph input's update is recorded on the tracer and
        written back into the real tensor when the graph ends. grad=False: an update eager makes outside
        autograd (running statistics). Raises Unsupported, before changing anything, where dyn cannot
        model the aliasing exactly. Returns x."""
        self.check(x, new)
        grad = grad and self.tr.grad_enabled()  # inside `with torch.no_grad()` autograd records nothing
        shape = tuple(x.meta.shape)
        if tuple(new.meta.shape) != shape:
            new = self.expand(new, shape)
        new = self.convert(new, x.meta.dtype)
        if tuple(new.meta.shape) != shape:
            raise Unsupported("in-place op changing the shape of its tensor")
        st = self._storage_of(x)
        for a in operands:
            if isinstance(a, TensorVar) and a is not x and st is not None and self._storage_of(a) is st:
                la, lx = self._layout(a), self._layout(x)
                if la is None or la != lx:  # eager allows only an exact overlap (the same elements)
                    raise Unsupported("in-place op that reads another view of the memory it writes")
        s = x.view.shadow if x.view is not None else st.shadow if st is not None else None
        if x.view is not None and s is None:
            raise Unsupported("in-place op on a view whose layout dyn cannot model")
        if s is not None and torch._debug_has_internal_overlap(s) == 1:
            raise Unsupported("in-place op on a tensor whose elements share memory (expanded)")
        if new.node is x.node:
            return x
        info = x.view
        if info is None:
            self._commit(self._update_base(x, st, new.node, grad))
            return x
        st = info.storage
        base = st.base()
        if base is None and not any(v is not x for v in st.live_views()):
            # nothing else can see this memory any more: x is an ordinary tensor from now on
            x.view, x.node, x.fresh = None, new.node, True
            return x
        if not info.exact:
            raise Unsupported("in-place op on a view made by reshape/flatten/contiguous of a computed tensor "
                              "(eager makes a view or a copy depending on a layout dyn does not model)")
        new_base = self._scatter(TensorVar(self.tr, st.node), info.steps, new)
        todo = self._update_base(base, st, new_base.node, grad, skip=x)
        self._commit(todo)
        x.node = new.node
        return x

    def _update_base(self, base, st, node, grad, skip=None):
        """Checks an update of a base tensor (and its views) to `node`; returns what _commit does."""
        j = base.input_index if base is not None else None
        if j is not None:
            t = self.tr.input_tensors[j]
            if t.requires_grad and self.tr.grad_enabled():
                raise Unsupported("in-place op on an input that requires grad")
            if torch._debug_has_internal_overlap(t) == 1:
                raise Unsupported("in-place op on an input whose elements share memory (expanded)")
        views = [v for v in st.live_views() if v is not skip] if st is not None else []
        for v in views:
            if not v.view.exact:
                raise Unsupported("in-place op on a tensor with a live view made by reshape/flatten/contiguous "
                                  "(eager makes a view or a copy depending on a layout dyn does not model)")
        return base, st, node, grad, views, j

    def _commit(self, todo):
        base, st, node, grad, views, j = todo
        if base is not None:
            base.node = node
            if j is None:
                base.fresh = True
        if st is not None:
            st.node = node
        root = TensorVar(self.tr, node)
        for v in views:
            v.node = self._replay(root, v.view.steps).node
        if j is not None:
            self.tr.mutations[j] = base
            if grad:
                self.tr.grad_mutations.add(j)

    def _scatter(self, base, steps, new):
        """base's value with the view `steps` of it replaced by `new`."""
        if not steps:
            return new
        step = steps[0]
        part = self._apply(base, step)
        return self._unapply(base, step, self._scatter(part, steps[1:], new))

    def _unapply(self, base, step, val):
        k = step[0]
        if k in ("view", "reshape"):
            return self.reshape(val, tuple(base.meta.shape))
        if k == "permute":
            dims = list(step[1])
            inv = [0] * len(dims)
            for i, d in enumerate(dims):
                inv[d] = i
            return self.permute(val, inv)
        if k in _ALIAS_STEPS:
            return val
        if k == "expand":
            if tuple(base.meta.shape) == tuple(val.meta.shape):
                return val
            raise Unsupported("in-place op through expand")
        plan, _ = self._index_plan(base, step[1])
        parts = [base]
        for sl in plan:
            parts.append(self.slice(parts[-1], *sl))
        val = self.reshape(val, tuple(parts[-1].meta.shape))
        for sl, part in zip(reversed(plan), reversed(parts[:-1])):
            val = self._insert(part, sl, val)
        return val

    def _insert(self, base, sl, val):
        """base with its slice `sl` replaced by val."""
        d, start, end, step = sl
        end = max(end, start)
        if start == end:
            return base
        if step != 1:
            raise Unsupported("in-place write through a slice with a step")
        n = base.meta.shape[d]
        pieces = []
        if start > 0:
            pieces.append(self.slice(base, d, 0, start, 1))
        pieces.append(val)
        if end < n:
            pieces.append(self.slice(base, d, end, n, 1))
        if len(pieces) == 1:
            return val
        return self.node("cat", pieces, torch.cat([p.meta for p in pieces], d), dim=d)

    # -- elementwise ------------------------------------------------------------------------------
    def unary(self, op, x):
        self.check(x)
        meta = getattr(torch, op)(x.meta)
        self.accepts(op, getattr(torch, op), x)
        return self.node(op, [x], meta)

    _ARITH = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
              "pow": operator.pow, "remainder": operator.mod, "maximum": torch.maximum,
              "minimum": torch.minimum}
    _CMP = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
            "gt": operator.gt, "ge": operator.ge}

    def binary(self, op, a, b):
        if not isinstance(a, TensorVar) and not isinstance(b, TensorVar):
            raise Unsupported(f"{op} without a tensor operand")
        for v in (a, b):
            if not isinstance(v, (TensorVar,) + SCALARS):
                raise Unsupported(f"unsupported operand {type(v).__name__} for {op}")
        _fits_int64(a, b)
        if op in self._CMP:
            meta = self._CMP[op](_meta(a), _meta(b))
        elif op in ("logical_and", "logical_or"):
            ma, mb = _meta(a), _meta(b)
            if not isinstance(ma, torch.Tensor):
                ma = torch.tensor(ma, device="meta")
            if not isinstance(mb, torch.Tensor):
                mb = torch.tensor(mb, device="meta")
            meta = getattr(torch, op)(ma, mb)
        elif op in ("maximum", "minimum") and not (isinstance(a, TensorVar) and isinstance(b, TensorVar)):
            t = a if isinstance(a, TensorVar) else b
            s = b if t is a else a
            meta = torch.empty(t.meta.shape, dtype=torch.result_type(t.meta, s), device="meta")
        else:
            meta = self._ARITH[op](_meta(a), _meta(b))
        if op in self._CMP or op in ("logical_and", "logical_or"):
            t = a if isinstance(a, TensorVar) else b
            s = b if t is a else a
            cdt = torch.result_type(t.meta, s) if not isinstance(s, TensorVar) else None
        else:
            cdt = meta.dtype
        if op == "remainder" and not meta.dtype.is_floating_point:
            self._int_divisor(op, b)
        if op in ("maximum", "minimum", "logical_and", "logical_or"):  # they take tensors only: scalars as 0-d
            pa, pb = (v if isinstance(v, TensorVar) else torch.tensor(v) for v in (a, b))
            self.accepts(op, getattr(torch, op), pa, pb)
        else:
            self.accepts(op, self._CMP.get(op) or self._ARITH[op], a, b)
        if not isinstance(a, TensorVar):
            a = self.const(a, cdt)
        if not isinstance(b, TensorVar):
            b = self.const(b, cdt)
        return self.node(op, [a, b], meta)

    @staticmethod
    def _int_divisor(op, b):
        """Integer division and remainder take a nonzero Python number as divisor: eager raises
        ZeroDivisionError for a zero divisor, where compiled integer division traps or gives garbage
        (a tensor divisor could hold a zero)."""
        if isinstance(b, TensorVar):
            raise Unsupported(f"integer {op} by a tensor (eager raises for a zero divisor)")
        if b == 0:
            raise Unsupported(f"integer {op} by zero (eager raises ZeroDivisionError)")

    def trunc(self, x):
        """Rounding toward zero (floor of positives, ceil of negatives)."""
        self.check(x)
        if not x.meta.dtype.is_floating_point:
            return x
        return self.where(self.binary("lt", x, 0), self.unary("ceil", x), self.unary("floor", x))

    def div(self, a, b, rounding_mode=None, grad="raise"):
        """torch.div: true division, or with rounding_mode 'trunc' / 'floor' (the result keeps the
        promoted type of a and b: integers stay integers). grad: eager's autograd for a rounded division
        of tensors that require grad: 'raise' (floor_divide and the // operator: the backward raises, so
        not captured) or 'zero' (torch.div(rounding_mode=...): zero gradients)."""
        if rounding_mode is None:
            return self.binary("div", a, b)
        if rounding_mode not in ("trunc", "floor"):
            raise Unsupported(f"div rounding_mode={rounding_mode!r}")
        grads = [v for v in (a, b) if isinstance(v, TensorVar) and self.needs_grad(v)]
        if not grads:
            return self._div_rounded(a, b, rounding_mode)
        if grad == "raise":
            raise Unsupported("floor division of a tensor that requires grad (eager's backward raises)")
        r = self._div_rounded(*(self.detach(v) if v in grads else v for v in (a, b)), rounding_mode)
        return self.zero_grad_to(r, *grads)

    def zero_grad_to(self, r, *vals):
        """r's value, computed by autograd from vals with zero gradients (r itself cut from them)."""
        for v in vals:
            r = self.where(self.full(tuple(r.meta.shape), True, torch.bool), r, v)
        return r

    def sqrt0(self, s):
        """sqrt(s) whose gradient is zero where s == 0, as eager's backward of norm and std makes it (sqrt's
        own is infinite there, and times a zero gives NaN), when s needs a gradient."""
        if not self.needs_grad(s):
            return self.unary("sqrt", s)
        zero = self.binary("eq", s, 0)
        return self.where(zero, 0.0, self.unary("sqrt", self.where(zero, 1.0, s)))

    def _div_rounded(self, a, b, rounding_mode):
        if not isinstance(a, TensorVar) and not isinstance(b, TensorVar):
            raise Unsupported("div without a tensor operand")
        for v in (a, b):
            if not isinstance(v, (TensorVar,) + SCALARS):
                raise Unsupported(f"unsupported operand {type(v).__name__} for div")
        ma, mb = _meta(a), _meta(b)
        if not isinstance(ma, torch.Tensor):
            ma = torch.tensor(ma, device="meta")
        try:
            meta = torch.div(ma, mb, rounding_mode=rounding_mode)
        except (RuntimeError, TypeError) as e:
            raise Unsupported(f"div: {e}")
        dt = meta.dtype
        if dt == torch.bool:
            raise Unsupported("div with rounding of booleans")
        if dt.is_floating_point:
            # float16 / bfloat16 compute in float32 as eager's kernels do, the result rounded once to dt;
            # with a tensor divisor (a Python number dividend is then rounded to dt) trunc rounds the
            # quotient to dt and, on the CPU, floor rounds every step
            ct, rnd = dt, (lambda v: v)
            if dt in (torch.float16, torch.bfloat16):
                ct, tensor_divisor = torch.float32, isinstance(b, TensorVar)
                if tensor_divisor and (rounding_mode == "trunc" or self.tr.device.type == "cpu"):
                    def rnd(v):
                        return self.convert(self.convert(v, dt), ct)

                def operand(v):
                    if isinstance(v, TensorVar):
                        return self.convert(self.convert(v, dt), ct)
                    return torch.tensor(v, dtype=dt).item() if tensor_divisor else v
                a, b = operand(a), operand(b)
            if rounding_mode == "trunc":
                return self.convert(self.trunc(rnd(self.binary("div", a, b))), dt)
            return self.convert(self._floor_div_float(a, b, ct, rnd), dt)
        self._int_divisor(f"div (rounding_mode={rounding_mode!r})", b)
        a = self.convert(a, dt) if isinstance(a, TensorVar) else self.const(a, dt)
        q = self.node("div", [a, self.const(b, dt)], meta)  # integer division truncates
        if rounding_mode == "trunc":
            return q
        # floor: one less where the division was inexact and the quotient negative (the remainder's
        # sign differs from the divisor's)
        r = self.binary("sub", a, self.binary("mul", q, b))
        inexact_negative = self.binary("lt" if b > 0 else "gt", r, 0)
        return self.where(inexact_negative, self.binary("sub", q, 1), q)

    def _floor_div_float(self, a, b, dt, rnd=lambda v: v):
        """Floating-point floor division as eager computes it (c10's div_floor_floating): the quotient of
        a minus its remainder, rounded to the nearest integer (ties down), not floor(a / b). rnd rounds
        a step's result (to float16 / bfloat16 where eager computes in those)."""
        if not isinstance(b, TensorVar) and b == 0:
            return self.binary("div", a, b)  # +-inf or nan, as eager
        a = self.convert(a, dt) if isinstance(a, TensorVar) else self.const(a, dt)
        mod = self.fmod(a, b)  # exact
        q = rnd(self.binary("div", rnd(self.binary("sub", a, mod)), b))
        # one less where mod and b differ in sign (a nonzero mod)
        if isinstance(b, TensorVar):
            fix = self.binary("logical_and", self.binary("ne", mod, 0),
                              self.binary("ne", self.binary("lt", b, 0), self.binary("lt", mod, 0)))
        else:
            fix = self.binary("gt" if b < 0 else "lt", mod, 0)
        q = self.where(fix, rnd(self.binary("sub", q, 1)), q)
        fl = self.unary("floor", q)
        r = self.where(self.binary("gt", rnd(self.binary("sub", q, fl)), 0.5), rnd(self.binary("add", fl, 1)), fl)
        # a zero quotient takes the sign of a / b (finite there: |a| < |b|)
        r = self.where(self.binary("eq", q, 0), self.binary("mul", self.binary("div", a, b), 0.0), r)
        if isinstance(b, TensorVar):
            r = self.where(self.binary("eq", b, 0), rnd(self.binary("div", a, b)), r)
        return self.convert(r, dt)

    def fmod(self, a, b):
        """torch.fmod: the C remainder (the sign of a)."""
        self.check(a)
        if not isinstance(b, (TensorVar,) + SCALARS):
            raise Unsupported(f"unsupported operand {type(b).__name__} for fmod")
        try:
            meta = torch.fmod(a.meta, _meta(b))
        except (RuntimeError, TypeError) as e:
            raise Unsupported(f"fmod: {e}")
        dt = meta.dtype
        if dt == torch.bool:
            raise Unsupported("fmod of booleans")
        if self.needs_grad(b):
            raise Unsupported("fmod by a tensor that requires grad")
        if self.needs_grad(a):
            # eager's gradient is 1 everywhere (abs's is 0 at a == 0): the value of a cut from autograd,
            # then a - a (zero, keeping the value's sign of zero; NaN where a is infinite, as fmod)
            a = self.convert(a, dt)
            ad = self.detach(a)
            return self.binary("sub", self.fmod(ad, b), self.binary("sub", ad, a))
        if not dt.is_floating_point:
            self._int_divisor("fmod", b)
            a = self.convert(a, dt)
            return self.binary("sub", a, self.binary("mul", self.div(a, b, "trunc"), b))
        # fmod(|a|, |b|) is exact (graph.remainder of non-negative numbers), then a's sign
        a = self.convert(a, dt)
        bb = self.unary("abs", self.convert(b, dt)) if isinstance(b, TensorVar) else abs(b)
        m = self.binary("remainder", self.unary("abs", a), bb)
        return self.where(self.binary("lt", a, 0), self.unary("neg", m), m)

    def where(self, c, a, b):
        self.check(c)
        _fits_int64(a, b)
        if c.meta.dtype != torch.bool:
            c = self.convert(c, torch.bool)
        meta = torch.where(c.meta, _meta(a), _meta(b))
        a = self.const(a, meta.dtype)
        b = self.const(b, meta.dtype)
        return self.node("where", [c, a, b], meta)

    def convert(self, x, dtype):
        self.check(x)
        if x.meta.dtype == dtype:
            return x
        return self.node("convert", [x], x.meta.to(dtype))

    def clamp(self, x, lo=None, hi=None, open_bounds=False):
        """torch.clamp: minimum(maximum(x, lo), hi) (NaN propagates; hi wins where lo > hi). When x needs a
        gradient, eager's subgradient: through x where lo <= x <= hi (clamp_backward), or, open_bounds
        (hardtanh, relu6), where not (x <= lo or x >= hi); maximum/minimum would split it at the bounds."""
        self.check(x)
        for v in (lo, hi):
            if v is not None and not isinstance(v, (TensorVar,) + SCALARS):
                raise Unsupported(f"clamp bound of type {type(v).__name__}")
        _fits_int64(lo, hi)
        try:
            meta = torch.clamp(x.meta, _meta(lo), _meta(hi))
        except (RuntimeError, TypeError, ValueError) as e:
            raise Unsupported(f"clamp: {e}")  # eager raises
        self.accepts("clamp", torch.clamp, x, lo, hi)  # booleans raise
        dt = meta.dtype

        def plain(v):
            if lo is not None:
                v = self.binary("maximum", v, lo)
            if hi is not None:
                v = self.binary("minimum", v, hi)
            return self.convert(v, dt)
        if not (dt.is_floating_point and self.needs_grad(x, lo, hi)):
            return plain(x)
        if self.needs_grad(lo, hi):
            raise Unsupported("clamp with a tensor bound that requires grad (eager's subgradient at ties)")
        xc = self.convert(x, dt)
        if open_bounds:
            out = [self.binary("le", xc, lo) if lo is not None else None,
                   self.binary("ge", xc, hi) if hi is not None else None]
            out = [c for c in out if c is not None]
            outside = out[0] if len(out) == 1 else self.binary("logical_or", out[0], out[1])
            inside = self.unary("logical_not", outside)
        else:
            ins = [self.binary("ge", xc, lo) if lo is not None else None,
                   self.binary("le", xc, hi) if hi is not None else None]
            ins = [c for c in ins if c is not None]
            inside = ins[0] if len(ins) == 1 else self.binary("logical_and", ins[0], ins[1])
        # inside: x itself (its gradient passes); elsewhere the clamped value of x cut from autograd
        r = self.where(inside, xc, plain(self.detach(x)))
        return self.expand(r, tuple(meta.shape))

    # -- reductions ------------------------------------------------------------------------------
    @staticmethod
    def _reduce_meta(op, m, dims, keepdim, **kw):
        if op == "prod":
            r = m
            for d in sorted(dims, reverse=True):
                r = torch.prod(r, d, keepdim=keepdim, **kw)
            return r if m.dim() else torch.prod(m, **kw)
        if m.dim() == 0:
            return getattr(torch, op)(m, **kw)
        return getattr(torch, op)(m, dims, keepdim=keepdim, **kw)

    def reduce(self, op, x, dim=None, keepdim=False, dtype=None):
        self.check(x)
        keepdim = bool(keepdim)
        dims = _norm_dims(dim, x.meta.dim())
        if dtype is None:
            meta = self._reduce_meta(op, x.meta, dims, keepdim)
        else:
            if op not in ("sum", "mean", "prod"):
                raise Unsupported(f"{op} with dtype= (eager raises)")
            meta = self._reduce_meta(op, x.meta, dims, keepdim, dtype=dtype)
            x = self.convert(x, dtype)  # eager converts the input, then reduces in that type
        # the graph's reduction computes in its operand's type as PyTorch's does without dtype= (integers
        # in int64); sum(dtype=torch.int32) is then that int64 sum converted (the same value, modulo 2**32)
        natural = self._reduce_meta(op, x.meta, dims, keepdim) if dtype is not None else meta
        if x.meta.dtype != natural.dtype:
            x = self.convert(x, natural.dtype)
        if x.meta.dim() == 0:
            return self.convert(self.fresh_copy(x), meta.dtype)
        return self.convert(self.node(op, [x], natural, dims=dims, keepdim=keepdim), meta.dtype)

    def var_(self, x, dim=None, unbiased=None, keepdim=False, correction=None):
        self.check(x)
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        dims = _norm_dims(dim, x.meta.dim())
        n = 1
        for d in dims:
            n *= x.meta.shape[d]
        m = self.reduce("mean", x, dims, True)
        d = self.binary("sub", x, m)
        s = self.reduce("sum", self.binary("mul", d, d), dims, keepdim)
        return self.binary("div", s, float(max(n - correction, 0)))

    def softmax(self, op, x, dim, dtype=None):
        self.check(x)
        if dim is None:
            raise Unsupported("softmax without dim")
        if dtype is not None:
            x = self.convert(x, dtype)
        d = _norm_dim(dim, x.meta.dim())
        meta = getattr(torch, op)(x.meta, d)
        if x.meta.dim() == 0:
            raise Unsupported(f"{op} of a 0-d tensor")
        return self.node(op, [x], meta, dim=d)

    # -- shapes ------------------------------------------------------------------------------------
    def reshape(self, x, shape):
        self.check(x)
        meta = x.meta.reshape(shape)
        if tuple(meta.shape) == tuple(x.meta.shape):
            return x
        return self.node("reshape", [x], meta)

    def permute(self, x, dims):
        self.check(x)
        dims = [_norm_dim(d, x.meta.dim()) for d in dims]
        if dims == list(range(len(dims))):
            return x
        return self.node("permute", [x], x.meta.permute(dims).contiguous(), dims=dims)

    def transpose(self, x, d0, d1):
        self.check(x)
        nd = x.meta.dim()
        if nd < 2:
            return x
        p = list(range(nd))
        a, b = _norm_dim(d0, nd), _norm_dim(d1, nd)
        p[a], p[b] = p[b], p[a]
        return self.permute(x, p)

    def expand(self, x, shape):
        self.check(x)
        meta = x.meta.expand(shape)
        if tuple(meta.shape) == tuple(x.meta.shape):
            return x
        return self.node("expand", [x], meta.contiguous())

    def slice(self, x, dim, start, end, step):
        meta = x.meta[(slice(None),) * dim + (slice(start, end, step),)]
        return self.node("slice", [x], meta.contiguous(), dim=dim, start=start, end=max(end, start), step=step)

    def _index_plan(self, x, idx):
        """Basic indexing x[idx] as slices [(dim, start, end, step), ...] applied in turn, then a reshape
        to the result's shape."""
        if not isinstance(idx, tuple):
            idx = (idx,)
        for i in idx:
            if not (i is None or i is Ellipsis or isinstance(i, (int, slice)) and not isinstance(i, bool)):
                raise Unsupported(f"tensor indexing with {type(i).__name__}")
            if isinstance(i, slice) and not all(v is None or isinstance(v, int) for v in (i.start, i.stop, i.step)):
                raise Unsupported("slice with non-int bounds")
        meta = x.meta[idx]
        # expand the Ellipsis
        n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
        full = []
        for i in idx:
            if i is Ellipsis:
                full += [slice(None)] * (x.meta.dim() - n_real)
            else:
                full.append(i)
        plan = []
        d = 0
        for i in full:
            if i is None:
                continue
            size = x.meta.shape[d]
            if isinstance(i, int):
                if not -size <= i < size:
                    raise Unsupported("index out of range")
                i = i % size
                plan.append((d, i, i + 1, 1))
            else:
                start, stop, step = i.indices(size)
                if step <= 0:
                    raise Unsupported("slice step must be positive")
                if (start, stop, step) != (0, size, 1):
                    plan.append((d, start, stop, step))
            d += 1
        return plan, tuple(meta.shape)

    def getitem(self, x, idx):
        self.check(x)
        plan, shape = self._index_plan(x, idx)
        cur = x
        for d, start, stop, step in plan:
            cur = self.slice(cur, d, start, stop, step)
        return self.reshape(cur, shape)

    # -- indexing with an integer tensor (one graph op: gather) -----------------------------------------
    def _int_index(self, index, what):
        self.check(index)
        if index.meta.dtype not in (torch.int32, torch.int64):
            raise Unsupported(f"{what} with a {index.meta.dtype} index")

    def check_index_range(self, index, n, wraps):
        """Index values outside [0, n) ([-n, n) where they wrap, as x[t]) make eager raise, while compiled
        code would clamp them: a constant index is checked now, a graph input (or a reshape, expand,
        permute or integer conversion of one: the same values) before every run of the graph
        (Tracer.index_bounds); an index computed in the graph is not captured."""
        lo, node = (-n if wraps else 0), index.node
        while node.op in ("reshape", "expand", "permute") or (
                node.op == "convert" and not node.meta.dtype.is_floating_point
                and not node.inputs[0].meta.dtype.is_floating_point):
            node = node.inputs[0]
        if node.op == "input":
            self.tr.index_bounds.append((node.index, lo, n))
        elif node.op == "constant":
            v = torch.as_tensor(node.attrs["value"])
            if v.numel() and (int(v.min()) < lo or int(v.max()) >= n):
                raise Unsupported("index out of range (eager raises)")
        else:
            raise Unsupported("an index computed in the graph (its range cannot be checked before the kernel)")

    def gather(self, x, dim, index, checked=False):
        """torch.gather: result[i] = x[i with i[dim] = index[i]]; a negative index counts from the end
        (where the front end allows it: the range is checked, check_index_range)."""
        self.check(x)
        self._int_index(index, "gather")
        if x.meta.dim() == 0 or index.meta.dim() != x.meta.dim():
            raise Unsupported("gather of a 0-d tensor, or with an index of another rank")
        d = _norm_dim(dim, x.meta.dim())
        if not checked:
            self.check_index_range(index, x.meta.shape[d], wraps=False)
        self.accepts("gather", torch.gather, x, d, index)
        meta = torch.gather(x.meta, d, index.meta)
        return self.node("gather", [x, index], meta.contiguous(), dim=d)

    def index_select(self, x, dim, index, checked=False):
        """torch.index_select (a 0-d or 1-D index): a gather with the index broadcast over the other dims."""
        self.check(x)
        self._int_index(index, "index_select")
        if x.meta.dim() == 0 or index.meta.dim() > 1:
            raise Unsupported("index_select of a 0-d tensor or with an index of rank > 1")
        d = _norm_dim(dim, x.meta.dim())
        if not checked:
            self.check_index_range(index, x.meta.shape[d], wraps=False)
        k = index.meta.numel()
        shape = tuple(x.meta.shape[:d]) + (k,) + tuple(x.meta.shape[d + 1:])
        ones = (1,) * d + (k,) + (1,) * (x.meta.dim() - d - 1)
        idx = self.expand(self.reshape(index, ones), shape)
        return self.gather(x, d, idx, checked=True)

    def take_along(self, x, dim, index, wraps):
        """x indexed along `dim` by an integer tensor of any shape (x[idx] with wraps: negative values count
        from the end; F.embedding without): the index's dims replace `dim` in the result."""
        self.check(x)
        self._int_index(index, "integer tensor indexing")
        if x.meta.dim() == 0:
            raise Unsupported("integer tensor indexing of a 0-d tensor")
        d = _norm_dim(dim, x.meta.dim())
        self.check_index_range(index, x.meta.shape[d], wraps)
        flat = self.reshape(index, (index.meta.numel(),))
        r = self.index_select(x, d, flat, checked=True)
        return self.reshape(r, tuple(x.meta.shape[:d]) + tuple(index.meta.shape) + tuple(x.meta.shape[d + 1:]))

    def cat(self, xs, dim=0):
        xs = list(xs)
        self.check(*xs)
        meta = torch.cat([x.meta for x in xs], dim)
        xs = [x for x in xs if x.meta.numel() or x.meta.dim() != 1]
        d = _norm_dim(dim, meta.dim())
        xs = [self.convert(x, meta.dtype) for x in xs]
        if not xs:  # only empty 1-D tensors (eager skips them): an empty result
            return self.full(tuple(meta.shape), False if meta.dtype == torch.bool else 0, meta.dtype)
        if len(xs) == 1:
            return self.fresh_copy(xs[0])
        return self.node("cat", xs, meta, dim=d)

    def stack(self, xs, dim=0):
        xs = list(xs)
        self.check(*xs)
        nd = xs[0].meta.dim() + 1
        d = _norm_dim(dim, nd)
        return self.cat([self.reshape(x, x.meta.unsqueeze(d).shape) for x in xs], d)

    def full(self, shape, value, dtype):
        _fits_int64(value)
        if isinstance(value, SCALARS):
            self.accepts("full", torch.full, (2,), value, dtype=dtype)  # 1e5 in float16 raises
        c = self.const(value, dtype)
        return self.expand(c, tuple(shape)) if tuple(shape) else c

    # -- linear algebra ----------------------------------------------------------------------------
    def matmul(self, a, b):
        self.check(a, b)
        meta = torch.matmul(a.meta, b.meta)
        self.accepts("matmul", torch.matmul, a, b)  # booleans raise
        dt = meta.dtype
        a, b = self.convert(a, dt), self.convert(b, dt)
        na, nb = a.meta.dim(), b.meta.dim()
        if na == 0 or nb == 0:
            raise Unsupported("matmul of a 0-d tensor")
        if na == 1 and nb == 1:
            return self.reduce("sum", self.binary("mul", a, b), 0)
        if nb == 1:
            r = self.matmul(a, self.reshape(b, (b.meta.shape[0], 1)))
            return self.reshape(r, meta.shape)
        if na == 1:
            r = self.matmul(self.reshape(a, (1, a.meta.shape[0])), b)
            return self.reshape(r, meta.shape)
        if na == 2 and nb == 2:
            return self.node("matmul", [a, b], meta)
        if nb == 2:
            k = a.meta.shape[-1]
            a2 = self.reshape(a, (math.prod(a.meta.shape[:-1]), k))  # not -1: ambiguous without elements
            r = self.node("matmul", [a2, b], torch.matmul(a2.meta, b.meta))
            return self.reshape(r, meta.shape)
        # batched: broadcast batch dims, flatten to 3-D
        batch = tuple(meta.shape[:-2])
        a3 = self.expand(a, batch + tuple(a.meta.shape[-2:]))
        b3 = self.expand(b, batch + tuple(b.meta.shape[-2:]))
        a3 = self.reshape(a3, (math.prod(batch),) + tuple(a.meta.shape[-2:]))
        b3 = self.reshape(b3, (math.prod(batch),) + tuple(b.meta.shape[-2:]))
        r = self.node("matmul", [a3, b3], torch.matmul(a3.meta, b3.meta))
        return self.reshape(r, meta.shape)

    def linear(self, x, w, b=None):
        y = self.matmul(x, self.transpose(w, 0, 1) if w.meta.dim() == 2 else w)
        if b is not None:
            y = self.binary("add", y, b)
        return y

    # -- composites --------------------------------------------------------------------------------
    def gelu(self, x, approximate="none"):
        self.check(x)
        if approximate == "tanh":
            inner = self.binary("mul", self.binary("add", x, self.binary(
                "mul", self.binary("mul", self.binary("mul", x, x), x), 0.044715)), math.sqrt(2 / math.pi))
            return self.binary("mul", self.binary("mul", x, 0.5), self.binary("add", self.unary("tanh", inner), 1.0))
        e = self.unary("erf", self.binary("mul", x, 1 / math.sqrt(2)))
        return self.binary("mul", self.binary("mul", x, 0.5), self.binary("add", e, 1.0))

    def silu(self, x):
        return self.binary("mul", x, self.unary("sigmoid", x))

    def _upcast(self, x):
        if x.meta.dtype in (torch.float16, torch.bfloat16):
            return self.convert(x, torch.float32), x.meta.dtype
        return x, None

    def layer_norm(self, x, normalized_shape, w=None, b=None, eps=1e-5):
        self.check(x)
        x, low = self._upcast(x)
        k = len(tuple(normalized_shape)) if isinstance(normalized_shape, (tuple, list, torch.Size)) else 1
        dims = list(range(x.meta.dim() - k, x.meta.dim()))
        m = self.reduce("mean", x, dims, True)
        d = self.binary("sub", x, m)
        v = self.reduce("mean", self.binary("mul", d, d), dims, True)
        y = self.binary("mul", d, self.unary("rsqrt", self.binary("add", v, float(eps))))
        if low is not None:
            y = self.convert(y, low)
        if w is not None:
            y = self.binary("mul", y, w)
        if b is not None:
            y = self.binary("add", y, b)
        return y

    def rms_norm(self, x, normalized_shape, w=None, eps=None):
        self.check(x)
        x, low = self._upcast(x)
        k = len(tuple(normalized_shape)) if isinstance(normalized_shape, (tuple, list, torch.Size)) else 1
        dims = list(range(x.meta.dim() - k, x.meta.dim()))
        if eps is None:
            eps = torch.finfo(low or x.meta.dtype).eps
        ms = self.reduce("mean", self.binary("mul", x, x), dims, True)
        y = self.binary("mul", x, self.unary("rsqrt", self.binary("add", ms, float(eps))))
        if low is not None:
            y = self.convert(y, low)
        if w is not None:
            y = self.binary("mul", y, w)
        return y
