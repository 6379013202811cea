"""Handlers of the losses that are compositions of graph ops (F.nll_loss, cross_entropy, the margin losses,
poisson/gaussian nll, ...): each written as eager's kernel computes it (aten/src/ATen/native/Loss*.cpp and
torch/nn/functional.py), in graph ops that compile natively on both targets. Class indices are gathers whose
range is checked before each run (eager raises on a class out of range: ShapeOps.check_index_range). The
legacy size_average/reduce arguments are not captured."""
import math

import torch
import torch.nn.functional as F

from ...errors import Unsupported
from ..tensor import TensorVar
from ...dynamic.symbolic import meta_empty
from .registry import functional


FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _check_common(o, what, tensors, reduction, size_average=None, reduce=None):
    for t in tensors:
        if not isinstance(t, TensorVar):
            raise Unsupported(f"{what} with an operand that is not a tensor")
    if size_average is not None or reduce is not None:
        raise Unsupported(f"{what} with the legacy size_average/reduce arguments")
    if reduction not in ("none", "mean", "sum"):
        raise Unsupported(f"{what} with reduction={reduction!r} (eager raises)")


def _meta(what, fn, *args, **kwargs):
    """fn on meta tensors (TensorVars stand for their meta): the result, or Unsupported where eager raises."""
    args = [a.meta if isinstance(a, TensorVar) else a for a in args]
    kwargs = {k: v.meta if isinstance(v, TensorVar) else v for k, v in kwargs.items()}
    try:
        return fn(*args, **kwargs)
    except (RuntimeError, ValueError, IndexError, TypeError) as e:
        raise Unsupported(f"{what}: eager raises {type(e).__name__}: {e}") from None


def _reduce(o, r, reduction):
    if reduction == "none":
        return r
    return o.reduce("mean" if reduction == "mean" else "sum", r)


def _float_only(what, *ts):
    for t in ts:
        if t.meta.dtype not in FLOATS:
            raise Unsupported(f"{what} of a {t.meta.dtype} tensor")


def _picked(o, x, t, ignore_index):
    """x's class dim (1, or 0 for an unbatched input) read at target t (a class index per element, t's shape),
    with t == ignore_index read at class 0; and the mask of ignored elements."""
    cdim = 1 if x.meta.dim() >= 2 else 0
    ignored = o.binary("eq", t, ignore_index)
    safe = o.where(ignored, 0, t)  # range-checked before each run, ignored elements excluded
    idx = o.reshape(safe, tuple(t.meta.shape[:1]) + (1,) + tuple(t.meta.shape[1:]) if cdim else (1,))
    g = o.gather(x, cdim, idx)
    return o.reshape(g, tuple(t.meta.shape)), ignored, safe


def _class_weights(o, x, weight, ignored, safe):
    """weight[t] (1 without weights), 0 where ignored: eager's per-element weight and mean divisor."""
    dt = x.meta.dtype
    if weight is None:
        return o.where(ignored, o.full((), 0.0, dt), o.full((), 1.0, dt))
    w = o.take_along(weight, 0, safe, wraps=False)
    return o.where(ignored, o.full((), 0.0, dt), w)


def _check_target(what, x, t, weight):
    if t.meta.dtype != torch.int64:
        raise Unsupported(f"{what} with a {t.meta.dtype} target (eager takes int64 class indices)")
    if weight is not None:
        if not isinstance(weight, TensorVar):
            raise Unsupported(f"{what} with weights that are not a tensor")
        if weight.meta.dtype != x.meta.dtype:
            raise Unsupported(f"{what} with weights of another dtype (eager raises)")


def _nll(o, x, t, weight, reduction, ignore_index):
    """-x[t] * w[t] per element (0 where t == ignore_index); mean divides the sum by the summed weights."""
    picked, ignored, safe = _picked(o, x, t, ignore_index)
    cw = _class_weights(o, x, weight, ignored, safe)
    loss = o.binary("mul", o.unary("neg", picked), cw)
    if reduction == "none":
        return loss, cw, ignored
    s = o.reduce("sum", loss)
    if reduction == "sum":
        return s, cw, ignored
    return o.binary("div", s, o.reduce("sum", cw)), cw, ignored


def _check_classes(o, t, n_classes, ignore_index):
    """Eager raises for a class index outside [0, C) other than ignore_index, where the compiled gather
    would clamp it: checked before every run (a graph input's values directly, a computed target through
    its subgraph: ShapeOps.check_index_range)."""
    node = t.node
    while node.op in ("reshape", "expand", "permute"):
        node = node.inputs[0]
    if node.op == "input":
        k = node.index

        def classes(ins):
            return torch.where(ins[k] == ignore_index, 0, ins[k]).reshape(-1)
        classes.reads = (k,)
        o.tr.index_bounds.append((classes, 0, n_classes))
    else:
        o.check_index_range(o.where(o.binary("eq", t, ignore_index), 0, t), n_classes, wraps=False)


def _nll_node(o, x, t, weight, reduction, ignore_index, meta):
    """graph.nll_loss of x (float, its class dim 1, or 0 unbatched) at the class indices t; no weights are
    weights of 1 (the same sums and mean divisor)."""
    cdim = 1 if x.meta.dim() >= 2 else 0
    n = x.meta.shape[cdim]
    _check_classes(o, t, n, ignore_index)
    w = weight if weight is not None else o.full((n,), 1.0, x.meta.dtype)
    shape = () if reduction != "none" else tuple(t.meta.shape)
    r = o.node("nll_loss", [x, t, w], meta_empty(shape, dtype=x.meta.dtype, device="meta"),
               reduction=reduction, ignore_index=ignore_index)
    return o.reshape(o.convert(r, meta.dtype), tuple(meta.shape))


@functional("nll_loss")
def _nll_loss(o, input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    _check_common(o, "nll_loss", (input, target), reduction, size_average, reduce)
    _float_only("nll_loss", input)
    _check_target("nll_loss", input, target, weight)
    meta = _meta("nll_loss", F.nll_loss, input, target, weight, ignore_index=ignore_index, reduction=reduction)
    o.accepts("nll_loss", F.nll_loss, input, target, weight, ignore_index=ignore_index, reduction=reduction)
    return _nll_node(o, input, target, weight, reduction, int(ignore_index), meta)


@functional("cross_entropy")
def _cross_entropy(o, input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                   reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dim, then nll (class indices) or -sum(target * logp) (probabilities);
    label smoothing mixes in the uniform distribution as eager's cross_entropy_loss_label_smoothing and
    cross_entropy_loss_prob_target do."""
    _check_common(o, "cross_entropy", (input, target), reduction, size_average, reduce)
    _float_only("cross_entropy", input)
    if not isinstance(label_smoothing, (int, float)) or isinstance(label_smoothing, bool):
        raise Unsupported("cross_entropy label_smoothing that is not a number")
    ls = float(label_smoothing)
    meta = _meta("cross_entropy", F.cross_entropy, input, target, weight, ignore_index=ignore_index,
                 reduction=reduction, label_smoothing=ls)
    x = input
    cdim = 1 if x.meta.dim() >= 2 else 0
    n_classes = x.meta.shape[cdim]
    wb = None
    if weight is not None:
        if not isinstance(weight, TensorVar) or weight.meta.dtype != x.meta.dtype:
            raise Unsupported("cross_entropy with weights that are not a tensor of the input's dtype")
        shape = [1] * x.meta.dim()
        shape[cdim] = n_classes
        wb = o.reshape(weight, tuple(shape))
    if target.meta.dtype.is_floating_point:  # class probabilities
        o.accepts("cross_entropy", F.cross_entropy, input, target, reduction=reduction)
        logp = o.softmax("log_softmax", x, cdim)
        t = target
        if ls > 0:
            t = o.binary("add", o.binary("mul", t, 1 - ls), ls / n_classes)
        prod = o.binary("mul", logp, t)
        if wb is not None:
            prod = o.binary("mul", prod, wb)
        if reduction == "none":
            r = o.unary("neg", o.reduce("sum", prod, cdim))
        elif reduction == "sum":
            r = o.unary("neg", o.reduce("sum", prod))
        else:
            r = o.binary("div", o.unary("neg", o.reduce("sum", prod)), float(x.meta.numel() // n_classes))
        return o.reshape(o.convert(r, meta.dtype), tuple(meta.shape))
    _check_target("cross_entropy", x, target, weight)
    o.accepts("cross_entropy", F.cross_entropy, input, target, weight, ignore_index=ignore_index,
              reduction=reduction, label_smoothing=ls)
    logp = o.softmax("log_softmax", x, cdim)
    if ls == 0:  # ATen's: log_softmax, then nll_loss
        return _nll_node(o, logp, target, weight, reduction, int(ignore_index), meta)
    nll, cw, ignored = _nll(o, logp, target, weight, reduction, int(ignore_index))
    if ls > 0:
        smooth = o.unary("neg", o.reduce("sum", logp if wb is None else o.binary("mul", logp, wb), cdim))
        smooth = o.where(ignored, o.full((), 0.0, smooth.meta.dtype), smooth)
        if reduction == "mean":
            ret = o.binary("div", o.reduce("sum", smooth), o.reduce("sum", cw))
        else:
            ret = _reduce(o, smooth, reduction)
        nll = o.binary("add", o.binary("mul", nll, 1 - ls), o.binary("mul", ret, ls / n_classes))
    return o.reshape(o.convert(nll, meta.dtype), tuple(meta.shape))


def _pointwise_setup(o, what, fn, tensors, reduction, size_average=None, reduce=None, **kw):
    _check_common(o, what, tensors, reduction, size_average, reduce)
    meta = _meta(what, fn, *tensors, reduction=reduction, **kw)
    if meta.dtype not in FLOATS:
        raise Unsupported(f"{what} of {meta.dtype} tensors")
    o.accepts(what, fn, *tensors, reduction=reduction, **kw)
    return meta


def _finish(o, r, reduction, meta):
    return o.reshape(o.convert(_reduce(o, r, reduction), meta.dtype), tuple(meta.shape))


@functional("margin_ranking_loss")
def _margin_ranking(o, input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -t (x1 - x2) + margin)."""
    meta = _pointwise_setup(o, "margin_ranking_loss", F.margin_ranking_loss, (input1, input2, target), reduction,
                            size_average, reduce, margin=margin)
    d = o.binary("mul", o.unary("neg", target), o.binary("sub", input1, input2))
    r = o.clamp(o.binary("add", d, float(margin)), 0.0, None)
    return _finish(o, r, reduction, meta)


@functional("hinge_embedding_loss")
def _hinge_embedding(o, input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """where(t != 1, max(margin - x, 0), 0) + where(t != -1, x, 0)."""
    meta = _pointwise_setup(o, "hinge_embedding_loss", F.hinge_embedding_loss, (input, target), reduction,
                            size_average, reduce, margin=margin)
    dt = input.meta.dtype
    zero = o.full((), 0.0, dt)
    margin_clamp = o.clamp(o.binary("sub", float(margin), input), 0.0, None)
    r = o.binary("add", o.where(o.binary("ne", target, 1), margin_clamp, zero),
                 o.where(o.binary("ne", target, -1), input, zero))
    return _finish(o, r, reduction, meta)


@functional("cosine_embedding_loss")
def _cosine_embedding(o, input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """cos = <x1, x2> / sqrt((|x1|^2 + 1e-12) (|x2|^2 + 1e-12)); 1 - cos where t == 1, max(cos - margin, 0)
    where t == -1."""
    meta = _pointwise_setup(o, "cosine_embedding_loss", F.cosine_embedding_loss, (input1, input2, target),
                            reduction, size_average, reduce, margin=margin)
    d = 1 if input1.meta.dim() == 2 else 0
    prod = o.reduce("sum", o.binary("mul", input1, input2), d)
    m1 = o.binary("add", o.reduce("sum", o.binary("mul", input1, input1), d), 1e-12)
    m2 = o.binary("add", o.reduce("sum", o.binary("mul", input2, input2), d), 1e-12)
    cos = o.binary("div", prod, o.unary("sqrt", o.binary("mul", m1, m2)))
    zero = o.full((), 0.0, cos.meta.dtype)
    pos = o.where(o.binary("eq", target, 1), o.binary("sub", 1.0, cos), zero)
    neg = o.where(o.binary("eq", target, -1), o.clamp(o.binary("sub", cos, float(margin)), 0.0, None), zero)
    return _finish(o, o.binary("add", pos, neg), reduction, meta)


def _logsigmoid(o, x):
    from ..._ops_generated import HANDLERS
    return HANDLERS["torch.nn.functional.logsigmoid"](o, x)


@functional("multilabel_soft_margin_loss")
def _multilabel_soft_margin(o, input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t logsigmoid(x) + (1 - t) logsigmoid(-x)), times weight, summed over the class dim / C."""
    meta = _pointwise_setup(o, "multilabel_soft_margin_loss", F.multilabel_soft_margin_loss, (input, target),
                            reduction, size_average, reduce, weight=weight)
    _float_only("multilabel_soft_margin_loss", input)
    if target.meta.dtype == torch.bool:  # eager's 1 - target raises for bools; integers promote
        raise Unsupported("multilabel_soft_margin_loss of a torch.bool target (eager raises)")
    loss = o.unary("neg", o.binary("add", o.binary("mul", target, _logsigmoid(o, input)),
                                   o.binary("mul", o.binary("sub", 1.0, target), _logsigmoid(o, o.unary("neg", input)))))
    if weight is not None:
        if not isinstance(weight, TensorVar):
            raise Unsupported("multilabel_soft_margin_loss with weights that are not a tensor")
        loss = o.binary("mul", loss, weight)
    cdim = input.meta.dim() - 1
    loss = o.binary("div", o.reduce("sum", loss, cdim), float(input.meta.shape[cdim]))
    return _finish(o, loss, reduction, meta)


@functional("poisson_nll_loss")
def _poisson_nll(o, input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
    """exp(x) - t x (log_input) or x - t log(x + eps); full adds Stirling's t log t - t + log(2 pi t) / 2
    where t > 1."""
    meta = _pointwise_setup(o, "poisson_nll_loss", F.poisson_nll_loss, (input, target), reduction, size_average,
                            reduce, log_input=log_input, full=full, eps=eps)
    if log_input:
        loss = o.binary("sub", o.unary("exp", input), o.binary("mul", target, input))
    else:
        loss = o.binary("sub", input, o.binary("mul", target, o.unary("log", o.binary("add", input, float(eps)))))
    if full:
        t = target
        stirling = o.binary("add", o.binary("sub", o.binary("mul", t, o.unary("log", t)), t),
                            o.binary("mul", o.unary("log", o.binary("mul", 2 * math.pi, t)), 0.5))
        loss = o.binary("add", loss, o.where(o.binary("le", t, 1), o.full((), 0.0, stirling.meta.dtype), stirling))
    return _finish(o, loss, reduction, meta)


@functional("multi_margin_loss")
def _multi_margin(o, input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                  reduction="mean"):
    """graph.multi_margin_loss: sum over classes d != t of max(0, margin - x[t] + x[d])^p (times weight[t]),
    divided by C."""
    _check_common(o, "multi_margin_loss", (input, target), reduction, size_average, reduce)
    _float_only("multi_margin_loss", input)
    if p not in (1, 2) or isinstance(p, bool):
        raise Unsupported("multi_margin_loss with p other than 1 or 2 (eager raises)")
    _check_target("multi_margin_loss", input, target, weight)
    _meta("multi_margin_loss", F.multi_margin_loss, input, target, p, margin, weight, reduction=reduction)
    if isinstance(margin, bool) or not isinstance(margin, (int, float)):
        raise Unsupported(f"multi_margin_loss with margin={margin!r}")
    x = input if input.meta.dim() == 2 else o.reshape(input, (1, input.meta.numel()))
    t = o.reshape(target, (x.meta.shape[0],))
    n, c = x.meta.shape
    o.check_index_range(t, c, wraps=False)  # eager raises on a class out of range
    operands = [x, t] + ([o.reshape(weight, (c,))] if weight is not None else [])
    shape = (n,) if reduction == "none" else ()
    r = o.node("multi_margin_loss", operands, meta_empty(shape, dtype=x.meta.dtype, device="meta"), p=int(p),
               margin=float(margin), reduction=reduction)
    # an unbatched input's loss is 0-d with reduction none too (eager's kernel; its meta function says [1])
    return o.reshape(r, tuple(target.meta.shape) if input.meta.dim() == 2 and reduction == "none" else ())


@functional("multilabel_margin_loss")
def _multilabel_margin(o, input, target, size_average=None, reduce=None, reduction="mean"):
    """graph.multilabel_margin_loss: per sample, the targets are t[j] up to the first negative one; sum over
    targets j and non-target classes i of max(0, 1 - (x[t_j] - x[i])), divided by C."""
    _check_common(o, "multilabel_margin_loss", (input, target), reduction, size_average, reduce)
    _float_only("multilabel_margin_loss", input)
    if target.meta.dtype != torch.int64:
        raise Unsupported("multilabel_margin_loss with a target that is not int64")
    meta = _meta("multilabel_margin_loss", F.multilabel_margin_loss, input, target, reduction=reduction)
    x = input if input.meta.dim() == 2 else o.reshape(input, (1, input.meta.numel()))
    t = o.reshape(target, tuple(x.meta.shape))
    n, c = x.meta.shape
    # eager reads targets before the first negative one only: those are range-checked before every run
    # (the check's own graph: valid[j] when no negative value is among t[0..j], a masked count)
    neg = o.convert(o.binary("lt", t, 0), torch.int64)
    before = o.dense(torch.tril(torch.ones(c, c, dtype=torch.int64)))  # [j, k]: k <= j
    seen = o.reduce("sum", o.binary("mul", o.reshape(neg, (n, 1, c)), o.reshape(before, (1, c, c))), 2)
    o.check_index_range(o.where(o.binary("eq", seen, 0), t, 0), c, wraps=False)
    r = o.node("multilabel_margin_loss", [x, t], torch.empty((n,) if reduction == "none" else (),
                                                              dtype=x.meta.dtype, device="meta"),
               reduction=reduction)
    return o.reshape(r, tuple(meta.shape))


@functional("gaussian_nll_loss")
def _gaussian_nll(o, input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log(max(var, eps)) + (x - t)^2 / max(var, eps)) (+ 0.5 log(2 pi) with full), as
    torch.nn.functional's. Eager raises on a negative var (a data-dependent check): a var that is a graph
    input is checked before each run (dyn raises IndexError where eager raises ValueError); a var computed in
    the graph is not captured. The clamp is not differentiated in eager (no_grad): with a var that needs a
    gradient, not captured."""
    _check_common(o, "gaussian_nll_loss", (input, target), reduction)
    _float_only("gaussian_nll_loss", input, target)
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise Unsupported("gaussian_nll_loss with a negative var (eager raises)")
        var = o.full(tuple(input.meta.shape), float(var), input.meta.dtype)
    elif isinstance(var, TensorVar):
        _float_only("gaussian_nll_loss", var)
        if o.needs_grad(var):
            raise Unsupported("gaussian_nll_loss with a var that requires grad (eager's clamp is not differentiated)")
        node = var.node
        while node.op in ("reshape", "expand", "permute"):
            node = node.inputs[0]
        if node.op != "input":
            raise Unsupported("gaussian_nll_loss with a var computed in the graph (eager checks its sign)")
        k = node.index
        o.tr.index_bounds.append((lambda ins, k=k: (ins[k] < 0).any().reshape(1).to(torch.int64), 0, 1))
        xs, vs = tuple(input.meta.shape), tuple(var.meta.shape)
        if vs != xs:
            if xs[:-1] == vs:
                var = o.reshape(var, vs + (1,))
            elif not (len(xs) == len(vs) and sum(v for a, v in zip(xs, vs) if a != v) == 1):
                raise Unsupported("gaussian_nll_loss: var is of incorrect size (eager raises)")
    else:
        raise Unsupported(f"gaussian_nll_loss with a var of type {type(var).__name__}")
    try:  # eager's function reads var's sign (no meta kernel): its shape and dtype from the formula's
        shape = tuple(torch.broadcast_shapes(*(tuple(t.meta.shape) for t in (input, target, var))))
    except RuntimeError as e:
        raise Unsupported(f"gaussian_nll_loss: eager raises {e}") from None
    dt = torch.promote_types(torch.promote_types(input.meta.dtype, target.meta.dtype), var.meta.dtype)
    meta = meta_empty(shape if reduction == "none" else (), dtype=dt, device="meta")
    v = o.binary("maximum", var, float(eps))
    d = o.binary("sub", input, target)
    loss = o.binary("mul", 0.5, o.binary("add", o.unary("log", v), o.binary("div", o.binary("mul", d, d), v)))
    if full:
        loss = o.binary("add", loss, 0.5 * math.log(2 * math.pi))
    return _finish(o, loss, reduction, meta)
