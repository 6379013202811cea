"""What the handlers share: `out=`, shape arguments, and in-place updates checked against eager's rules.
A handler is called as handler(ops, *args, **kwargs) with TensorVars for tensors and returns a TensorVar
or a constant."""
import torch

from ...errors import Unsupported
from ..tensor import TensorVar


def _tensors(*vals):
    out = []
    for v in vals:
        if isinstance(v, TensorVar):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            out += _tensors(*v)
        elif isinstance(v, dict):
            out += _tensors(*v.values())
    return out


def _out(o, out, r, *operands):
    """`out=`: r is written into out, which eager returns."""
    if out is None:
        return r
    if not isinstance(out, TensorVar) or not isinstance(r, TensorVar):
        raise Unsupported("out= that is not one tensor")
    if tuple(out.meta.shape) != tuple(r.meta.shape) or out.meta.dtype != r.meta.dtype:
        raise Unsupported("out= with another shape or dtype than the result (eager resizes or casts)")
    return o.mutate(out, r, _tensors(*operands))


def _check_device(o, device, what="factory"):
    """A tensor made on `device` (None: eager's default device) must be on the device the graph runs on
    (one device per graph; a CUDA model's constants made with device=x.device are CUDA constants), or on
    the CPU in a graph on CUDA: True then, and the caller marks the tensor `on_host`."""
    dev = torch.device(device) if device is not None else \
        o.tr.read_state("default device", torch.get_default_device)  # global state: guarded
    graph = torch.device(o.tr.device)
    if dev.type != graph.type or (dev.index is not None and graph.index is not None and dev.index != graph.index):
        if not o.tr.input_tensors and not o.g.nodes and dev.type in ("cpu", "cuda"):
            # nothing read or made yet (no tensor arguments): the graph runs where its first tensor is made
            if dev.type == "cuda" and dev.index is None:
                dev = torch.device("cuda", o.tr.read_state("current CUDA device", torch.cuda.current_device))
            o.tr.device = dev
            return False
        if dev.type == "cpu" and graph.type == "cuda":
            return True
        raise Unsupported(f"{what} on {dev} in a graph on {graph}")
    return False


def _graph_device(o, device, what="factory"):
    """_check_device for tensors that must be made on the graph's own device (random draws: a CPU draw
    takes the CPU generator's numbers)."""
    if _check_device(o, device, what):
        raise Unsupported(f"{what} on cpu in a graph on {o.tr.device}")


def on_host(x, host=True):
    """x (a TensorVar just made, its node its own) held on the CPU by eager in a graph on CUDA: its value
    is computed on the GPU with the rest, and moved to the CPU where it leaves the graph."""
    if host:
        x.node.host = True
    return x


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
        return tuple(shape[0])
    return tuple(shape)



# -- in-place ops: the new value is computed like the out-of-place op's, checked against eager's rules by
# running the real in-place op on a meta tensor laid out like the destination (dtype cast, broadcast,
# overlap), and written with Ops.mutate (views, graph inputs, writeback)
def metas(v):
    if isinstance(v, TensorVar):
        return v.meta
    if type(v) in (tuple, list):
        return type(v)(metas(x) for x in v)
    if type(v) is dict:
        return {k: metas(x) for k, x in v.items()}
    return v


def inplace(o, x, new, check, *operands, grad=True):
    """x updated in place to `new`; check(meta) runs eager's in-place op on a meta copy of x. Returns x."""
    o.check(x, new)
    o.check_inplace(x, check)
    if not torch.can_cast(new.meta.dtype, x.meta.dtype):
        raise Unsupported(f"in-place op: result type {new.meta.dtype} can't be cast to {x.meta.dtype}")
    return o.mutate(x, new, _tensors(*operands), grad=grad)
