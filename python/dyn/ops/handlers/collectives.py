"""Capture of torch.distributed's collectives as graph ops (GraphLibraryOps.td, "Collectives"): the functional
collectives (torch.distributed._functional_collectives: a new tensor, waited for where the compiled code reads
it) and the in-place `dist.all_reduce` family with async_op=False. The process group is resolved to its name
at capture (the graph op's attribute); the library call runs c10d's own collective on it."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar
from .common import inplace
from .registry import torch_function


def _c10d():
    import torch.distributed as dist
    import torch.distributed._functional_collectives as fc
    return dist, fc


def _group(group, tag=""):
    """(name, size) of a process group given as torch.distributed's APIs take it (None: the default group)."""
    dist, fc = _c10d()
    if group is None:
        group = dist.distributed_c10d._get_default_group()
    try:
        name = fc._resolve_group_name(group, tag)
        pg = dist.distributed_c10d._resolve_process_group(name)
    except (RuntimeError, ValueError, TypeError, AttributeError) as e:
        raise Unsupported(f"collective over {type(group).__name__} {group!r}: {e}")
    return str(name), pg.size()


def _reduce_op(op):
    """The functional collectives' name of a reduction: a string as they take it, a dist.ReduceOp by name."""
    name = op if isinstance(op, str) else getattr(op, "name", None)
    if not isinstance(name, str) or name.lower() not in ("sum", "avg", "product", "min", "max"):
        raise Unsupported(f"collective with reduce op {op!r}")
    return name.lower()


def _tensor(x, what):
    if not isinstance(x, TensorVar):
        raise Unsupported(f"{what} of a {type(x).__name__}")
    return x


def all_reduce(o, x, reduce_op, group, tag=""):
    x = _tensor(x, "all_reduce")
    name, _ = _group(group, tag)
    attrs = {"reduce_op": _reduce_op(reduce_op), "group_name": name}
    return o.registered("all_reduce", None, (x,), attrs, call=lambda m: torch.empty_like(m))


def all_gather_tensor(o, x, gather_dim, group, tag=""):
    x = _tensor(x, "all_gather_tensor")
    if gather_dim != 0:
        raise Unsupported("all_gather_tensor along a dim other than 0")
    name, size = _group(group, tag)
    return o.registered("all_gather_into_tensor", None, (x,), {"group_size": size, "group_name": name},
                        call=lambda m: m.new_empty((m.shape[0] * size, *m.shape[1:])))


def reduce_scatter_tensor(o, x, reduce_op, scatter_dim, group, tag=""):
    x = _tensor(x, "reduce_scatter_tensor")
    name, size = _group(group, tag)
    if scatter_dim != 0 or x.meta.dim() == 0 or x.meta.shape[0] % size:
        raise Unsupported("reduce_scatter_tensor along a dim other than 0, or of a size the group does not divide")
    attrs = {"reduce_op": _reduce_op(reduce_op), "group_size": size, "group_name": name}
    return o.registered("reduce_scatter_tensor", None, (x,), attrs,
                        call=lambda m: m.new_empty((m.shape[0] // size, *m.shape[1:])))


def _sync(async_op, what):
    if async_op:
        raise Unsupported(f"{what}(async_op=True) (its Work handle is waited for outside the graph)")


def dist_all_reduce(o, tensor, op=None, group=None, async_op=False):
    _sync(async_op, "dist.all_reduce")
    r = all_reduce(o, tensor, "sum" if op is None else op, group)
    inplace(o, tensor, r, lambda s: s)
    return None  # the Work handle of a synchronous collective is None


def dist_all_gather_into_tensor(o, output, input, group=None, async_op=False):
    _sync(async_op, "dist.all_gather_into_tensor")
    output = _tensor(output, "all_gather_into_tensor")
    r = all_gather_tensor(o, input, 0, group)
    if tuple(r.meta.shape) != tuple(output.meta.shape):
        raise Unsupported("all_gather_into_tensor into an output that is not the gathered shape")
    inplace(o, output, r, lambda s: s)
    return None


def dist_reduce_scatter_tensor(o, output, input, op=None, group=None, async_op=False):
    _sync(async_op, "dist.reduce_scatter_tensor")
    output = _tensor(output, "reduce_scatter_tensor")
    r = reduce_scatter_tensor(o, input, "sum" if op is None else op, 0, group)
    if tuple(r.meta.shape) != tuple(output.meta.shape):
        raise Unsupported("reduce_scatter_tensor into an output that is not one rank's block")
    inplace(o, output, r, lambda s: s)
    return None


def _wait_tensor(o, x):
    return _tensor(x, "wait_tensor")  # captured collectives are waited for where they are read


def _register():
    try:
        dist, fc = _c10d()
    except ImportError:  # a build without torch.distributed
        return
    if not dist.is_available():
        return
    torch_function.all({fc.all_reduce: all_reduce, fc.all_gather_tensor: all_gather_tensor,
                        fc.reduce_scatter_tensor: reduce_scatter_tensor, fc.wait_tensor: _wait_tensor,
                        dist.all_reduce: dist_all_reduce, dist.all_gather_into_tensor: dist_all_gather_into_tensor,
                        dist.reduce_scatter_tensor: dist_reduce_scatter_tensor})


_register()
