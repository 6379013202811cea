"""Views and in-place updates: how captured tensors share memory (Ops mixin)."""
import math
import weakref

import torch

from ..errors import Unsupported
from .tensor import _ALIAS_STEPS, _MAYBE_VIEW, TensorVar, _Storage, _View, _meta_step, _shadow
from ..dynamic.symbolic import meta_empty, meta_empty_strided


def _memory_order(s):
    """The permutation of s's dims that lays them out contiguously in memory, where s is dense (each
    element of its span is one of its elements, offset 0), else None."""
    order = sorted(range(s.dim()), key=lambda d: (-s.stride(d), -s.shape[d]))
    if s.storage_offset() != 0 or not s.permute(order).is_contiguous():
        return None
    return order


def _positions(x):
    """The row-major element numbers of x's elements, in x's shape (constant positions)."""
    return torch.arange(x.meta.numel()).reshape(tuple(x.meta.shape))


class ViewOps:
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
        if k == "strided":
            return self._strided_value(x, *step[1:])
        if k == "diagonal":
            return self.static_take(x, _positions(x).diagonal(*step[1:]))
        if k == "unfold":
            return self._windows(x, *step[1:])
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
            if not exact or st.input_index is None and not self._layout_is_modelled(st):
                exact = False
            elif s is not shadow and s._base is not st.shadow:
                return r if r is not x else self.fresh_copy(x)  # eager copies (the layout forbids a view)
        if r is x:
            r = TensorVar(self.tr, x.node)
        r.view = _View(st, steps + (step,), s, exact)
        st.views.append(weakref.ref(r))
        return r

    def _layout_is_modelled(self, st):
        """Whether a computed tensor's memory is laid out as dyn models it (contiguous): known where its
        value comes from constants alone (BEiT's relative position index: arange, meshgrid, stack, a
        broadcast subtraction), by computing it now with eager's ops and reading the strides they give."""
        real = self.constant_value(TensorVar(self.tr, st.node))
        return real is not None and real.stride() == st.shadow.stride() and real.storage_offset() == 0

    # -- as_strided: a view laid out by sizes and strides over its base's memory --------------------------
    def as_strided(self, x, size, stride, offset=None):
        """x.as_strided(size, stride, offset): a view of the memory of x's base, where that memory is
        known: a graph input's (its real layout, guarded), dense (each element of its span is one of its
        elements). Its values are the base's elements gathered in memory order. An explicit offset counts
        from the start of the real storage: the input's storage offset is then guarded too."""
        self.check(x)
        size, stride = tuple(size), tuple(stride)
        for v in size + stride + ((offset,) if offset is not None else ()):
            if not isinstance(v, int) or isinstance(v, bool):
                raise Unsupported("as_strided with sizes, strides or offset that are not ints")
        info = x.view
        if info is None:
            if x.input_index is None:
                raise Unsupported("as_strided of a computed tensor (dyn does not model its memory layout)")
            if x.alias is None:
                x.alias = _Storage(x)
            st, shadow = x.alias, x.alias.shadow
        else:
            st, shadow = info.storage, info.shadow
            if st.input_index is None or not info.exact or shadow is None:
                raise Unsupported("as_strided of a view of a computed tensor (dyn does not model its memory "
                                  "layout)")
        order = _memory_order(st.shadow)
        if order is None:
            raise Unsupported("as_strided of an input whose memory has gaps or overlaps")
        if offset is None:
            offset = shadow.storage_offset()
        else:
            real = self.tr.input_tensors[st.input_index].storage_offset()
            self.tr.offset_guards.append((st.input_index, real))
            offset -= real
        if offset < 0:
            raise Unsupported("as_strided reaching memory before the input's first element")
        try:
            s = st.shadow.as_strided(size, stride, offset)
        except RuntimeError as e:
            raise Unsupported(f"as_strided: {e}")  # eager raises, or reaches memory outside the input's
        step = ("strided", size, stride, offset, order)
        r = self._apply(TensorVar(self.tr, st.node), step)
        r.view = _View(st, (step,), s, True)  # relative to the memory, not to x: the one step from the base
        st.views.append(weakref.ref(r))
        return r

    def unfold(self, x, dim, size, step):
        """Tensor.unfold: windows of `size` every `step` along dim, a view of x whose element (.., w, j)
        is x's (.., w * step + j) whatever x's layout (a gather at constant positions; written back
        through it with a scatter where the windows do not overlap)."""
        self.check(x)
        try:
            x.meta.unfold(dim, size, step)
        except (RuntimeError, IndexError) as e:
            raise Unsupported(f"unfold: {e}")  # eager raises
        return self.view_op(x, ("unfold", dim, size, step))

    def _windows(self, x, dim, size, step):
        """Tensor.unfold's value: x's elements at w * step + j along dim (one gather of nw * size constant
        indices), the window's offset j moved last."""
        if x.meta.dim() == 0:
            return self.reshape(x, (1,))
        meta = x.meta.unfold(dim, size, step)
        d = dim % x.meta.dim()
        nw = meta.shape[d]
        if nw * size == 0:
            return self.full(tuple(meta.shape), False if x.meta.dtype == torch.bool else 0, x.meta.dtype)
        index = (torch.arange(nw)[:, None] * step + torch.arange(size)).reshape(-1)
        r = self.index_select(x, d, self.dense(index), checked=True)
        shape = tuple(x.meta.shape)
        r = self.reshape(r, shape[:d] + (nw, size) + shape[d + 1:])
        return self.permute(r, tuple(i for i in range(r.meta.dim()) if i != d + 1) + (d + 1,))

    def _strided_value(self, base, size, stride, offset, order):
        """The elements at (size, stride, offset) of base's memory (base's dims in `order` are contiguous):
        base's elements in memory order, gathered at constant positions."""
        n = math.prod(size)
        if n == 0:
            return self.full(size, False if base.meta.dtype == torch.bool else 0, base.meta.dtype)
        flat = self.reshape(self.permute(base, order), (base.meta.numel(),))
        pos = torch.arange(base.meta.numel()).as_strided(size, stride, offset).reshape(-1)
        return self.reshape(self.gather(flat, 0, self.dense(pos)), size)

    # -- reads and writes at constant positions (diagonal views, the *_scatter ops) -----------------------
    def static_take(self, x, pos):
        """x's elements at the constant positions pos (x's row-major element numbers, _positions): a gather
        of the flattened x; the result has pos's shape."""
        if pos.numel() == 0:
            return self.full(tuple(pos.shape), False if x.meta.dtype == torch.bool else 0, x.meta.dtype)
        flat = self.reshape(x, (x.meta.numel(),))
        return self.reshape(self.gather(flat, 0, self.dense(pos.reshape(-1)), checked=True), tuple(pos.shape))

    def static_put(self, x, pos, src):
        """A new tensor: x with src (broadcast to pos's shape) written at the constant positions pos, a strided
        view of x's row-major element numbers (the last write winning where positions repeat): one
        graph.as_strided_scatter, which GraphToPrim/Scatter.cpp decomposes into a gather and a select."""
        if x.meta.numel() == 0 or pos.numel() == 0:
            return self.copy(x)
        size, stride, offset = tuple(pos.shape), tuple(pos.stride()), pos.storage_offset()
        if not torch.equal(torch.arange(x.meta.numel()).as_strided(size, stride, offset), pos):
            raise Unsupported("a write at positions that are not a strided view of the tensor")
        src = self.expand(self.convert(src, x.meta.dtype), size)
        meta = meta_empty(tuple(x.meta.shape), dtype=x.meta.dtype, device="meta")
        return self.node("as_strided_scatter", [x, src], meta, size=size, stride=stride, storage_offset=offset)

    # -- memory formats: channels_last tensors ------------------------------------------------------------
    _FORMATS = {torch.channels_last: (0, 2, 3, 1), torch.channels_last_3d: (0, 2, 3, 4, 1)}

    def in_format(self, x, fmt):
        """Whether x is laid out in memory format fmt as far as dyn knows: a graph input's (or an exact
        view's of one) real strides, dyn's own laid-out tensors; a computed tensor is taken as contiguous."""
        info = x.view
        if info is not None and info.exact and (info.storage.input_index is not None or info.storage.laid_out):
            s = info.shadow
        elif info is None and x.input_index is not None:
            s = _shadow(x)
        else:
            s = meta_empty(tuple(x.meta.shape), device="meta")
        return s.is_contiguous(memory_format=fmt)

    def laid_out(self, x, fmt):
        """x's value as a new tensor in memory format fmt (channels_last: NHWC in memory; or the order of
        the dims in memory, empty_permuted's), as eager's x.to(memory_format=fmt) makes it: the graph computes the value in memory order, and the result is
        that tensor viewed in x's dims (returned as that view: eager's strides)."""
        perm = tuple(fmt) if isinstance(fmt, (tuple, list)) else self._FORMATS.get(fmt)  # or a dim order
        if perm is None:
            raise Unsupported(f"memory_format={fmt}")
        self.check(x)
        if x.meta.dim() != len(perm):
            raise Unsupported(f"memory_format={fmt} for a tensor of rank {x.meta.dim()} (eager raises)")
        inv = [0] * len(perm)
        for i, d in enumerate(perm):
            inv[d] = i
        base = self.node("permute", [x], x.meta.permute(perm).contiguous(), dims=list(perm))
        base.alias = _Storage(base, laid_out=True)
        return self.view_op(base, ("permute", inv))

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
            s = _shadow(x) if x.view is None else meta_empty(tuple(x.meta.shape), dtype=x.meta.dtype, device="meta")
        return meta_empty_strided(tuple(s.shape), tuple(s.stride()), dtype=s.dtype, device="meta")

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
        if base is None and not st.laid_out and not any(v is not x for v in st.live_views()):
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
        if k == "strided":
            raise Unsupported("in-place write through an as_strided view")
        if k == "diagonal":
            return self.static_put(base, _positions(base).diagonal(*step[1:]), val)
        if k == "unfold":  # (overlapping windows: refused before, as eager refuses such writes)
            return self.static_put(base, _positions(base).unfold(*step[1:]), val)
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
