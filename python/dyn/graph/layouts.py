"""Inputs read through their strides. Compiled code takes dense row-major buffers; a strided input (an
expanded, transposed or sliced tensor) is passed as the dense block of memory it lies in, its `base`, and
the graph reads it through view ops (slice, permute, expand: index remaps the fusion pass folds into the
loads), so that nothing is copied before the call: `torch.ones(1).expand(2**28)` is one element.

Compiled graphs are specialized on their inputs' strides (capture guards them), so the layout is static.
The base of a layout starts at the tensor's first element (data_ptr()); its outermost dim spans the
tensor's outermost stride times its size, so it may name memory past the tensor's last element: the view
ops never read there (only the tensor's elements are loaded)."""
import math

import torch
from ..dynamic.symbolic import meta_empty, meta_empty_strided


class Layout:
    """How a strided tensor is read from a dense base: base_shape (row-major), then slices
    [(dim, start, end, step)], then permute dims (None: in order), then expand to `shape` (None: no
    stride-0 dims)."""
    __slots__ = ("base_shape", "slices", "perm", "shape", "expand", "reduced")

    def __init__(self, base_shape, slices, perm, shape, expand, reduced):
        self.base_shape, self.slices, self.perm = tuple(base_shape), slices, perm
        self.shape, self.expand = tuple(shape), expand
        self.reduced = reduced  # (sizes, strides): the tensor with its stride-0 dims cut to size 1

    def __repr__(self):
        return f"Layout(base={list(self.base_shape)}, slices={self.slices}, perm={self.perm}, " \
               f"expand={self.expand})"


def input_layout(t):
    """The Layout that reads tensor t from its memory without a copy; None when t is contiguous (its own
    base), is empty, or its strides overlap or do not nest (it is then made contiguous, as before)."""
    return layout_of(tuple(t.shape), tuple(t.stride()))


def layout_of(sizes, strides):
    if not sizes or math.prod(sizes) == 0 or meta_empty_strided(sizes, strides, device="meta").is_contiguous():
        return None
    real = [d for d, (n, s) in enumerate(zip(sizes, strides)) if n > 1 and s > 0]
    units = [d for d in range(len(sizes)) if d not in real]  # size 1, or expanded (stride 0)
    real.sort(key=lambda d: -strides[d])  # outermost first
    for a, b in zip(real, real[1:]):
        # non-overlapping, and each stride a multiple of the next (a dense base has such strides)
        if strides[a] < strides[b] * sizes[b]:
            return None
    for a, b in zip(real, real[1:-1]):
        if strides[a] % strides[b]:
            return None
    m = len(real)
    extents, slices = [], []
    for j, d in enumerate(real):
        if j == 0:
            e = sizes[d] if m > 1 else (sizes[d] - 1) * strides[d] + 1
        elif j < m - 1:
            e = strides[real[j - 1]] // strides[d]
        else:
            e = strides[real[j - 1]]
        extents.append(e)
        # the innermost real dim is a step slice of the elements when its stride is not 1
        step = strides[d] if j == m - 1 else 1
        end = (sizes[d] - 1) * step + 1
        if end != e or step != 1:
            slices.append((j, 0, end, step))
    base_shape = extents + [1] * len(units)  # unit dims last: they change no stride of a dense base
    order = real + units  # base dim k holds tensor dim order[k]
    perm = [order.index(d) for d in range(len(sizes))]
    perm = None if perm == list(range(len(sizes))) else perm
    expanded = any(strides[d] == 0 and sizes[d] > 1 for d in units)
    reduced = (tuple(1 if s == 0 else n for n, s in zip(sizes, strides)), strides)
    return Layout(base_shape, slices, perm, sizes, expanded, reduced)


def strided_graph(graph, layouts):
    """A copy of graph whose input k, when layouts[k] is a Layout, is that layout's dense base, read
    through view ops to the tensor the graph computes with."""
    from .graph import Graph  # graph.py imports nothing from here
    g = Graph()
    g.device, g.mode_attrs = graph.device, {}
    new = {}
    for n, src, lay in zip(graph.inputs, graph.input_sources, layouts):
        if lay is None:
            new[id(n)] = g.add_input(n.meta, src)
            continue
        dt = n.meta.dtype
        v = g.add_input(meta_empty(lay.base_shape, dtype=dt, device="meta"), src)
        for dim, start, end, step in lay.slices:
            meta = v.meta[(slice(None),) * dim + (slice(start, end, step),)].contiguous()
            v = g.add("slice", [v], meta, dim=dim, start=start, end=end, step=step)
        if lay.perm is not None:
            v = g.add("permute", [v], v.meta.permute(lay.perm).contiguous(), dims=list(lay.perm))
        if lay.expand:
            v = g.add("expand", [v], meta_empty(lay.shape, dtype=dt, device="meta"))
        new[id(n)] = v
    for n in graph.nodes:
        new[id(n)] = g.add(n.op, [new[id(i)] for i in n.inputs], n.meta, **n.attrs)
    g.outputs = [new[id(o)] for o in graph.outputs]
    return g
