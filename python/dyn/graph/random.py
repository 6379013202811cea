"""The random ops of a captured graph (GraphRandomOps.td's graph.random, graph.bernoulli, graph.dropout, and
capture's attention_dropout, written as graph ops here) as the Python side needs them beyond the registry:
the seed a compiled call draws (backends.py calls draw_seed()) and the offsets of its ops.

The compiled graph computes random numbers with Philox from (seed, offset, element index): the seed is the
function's last argument, `%seed`, drawn at every call from torch's generator of the graph's device (so
torch.manual_seed makes the results reproducible, and successive calls and eager's own draws interleave);
the offset is a constant of each op, distinct within a graph. The eager backend runs PyTorch's own random ops
instead, so it draws eager's numbers (docs/random.md)."""
import torch

OPS = frozenset(("random", "bernoulli", "dropout", "attention_dropout"))
SEED = "%seed"


def has_random(graph):
    """Whether the graph holds a random op (then its compiled function takes %seed)."""
    return any(n.op in OPS for n in graph.nodes)


def next_offset(graph):
    """The offset of a new random op: one past the largest so far (distinct within the graph)."""
    return 1 + max((n.attrs["offset"] for n in graph.nodes if n.op in OPS), default=-1)


def draw_seed(device):
    """This call's seed: one 64-bit draw from torch's default generator of `device` (a 0-d int64 tensor
    there), as inductor draws its seeds; it advances that generator as an eager random op would."""
    return torch.randint(-2 ** 63, 2 ** 63 - 1, (), dtype=torch.int64, device=device)


def _f64(literal, v):
    return f"{literal(float(v), torch.float64)}"


def _ty(shape, et):
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def attention_dropout_lines(n, literal):
    """attention_dropout as eager's math path in graph ops: softmax(q k^T * scale + mask) dropped out, times v,
    on [batch, L, E] views (graph.matmul takes 3-d operands); softmax in float32 for halves."""
    from .opset import ELEMENT_TYPES
    q, k, v = n.inputs[:3]
    mask = n.inputs[3] if len(n.inputs) > 3 else None
    a, et = n.attrs, ELEMENT_TYPES[q.meta.dtype]
    *batch, length, e = q.meta.shape
    src, ev = k.meta.shape[-2], v.meta.shape[-1]
    if a.get("fused"):  # eager's fused kernel draws the dropout; its backward reads the state it returns
        scale = a["scale"] if a["scale"] is not None else e ** -0.5
        lse = _ty((*batch[:2], (length + 31) // 32 * 32), "f64" if et == "f64" else "f32")
        operands = [q, k, v] + ([mask] if mask is not None else [])
        tys = ", ".join(_ty(t.meta.shape, ELEMENT_TYPES[t.meta.dtype]) for t in operands)
        r = _ty(n.meta.shape, et)
        p = "%ad" + n.name[1:] + "_r"
        op = "graph.attention_lse" if mask is None else "graph.masked_attention_lse"
        return [f"{p}:3 = {op} {', '.join(t.name for t in operands)} {{dropout_p = {_f64(literal, a['p'])} : f64, "
                f"is_causal = {str(bool(a['is_causal'])).lower()}, scale = {_f64(literal, scale)} : f64}} : "
                f"({tys}) -> ({r}, {lse}, tensor<2xi64>)",
                f"{n.name} = graph.reshape {p}#0 : {r} -> {r}"]
    b = 1
    for d in batch:
        b *= d
    p = "%ad" + n.name[1:] + "_"
    s3 = _ty((b, length, src), et)
    lines = [f"{p}q = graph.reshape {q.name} : {_ty(q.meta.shape, et)} -> {_ty((b, length, e), et)}",
             f"{p}k = graph.reshape {k.name} : {_ty(k.meta.shape, et)} -> {_ty((b, src, e), et)}",
             f"{p}kt = graph.permute {p}k dims [0, 2, 1] : {_ty((b, src, e), et)} -> {_ty((b, e, src), et)}",
             f"{p}s = graph.matmul {p}q, {p}kt : {_ty((b, length, e), et)}, {_ty((b, e, src), et)} -> {s3}",
             f"{p}c = graph.constant dense<{literal(a['scale'] if a['scale'] is not None else e ** -0.5, q.meta.dtype)}>"
             f" : {_ty((), et)}",
             f"{p}x = graph.mul {p}s, {p}c : {s3}, {_ty((), et)} -> {s3}"]
    scores = f"{p}x"
    ninf = f"{p}ninf = graph.constant dense<{literal(float('-inf'), q.meta.dtype)}> : {_ty((), et)}"
    if mask is not None:
        met = ELEMENT_TYPES[mask.meta.dtype]
        full = tuple(batch) + (length, src)
        lines += [f"{p}me = graph.expand {mask.name} : {_ty(mask.meta.shape, met)} -> {_ty(full, met)}",
                  f"{p}m = graph.reshape {p}me : {_ty(full, met)} -> {_ty((b, length, src), met)}"]
        if mask.meta.dtype == torch.bool:
            lines += [ninf, f"{p}xm = graph.where {p}m, {scores}, {p}ninf : {_ty((b, length, src), 'i1')}, "
                            f"{s3}, {_ty((), et)} -> {s3}"]
        else:
            lines.append(f"{p}xm = graph.add {scores}, {p}m : {s3}, {s3} -> {s3}")
        scores = f"{p}xm"
    if a["is_causal"]:
        keep = "[" + ", ".join("[" + ", ".join("true" if j <= i else "false" for j in range(src)) + "]"
                               for i in range(length)) + "]"
        if mask is None or mask.meta.dtype != torch.bool:
            lines.append(ninf)
        lines += [f"{p}tri = graph.constant dense<{keep}> : {_ty((length, src), 'i1')}",
                  f"{p}xc = graph.where {p}tri, {scores}, {p}ninf : {_ty((length, src), 'i1')}, {s3}, "
                  f"{_ty((), et)} -> {s3}"]
        scores = f"{p}xc"
    if et in ("f16", "bf16"):  # eager's softmax computes in float32 and rounds once
        s32 = _ty((b, length, src), "f32")
        lines += [f"{p}up = graph.convert {scores} : {s3} -> {s32}",
                  f"{p}p32 = graph.softmax {p}up dim 2 : {s32} -> {s32}",
                  f"{p}p = graph.convert {p}p32 : {s32} -> {s3}"]
    else:
        lines.append(f"{p}p = graph.softmax {scores} dim 2 : {s3} -> {s3}")
    lines += [f"{p}d = graph.dropout {p}p, {SEED} p {_f64(literal, a['p'])} offset {a['offset']} : {s3}, "
              f"tensor<i64> -> {s3}",
              f"{p}v = graph.reshape {v.name} : {_ty(v.meta.shape, et)} -> {_ty((b, src, ev), et)}",
              f"{p}o = graph.matmul {p}d, {p}v : {s3}, {_ty((b, src, ev), et)} -> {_ty((b, length, ev), et)}",
              f"{n.name} = graph.reshape {p}o : {_ty((b, length, ev), et)} -> {_ty(n.meta.shape, et)}"]
    return lines
