"""Ops: the op builders bound to one capture (graph + device). Each takes TensorVars / Python scalars,
computes the result's meta tensor by running the real torch op on meta tensors (PyTorch's own
broadcasting and type promotion) and adds graph-dialect nodes; composite ops decompose here. The op
families are mixins: views.py (views, in-place updates), arith.py (elementwise), shape.py (reductions,
shapes, indexing), nn.py (linear algebra, activations), norms.py (normalizations), windows.py (convolution, pooling, padding,
attention), torch_call.py (the generic node of ops without a graph op of their own)."""
import math
import warnings

import torch

from ..errors import Unsupported
from ..graph.opset import ELEMENT_TYPES
from .arith import ArithOps
from .nn import NNOps
from .norms import NormOps
from .registered import RegisteredOps
from .shape import ShapeOps
from .tensor import SCALARS, TensorVar, node_requires_grad
from .torch_call import TorchCallOps
from .views import ViewOps
from .windows import WindowOps


# Eager's kernels reject some dtypes (and scalar operands) that the meta kernels accept: abs, relu, floor
# and ceil of bools, subtraction with a bool, bool ** bool, integer ** negative integer, leaky_relu of
# integers. eager_accepts runs the real op once on small tensors (size 2 in every dim) of the operands'
# dtypes and ranks (the same type promotion), on the CPU and on the graph's device, and remembers the
def _probe_sig(v):
    if isinstance(v, (TensorVar, torch.Tensor)):
        m = v.meta if isinstance(v, TensorVar) else v
        return ("T", m.dtype, m.dim())
    if isinstance(v, float) and v != v:
        return (float, "nan")
    return (type(v), v)


def _probe_value(v, device):
    if isinstance(v, (TensorVar, torch.Tensor)):
        m = v.meta if isinstance(v, TensorVar) else v
        # not one element: eager has fast paths for those
        return torch.ones((2,) * m.dim(), dtype=m.dtype, device=device)
    return v


def eager_accepts(cache, what, fn, *args, _device=None, **kwargs):
    """Raises Unsupported (the frame then runs eagerly, where eager raises) when eager's kernel raises for
    fn(*args, **kwargs) with args' dtypes, on the CPU or on _device (the graph's, where kernels may take
    other dtypes: CUDA's abs takes bools); TensorVars (and tensors) stand for tensors of their dtype and
    rank, other arguments are passed as they are. cache: the session's answers, by dtypes and ranks."""
    devices = ["cpu"]
    if _device is not None and torch.device(_device).type != "cpu":
        devices.append(torch.device(_device))
    try:
        key = (fn, tuple(_probe_sig(a) for a in args), tuple(sorted((k, _probe_sig(v)) for k, v in kwargs.items())),
               str(devices[-1]))
        hash(key)
    except TypeError:
        key = None
    err = cache.get(key, False) if key is not None else False
    if err is False:
        err = None
        for device in devices:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fn(*[_probe_value(a, device) for a in args], **{k: _probe_value(v, device) for k, v in kwargs.items()})
            except Exception as e:  # eager rejects these operands
                err = f"{type(e).__name__}: {e}"
                break
        if key is not None:
            if len(cache) > 4096:
                cache.clear()
            cache[key] = err
    if err is not None:
        raise Unsupported(f"{what}: eager raises {err}")



class Ops(ViewOps, ArithOps, ShapeOps, NNOps, NormOps, WindowOps, TorchCallOps, RegisteredOps):
    """Op builders bound to one tracer (graph + device)."""

    def __init__(self, tracer):
        self.tr = tracer
        self.g = tracer.graph

    def var(self, node):
        return TensorVar(self.tr, node)

    def node(self, op, inputs, meta, **attrs):
        return self.var(self.g.add(op, [i.node for i in inputs], meta, **attrs))

    def check(self, *xs):
        for x in xs:
            if not isinstance(x, TensorVar):
                raise Unsupported(f"expected a tensor, got {type(x).__name__}")

    def const(self, value, dtype):
        if isinstance(value, TensorVar):
            return value
        if not isinstance(value, SCALARS):
            raise Unsupported(f"unsupported scalar operand {type(value).__name__}")
        if not dtype.is_floating_point and dtype != torch.bool:
            # a Python number that the integer type cannot hold: eager wraps it in some ops (int32 + 2**40)
            # and raises in others (fill, clamp): not captured
            if isinstance(value, float) and not math.isfinite(value):
                raise Unsupported(f"{value} as a {dtype} constant")
            info = torch.iinfo(dtype)
            if not info.min <= int(value) <= info.max:
                raise Unsupported(f"{value} does not fit in {dtype}")
        self.g.device = self.tr.device  # constants are made on the device the graph runs on
        return self.var(self.g.constant(value, dtype))

    def accepts(self, what, fn, *args, **kwargs):
        """eager_accepts on the CPU and on the device the graph runs on."""
        eager_accepts(self.tr.session.eager_ok, what, fn, *args, _device=self.tr.device, **kwargs)

    def detach(self, x):
        """x's value cut from autograd (the eager backend runs Tensor.detach; no op in the graph dialect)."""
        return self.var(self.g.add("detach", [x.node], x.meta))

    def needs_grad(self, *vals):
        """Whether autograd records an op added now on any of vals: one requires grad (a floating tensor
        reached from an input that requires grad) and the traced code's grad mode is on (then read, so
        guarded). Decompositions whose gradient differs from eager's own backward formula (at ties,
        bounds, zeros) take an exact form, or are not captured, only then."""
        if not any(isinstance(v, TensorVar) and node_requires_grad(self.tr, v.node) for v in vals):
            return False
        return self.tr.grad_enabled()

    DENSE_LIMIT = 1 << 16  # elements of one dense constant (its text and its memory grow with it)

    def dense(self, values):
        """A constant tensor holding `values` (a real tensor computed while capturing from constants,
        like torch.arange's): a dense graph.constant, a splat when every element is the same."""
        values = values.detach().to("cpu").contiguous()
        shape, dtype = tuple(values.shape), values.dtype
        if dtype not in ELEMENT_TYPES:
            raise Unsupported(f"constant tensor of dtype {dtype}")
        flat = values.reshape(-1)
        if not flat.numel():
            return self.full(shape, False if dtype == torch.bool else 0, dtype)
        if bool((flat == flat[0]).all()):
            return self.full(shape, flat[0].item(), dtype)
        if flat.numel() > self.DENSE_LIMIT:
            raise Unsupported(f"constant tensor of {flat.numel()} elements (more than {self.DENSE_LIMIT})")
        self.g.device = self.tr.device
        return self.var(self.g.dense(values))
