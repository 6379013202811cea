"""torch.autograd.Function subclasses called through `.apply` (BLOOM's GeLUFunction, straight-through
estimators, fused kernels with a Python fallback). Where no input needs a gradient (inference, no_grad),
apply is its forward: traced like user code with a context object that records what forward saves.
Where one does, the Function's own backward defines the gradient, which dyn's autograd would not use: the
graph breaks there."""
import types

import torch

from ...ops import TensorVar
from ...ops.tensor import node_requires_grad

_BASE_SETUP = torch.autograd.function._SingleLevelFunction.setup_context


class InferenceCtx:
    """The ctx forward sees when no gradient is taken: saves and marks are recorded, nothing else. Lives
    only while capturing; forward may set attributes on it (_dyn_scratch)."""
    _dyn_scratch = True

    def __init__(self, n):
        self.needs_input_grad = (False,) * n
        self.saved_tensors = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def save_for_forward(self, *tensors):
        pass

    def mark_dirty(self, *args):
        pass

    def mark_non_differentiable(self, *args):
        pass

    def set_materialize_grads(self, value):
        self.materialize_grads = value


def is_function_apply(fn):
    """fn is `SomeFunction.apply` of a torch.autograd.Function subclass."""
    return isinstance(fn, types.MethodType) and isinstance(fn.__self__, type) and \
        issubclass(fn.__self__, torch.autograd.Function) and \
        getattr(fn.__func__, "__qualname__", "") == "Function.apply"


def is_ctx_method(fn):
    return isinstance(fn, types.MethodType) and isinstance(fn.__self__, InferenceCtx)


def apply(frame, cls, args, kwargs):
    """cls.apply(*args, **kwargs) traced as cls.forward, or a graph break where a gradient is taken."""
    tr = frame.tr
    tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, TensorVar)]
    if tr.grad_enabled() and any(node_requires_grad(tr, t.node) for t in tensors):
        frame.fail(f"autograd.Function {cls.__qualname__} with inputs that require grad (its own backward)")
    forward = cls.forward
    if cls.setup_context is not _BASE_SETUP:  # forward(*args) and setup_context(ctx, inputs, output)
        return frame.call(forward, list(args), kwargs)
    ctx = frame._created(InferenceCtx(len(args)))
    return frame.call(forward, [ctx] + list(args), kwargs)
