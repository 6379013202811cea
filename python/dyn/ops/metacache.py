"""Results of PyTorch's meta functions, memoized by their operands' metadata. Capture asks PyTorch for an
op's result shape, strides and dtype by running it on meta tensors; a model repeats the same ops with the
same shapes in every layer, and those meta calls (torch._refs' broadcasting and stride rules in Python)
were about half of a transformer's capture time. A hit gives a new meta tensor of the remembered layout,
or raises the remembered error.

Only for ops whose result is a new tensor (never a view of an operand): the result is rebuilt with
torch.empty_strided, so no aliasing survives. Keys hold the function itself (a stable object: an operator,
a torch function, a registered op's eager function), every argument's value or metadata, and the global
state meta functions read (the default dtype, grad mode, autocast); anything else (an unhashable argument, a real
tensor) is not memoized."""
import torch

_SCALARS = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.memory_format, torch.layout)
_LIMIT = 8192


def _sig(v):
    if isinstance(v, torch.Tensor):
        if v.device.type != "meta" or type(v) is not torch.Tensor:
            return None
        return ("T", tuple(v.shape), v.stride(), v.storage_offset(), v.dtype, v.requires_grad)
    if isinstance(v, _SCALARS):
        return (type(v), v)
    if isinstance(v, (tuple, list)):
        s = tuple(_sig(x) for x in v)
        return None if None in s else (type(v), s)
    return None


def _spec(r):
    if isinstance(r, torch.Tensor):
        if r.device.type != "meta" or type(r) is not torch.Tensor or r.storage_offset():
            return None
        return ("T", tuple(r.shape), r.stride(), r.dtype, r.requires_grad)
    return None


def _rebuild(spec):
    _, shape, stride, dtype, requires_grad = spec
    return torch.empty_strided(shape, stride, dtype=dtype, device="meta", requires_grad=requires_grad)


class MetaCache:
    def __init__(self):
        self.entries = {}

    def clear(self):
        self.entries.clear()

    def call(self, fn, *args, **kwargs):
        """fn(*args, **kwargs) on meta tensors: a new meta tensor, or the error fn raises."""
        sig = tuple(_sig(a) for a in args)
        ksig = tuple(sorted((k, _sig(v)) for k, v in kwargs.items()))
        if None in sig or any(s is None for _, s in ksig):
            return fn(*args, **kwargs)
        # the global state meta functions read: int / float promotion, requires_grad of results, autocast
        key = (fn, sig, ksig, torch.get_default_dtype(), torch.is_grad_enabled(),
               torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled("cuda"))
        try:
            hit = self.entries.get(key)
        except TypeError:  # an unhashable function
            return fn(*args, **kwargs)
        if hit is not None:
            if hit[0] == "raise":
                raise hit[1](*hit[2])
            return _rebuild(hit[1])
        if len(self.entries) > _LIMIT:
            self.entries.clear()
        try:
            r = fn(*args, **kwargs)
        except (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError) as e:
            self.entries[key] = ("raise", type(e), e.args)
            raise
        spec = _spec(r)
        if spec is not None:
            self.entries[key] = ("ok", spec)
        return r
