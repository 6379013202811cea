"""Symbolic tensors while capturing: TensorVar (a graph node plus its meta tensor), the memory a base
tensor shares with its views (_Storage, _View), and helpers the op builders and handlers share."""
import contextlib
import operator
import weakref

import torch

from ..errors import Unsupported
from ..dynamic.symbolic import meta_empty, meta_empty_strided


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
    for a computed tensor (a model: dyn does not know the layout eager gives a computed tensor).
    laid_out: the memory of a new tensor dyn lays out in another order than its dims' (channels_last),
    whose one view in its own dims is the tensor: returned as that view of the graph output."""
    __slots__ = ("base", "node", "views", "input_index", "shadow", "laid_out")

    def __init__(self, base, laid_out=False):
        self.base = weakref.ref(base)
        self.node = base.node
        self.views = []
        self.input_index = base.input_index
        self.shadow = _shadow(base)
        self.laid_out = laid_out

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
    """A meta tensor with x's layout: the real input's strides, contiguous for a computed tensor (and for an
    input with symbolic sizes: those are contiguous)."""
    mode = x.tracer.graph.fake_mode  # a capture with symbolic sizes: a fake tensor (views of it stay symbolic)
    with mode if mode is not None else contextlib.nullcontext():
        if x.input_index is not None and not any(isinstance(d, torch.SymInt) for d in x.meta.shape):
            t = x.tracer.input_tensors[x.input_index]
            return torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="meta")
        return torch.empty(tuple(x.meta.shape), dtype=x.meta.dtype, device="meta")


# View steps: ('view', shape) ('reshape', shape) ('permute', dims) ('expand', shape) ('getitem', index)
# ('contig',) ('detach',) ('strided', size, stride, offset, order): as_strided over the base's memory.
# 'reshape' and 'contig' are views only when the layout allows (else copies).
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
    if k == "strided":
        return s.as_strided(step[1], step[2], step[3])
    if k == "diagonal":
        return s.diagonal(*step[1:])
    if k == "unfold":
        return s.unfold(*step[1:])
    return s.contiguous()


SCALARS = (int, float, bool)


def _meta(v):
    return v.meta if isinstance(v, TensorVar) else v


def _fits_int64(*vals):
    """Python ints beyond int64 make eager raise OverflowError (and the meta computation too)."""
    for v in vals:
        if type(v) is int and not -(1 << 63) <= v < (1 << 63):
            raise Unsupported(f"the Python int {v} does not fit in int64 (eager raises)")


def _own_requires_grad(tr, n):
    """node_requires_grad decided by n alone (True/False), or None when it is `grad and any(inputs)`
    with the grad mode on."""
    if n.op == "input":
        return bool(tr.input_tensors[n.index].requires_grad)
    if n.op == "detach" or n.attrs.get("no_grad") or not (n.meta.dtype.is_floating_point or n.meta.dtype.is_complex):
        return False
    grad = n.attrs.get("grad_enabled")
    if grad is None:
        tr.reads_grad_mode = True
        grad = torch.is_grad_enabled()
    return None if grad else False


def node_requires_grad(tr, n):
    """Whether eager's tensor for node n requires grad: an input's flag; a floating result computed
    with grad enabled (the traced block's mode, else the caller's, then guarded) from one that does.
    Detached values and integer or bool results never do. Walked without recursion (a 12-layer model's
    graph is deeper than Python's recursion limit) and remembered per node for the capture (nodes do
    not change once made; the caller's grad mode is part of the key)."""
    memo = tr.requires_grad_memo.setdefault(torch.is_grad_enabled(), {})
    r = memo.get(n)
    if r is not None:
        return r
    work = [[n, -1]]  # (node, next input to look at; -1: its own flags not looked at yet)
    while work:
        top = work[-1]
        node, k = top
        if k < 0:
            own = _own_requires_grad(tr, node)
            if own is not None:
                memo[node] = own
                work.pop()
                continue
            k = 0
        ins = node.inputs
        while k < len(ins) and memo.get(ins[k]) is False:
            k += 1
        if k == len(ins) or memo.get(ins[k]) is True:  # as any(): stops at the first that does
            memo[node] = k < len(ins)
            work.pop()
            continue
        top[1] = k
        work.append([ins[k], -1])
    return memo[n]


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
