"""Reductions, softmax, shape ops, indexing, gather, cat and stack, fills (Ops mixin)."""
import torch

from ..errors import Unsupported
from ..graph.eager import run_node
from .tensor import SCALARS, TensorVar, _fits_int64, _norm_dim, _norm_dims
from ..dynamic.symbolic import meta_empty


class ShapeOps:
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

    def var_(self, x, dim=None, unbiased=None, keepdim=False, correction=None, sqrt=False):
        """graph.var (graph.std with sqrt) over dim (None or no dims: all) with eager's correction (from
        unbiased when not given): one op, which dyn-convert-graph-to-prim decomposes."""
        self.check(x)
        if correction is not None and unbiased is not None:
            raise Unsupported("var with both unbiased and correction (eager raises)")
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        if isinstance(correction, bool) or not isinstance(correction, (int, float)):
            raise Unsupported(f"var with correction={correction!r}")
        name, fn = ("std", torch.std) if sqrt else ("var", torch.var)
        try:
            meta = fn(x.meta, dim, correction=correction, keepdim=bool(keepdim))
        except (RuntimeError, TypeError, ValueError, IndexError) as e:
            raise Unsupported(f"{name}: {e}")  # eager raises
        if not x.meta.dtype.is_floating_point:
            raise Unsupported(f"{name} of a {x.meta.dtype} tensor")
        if x.meta.dim() == 0:
            x, dims = self.reshape(x, (1,)), [0]
        else:
            dims = _norm_dims(dim, x.meta.dim())
        shape = tuple(1 if i in dims else n for i, n in enumerate(x.meta.shape) if keepdim or i not in dims)
        r = self.node(name, [x], meta_empty(shape, dtype=meta.dtype, device="meta"), dims=tuple(dims),
                      correction=float(correction), keepdim=bool(keepdim))
        return self.reshape(r, tuple(meta.shape))

    def softmax(self, op, x, dim, dtype=None):
        self.check(x)
        if dim is None:
            raise Unsupported("softmax without dim")
        if dtype is not None:
            x = self.convert(x, dtype)
        d = _norm_dim(dim, x.meta.dim())
        meta_of = torch.softmax if op == "safe_softmax" else getattr(torch, op)  # safe: softmax's meta
        meta = meta_of(x.meta, d)
        if x.meta.dim() == 0:  # as a 1-element vector (NaN and inf propagate as eager's)
            return self.reshape(self.softmax(op, self.reshape(x, (1,)), 0), ())
        if x.meta.dtype in (torch.float16, torch.bfloat16):
            # eager computes in float32 and rounds once; rounding x - max - log(sum) in bf16 loses the
            # small results of log_softmax
            x32 = self.convert(x, torch.float32)
            return self.convert(self.node(op, [x32], meta_of(x32.meta, d), dim=d), x.meta.dtype)
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
        if isinstance(start, torch.SymInt) or isinstance(end, torch.SymInt):  # bounds known at run time
            if step != 1:
                return self._strided_dynamic_slice(x, dim, start, end, step)
            return self.node("dynamic_slice", [x], meta.contiguous(), dim=dim, start=start, end=end)
        return self.node("slice", [x], meta.contiguous(), dim=dim, start=start, end=max(end, start), step=step)

    def _strided_dynamic_slice(self, x, dim, start, end, step):
        """x[start:end:step] along `dim` where a bound is known at run time only (every other position of a
        dynamic length, `x[:, ::2]`): a gather at start, start + step, ..., a runtime count of positions
        (graph.iota scaled and shifted), which the gather's kernel computes from its index; in range by
        construction (0 <= start < end <= the dim's size, guarded where symbolic)."""
        n = (end - start + step - 1) // step
        pos = self.binary("mul", self.iota(n, torch.int64), step)
        if not (type(start) is int and start == 0):
            pos = self.binary("add", pos, start)
        return self.index_select(x, dim, pos, checked=True)

    def _index_plan(self, x, idx):
        """Basic indexing x[idx] as slices [(dim, start, end, step), ...] applied in turn, then a reshape
        to the result's shape."""
        if not isinstance(idx, tuple):
            idx = (idx,)
        for i in idx:
            if not (i is None or i is Ellipsis or isinstance(i, (int, slice)) and not isinstance(i, bool)):
                raise Unsupported(f"tensor indexing with {type(i).__name__}")
            if isinstance(i, slice) and not all(v is None or isinstance(v, (int, torch.SymInt))
                                                for v in (i.start, i.stop, i.step)):
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
                start, stop, step = _indices(i, size)
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
        (Tracer.index_bounds); an index computed in the graph is in range by construction (_value_range:
        a sort's permutation, an argmax, floor-divided) or computed again before every run and checked."""
        lo, node = (-n if wraps else 0), index.node
        while node.op in ("reshape", "expand", "permute") or (
                node.op == "convert" and not node.meta.dtype.is_floating_point
                and not node.inputs[0].meta.dtype.is_floating_point):
            node = node.inputs[0]
        known = _value_range(node, self.tr.index_known)
        if known is not None and lo <= known[0] and known[1] <= n:
            return
        if node.op == "input":
            self.tr.index_bounds.append((node.index, lo, n))
        elif node.op == "dynamic_slice" and node.inputs[0].op == "input":  # a buffer sliced to a runtime length
            a = node.attrs
            self.tr.index_bounds.append((SlicedInput(node.inputs[0].index, a["dim"], a["start"], a["end"]), lo, n))
        elif node.op == "constant":
            v = torch.as_tensor(node.attrs["value"])
            if v.numel() and (int(v.min()) < lo or int(v.max()) >= n):
                raise Unsupported("index out of range (eager raises)")
        else:
            self._check_computed_index(index.node, lo, n)

    @staticmethod
    def _recomputable(op):
        """Whether an index's subgraph may hold this op: every graph op is a deterministic function of its
        operands except a generic torch call (any Python callable) and the seeded random draws (their cost
        is a tensor's worth of random numbers per run). Real models index with sorts (a mixture of experts'
        routing), argmax (CLIP's pooled token), repeats (GPT-J's rotary table) and floor divisions."""
        # (iota and dynamic_slice take sizes known at run time: graph/sizes.py prints them, eager has none)
        return op not in ("torch_call", "iota", "dynamic_slice") and not op.startswith("seeded_")

    def constant_value(self, v, limit=64, max_numel=65536):
        """The real value of a small tensor computed from constants alone (torch.arange's, torch.tensor's;
        no graph input, generic call or random draw among at most `limit` ops, none of more than `max_numel`
        elements): computed now, so that Python may read it (`.item()`, `int()`, a branch, an arange
        bound) as eager would, with nothing to guard. None otherwise."""
        if not isinstance(v, TensorVar):
            return None
        sub, todo = {}, [v.node]
        while todo:
            m = todo.pop()
            if m in sub:
                continue
            if m.op == "input" or not self._recomputable(m.op) or len(sub) >= limit or _symbolic_shape(m) or \
                    m.meta.numel() > max_numel:  # (a symbolic size is no constant: asked first, so not guarded)
                return None
            sub[m] = True
            todo.extend(m.inputs)
        vals = {}
        with torch.no_grad():
            for m in (m for m in self.tr.graph.nodes if m in sub):
                vals[m] = run_node(m, [vals[i] for i in m.inputs])
        return vals[v.node]

    def check_values(self, ok, message):
        """Eager raises RuntimeError(message) where the bool tensor `ok` (computed from the inputs, as an
        index is: _check_computed_index) is false somewhere: checked before every run of the graph."""
        self._check_computed_index(self.convert(ok, torch.int64).node, 1, 2, message)

    def _check_computed_index(self, node, lo, hi, message=None):
        """An index computed in the graph (T5's relative position buckets, a slice of a position-ids
        buffer): its values are computed again from the inputs before every run of the graph (a small
        deterministic subgraph, at most 64 ops) and range-checked; with no input among its operands, it
        is computed once now."""
        symbolic = self.g.fake_mode is not None
        sub, todo = {}, [node]
        while todo:
            m = todo.pop()
            if m in sub:
                continue
            if not (self._recomputable(m.op) or symbolic and m.op in _SIZED) or len(sub) >= 64 or \
                    symbolic and m.op not in _SIZED and _symbolic_shape(m) and m.op not in ("expand", "reshape") \
                    and m.op in _SHAPED:
                raise Unsupported("an index computed in the graph (its range cannot be checked before the kernel)")
            sub[m] = True
            todo.extend(m.inputs)
        order = [m for m in self.tr.graph.nodes if m in sub]
        inputs = [m for m in self.tr.graph.inputs if m in sub]
        # symbolic sizes the recomputation needs (iota's length, a dynamic slice's bounds): compute.sizes,
        # bound by capture/dynamic_entry.py, gives their values from the inputs at each call
        needs = [v for m in order if _needs_sizes(m) for v in _sizes_of(m)]
        graph = self.g  # (its device, set by the time the graph runs: an iota's numbers are made there)

        def compute(ins):
            vals = {m: ins[m.index] for m in inputs}
            sizes = iter(compute.sizes(ins)) if needs else None
            with torch.no_grad():
                for m in order:
                    if m.op == "iota":
                        vals[m] = torch.arange(next(sizes), dtype=m.meta.dtype, device=graph.device or "cpu")
                    elif m.op == "dynamic_slice":
                        start, end = next(sizes), next(sizes)
                        vals[m] = vals[m.inputs[0]].narrow(m.attrs["dim"], start, end - start)
                    elif m.op in ("expand", "reshape") and _needs_sizes(m):
                        shape = [next(sizes) for _ in range(m.meta.dim())]
                        x = vals[m.inputs[0]]
                        vals[m] = x.expand(shape) if m.op == "expand" else x.reshape(shape)
                    else:
                        vals[m] = run_node(m, [vals[i] for i in m.inputs])
            return vals[node]
        if needs:
            compute.symbolic, compute.sizes = needs, None
        if inputs or needs:  # (computed from sizes alone: T5's relative position buckets)
            # unchanged inputs (and, with symbolic sizes, the same sizes: compute.sizes) need no new check
            compute.reads = tuple(m.index for m in inputs)
            self.tr.index_bounds.append((compute, lo, hi) + ((message,) if message else ()))
            return
        v = compute([])
        if v.numel() and (int(v.min()) < lo or int(v.max()) >= hi):
            raise Unsupported(f"{message or 'index out of range'} (eager raises)")

    def gather(self, x, dim, index, checked=False):
        """torch.gather: result[i] = x[i with i[dim] = index[i]]; a negative index counts from the end
        (where the front end allows it: the range is checked, check_index_range)."""
        self.check(x)
        if index.meta.numel() == 0 and index.meta.dtype in (torch.uint8, torch.int8, torch.int16):
            index = self.convert(index, torch.int64)  # eager takes any integer index that is empty
        self._int_index(index, "gather")
        if (x.meta.dim() == 0) != (index.meta.dim() == 0) and max(x.meta.dim(), index.meta.dim()) == 1 or \
                x.meta.dim() == index.meta.dim() == 0:
            # a 0-d tensor or index next to a 1-D one (or two 0-d ones) is eager's 1-element vector
            meta = self._eager_meta("gather", torch.gather, x, dim, index)
            one = lambda t: t if t.meta.dim() else self.reshape(t, (1,))  # noqa: E731
            return self.reshape(self.gather(one(x), 0, one(index), checked), tuple(meta.shape))
        if x.meta.dim() == 0 or index.meta.dim() != x.meta.dim():
            raise Unsupported("gather of a 0-d tensor, or with an index of another rank")
        d = _norm_dim(dim, x.meta.dim())
        if not checked:
            self.check_index_range(index, x.meta.shape[d], wraps=False)
        self.accepts("gather", torch.gather, x, d, index)
        meta = torch.gather(x.meta, d, index.meta)
        return self.node("gather", [x, index], meta.contiguous(), dim=d)

    def _eager_meta(self, what, fn, x, dim, index):
        """fn's result on the meta tensors; Unsupported where eager raises."""
        try:
            return fn(x.meta, dim, index.meta)
        except (RuntimeError, IndexError) as e:
            raise Unsupported(f"{what}: {e}")  # eager raises

    def index_select(self, x, dim, index, checked=False):
        """torch.index_select (a 0-d or 1-D index): a gather with the index broadcast over the other dims."""
        self.check(x)
        self._int_index(index, "index_select")
        if x.meta.dim() == 0 and index.meta.dim() <= 1:  # eager's 1-element vector; one index (else it raises)
            meta = self._eager_meta("index_select", torch.index_select, x, dim, index)
            r = self.index_select(self.reshape(x, (1,)), 0, self.reshape(index, (index.meta.numel(),)), checked)
            return self.reshape(r, tuple(meta.shape))
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
        # an empty operand adds nothing (eager checked its shape; its dtype counts in meta's): dropped, so
        # an empty slice cat-ed back (Phi-3's rotary q_pass) leaves no empty value in the graph
        xs = [x for x in xs if x.meta.numel()]
        d = _norm_dim(dim, meta.dim())
        xs = [self.convert(x, meta.dtype) for x in xs]
        if not xs:  # only empty operands: an empty result
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

    def iota(self, n, dtype):
        """0, 1, ..., n-1 (n a symbolic size: graph.iota with its runtime length)."""
        with self.g.fake_mode:
            meta = torch.empty((n,), dtype=dtype, device="meta")
        self.g.device = self.tr.device
        return self.var(self.g.add("iota", [], meta))

    def size_tensor(self, n):
        """A 0-d int64 tensor holding the symbolic size n at run time (a size used as a number in tensor
        arithmetic, `position_ids + past_length`): the sum of n ones, whose length is a `?` dim."""
        ones = self.expand(self.const(1, torch.int64), (n,))
        return self.reduce("sum", ones, 0)

    def full(self, shape, value, dtype):
        _fits_int64(value)
        if isinstance(value, SCALARS):
            self.accepts("full", torch.full, (2,), value, dtype=dtype)  # 1e5 in float16 raises
        c = self.const(value, dtype)
        return self.expand(c, tuple(shape)) if tuple(shape) else c


# ops whose result holds (some of) the values of operand 0, rearranged
_SAME_VALUES = {"reshape", "expand", "permute", "slice", "dynamic_slice", "flip", "roll", "gather", "amax", "amin",
                "repeat"}
# ops with an int64 result of positions along `dim` of operand 0 (the index result of a multi-result op)
_POSITIONS = {"argmax", "argmin", "sort", "argsort", "topk", "kthvalue", "mode", "median_dim", "nanmedian_dim"}


_SIZED = ("iota", "dynamic_slice")  # ops of a symbolic capture whose sizes are known at run time only


_SHAPED = ("expand", "reshape", "full")  # eager's run_node reads their result shape from the meta


def _symbolic_shape(m):
    return any(isinstance(d, torch.SymInt) for d in m.meta.shape)


def _needs_sizes(m):
    return m.op in _SIZED or m.op in ("expand", "reshape") and _symbolic_shape(m)


def _sizes_of(m):
    if m.op == "iota":
        return (m.meta.shape[0],)
    if m.op == "dynamic_slice":
        return (m.attrs["start"], m.attrs["end"])
    return tuple(m.meta.shape)


class SlicedInput:
    """An index bound's values: graph input `index` sliced along `dim` from start to end, symbolic sizes
    (a position-ids buffer cut to the sequence length). capture/dynamic_entry.py sets `sizes`, ins -> (start,
    end) at each call."""

    def __init__(self, index, dim, start, end):
        self.index, self.dim, self.start, self.end = index, dim, start, end
        self.sizes = None
        self.reads = (index,)  # checked again when the input or the sizes change

    def __call__(self, ins):
        start, end = self.sizes(ins)
        return ins[self.index].narrow(self.dim, start, end - start)


def _value_range(node, known, depth=0):
    """[lo, hi): bounds of an integer node's values known from how it was computed, without its data (a
    sort's permutation is in [0, n), floor-divided by k in [0, ceil(n / k))), or None. known: node -> n for
    indices a capture handler knows to lie in [0, n) (pooling's)."""
    if node in known:
        return 0, known[node]
    if depth > 32 or node.meta.dtype.is_floating_point or node.meta.dtype == torch.bool:
        return None
    op, a = node.op, node.attrs
    if op == "constant":
        v = torch.as_tensor(a["value"])
        return (int(v.min()), int(v.max()) + 1) if v.numel() else None
    if op == "torch_result":
        node, op = node.inputs[0], node.inputs[0].op
        if op not in _POSITIONS or node.attrs.get("metas") and a.get("index", 0) != len(node.attrs["metas"]) - 1:
            return None  # not the indices result (the last one)
    if op == "iota":  # 0, 1, ..., n-1 (n a symbolic size: the comparisons made of it are guards)
        return 0, node.meta.shape[0]
    if op in _POSITIONS:
        x = node.inputs[0]
        d = node.attrs.get("dim", 0)
        n = x.meta.shape[d] if x.meta.dim() else 1
        return (0, n) if n else None
    rng = lambda k: _value_range(node.inputs[k], known, depth + 1)  # noqa: E731
    if op in _SAME_VALUES:
        return rng(0)
    if op == "convert":
        r = rng(0)
        info = torch.iinfo(node.meta.dtype)
        return r if r and info.min <= r[0] and r[1] - 1 <= info.max else None
    if op in ("cat", "where") or op == "scatter" and a.get("reduce") == "none":
        # (a scatter's result: the destination's values and the source's: Mixtral's inverse permutation)
        ks = [0, 2] if op == "scatter" else range(1 if op == "where" else 0, len(node.inputs))
        rs = [rng(k) for k in ks]
        return None if None in rs else (min(r[0] for r in rs), max(r[1] for r in rs))
    if op in ("add", "sub", "mul", "div_rounded", "remainder", "minimum", "maximum") and len(node.inputs) == 2:
        x, y = rng(0), rng(1)
        if x is None or y is None:
            return None
        (a0, a1), (b0, b1) = (x[0], x[1] - 1), (y[0], y[1] - 1)  # inclusive
        if op == "add":
            return a0 + b0, a1 + b1 + 1
        if op == "sub":
            return a0 - b1, a1 - b0 + 1
        if op == "minimum":
            return min(a0, b0), min(a1, b1) + 1
        if op == "maximum":
            return max(a0, b0), max(a1, b1) + 1
        if op == "mul":
            ps = [a0 * b0, a0 * b1, a1 * b0, a1 * b1]
            return min(ps), max(ps) + 1
        if b0 <= 0:  # a divisor that may be zero or negative
            return None
        if op == "remainder":  # Python's modulo by a positive divisor
            return (a0, a1 + 1) if a0 >= 0 and a1 < b0 else (0, b1)
        if a.get("rounding_mode") == "floor" or (a.get("rounding_mode") == "trunc" and a0 >= 0):
            return min(a0 // b0, a0 // b1), max(a1 // b0, a1 // b1) + 1
    return None


def _indices(sl, size):
    """slice.indices(size), where a bound or the size may be symbolic (a dynamic capture's): a positive
    constant step and bounds that are None, non-negative or counted from the end; comparisons with the size
    are guards."""
    if all(type(v) is int or v is None for v in (sl.start, sl.stop, sl.step)) and type(size) is int:
        return sl.indices(size)
    step = 1 if sl.step is None else sl.step
    if type(step) is not int or step < 1:
        raise Unsupported("a slice of a dynamic size with a step that is not a positive constant")
    start, stop = sl.start, sl.stop
    start = 0 if start is None else (size + start if type(start) is int and start < 0 else start)
    stop = size if stop is None else (size + stop if type(stop) is int and stop < 0 else stop)
    if stop >= size:  # a guard where either is symbolic
        stop = size
    if start >= stop:
        raise Unsupported("an empty slice of a dynamic dim")
    return start, stop, step
