"""The graph ops of GraphFamilyOps.td (composite reductions, scans, flip/roll/repeat) as the Python side
needs them: their MLIR text (mlir.py calls line()) and their meaning as PyTorch ops (eager.py calls run())."""
import torch

REDUCTIONS = ("all", "any", "logsumexp")       # dims + keepdim, printed as graph.sum's
ARG_REDUCTIONS = ("argmax", "argmin")           # dim + keepdim
SCAN_KINDS = ("sum", "prod", "max", "min", "logsumexp")
LOSSES = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy",
          "binary_cross_entropy_with_logits", "soft_margin_loss")  # input, target, reduction (+ beta, delta, log_target)
OPS = frozenset(REDUCTIONS + ARG_REDUCTIONS + LOSSES + ("vector_norm", "cumulative", "cumulative_index", "flip",
                                                        "roll", "repeat", "scatter", "nll_loss"))

_SCANS = {"sum": torch.cumsum, "prod": torch.cumprod, "logsumexp": torch.logcumsumexp,
          "max": lambda x, d: torch.cummax(x, d).values, "min": lambda x, d: torch.cummin(x, d).values}
_SCAN_INDICES = {"max": torch.cummax, "min": torch.cummin}


def line(n, ins, tys, r, dims, literal):
    """The op's line of graph-dialect MLIR; dims and literal format lists and f64 numbers (mlir.py's)."""
    op, a = n.op, n.attrs
    head = f"{n.name} = graph.{op}"
    tail = f" : {tys} -> {r}"
    kd = " keepdim" if a.get("keepdim") else ""
    if op in REDUCTIONS:
        return f"{head} {ins} dims {dims(a['dims'])}{kd}{tail}"
    if op in ARG_REDUCTIONS:
        return f"{head} {ins} dim {a['dim']}{kd}{tail}"
    if op == "vector_norm":
        return f"{head} {ins} ord {literal(a['ord'], torch.float64)} dims {dims(a['dims'])}{kd}{tail}"
    if op in ("cumulative", "cumulative_index"):
        return f"{head} {a['kind']} {ins} dim {a['dim']}{tail}"
    if op == "flip":
        return f"{head} {ins} dims {dims(a['dims'])}{tail}"
    if op == "roll":
        return f"{head} {ins} shifts {dims(a['shifts'])} dims {dims(a['dims'])}{tail}"
    if op == "repeat":
        return f"{head} {ins} repeats {dims(a['repeats'])}{tail}"
    if op == "scatter":  # GraphScatterOps.td
        x, i, src = n.inputs
        inc = (" include_self" if a.get("include_self") else "") + (" wraps" if a.get("wraps") else "")
        return f"{head} {a['reduce']} {x.name} dim {a['dim']} index {i.name} src {src.name}{inc}{tail}"
    if op == "nll_loss":
        return f"{head} {a['reduction']} {ins} {{ignore_index = {int(a['ignore_index'])} : i64}}{tail}"
    if op in LOSSES:
        extra = [f"{k} = {literal(a[k], torch.float64)} : f64" for k in ("beta", "delta") if k in a]
        extra += ["log_target"] if a.get("log_target") else []
        attrs = " {" + ", ".join(extra) + "}" if extra else ""
        return f"{head} {a['reduction']} {ins}{attrs} : {tys.split(', ')[0]} -> {r}"
    raise NotImplementedError(op)


def run(n, xs):
    """The op run with PyTorch's ops: the eager backend's meaning of the node, the compiled one's oracle."""
    op, a, x = n.op, n.attrs, xs[0]
    if op in REDUCTIONS:
        return getattr(torch, op)(x, tuple(a["dims"]), keepdim=bool(a.get("keepdim")))
    if op in ARG_REDUCTIONS:
        return getattr(torch, op)(x, a["dim"], keepdim=bool(a.get("keepdim")))
    if op == "vector_norm":
        return torch.linalg.vector_norm(x, a["ord"], tuple(a["dims"]), keepdim=bool(a.get("keepdim")))
    if op == "cumulative":
        return _SCANS[a["kind"]](x, a["dim"])
    if op == "cumulative_index":
        return _SCAN_INDICES[a["kind"]](x, a["dim"]).indices
    if op == "flip":
        return torch.flip(x, list(a["dims"]))
    if op == "roll":
        return torch.roll(x, list(a["shifts"]), list(a["dims"]))
    if op == "repeat":
        return x.repeat(list(a["repeats"]))
    if op == "scatter":
        index = xs[1]
        if a.get("wraps"):
            index = torch.where(index < 0, index + x.shape[a["dim"]], index)
        if a["reduce"] == "none":
            return torch.scatter(x, a["dim"], index, xs[2])
        return torch.scatter_reduce(x, a["dim"], index, xs[2], a["reduce"], include_self=bool(a.get("include_self")))
    if op == "nll_loss":
        return torch.nn.functional.nll_loss(x, xs[1], xs[2], ignore_index=a["ignore_index"], reduction=a["reduction"])
    if op in LOSSES:
        kw = {k: a[k] for k in ("beta", "delta", "log_target") if k in a}
        return getattr(torch.nn.functional, op)(x, xs[1], reduction=a["reduction"], **kw)
    raise NotImplementedError(op)
