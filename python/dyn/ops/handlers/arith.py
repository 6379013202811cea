"""Handlers of elementwise ops, reductions, matmul, clamp, masked_fill and triangles."""
import math

import torch

from ...errors import Unsupported
from ..._ops_generated import HANDLERS
from ...graph.opset import FAMILIES, UNARY
from ..arith import torch_fn
from ..tensor import SCALARS, TensorVar, _norm_dim
from .common import _out
from .generic import generic_call
from .registry import method, torch_name
from ...dynamic.symbolic import meta_empty

H = {}  # name -> handler: torch.<name> and Tensor.<name> (registered at the end; others build on it)

for _op in UNARY:
    H[_op] = (lambda op: lambda o, x, *, out=None: _out(o, out, o.unary(op, x), x))(_op)
for _op in FAMILIES["classify"]:  # isnan, isinf, ...: a boolean of every dtype
    H[_op] = (lambda op: lambda o, x: o.unary(op, x))(_op)
H["negative"] = H["neg"]
H["absolute"] = H["abs"]


def _binary(op):
    def h(o, a, b, *, out=None):
        o.accepts(op, torch_fn(op), a, b)  # torch.maximum(x, 2) raises, x.maximum(2) too
        return _out(o, out, o.binary(op, a, b), a, b)
    return h


for _op in ("mul pow maximum minimum remainder eq ne lt le gt ge logical_and logical_or copysign hypot "
            "logaddexp logaddexp2 xlogy atan2 fmax fmin logical_xor heaviside xlog1py ldexp float_power zeta").split():
    H[_op] = _binary(_op)
for _op in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"):
    H[_op] = _binary(_op)


def _bitwise_not(o, x, *, out=None):
    if not x.meta.dtype.is_floating_point:
        return _out(o, out, o.unary("logical_not" if x.meta.dtype == torch.bool else "bitwise_not", x), x)
    raise Unsupported("bitwise_not of a float tensor (eager raises)")


H["bitwise_not"] = _bitwise_not
H.update(multiply=H["mul"], greater=H["gt"], greater_equal=H["ge"], less=H["lt"], less_equal=H["le"],
         not_equal=H["ne"], max_elementwise=H["maximum"])


def _add(op):
    def h(o, a, b, *, alpha=1, out=None):
        o.accepts(op, getattr(torch, op), a, b, alpha=alpha)  # sub of bools, a float alpha for ints
        b0 = b
        if alpha != 1 and isinstance(a, TensorVar) and not isinstance(b, TensorVar):
            return _out(o, out, _add_scaled_number(o, op, a, b, alpha), a, b0)
        if alpha != 1:
            b = o.binary("mul", b, alpha)
        return _out(o, out, o.binary(op, a, b), a, b0)
    return h


def _add_scaled_number(o, op, a, b, alpha):
    """add/sub(tensor, number, alpha=): alpha * other is one number, computed as eager's kernel computes it:
    in the opmath type (float32 for float16/bfloat16, both numbers rounded to the tensor's dtype first on the
    CPU), then added in that type and rounded once. float32 kernels (and CUDA's for float16/bfloat16) add with
    a fused multiply-add: the product of two float32 numbers is exact in float64, where the sum is made and
    rounded once to float32."""
    meta = getattr(torch, op)(a.meta, b, alpha=alpha)
    dt = meta.dtype
    if not dt.is_floating_point:
        return o.binary(op, a, b * alpha)
    low = dt in (torch.float16, torch.bfloat16)
    ct = torch.float32 if low else dt
    nums = [torch.tensor(v, dtype=torch.float64) for v in (b, alpha)]
    if low and o.tr.device.type == "cpu":
        nums = [v.to(dt) for v in nums]
    if ct == torch.float32 and (dt == ct or o.tr.device.type == "cuda"):
        exact = nums[0].to(ct).double() * nums[1].to(ct).double()
        r = o.convert(o.binary(op, o.convert(a, torch.float64), o.const(exact.item(), torch.float64)), ct)
        return o.convert(r, dt)
    scaled = (nums[0].to(ct) * nums[1].to(ct)).item()
    if not low:
        return o.binary(op, a, scaled)
    return o.convert(o.binary(op, o.convert(a, torch.float32), o.const(scaled, torch.float32)), dt)


H["add"] = _add("add")
H["sub"] = H["subtract"] = _add("sub")


def _div(o, a, b, *, rounding_mode=None, out=None):
    return _out(o, out, o.div(a, b, rounding_mode, grad="zero"), a, b)


H["div"] = H["divide"] = _div
H["true_divide"] = lambda o, a, b, *, out=None: _out(o, out, o.div(a, b), a, b)
H["floor_divide"] = lambda o, a, b, *, out=None: _out(o, out, o.div(a, b, "floor"), a, b)
H["fmod"] = lambda o, a, b, *, out=None: _out(o, out, o.fmod(a, b), a, b)
# eager's square is pow(x, 2): booleans become int64
H["square"] = lambda o, x: o.binary("mul", *[o.convert(x, torch.int64) if x.meta.dtype == torch.bool else x] * 2)
H["arctan2"] = H["atan2"]


def _nan_to_num(o, x, nan=0.0, posinf=None, neginf=None, *, out=None):
    """torch.nan_to_num: None stands for the dtype's largest (smallest) finite value."""
    o.check(x)
    dt = x.meta.dtype
    if dt.is_floating_point:
        fi = torch.finfo(dt)
        posinf = fi.max if posinf is None else posinf
        neginf = fi.min if neginf is None else neginf
    else:
        posinf, neginf = posinf or 0.0, neginf or 0.0  # unused: integers have no NaN or infinity
    return _out(o, out, o.registered("nan_to_num", torch.nan_to_num, (x,),
                                     {"nan": nan, "posinf": posinf, "neginf": neginf}), x)


def _logit(o, x, eps=None, *, out=None):
    """torch.logit: eps None is -1 (no clamp), as ATen's default. float16/bfloat16 round each step as eager's
    CPU kernel does, or once as its CUDA kernel does (round_steps, per device)."""
    o.check(x)
    if eps is not None and (isinstance(eps, bool) or not isinstance(eps, (int, float))):
        raise Unsupported(f"logit with eps={eps!r}")
    e = -1.0 if eps is None else float(eps)
    cuda = torch.device(o.tr.device).type == "cuda"
    return _out(o, out, o.registered("logit", torch.logit, (x,), {"eps": e, "round_steps": not cuda},
                                     call=lambda v: torch.logit(v, None if e < 0 else e)), x)


def _no_half(x, what):
    """Ops whose eager float16/bfloat16 kernel differs from the correctly rounded value dyn computes (eager
    rounds intermediate steps): not captured in those dtypes."""
    if what and x.meta.dtype in (torch.float16, torch.bfloat16):
        raise Unsupported(f"{what} of {x.meta.dtype} (eager's kernel rounds intermediate steps)")


def _ndtr(o, x, *, out=None):
    o.check(x)
    _no_half(x, "ndtr")
    return _out(o, out, o.unary("ndtr", x), x)


def _polygamma(o, a, b, *, out=None):
    """torch.polygamma(n, x) and x.polygamma(n); n in [0, 4] (graph.polygamma's reflection formulas)."""
    x, n = (a, b) if isinstance(a, TensorVar) else (b, a)
    o.check(x)
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 4:
        raise Unsupported(f"polygamma of order {n!r} (dyn computes orders 0 to 4)")
    _no_half(x, f"polygamma of order {n}" if n else None)
    return _out(o, out, o.registered("polygamma", lambda t, n: torch.polygamma(n, t), (x,), {"n": n}), x)


def _mvlgamma(o, x, p, *, out=None):
    o.check(x)
    return _out(o, out, o.registered("mvlgamma", torch.mvlgamma, (x,), {"p": p}), x)


H["nan_to_num"] = _nan_to_num
H["logit"] = _logit
H["polygamma"] = _polygamma
H["ndtr"] = _ndtr
H["mvlgamma"] = H["multigammaln"] = _mvlgamma


def _reduce(op):
    def h(o, x, dim=None, keepdim=False, *, dtype=None, out=None):
        if op in ("amax", "amin") and isinstance(dim, (tuple, list)) and len(dim) == 0:
            dim = None
        return _out(o, out, o.reduce(op, x, dim, keepdim, dtype), x)
    return h


for _op in "sum mean amax amin prod".split():
    H[_op] = _reduce(_op)


def _values_indices(o, x, red, dim, keepdim):
    """max/min(x, dim): eager's torch.return_types.max/min of the values and the index of the first
    maximum (minimum) along dim, or of the first NaN where there is one (its value is then NaN)."""
    o.check(x)
    d = _norm_dim(dim, x.meta.dim())
    values = o.reduce(red, x, d, keepdim)
    kind = torch.return_types.max if red == "amax" else torch.return_types.min
    if x.meta.dim() == 0:
        return kind((values, o.full((), 0, torch.int64)))
    n = x.meta.shape[d]
    if not n:
        raise Unsupported(f"{red[1:]}(dim) over a dim without elements (eager raises)")
    # graph.argmax/argmin: the first extremum, or the first NaN (eager's CPU argmax has no bool kernel)
    xi = o.convert(x, torch.uint8) if x.meta.dtype == torch.bool else x
    arg = "argmax" if red == "amax" else "argmin"
    shape = tuple(1 if i == d else s for i, s in enumerate(x.meta.shape) if keepdim or i != d)
    indices = o.node(arg, [xi], meta_empty(shape, dtype=torch.int64, device="meta"), dim=d, keepdim=bool(keepdim))
    return kind((values, indices))


def _maxmin(red, elem):
    def h(o, x, dim=None, keepdim=False, *, out=None):
        if out is not None and not isinstance(dim, TensorVar) and dim is not None:
            raise Unsupported(f"{red[1:]}(dim, out=...)")
        if isinstance(dim, TensorVar):
            return _out(o, out, o.binary(elem, x, dim), x, dim)
        if o.needs_grad(x):
            # max(dim): eager's gradient goes to the index it returns, amax's is split among ties; max():
            # split among ties as amax's, but given to the NaNs where the maximum is NaN (amax's is NaN)
            raise Unsupported(f"{red[1:]}() of a tensor that requires grad (eager's gradient at ties or NaN "
                              f"differs from {red}'s)")
        if dim is None:
            return _out(o, out, o.reduce(red, x, None, False), x)
        return _values_indices(o, x, red, dim, keepdim)
    return h


H["max"] = _maxmin("amax", "maximum")
H["min"] = _maxmin("amin", "minimum")


def _moment(sqrt):
    """var / std (graph.var, graph.std): torch's (x, unbiased) overload is dim=None."""
    def h(o, x, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if isinstance(dim, bool):
            unbiased, dim = dim, None
        return o.var_(x, dim, unbiased, keepdim, correction, sqrt=sqrt)
    return h


H["var"] = _moment(False)
H["std"] = _moment(True)
H["softmax"] = lambda o, x, dim, dtype=None: o.softmax("softmax", x, dim, dtype)
H["log_softmax"] = lambda o, x, dim, dtype=None: o.softmax("log_softmax", x, dim, dtype)
H["matmul"] = H["mm"] = H["bmm"] = lambda o, a, b, *, out=None: _out(o, out, o.matmul(a, b), a, b)
def _where(o, c, a=None, b=None, *, out=None):
    if a is None and b is None:  # torch.where(condition) is nonzero(as_tuple=True)
        raise Unsupported("torch.where(condition) (a data-dependent shape, as nonzero)")
    if a is None or b is None:
        raise Unsupported("torch.where with one of input and other (eager raises)")
    return _out(o, out, o.where(c, a, b), c, a, b)


torch_name("where", methods=False)(_where)
method("where")(lambda o, x, cond, other: o.where(cond, x, other))  # x.where(cond, other)


def _clamp(o, x, min=None, max=None):
    return o.clamp(x, min, max)


H["clamp"] = H["clip"] = _clamp
H["clamp_min"] = lambda o, x, m: o.clamp(x, m, None)
H["clamp_max"] = lambda o, x, m: o.clamp(x, None, m)


def _masked_fill(o, x, mask, value):
    """masked_fill keeps x's dtype: the value is converted to it as eager converts it (2.7 into an integer
    tensor is 2; a value the dtype cannot hold raises). The result has the shape x and mask broadcast to
    (masked_fill_ checks that it is x's: inplace_methods.py)."""
    o.check(x, mask)
    if mask.meta.dtype != torch.bool:
        raise Unsupported("masked_fill with a mask that is not bool (eager raises)")
    try:
        torch.broadcast_shapes(tuple(x.meta.shape), tuple(mask.meta.shape))
    except RuntimeError:
        raise Unsupported("masked_fill with a mask that does not broadcast with the tensor (eager raises)")
    if isinstance(value, TensorVar):
        if value.meta.dim():
            raise Unsupported("masked_fill with a value tensor that is not 0-d (eager raises)")
        o.accepts("masked_fill", torch.Tensor.masked_fill, x, mask, value)
        v = o.convert(value, x.meta.dtype)
    elif isinstance(value, SCALARS):
        try:
            conv = torch.zeros(2, dtype=x.meta.dtype).masked_fill(torch.ones(2, dtype=torch.bool), value)[0].item()
        except (RuntimeError, TypeError, OverflowError) as e:
            raise Unsupported(f"masked_fill: {e}")  # eager raises
        v = o.const(conv, x.meta.dtype)
    else:
        raise Unsupported(f"masked_fill with a {type(value).__name__}")
    return o.where(mask, v, x)


H["masked_fill"] = _masked_fill


H["tril"] = HANDLERS["torch.tril"]  # graph.tril/triu (the registry's), for the in-place methods too
H["triu"] = HANDLERS["torch.triu"]

H["addcmul"] = HANDLERS["torch.addcmul"]
H["addcdiv"] = HANDLERS["torch.addcdiv"]


def _round(o, x, *, decimals=0, out=None):
    """torch.round: graph.round (ties to even); with decimals graph.round_decimals (eager's kernel)."""
    o.check(x)
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise Unsupported("round with decimals that is not an int")
    if decimals == 0:
        return _out(o, out, o.unary("round", x), x)
    if not x.meta.dtype.is_floating_point:
        raise Unsupported("round(decimals=...) of an integer tensor (eager raises)")
    o.accepts("round", torch.round, x, decimals=decimals)
    return _out(o, out, o.node("round_decimals", [x], x.meta.contiguous(), decimals=decimals), x)


H["round"] = _round


def _lerp(o, start, end, weight, *, out=None):
    o.check(start, end)
    for v in (start, end):
        if not v.meta.dtype.is_floating_point:
            raise Unsupported("lerp of integer tensors (eager raises)")
    if not isinstance(weight, TensorVar):
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise Unsupported("lerp weight that is not a number")
    try:
        meta = torch.lerp(start.meta, end.meta, weight.meta if isinstance(weight, TensorVar) else weight)
    except (RuntimeError, TypeError) as e:
        raise Unsupported(f"lerp: {e}")  # eager raises (mixed dtypes)
    o.accepts("lerp", torch.lerp, start, end, weight)
    # a number weight is read in the opmath type (float32 for float16/bfloat16), as eager's kernels read it
    w = weight if isinstance(weight, TensorVar) else o.const(
        weight, torch.float32 if meta.dtype in (torch.float16, torch.bfloat16) else meta.dtype)
    return _out(o, out, o.node("lerp", [start, end, w], meta), start, end, weight)


H["lerp"] = _lerp
H["rsub"] = lambda o, x, other, *, alpha=1: o.binary("sub", other, o.binary("mul", x, alpha) if alpha != 1 else x)

torch_name.all(H)
