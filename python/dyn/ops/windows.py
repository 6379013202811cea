"""Convolutions, pooling, padding and attention (Ops mixin). The graph ops keep their PyTorch meaning
(graph.convolution, graph.max_pool, ...; docs/graph.md); the core computes convolutions and attention with
library calls and pooling and padding with fused kernels (docs/library_calls.md)."""
import math

import torch
import torch.nn.functional as F

from ..errors import Unsupported
from ..graph.random import next_offset
from . import causal
from .tensor import TensorVar

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
INTEGERS = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def _tuple(v, n, what):
    """An int or a sequence of n ints as a tuple of n ints."""
    if isinstance(v, bool):
        raise Unsupported(f"{what} given as a bool")
    if isinstance(v, int):
        return (v,) * n
    if isinstance(v, (tuple, list, torch.Size)) and all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        v = tuple(v)
        if len(v) == 1 and n > 1:
            return v * n
        if len(v) == n:
            return v
    raise Unsupported(f"{what} {v!r} is not {n} ints")


def _meta(fn, *args, _metas=None, **kwargs):
    """fn on meta tensors: the result's shape and dtype, or Unsupported where eager raises. _metas: the
    session's MetaCache (ops/metacache.py), for results that are new tensors."""
    try:
        return _metas.call(fn, *args, **kwargs) if _metas is not None else fn(*args, **kwargs)
    except Exception as e:
        raise Unsupported(f"{getattr(fn, '__name__', fn)}: eager raises {type(e).__name__}: {e}") from None


class WindowOps:
    def _meta_of(self, fn, *args, **kwargs):
        return _meta(fn, *args, _metas=self.tr.session.metas, **kwargs)

    def _batched(self, x, nd, what, integers=False):
        """x with a batch dim (an unbatched [C, *spatial] input gets one of size 1), and whether it was added.
        integers: the op takes integer tensors too (eager's CPU convolutions and pooling compute them;
        its accepts probe refuses what a device's kernels do not)."""
        self.check(x)
        if x.meta.dtype not in FLOATS and not (integers and x.meta.dtype in INTEGERS):
            raise Unsupported(f"{what} of a {x.meta.dtype} tensor")
        if x.meta.dim() == nd + 1:
            return self.reshape(x, (1,) + tuple(x.meta.shape)), True
        if x.meta.dim() != nd + 2:
            raise Unsupported(f"{what} of a {x.meta.dim()}-d tensor")
        return x, False

    # -- convolution -----------------------------------------------------------------------------
    def convolution(self, nd, x, w, b=None, stride=1, padding=0, dilation=1, groups=1, transposed=False,
                    output_padding=0):
        """F.conv{nd}d / F.conv_transpose{nd}d."""
        fn = getattr(F, f"conv_transpose{nd}d" if transposed else f"conv{nd}d")
        self.check(x, w, *([b] if b is not None else []))
        if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
            raise Unsupported("convolution groups must be a positive int")
        for t in (w, b):
            if t is not None and t.meta.dtype != x.meta.dtype:
                raise Unsupported("convolution operands of different dtypes (eager raises)")
        stride, dilation = _tuple(stride, nd, "stride"), _tuple(dilation, nd, "dilation")
        self.accepts(fn.__name__, fn, x, w)  # the dtype on the CPU and the graph's device
        if transposed:
            output_padding = _tuple(output_padding, nd, "output_padding")
            padding = _tuple(padding, nd, "padding")
            meta = self._meta_of(fn, x.meta, w.meta, None if b is None else b.meta, stride, padding, output_padding,
                         groups, dilation)
        else:
            output_padding = (0,) * nd
            meta = self._meta_of(fn, x.meta, w.meta, None if b is None else b.meta, stride, padding, dilation, groups)
            if isinstance(padding, str):  # 'valid', or 'same' (more on the right when the total is odd)
                padding = self._same_padding(x, w, nd, dilation) if padding == "same" else (0,) * nd
                if isinstance(padding, TensorPadded):
                    x, padding = padding.x, padding.padding
            else:
                padding = _tuple(padding, nd, "padding")
        xb, added = self._batched(x, nd, fn.__name__, integers=True)
        mb = self._meta_of(fn, *(t.meta for t in (xb, w)), *(() if b is None else (b.meta,)), **self._conv_kwargs(
            transposed, stride, padding, dilation, groups, output_padding))
        ins = [xb, w] + ([b] if b is not None else [])
        r = self.node("convolution", ins, mb, stride=stride, padding=padding, dilation=dilation, groups=groups,
                      transposed=bool(transposed), output_padding=output_padding if transposed else None)
        return self.reshape(r, tuple(meta.shape)) if added else r

    @staticmethod
    def _conv_kwargs(transposed, stride, padding, dilation, groups, output_padding):
        kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
        if transposed:
            kw["output_padding"] = output_padding
        return kw

    def _same_padding(self, x, w, nd, dilation):
        """padding='same': half the kernel extent on each side; an odd total pads x by one more on the
        right first (as eager's _convolution_mode does)."""
        total = [dilation[i] * (w.meta.shape[2 + i] - 1) for i in range(nd)]
        left = tuple(t // 2 for t in total)
        if all(t % 2 == 0 for t in total):
            return left
        extra = []
        for t in reversed(total):
            extra += [0, t % 2]
        return TensorPadded(self.pad(x, extra), left)

    # -- pooling ---------------------------------------------------------------------------------
    def max_pool(self, nd, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                 return_indices=False):
        fn = getattr(F, f"max_pool{nd}d")
        kernel = _tuple(kernel_size, nd, "kernel_size")
        stride = kernel if stride is None or (isinstance(stride, (tuple, list)) and not stride) else \
            _tuple(stride, nd, "stride")
        padding, dilation = _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation")
        xb, added = self._batched(x, nd, fn.__name__, integers=True)
        if not x.meta.dtype.is_floating_point:  # max_pool1d of int64: eager raises (a window of 1 for the probe)
            self.accepts(fn.__name__, fn, x, 1, 1, 0, 1, return_indices=bool(return_indices))
        if return_indices:
            vals, idx = _meta(fn, x.meta, kernel, stride, padding, dilation, ceil_mode=bool(ceil_mode),
                              return_indices=True)
            attrs = dict(kernel=kernel, stride=stride, padding=padding, dilation=dilation, ceil_mode=bool(ceil_mode))
            return self._with_indices("max_pool_with_indices", fn, xb, attrs, vals, idx, lambda t: fn(
                t, kernel, stride, padding, dilation, ceil_mode=bool(ceil_mode), return_indices=True))
        meta = self._meta_of(fn, x.meta, kernel, stride, padding, dilation, ceil_mode=bool(ceil_mode))
        r = self.node("max_pool", [xb], self._meta_of(fn, xb.meta, kernel, stride, padding, dilation,
                                               ceil_mode=bool(ceil_mode)),
                      kernel=kernel, stride=stride, padding=padding, dilation=dilation, ceil_mode=bool(ceil_mode))
        return self.reshape(r, tuple(meta.shape)) if added else r

    def _with_indices(self, name, fn, xb, attrs, vals, idx, call):
        """The registered max pooling `name` with indices of the batched xb, reshaped to eager's results
        (the indices lie in [0, pooled size): max_unpool reads them without a check)."""
        v, i = self.registered(name, fn, (xb,), attrs, call=call, probe_dtypes=False)  # dtypes checked by the caller
        self.tr.index_known[i.node] = math.prod(xb.meta.shape[2:])
        return self.reshape(v, tuple(vals.shape)), self.reshape(i, tuple(idx.shape))

    def avg_pool(self, nd, x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        fn = getattr(F, f"avg_pool{nd}d")
        kernel = _tuple(kernel_size, nd, "kernel_size")
        stride = kernel if stride is None or (isinstance(stride, (tuple, list)) and not stride) else \
            _tuple(stride, nd, "stride")
        padding = _tuple(padding, nd, "padding")
        if divisor_override is not None and (not isinstance(divisor_override, int) or divisor_override == 0):
            raise Unsupported("avg_pool divisor_override must be a non-zero int")
        kw = dict(ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad))
        if nd > 1:
            kw["divisor_override"] = divisor_override
        xb, added = self._batched(x, nd, fn.__name__, integers=True)
        if not x.meta.dtype.is_floating_point:  # uint8: eager raises (a window of 1 for the probe)
            self.accepts(fn.__name__, fn, x, 1, 1, 0)
        meta = self._meta_of(fn, x.meta, kernel, stride, padding, **kw)
        r = self.node("avg_pool", [xb], self._meta_of(fn, xb.meta, kernel, stride, padding, **kw), kernel=kernel,
                      stride=stride, padding=padding, ceil_mode=bool(ceil_mode),
                      count_include_pad=bool(count_include_pad), divisor_override=divisor_override)
        return self.reshape(r, tuple(meta.shape)) if added else r

    def adaptive_pool(self, kind, nd, x, output_size, return_indices=False):
        fn = getattr(F, f"adaptive_{kind}_pool{nd}d")
        self.check(x)
        if x.meta.dtype not in FLOATS:
            raise Unsupported(f"{fn.__name__} of a {x.meta.dtype} tensor")
        if x.meta.dim() not in (nd + 1, nd + 2):
            raise Unsupported(f"{fn.__name__} of a {x.meta.dim()}-d tensor")
        if isinstance(output_size, int):
            output_size = (output_size,) * nd
        sizes = tuple(x.meta.shape[-nd + i] if s is None else s for i, s in enumerate(output_size))
        meta = _meta(fn, x.meta, sizes)
        if kind == "max":
            meta = meta[0] if isinstance(meta, tuple) else meta
        if any(s < 1 for s in sizes) or any(s < 1 for s in x.meta.shape[-nd:]):
            raise Unsupported(f"{fn.__name__} of or to empty pooled dims")
        if return_indices:
            vals, idx = _meta(fn, x.meta, sizes, True)
            xb, _ = self._batched(x, nd, fn.__name__)
            return self._with_indices("adaptive_max_pool_with_indices", fn, xb, dict(output_size=sizes), vals, idx,
                                      lambda t: fn(t, sizes, True))
        return self.node(f"adaptive_{kind}_pool", [x], meta, output_size=sizes)

    # -- padding ---------------------------------------------------------------------------------
    def pad(self, x, pad, mode="constant", value=None):
        """F.pad: pad lists (before, after) pairs from the last dim backward; negative constant pads crop."""
        self.check(x)
        if not isinstance(pad, (tuple, list, torch.Size)) or len(pad) % 2 or \
                not all(isinstance(p, int) and not isinstance(p, bool) for p in pad):
            raise Unsupported("pad must be a sequence of ints of even length")
        if mode not in ("constant", "reflect", "replicate", "circular"):
            raise Unsupported(f"pad mode {mode!r}")
        if value is not None and mode != "constant":
            raise Unsupported("pad value with a non-constant mode (eager raises)")
        if mode == "constant" and min(pad, default=0) >= 0 and len(pad) // 2 <= x.meta.dim() and \
                any(isinstance(d, torch.SymInt) for d in x.meta.shape):
            return self._pad_symbolic(x, pad, value)
        meta = _meta(F.pad, x.meta, list(pad), mode, value)
        nd = x.meta.dim()
        if len(pad) // 2 > nd:
            raise Unsupported("pad longer than the tensor's dims (eager raises)")
        low, high = [0] * nd, [0] * nd
        for i in range(len(pad) // 2):
            low[nd - 1 - i], high[nd - 1 - i] = pad[2 * i], pad[2 * i + 1]
        for d in range(nd):
            # negative constant and circular pads crop first; reflect and replicate take input index
            # i - low, mirrored or clamped, for negative pads too (as eager's kernels do)
            if (low[d] < 0 or high[d] < 0) and mode in ("constant", "circular"):
                size = x.meta.shape[d]
                start, end = max(-low[d], 0), size - max(-high[d], 0)
                x = self.slice(x, d, start, max(end, start), 1)
                low[d], high[d] = max(low[d], 0), max(high[d], 0)
        if not any(low) and not any(high):
            return self.fresh_copy(x) if tuple(x.meta.shape) == tuple(meta.shape) else x
        v = 0.0 if value is None else value
        if not isinstance(v, (int, float)):
            raise Unsupported("pad value that is not a number")
        if x.meta.dtype.is_floating_point:
            v = float(v)
        elif not math.isfinite(float(v)):
            raise Unsupported("a non-finite pad value for an integer tensor")
        elif x.meta.dtype == torch.bool:
            v = float(bool(v))
        else:
            v = float(int(v))  # eager converts the value to the tensor's type
        return self.node("pad", [x], meta.contiguous(), mode=mode, low=low, high=high, value=v)

    def _pad_symbolic(self, x, pad, value):
        """A constant pad of a tensor with symbolic sizes (a capture with dynamic dims): the value's blocks
        concatenated on each side (graph.pad takes static shapes; F.pad's meta would specialize the sizes)."""
        nd = x.meta.dim()
        v = 0.0 if value is None else value
        if not isinstance(v, (int, float)):
            raise Unsupported("pad value that is not a number")
        dtype = x.meta.dtype
        if not dtype.is_floating_point and not math.isfinite(float(v)):
            raise Unsupported("a non-finite pad value for an integer tensor")
        v = float(v) if dtype.is_floating_point else bool(v) if dtype == torch.bool else int(v)
        for i in range(len(pad) // 2):
            d = nd - 1 - i
            pieces = []
            for n, piece in ((pad[2 * i], None), (None, x), (pad[2 * i + 1], None)):
                if piece is not None:
                    pieces.append(piece)
                elif n:
                    shape = list(x.meta.shape)
                    shape[d] = n
                    pieces.append(self.full(tuple(shape), v, dtype))
            if len(pieces) > 1:
                x = self.cat(pieces, d)
        return x if len(pad) and any(pad) else self.fresh_copy(x)

    # -- attention -------------------------------------------------------------------------------
    def attention(self, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        """F.scaled_dot_product_attention without dropout."""
        self.check(q, k, v)
        if attn_mask is not None and is_causal is False and self.g.eager_seed is None and \
                self._is_causal_mask(q, k, attn_mask):
            attn_mask, is_causal = None, True
        if isinstance(dropout_p, (int, float)) and dropout_p != 0 and self.g.eager_seed is not None and \
                attn_mask is None:
            return self._seeded_attention(q, k, v, float(dropout_p), is_causal, scale, enable_gqa)
        if isinstance(dropout_p, (int, float)) and not isinstance(dropout_p, bool) and 0 < dropout_p < 1 and \
                self.g.eager_seed is None and isinstance(is_causal, bool) and not enable_gqa and \
                q.meta.dtype in FLOATS and q.meta.dtype == k.meta.dtype == v.meta.dtype and \
                (scale is None or isinstance(scale, (int, float))):
            return self._attention_with_dropout(q, k, v, attn_mask, float(dropout_p), is_causal, scale)
        if not isinstance(dropout_p, (int, float)) or dropout_p != 0:
            # random numbers: eager's own op, as a generic (seeded) node that the backend runs with PyTorch
            return self.torch_call(F.scaled_dot_product_attention, (q, k, v),
                                   dict(attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                                        scale=scale, enable_gqa=enable_gqa))
        if scale is not None and not isinstance(scale, (int, float)):
            raise Unsupported("scaled_dot_product_attention scale that is not a number")
        if not isinstance(is_causal, bool):
            raise Unsupported("is_causal that is not a bool")
        if q.meta.dtype not in FLOATS or not (q.meta.dtype == k.meta.dtype == v.meta.dtype):
            raise Unsupported("scaled_dot_product_attention of mixed or non-float dtypes (eager raises)")
        if attn_mask is not None:
            self.check(attn_mask)
            if attn_mask.meta.dtype not in (torch.bool, q.meta.dtype):
                raise Unsupported("an attention mask of another float dtype than the query's")
        if self.g.fake_mode is None:
            meta = self._meta_of(F.scaled_dot_product_attention, q.meta, k.meta, v.meta,
                                 attn_mask=None if attn_mask is None else attn_mask.meta, is_causal=is_causal,
                                 scale=scale, enable_gqa=bool(enable_gqa))
        else:  # symbolic sizes: the result's shape rule (ATen's kernel choice would guard on the sizes)
            meta = self._attention_meta(q.meta, k.meta, v.meta, attn_mask, bool(enable_gqa))
        if q.meta.dim() < 3:
            raise Unsupported("scaled_dot_product_attention of tensors with fewer than 3 dims")
        if enable_gqa and q.meta.dim() >= 3 and k.meta.shape[-3] != q.meta.shape[-3]:
            k, v = self._repeat_heads(k, q.meta.shape[-3]), self._repeat_heads(v, q.meta.shape[-3])
        batch = torch.broadcast_shapes(*(tuple(t.meta.shape[:-2]) for t in (q, k, v)))
        # batch dims that broadcast (Falcon's one key/value head for all query heads): expanded
        q, k, v = (t if tuple(t.meta.shape[:-2]) == batch else self.expand(t, batch + tuple(t.meta.shape[-2:]))
                   for t in (q, k, v))
        ins = [q, k, v] + ([attn_mask] if attn_mask is not None else [])
        if attn_mask is not None and attn_mask.meta.dim() > q.meta.dim():
            raise Unsupported("an attention mask of more dims than the query")
        return self.node("scaled_dot_product_attention", ins, meta, is_causal=is_causal,
                         scale=None if scale is None else float(scale))

    def _is_causal_mask(self, q, k, mask):
        """Whether `mask` is a boolean constant equal to the causal mask (query i sees keys j <= i, L == S) in
        every batch and head: transformers builds one from aranges when it traces (as under compilation) where
        eager would pass is_causal=True. The fused kernels then skip the masked half instead of reading it."""
        L = q.meta.shape[-2]
        if not isinstance(mask, TensorVar):
            return False
        if any(isinstance(d, torch.SymInt) for d in (L, k.meta.shape[-2], *mask.meta.shape)):
            # symbolic sizes: the mask's formula, read from its graph (ops/causal.py)
            return causal.same_size(k.meta.shape[-2], L) and causal.is_symbolic_causal_mask(mask.node, L)
        if mask.meta.dtype != torch.bool or mask.meta.dim() < 2 or \
                k.meta.shape[-2] != L or tuple(mask.meta.shape[-2:]) != (L, L) or \
                any(not isinstance(d, int) for d in mask.meta.shape):
            return False
        value = self.constant_value(mask, limit=64, max_numel=1 << 24)
        if value is None:
            return False
        tril = torch.ones(L, L, dtype=torch.bool, device=value.device).tril()
        return bool((value == tril).all())

    def _attention_meta(self, q, k, v, attn_mask, enable_gqa):
        """scaled_dot_product_attention's result meta from its shape rule: the batch dims broadcast (the
        heads of k and v divide q's under enable_gqa), q's rows, v's columns; mismatches are guards."""
        if q.dim() < 3 or k.dim() != q.dim() or v.dim() != q.dim():
            raise Unsupported("scaled_dot_product_attention of tensors of other ranks")
        if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
            raise Unsupported("scaled_dot_product_attention of mismatched sizes (eager raises)")
        kb, vb = tuple(k.shape[:-2]), tuple(v.shape[:-2])
        if enable_gqa:
            kb, vb = kb[:-1] + (q.shape[-3],), vb[:-1] + (q.shape[-3],)
        batch = torch.broadcast_shapes(tuple(q.shape[:-2]), kb, vb)
        if attn_mask is not None:
            torch.broadcast_shapes(tuple(attn_mask.meta.shape), tuple(batch) + (q.shape[-2], k.shape[-2]))
        with self.g.fake_mode:
            return torch.empty(tuple(batch) + (q.shape[-2], v.shape[-1]), dtype=q.dtype, device="meta")

    def _attention_with_dropout(self, q, k, v, attn_mask, p, is_causal, scale):
        """Attention whose probabilities drop out (a model's attention in training): one random node,
        graph/random.py's attention_dropout. The eager backend runs eager's op (eager's numbers); the
        compiled graph is eager's math path (scores, softmax, graph.dropout, product) with dyn's Philox
        numbers, as every compiled random op (docs/random.md)."""
        batch = tuple(q.meta.shape[:-2])
        if tuple(k.meta.shape[:-2]) != batch or tuple(v.meta.shape[:-2]) != batch or q.meta.dim() < 3:
            return self.torch_call(F.scaled_dot_product_attention, (q, k, v),
                                   dict(attn_mask=attn_mask, dropout_p=p, is_causal=is_causal, scale=scale))
        if attn_mask is not None:
            self.check(attn_mask)
            if attn_mask.meta.dtype not in (torch.bool, q.meta.dtype) or attn_mask.meta.dim() > q.meta.dim():
                raise Unsupported("an attention mask of another float dtype than the query's, or more dims")
        meta = self._meta_of(F.scaled_dot_product_attention, q.meta, k.meta, v.meta,
                             attn_mask=None if attn_mask is None else attn_mask.meta, is_causal=is_causal,
                             scale=scale)
        self.g.device = self.tr.device
        ins = [q, k, v] + ([attn_mask] if attn_mask is not None else [])
        fused = _fused_attention_kernel(q.meta, k.meta, v.meta, None if attn_mask is None else attn_mask.meta,
                                        is_causal, scale, torch.device(self.tr.device or "cpu"))
        return self.node("attention_dropout", ins, meta, p=p, offset=next_offset(self.g), seeded=True,
                         is_causal=is_causal, scale=None if scale is None else float(scale),
                         callee="F.scaled_dot_product_attention", fused=fused, **self.g._on_device())

    def _seeded_attention(self, q, k, v, p, is_causal, scale, enable_gqa):
        """Attention with dropout inside torch.testing's wrapper_set_seed: eager's op drawing from the
        wrapper's seed (GraphLibraryOps.td seeded_attention)."""
        if not isinstance(is_causal, bool) or (scale is not None and not isinstance(scale, (int, float))):
            raise Unsupported("scaled_dot_product_attention with a non-bool is_causal or a non-number scale")
        if q.meta.dtype not in FLOATS or not (q.meta.dtype == k.meta.dtype == v.meta.dtype):
            raise Unsupported("scaled_dot_product_attention of mixed or non-float dtypes (eager raises)")
        meta = self._meta_of(F.scaled_dot_product_attention, q.meta, k.meta, v.meta, is_causal=is_causal, scale=scale,
                     enable_gqa=bool(enable_gqa))
        if not all(self.dest_shadow(t).is_contiguous() for t in (q, k, v)):
            raise Unsupported("scaled_dot_product_attention with dropout of non-contiguous tensors")
        seed = self.g.take_eager_seed("scaled_dot_product_attention with dropout")
        return self.node("seeded_attention", [q, k, v], meta, dropout_p=p, is_causal=is_causal,
                         has_scale=scale is not None, scale=float(scale or 0.0), enable_gqa=bool(enable_gqa),
                         seed=seed)

    def _repeat_heads(self, t, heads):
        """Grouped-query attention: each of t's heads repeated for heads // t's heads query heads."""
        shape = tuple(t.meta.shape)
        h = shape[-3]
        if heads % h:
            raise Unsupported("grouped-query attention with query heads not a multiple of key heads")
        g = heads // h
        x = self.reshape(t, shape[:-2] + (1,) + shape[-2:])
        x = self.expand(x, shape[:-3] + (h, g) + shape[-2:])
        return self.reshape(x, shape[:-3] + (heads,) + shape[-2:])


class TensorPadded:
    """_same_padding's answer when x itself had to be padded first."""
    __slots__ = ("x", "padding")

    def __init__(self, x, padding):
        self.x, self.padding = x, padding


def _fused_attention_kernel(q, k, v, mask, is_causal, scale, device):
    """Whether attention with dropout on these [B, H, L, E] operands runs as eager's fused CUDA kernel, which draws
    the dropout itself and returns its random state for its backward kernel, rather than as its math path with
    dyn's own dropout: without a mask graph.attention_lse (flash or memory-efficient, as SDPA's dispatch picks
    them without dropout), with one graph.masked_attention_lse (memory-efficient, where the dispatch picks it)."""
    shapes = [t.shape for t in (q, k, v)] + ([] if mask is None else [mask.shape])
    if device.type != "cuda" or q.dim() != 4 or any(not isinstance(d, int) for sh in shapes for d in sh):
        return False
    if mask is not None and (mask.dim() > 4 or mask.dtype not in (torch.bool, q.dtype)):
        return False
    try:  # the dispatch's choice depends on dtypes, head dims, sequence lengths and the mask's presence
        probe = [torch.empty((1, 1) + tuple(t.shape[-2:]), dtype=t.dtype, device=device) for t in (q, k, v)]
        m = None if mask is None else torch.zeros((1, 1) + tuple(q.shape[-2:-1]) + tuple(k.shape[-2:-1]),
                                                  dtype=mask.dtype, device=device)
        choice = torch._fused_sdp_choice(*probe, m, 0.0, bool(is_causal), scale=scale)
    except Exception:  # noqa: BLE001  (a dispatch that refuses these operands: the math path)
        return False
    # not cuDNN's attention (3: halves on Hopper), whose random state is not handed over; nor the memory-efficient
    # kernel in its place: with dropout in halves its gradients came out wrong (NaN) in that hand-over
    return choice in (1, 2) if mask is None else choice == 2

