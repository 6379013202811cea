"""The normalization ops in the eager interpreter and in MLIR text. The eager backend calls PyTorch's own
functions (F.layer_norm, torch.rms_norm, F.batch_norm, F.instance_norm, F.group_norm): eager's kernels,
so eager's bits and gradients; running statistics are updated on copies that the node returns."""
import torch
import torch.nn.functional as F

NORM_OPS = ("layer_norm", "rms_norm", "batch_norm", "instance_norm", "group_norm")


def _operands(n, xs):
    """x, weight, bias, running_mean, running_var, count (None where absent), from the node's flags."""
    a, it = n.attrs, iter(xs[1:])
    w = next(it) if a.get("weight") else None
    b = next(it) if a.get("bias") else None
    rm = rv = count = None
    if a.get("stats"):
        rm, rv = next(it), next(it)
    if a.get("count"):
        count = next(it)
    return xs[0], w, b, rm, rv, count


def run_norm(n, xs):
    op, a = n.op, n.attrs
    x, w, b, rm, rv, count = _operands(n, xs)
    if op == "layer_norm":
        return F.layer_norm(x, tuple(x.shape[x.dim() - a["normalized_rank"]:]), w, b, a["eps"])
    if op == "rms_norm":
        return torch.rms_norm(x, tuple(x.shape[x.dim() - a["normalized_rank"]:]), w, a["eps"])
    if op == "group_norm":
        return F.group_norm(x, a["groups"], w, b, a["eps"])
    updates = a.get("results") == 3
    if updates:  # eager's kernel writes the statistics in place: here copies, returned (capture writes back)
        rm, rv = rm.clone(), rv.clone()
    if op == "batch_norm":
        momentum = a.get("momentum", 0.0)
        if count is not None:
            momentum = 1.0 / float(count)  # nn.BatchNorm's cumulative average, as it computes it
        y = F.batch_norm(x, rm, rv, w, b, a["training"], momentum, a["eps"])
    else:
        y = F.instance_norm(x, rm, rv, w, b, a["use_input_stats"], a["momentum"], a["eps"])
    return (y, rm, rv) if updates else y


def norm_line(n, literal):
    """The op's graph-dialect line; literal(v) writes an f64 attribute value."""
    a = n.attrs
    names = [i.name for i in n.inputs]
    ops = [names[0]]
    k = 1
    for flag, key in (("weight", "weight"), ("bias", "bias")):
        if a.get(flag):
            ops.append(f"{key} {names[k]}")
            k += 1
    if a.get("stats"):
        ops += [f"running_mean {names[k]}", f"running_var {names[k + 1]}"]
        k += 2
    if a.get("count"):
        ops.append(f"num_batches_tracked {names[k]}")
    text = " ".join(ops)
    if n.op in ("layer_norm", "rms_norm"):
        text += f" normalized_rank {a['normalized_rank']}"
    elif n.op == "group_norm":
        text += f" groups {a['groups']}"
    elif n.op == "batch_norm":
        if a["training"]:
            text += " training"
        if "momentum" in a:
            text += f" momentum {literal(a['momentum'])}"
    else:
        if a["use_input_stats"]:
            text += " use_input_stats"
        text += f" momentum {literal(a['momentum'])}"
    text += f" eps {literal(a['eps'])}"
    return text
