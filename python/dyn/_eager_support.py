"""What the registry's eager expressions (python/dyn/_ops_generated.py) share: reductions with the graph
dialect's meaning of `dims` (empty: nothing reduced)."""
import torch


def reduce(fn, x, dims, keepdim):
    dims = list(dims)
    if not dims:
        return x.clone()
    return fn(x, dims, keepdim=bool(keepdim))


def prod(x, dims, keepdim):
    """torch.prod takes one dim at a time."""
    for d in sorted(dims, reverse=True):
        x = torch.prod(x, d, keepdim=bool(keepdim))
    return x
