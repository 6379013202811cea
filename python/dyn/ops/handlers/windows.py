"""Handlers of convolutions, pooling, padding and attention: torch.nn.functional's (F_W) and their torch.*
twins (TORCH_W, by function object); GEMMs with an added term (addmm, baddbmm) in H_W."""
import torch
import torch.nn.functional as F

from ...errors import Unsupported
from .common import _out
from .registry import functional, torch_function, torch_name

F_W = {}  # torch.nn.functional name -> handler (registered at the end; the torch.* twins read it)
for _nd in (1, 2, 3):
    def _conv(o, x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, *, _nd=_nd):
        return o.convolution(_nd, x, w, bias, stride, padding, dilation, groups)

    def _conv_t(o, x, w, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1, *, _nd=_nd):
        return o.convolution(_nd, x, w, bias, stride, padding, dilation, groups, True, output_padding)

    def _max_pool(o, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False,
                  *, _nd=_nd):
        return o.max_pool(_nd, x, kernel_size, stride, padding, dilation, ceil_mode, return_indices)

    def _avg_pool(o, x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                  divisor_override=None, *, _nd=_nd):
        return o.avg_pool(_nd, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    def _adaptive_avg(o, x, output_size, *, _nd=_nd):
        return o.adaptive_pool("avg", _nd, x, output_size)

    def _adaptive_max(o, x, output_size, return_indices=False, *, _nd=_nd):
        return o.adaptive_pool("max", _nd, x, output_size, return_indices)

    def _max_pool_indices(o, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                          return_indices=True, *, _nd=_nd):
        return o.max_pool(_nd, x, kernel_size, stride, padding, dilation, ceil_mode, True)

    def _max_unpool(o, x, indices, kernel_size, stride=None, padding=0, output_size=None, *, _nd=_nd):
        return _unpool(o, _nd, x, indices, kernel_size, stride, padding, output_size)

    F_W[f"max_pool{_nd}d_with_indices"] = _max_pool_indices
    F_W[f"max_unpool{_nd}d"] = _max_unpool
    F_W[f"conv{_nd}d"] = _conv
    F_W[f"conv_transpose{_nd}d"] = _conv_t
    F_W[f"max_pool{_nd}d"] = _max_pool
    F_W[f"avg_pool{_nd}d"] = _avg_pool
    F_W[f"adaptive_avg_pool{_nd}d"] = _adaptive_avg
    F_W[f"adaptive_max_pool{_nd}d"] = _adaptive_max
    # torch.* twins with the same signature (torch.max_pool2d's stride defaults to [], taken as None)
    for _name in (f"conv{_nd}d", f"conv_transpose{_nd}d", f"max_pool{_nd}d", f"avg_pool{_nd}d",
                  f"adaptive_avg_pool{_nd}d"):
        _f = getattr(torch, _name, None)
        if _f is not None:
            torch_function(_f)(F_W[_name])


def _unpool(o, nd, x, indices, kernel_size, stride, padding, output_size):
    """F.max_unpool{nd}d: zeros of the output size with x written at its flat spatial indices (a scatter,
    the last write winning as eager's CPU kernel; the indices are range-checked before each run)."""
    from .scatter import scatter_node
    fn = getattr(F, f"max_unpool{nd}d")
    o.check(x, indices)
    if indices.meta.dtype != torch.int64 or x.meta.dtype not in (torch.float16, torch.bfloat16, torch.float32,
                                                                 torch.float64):
        raise Unsupported(f"{fn.__name__} of a {x.meta.dtype} tensor or with {indices.meta.dtype} indices")
    try:
        meta = fn(x.meta, indices.meta, kernel_size, stride, padding, output_size)
    except (RuntimeError, ValueError, TypeError, NotImplementedError) as e:
        raise Unsupported(f"{fn.__name__}: eager raises {type(e).__name__}: {e}") from None
    if tuple(indices.meta.shape) != tuple(x.meta.shape) or x.meta.dim() not in (nd + 1, nd + 2):
        raise Unsupported(f"{fn.__name__} with indices of another shape (eager raises)")
    lead = tuple(meta.shape[:-nd])
    n = 1
    for s_ in meta.shape[-nd:]:
        n *= s_
    flat = lead + (-1,)
    src = o.reshape(x, tuple(x.meta.reshape(flat).shape))
    idx = o.reshape(indices, tuple(indices.meta.reshape(flat).shape))
    zeros = o.full(lead + (n,), 0.0, x.meta.dtype)
    r = scatter_node(o, zeros, len(lead), idx, src)
    return o.reshape(r, tuple(meta.shape))


def _pair(v, what):
    v = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(v) != 2 or not all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        raise Unsupported(f"{what}: window sizes that are not two ints")
    return v


def _windows(o, what, x, rank, op, fn, sizes, **attrs):
    """F.unfold/F.fold (graph.im2col/col2im) of a batched input, or of an unbatched one as a batch of one."""
    o.check(x)
    if not (x.meta.dtype.is_floating_point or x.meta.dtype == torch.bool and op == "im2col"):
        raise Unsupported(f"{what} of a {x.meta.dtype} tensor (eager's kernel has none)")
    attrs = {k: _pair(v, what) for k, v in attrs.items()}
    if x.meta.dim() not in (rank - 1, rank):
        raise Unsupported(f"{what} of a {x.meta.dim()}-d input (eager raises)")
    batched = x.meta.dim() == rank
    if not batched:
        x = o.reshape(x, (1,) + tuple(x.meta.shape))
    args = [attrs[k] for k in ("kernel", "dilation", "padding", "stride")]
    r = o.registered(op, fn, (x,), dict(sizes, **attrs), call=lambda t: fn(t, *sizes.values(), *args),
                     probe_dtypes=False)  # (dtypes: checked above)
    return r if batched else o.reshape(r, tuple(r.meta.shape[1:]))


F_W["unfold"] = lambda o, input, kernel_size, dilation=1, padding=0, stride=1: _windows(
    o, "unfold", input, 4, "im2col", torch.ops.aten.im2col, {}, kernel=kernel_size, dilation=dilation,
    padding=padding, stride=stride)
F_W["fold"] = lambda o, input, output_size, kernel_size, dilation=1, padding=0, stride=1: _windows(
    o, "fold", input, 3, "col2im", torch.ops.aten.col2im, {"output_size": _pair(output_size, "fold")},
    kernel=kernel_size, dilation=dilation, padding=padding, stride=stride)
F_W["pad"] = lambda o, x, pad, mode="constant", value=None: o.pad(x, pad, mode, value)
torch_function(torch.constant_pad_nd)(lambda o, x, pad, value=0: o.pad(x, pad, "constant", value))
F_W["scaled_dot_product_attention"] = (
    lambda o, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False:
    o.attention(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa))


def _addmm_of(what, fn, rank):
    """addmm / baddbmm as graph.addmm (eager's GEMM accumulates into x: the result may differ in the last
    bit); the operands' ranks and shapes are checked by eager's function on meta tensors."""
    def h(o, input, mat1, mat2, *, beta=1, alpha=1, out=None):
        o.check(input, mat1, mat2)
        o.accepts(what, fn, input, mat1, mat2, beta=beta, alpha=alpha)
        try:
            meta = fn(input.meta, mat1.meta, mat2.meta, beta=beta, alpha=alpha)
        except (RuntimeError, TypeError, ValueError) as e:
            raise Unsupported(f"{what}: {e}")  # eager raises
        if mat1.meta.dim() != rank:
            raise Unsupported(f"{what} of {mat1.meta.dim()}-d operands")
        return _out(o, out, o.addmm(input, mat1, mat2, beta, alpha, meta), input, mat1, mat2)
    return h


_addmm = _addmm_of("addmm", torch.addmm, 2)
_baddbmm_h = _addmm_of("baddbmm", torch.baddbmm, 3)


def _baddbmm(o, input, batch1, batch2, *, beta=1, alpha=1, out=None):
    return _baddbmm_h(o, input, batch1, batch2, beta=beta, alpha=alpha, out=out)  # BLOOM passes batch1=


torch_name.all({"addmm": _addmm, "baddbmm": _baddbmm})

functional.all(F_W)
