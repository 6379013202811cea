"""The random ops of GraphRandomOps.td (graph.random, graph.bernoulli, graph.dropout) as the Python side needs
them: their MLIR text (mlir.py calls line()), their meaning as PyTorch ops (eager.py calls run()) and the seed
a compiled call draws (backends.py calls draw_seed()).

The compiled graph computes random numbers with Philox from (seed, offset, element index): the seed is the
function's last argument, `%seed`, drawn at every call from torch's generator of the graph's device (so
torch.manual_seed makes the results reproducible, and successive calls and eager's own draws interleave);
the offset is a constant of each op, distinct within a graph. The eager backend runs PyTorch's own random ops
instead, so it draws eager's numbers (docs/random.md)."""
import torch

OPS = frozenset(("random", "bernoulli", "dropout"))
SEED = "%seed"
_METHODS = {"uniform": "uniform_", "normal": "normal_", "exponential": "exponential_", "integers": "random_",
            "cauchy": "cauchy_", "log_normal": "log_normal_", "geometric": "geometric_"}


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


def line(n, ins, tys, r, literal):
    """The op's line of graph-dialect MLIR (literal formats f64 numbers: mlir.py's)."""
    op, a = n.op, n.attrs
    if op == "random":
        return (f"{n.name} = graph.random {a['distribution']} {SEED} offset {a['offset']} "
                f"a {_f64(literal, a['a'])} b {_f64(literal, a['b'])} : tensor<i64> -> {r}")
    extra = f" {{feature_dims = {a['feature_dims']} : i64}}" if a.get("feature_dims", -1) >= 0 else ""
    if op == "bernoulli":
        return f"{n.name} = graph.bernoulli {ins}, {SEED} offset {a['offset']} : {tys}, tensor<i64> -> {r}"
    if op == "dropout":
        return (f"{n.name} = graph.dropout {ins}, {SEED} p {_f64(literal, a['p'])} offset {a['offset']}{extra}"
                f" : {tys}, tensor<i64> -> {r}")
    raise NotImplementedError(op)


def run(n, xs):
    """The op run with PyTorch's random ops (eager's numbers, from eager's generator): the eager backend's
    meaning of the node."""
    op, a = n.op, n.attrs
    if op == "random":
        t = torch.empty(tuple(n.meta.shape), dtype=n.meta.dtype, device=a.get("device", "cpu"))
        if a["distribution"] in ("exponential", "geometric"):
            return getattr(t, _METHODS[a["distribution"]])(a["a"])
        lo, hi = a["a"], a["b"]
        if a["distribution"] == "integers":
            lo, hi = int(lo), int(hi)
        return getattr(t, _METHODS[a["distribution"]])(lo, hi)
    if op == "bernoulli":
        return torch.bernoulli(xs[0])
    if op == "dropout":  # in place on a copy where eager's call was in place: the same kernel, the same draws
        k, inplace = a.get("feature_dims", -1), a.get("eager_inplace", False)
        x = xs[0].clone() if inplace else xs[0]
        if k < 0:
            return torch.nn.functional.dropout(x, a["p"], True, inplace)
        return _FEATURE[a["fn"]](x, a["p"], True, inplace)
    raise NotImplementedError(op)


_FEATURE = {"dropout1d": torch.nn.functional.dropout1d, "dropout2d": torch.nn.functional.dropout2d,
            "dropout3d": torch.nn.functional.dropout3d}
