"""Where a callable comes from, decided by the object (never by a name prefix: `torchvision`, `torchaudio`
and `torch_geometric` are libraries dyn traces into, not PyTorch): PyTorch's own Python code (its code
object lives in the installed `torch` package), PyTorch's C functions and dispatcher ops, the standard
library, numpy/scipy, or code dyn traces (users' and libraries' Python)."""
import os
import sys
import sysconfig
import types

import torch

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_DYN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB_DIRS = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")})
_SITE = ("site-packages" + os.sep, "dist-packages" + os.sep)
_NUMERIC = frozenset({"numpy", "scipy"})


def _package(mod):
    return mod.partition(".")[0] if isinstance(mod, str) else None


def code_file(fn):
    code = getattr(fn, "__code__", None)
    return os.path.abspath(code.co_filename) if isinstance(code, types.CodeType) else None


def is_torch_code(fn):
    """A Python function of PyTorch itself or of dyn: its code object is in torch's (or dyn's) package.
    functools.wraps copies __module__, so a user's wrapper of a torch function is still the user's."""
    f = code_file(fn)
    return f is not None and f.startswith((_TORCH_DIR, _DYN_DIR))


def is_torch_builtin(fn):
    """A C function of PyTorch (torch.add, torch._C._nn.hardswish, torch._C._get_tracing_state), an
    unbound Tensor method implemented in C (torch.Tensor.add), or a dispatcher op (torch.ops.aten.*)."""
    if isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return True
    if isinstance(fn, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return issubclass(torch.Tensor, fn.__objclass__)
    if isinstance(fn, types.BuiltinFunctionType):
        owner = fn.__self__
        if isinstance(owner, types.ModuleType):
            return _package(owner.__name__) == "torch"
        if isinstance(owner, type):  # torch._C._VariableFunctionsClass: torch.add & co
            return _package(owner.__module__) == "torch"
        return _package(getattr(fn, "__module__", None)) == "torch" and not isinstance(owner, torch.Tensor)
    return False


# the C namespaces of PyTorch's ops: torch.* (torch._C._VariableFunctions), and torch.nn.functional's,
# torch.special's, torch.linalg's and torch.fft's kernels
_OP_NAMESPACES = frozenset({"torch", "torch._C._VariableFunctions", "torch._C._nn", "torch._C._special",
                            "torch._C._linalg", "torch._C._fft"})


def is_torch_op_builtin(fn):
    """A C function that is a PyTorch op: a dispatcher op, a Tensor method implemented in C, or a
    function of torch's op namespaces (torch.conv2d, torch._C._nn.hardswish). Not PyTorch's other C
    functions (torch._C._get_tracing_state, torch._C._log_api_usage_once): they are not ops."""
    if isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return True
    if isinstance(fn, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return issubclass(torch.Tensor, fn.__objclass__)
    if isinstance(fn, types.BuiltinFunctionType):
        owner = fn.__self__
        return getattr(fn, "__module__", None) in _OP_NAMESPACES and (
            owner is None or isinstance(owner, (types.ModuleType, torch._C._VariableFunctionsClass)))
    return False


def is_stdlib_code(fn):
    f = code_file(fn)
    return f is not None and f.startswith(_STDLIB_DIRS) and not any(s in f for s in _SITE)


def is_numeric_library(obj):
    """numpy and scipy: run, never traced (their functions are C code or numeric kernels)."""
    mod = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    return _package(mod) in _NUMERIC


def is_traced_code(fn):
    """A Python function dyn traces into (inlines, or compiles on its own at a graph break): users' and
    libraries' code (torchvision, timm, transformers), not PyTorch's, dyn's, the standard library's or
    numpy's/scipy's."""
    return isinstance(fn, types.FunctionType) and not is_torch_code(fn) and not is_stdlib_code(fn) and \
        not is_numeric_library(fn) and _package(getattr(fn, "__module__", None)) != "typing_extensions"


def is_torch_class(cls):
    """A class defined by PyTorch or dyn (its module is torch's or dyn's own)."""
    mod = sys.modules.get(getattr(cls, "__module__", None) or "")
    f = getattr(mod, "__file__", None)
    return f is not None and os.path.abspath(f).startswith((_TORCH_DIR, _DYN_DIR))
