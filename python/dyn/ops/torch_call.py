"""The generic torch-op node (Ops mixin): a call to a PyTorch op that has no dedicated handler is one graph
node, `torch_call`, naming the op and holding its non-tensor arguments (FX's call_function, inductor's
fallback kernels). Its results' metadata come from running the op on meta tensors, watched at the
dispatcher: only ops that are pure there (no input written, no result aliasing an input, shapes that do
not depend on data) become nodes. Random ops (dispatcher tag `nondeterministic_seeded`) are nodes with
`seeded` set: they run in program order and are never dropped, so they draw eager's random numbers."""
import types
import warnings

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode

from ..errors import Unsupported
from ..graph.opset import ELEMENT_TYPES, Operand
from .tensor import TensorVar, node_requires_grad
from ..dynamic.symbolic import meta_empty

# aten ops that write their running-statistics arguments without saying so in their schema
_HIDDEN_WRITES = frozenset({"native_batch_norm", "batch_norm", "_batch_norm_impl_index", "cudnn_batch_norm",
                            "miopen_batch_norm", "_native_batch_norm_legit", "instance_norm"})
# argument values a node may hold (everything else, a function or a module above all, is refused: the
# meta run would call it)
_PLAIN = (bool, int, float, str, type(None), torch.dtype, torch.device, torch.memory_format, torch.layout)


def callee_name(fn):
    """How a node names its op: torch.std_mean, torch._C._nn.hardswish, torch.nn.functional.hardswish,
    torch.Tensor.cumsum, aten.hardswish.default."""
    if isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return str(fn)
    if isinstance(fn, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return f"torch.Tensor.{fn.__name__}"
    if isinstance(fn, types.FunctionType) and fn.__qualname__.startswith("Tensor."):
        return f"torch.{fn.__qualname__}"
    name = fn.__name__
    for path, ns in _NAMESPACES:  # the public name it is called by (F.softplus is torch._C._nn.softplus)
        short = name[len(path.rpartition(".")[2]) + 1:] if path in ("torch.special", "torch.linalg", "torch.fft") \
            else name
        if getattr(ns, short, None) is fn:
            return f"{path}.{short}"
    mod = getattr(fn, "__module__", None)
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, types.ModuleType):
        mod = owner.__name__
    return f"{mod or 'torch'}.{name}"


_NAMESPACES = (("torch.nn.functional", torch.nn.functional), ("torch", torch), ("torch.special", torch.special),
               ("torch.linalg", torch.linalg), ("torch.fft", torch.fft))


class _Watch(TorchDispatchMode):
    """Records the aten ops a meta run dispatches and the tensors they write."""

    def __init__(self):
        super().__init__()
        self.ops, self.written = [], []

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.ops.append(func)
        schema = func._schema
        if schema.is_mutable:
            bound = list(args) + [kwargs.get(a.name) for a in schema.arguments[len(args):]]
            for a, v in zip(schema.arguments, bound):
                if a.alias_info is not None and a.alias_info.is_write:
                    self.written += [t for t in (v if isinstance(v, (list, tuple)) else (v,))
                                     if isinstance(t, torch.Tensor)]
        return func(*args, **kwargs)


class TorchCallOps:
    def torch_call(self, fn, args, kwargs, name=None, inplace=None):
        """fn(*args, **kwargs) as one torch_call node (several results: one torch_result node each).
        Returns the result as fn returns it (a TensorVar, or a tuple/list of them and None).

        inplace: the operand (a TensorVar among args) an in-place op writes; the node's value is then
        that operand after the op (the eager backend runs the op on a copy of it, so that the same
        kernel draws the same random numbers as eager's in-place call) and Ops.mutate writes it back."""
        name = name or callee_name(fn)
        operands = []

        def template(v):
            if isinstance(v, TensorVar):
                if v is inplace and any(o is v for o in operands):
                    raise Unsupported(f"{name} in place on a tensor it also reads")
                operands.append(v)
                return Operand(len(operands) - 1)
            if type(v) in (tuple, list, torch.Size):
                return type(v)(template(x) for x in v)
            if isinstance(v, _PLAIN):
                return v
            raise Unsupported(f"{name} with a {type(v).__name__} argument")

        targs = template(tuple(args))
        tkwargs = {k: template(v) for k, v in kwargs.items()}
        if not operands:
            raise Unsupported(f"{name} without tensor arguments")
        if "out" in kwargs or "generator" in kwargs:
            raise Unsupported(f"{name} with out= or generator=")
        for v in operands:
            if v.meta.dtype not in ELEMENT_TYPES:
                raise Unsupported(f"{name} of a {v.meta.dtype} tensor")
        dest = None
        if inplace is not None:
            dest = next(k for k, v in enumerate(operands) if v is inplace)
            if sum(v is inplace for v in operands) > 1:
                raise Unsupported(f"{name} in place on a tensor it also reads")
        grads = [node_requires_grad(self.tr, v.node) for v in operands]
        grad = self.tr.grad_enabled() if any(grads) else False
        out, watch, metas, layout = self._meta_run(fn, name, targs, tkwargs, operands, grads, grad, dest)
        for op in watch.ops:
            if torch.Tag.dynamic_output_shape in op.tags or torch.Tag.data_dependent_output in op.tags:
                raise Unsupported(f"{name}: {op} has a data-dependent result")
            if op._schema.name.partition("::")[2] in _HIDDEN_WRITES:
                raise Unsupported(f"{name}: {op} may update its running statistics in place")
        refs = [StorageWeakRef(m.untyped_storage()) for m in metas]
        written = {StorageWeakRef(t.untyped_storage()) for t in watch.written}
        if any(r in written for k, r in enumerate(refs) if k != dest):
            raise Unsupported(f"{name} writes into a tensor argument (in-place)")
        attrs = dict(target=fn, callee=name, args=targs, kwargs=tkwargs,
                     aten=tuple(dict.fromkeys(str(op) for op in watch.ops)))
        if any(torch.Tag.nondeterministic_seeded in op.tags for op in watch.ops):
            attrs["seeded"] = True  # random: runs in program order, never dropped
        if dest is not None:
            if not (out is metas[dest] or out is None):
                raise Unsupported(f"{name} in place returns another tensor than the one it writes")
            if (tuple(metas[dest].shape), metas[dest].stride(), metas[dest].dtype) != layout:
                raise Unsupported(f"{name} changes the shape or layout of the tensor it writes")
            attrs["inplace"] = dest
            return self.node("torch_call", operands, torch.empty(tuple(inplace.meta.shape),
                                                                   dtype=inplace.meta.dtype, device="meta"),
                             results=1, **attrs)
        inputs = set(refs)
        results = out if type(out) in (tuple, list) else (out,)
        tensors = [r for r in results if r is not None]
        if not tensors or not all(type(r) is torch.Tensor for r in tensors):
            raise Unsupported(f"{name} returns {type(out).__name__}, not tensors")
        for r in tensors:
            if r._is_view() or StorageWeakRef(r.untyped_storage()) in inputs:
                raise Unsupported(f"{name} returns a view of its argument")
            if r.dtype not in ELEMENT_TYPES:
                raise Unsupported(f"{name} returns a {r.dtype} tensor")
        if len({StorageWeakRef(r.untyped_storage()) for r in tensors}) != len(tensors):
            raise Unsupported(f"{name} returns aliased tensors")
        plain = [None if r is None else meta_empty(tuple(r.shape), dtype=r.dtype, device="meta")
                 for r in results]
        if any(grads) and grad and not any(r.requires_grad for r in tensors):
            attrs["no_grad"] = True  # not differentiable: autograd gives its results no grad
        if type(out) not in (tuple, list):
            return self.node("torch_call", operands, plain[0], results=1, **attrs)
        first = next(m for m in plain if m is not None)
        call = self.g.add("torch_call", [v.node for v in operands], first, results=len(tensors),
                          structure=tuple(m is not None for m in plain),
                          metas=tuple(m for m in plain if m is not None), **attrs)
        items, count = [], 0
        for k, m in enumerate(plain):  # index: position in fn's result; result: among its tensors
            if m is not None:
                items.append(self.var(self.g.add("torch_result", [call], m, index=k, result=count)))
                count += 1
            else:
                items.append(None)
        return list(items) if type(out) is list else tuple(items)

    def _meta_run(self, fn, name, targs, tkwargs, operands, grads, grad, dest):
        metas, layout = [], None
        for k, (v, g) in enumerate(zip(operands, grads)):
            if k == dest:  # laid out like the tensor written: the op raises where eager's would
                m = self.dest_shadow(v)
                layout = (tuple(m.shape), m.stride(), m.dtype)
            else:
                m = meta_empty(tuple(v.meta.shape), dtype=v.meta.dtype, device="meta")
                if g and grad:
                    m = m.requires_grad_().clone()  # a non-leaf, as the computed or input tensor may be
            metas.append(m)

        def fill(t):
            if isinstance(t, Operand):
                return metas[t.index]
            if type(t) in (tuple, list):
                return type(t)(fill(x) for x in t)
            return t

        watch = _Watch()
        try:
            with warnings.catch_warnings(), torch.set_grad_enabled(grad):
                warnings.simplefilter("ignore")  # the op warns when it runs, as in eager
                with watch:
                    out = fn(*fill(targs), **{k: fill(v) for k, v in tkwargs.items()})
        except Unsupported:
            raise
        except NotImplementedError as e:
            raise Unsupported(f"{name} on meta tensors (data-dependent or no meta kernel): {str(e)[:200]}")
        except Exception as e:  # eager raises too, or the meta kernel does: eager runs it
            raise Unsupported(f"{name}: {type(e).__name__}: {str(e)[:200]}")
        return out, watch, metas, layout
