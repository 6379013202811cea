"""Frames of their own: the user function a call runs (frame_target), and frames that run eagerly while
the user functions they call are captured on their own (TorchDynamo runs a frame it skips the same way:
its callback stays installed, so the frames the skipped one calls are compiled).

An eager frame runs as a copy of its code (a code object without dyn's cache, so the PEP 523 hook lets
it run) with the hook installed and a Dispatcher as callback. The hook intercepts only code objects
that carry a cache entry for that callback; the dispatcher registers the user functions the frame was
seen to call (and those its names reach: submodules, methods, global functions) and hands a miss to
the compiled function of that code."""
import contextlib
import types

import torch
from torch.nn.modules import module as _m  # the global module hooks live there

from ..native import C as _C
from ..native import HOOK as _HOOK
from .origins import is_traced_code

CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08
_NOT_A_FRAME = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator
MAX_TARGETS = 64  # user functions registered per eager frame


def is_user_function(f):
    """Python dyn captures as a frame of its own: users' and libraries' code (torchvision, timm,
    transformers), not PyTorch's, dyn's, the standard library's or numpy's (decided by the object)."""
    return is_traced_code(f)


def _module_hooks(m):
    return bool(m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or
                _m._global_forward_hooks or _m._global_forward_pre_hooks or _m._global_backward_hooks)


def frame_target(fn, sequential=False):
    """(function, leading arguments) when calling fn runs the frame of a user Python function: a
    function, a bound method, a module's forward (no hooks, forward not replaced on the instance) or a
    user class's __call__; else None (a builtin, torch, a dyn-compiled function, a module with hooks).
    sequential: also nn.Sequential's forward (called at a graph break it is captured, so the user blocks
    in it are captured too; torch.nn's other modules run as they are, as TorchDynamo lets them)."""
    if getattr(type(fn), "_dyn_is_compiled", False):
        return None
    if isinstance(fn, torch.nn.Module):
        fwd = type(fn).forward
        ok = is_user_function(fwd) or sequential and fwd is torch.nn.Sequential.forward
        if ok and "forward" not in fn.__dict__ and not _module_hooks(fn):
            return fwd, (fn,)
        return None
    if isinstance(fn, types.MethodType):
        return (fn.__func__, (fn.__self__,)) if is_user_function(fn.__func__) else None
    if isinstance(fn, types.FunctionType):
        return (fn, ()) if is_user_function(fn) else None
    if isinstance(fn, type):
        return None
    call = getattr(type(fn), "__call__", None)
    if is_user_function(call):
        return call, (fn,)
    return None


def interceptable(func):
    """Whether the hook may stand in for every frame of func's code: the hook sees the code object and
    the arguments, not the function, so the code must not hold a closure (another function object of
    the same code could carry other cells) and must be a plain frame."""
    co = func.__code__
    return not co.co_freevars and not co.co_flags & _NOT_A_FRAME


def plain_copy(func):
    """func with a copy of its code object (no dyn cache on it, so the hook runs it normally) taking its
    bound arguments positionally, in code order (the *args tuple and **kwargs dict as they are)."""
    co = func.__code__
    n = co.co_argcount + co.co_kwonlyargcount + bool(co.co_flags & CO_VARARGS) + bool(co.co_flags & CO_VARKEYWORDS)
    code = co.replace(co_argcount=n, co_posonlyargcount=0, co_kwonlyargcount=0,
                      co_flags=co.co_flags & ~(CO_VARARGS | CO_VARKEYWORDS))
    f = types.FunctionType(code, func.__globals__, func.__name__, None, func.__closure__)
    f.__qualname__ = func.__qualname__
    return f


def _containers(m):
    """The modules a call through m's name can reach: m, and the items of module containers in it."""
    out, work = [], [m]
    while work and len(out) < MAX_TARGETS:
        x = work.pop()
        out.append(x)
        if isinstance(x, (torch.nn.ModuleList, torch.nn.Sequential, torch.nn.ModuleDict)):
            work.extend(reversed(list(x._modules.values())))
    return out


def _items(v):
    """The items of a list, tuple or dict (shallow, at most MAX_TARGETS), else ()."""
    if type(v) in (list, tuple):
        return v[:MAX_TARGETS]
    if type(v) is dict:
        return list(v.values())[:MAX_TARGETS]
    return ()


def named_targets(code, func, args):
    """User functions an eager frame can reach without the capture having seen the call: global
    functions and modules named in its code, functions and modules held in its list/tuple/dict
    arguments, and, of its object arguments (self), the methods, submodules (through module containers)
    and lists of functions or modules its code names (self.helper, self.blocks[i], self.fns)."""
    names = set(code.co_names)
    out = []

    def add(v):
        t = frame_target(v)
        if t is not None:
            out.append(t[0])
        elif isinstance(v, torch.nn.Module) and "forward" not in v.__dict__ and is_user_function(type(v).forward):
            out.append(type(v).forward)  # a module with hooks: they run eagerly, its forward's frame is captured
    g = func.__globals__
    for n in names:
        v = g.get(n)
        if isinstance(v, (types.FunctionType, torch.nn.Module)):
            add(v)
    for a in args:
        for v in _items(a):
            add(v)
        if isinstance(a, torch.nn.Module):
            mods = a.__dict__.get("_modules", {})
            for n in names & mods.keys():
                for m in _containers(mods[n]):
                    add(m)
        if type(a).__module__ == "builtins" or isinstance(a, (torch.Tensor, type, types.ModuleType)):
            continue
        inst = getattr(a, "__dict__", None)
        for n in names:
            if type(inst) is dict and n in inst:
                for v in _items(inst[n]):
                    add(v)
            for c in type(a).__mro__:
                v = c.__dict__.get(n)
                if v is not None:
                    if is_user_function(v):
                        out.append(v)
                    break
    return out


class Dispatcher:
    """The hook's callback while an eager frame runs: a frame of a registered code is captured by the
    compiled function of that code (its cache entries are that function's, under this callback)."""

    def __init__(self):
        self.children = {}  # code -> compiled function

    def register(self, cf):
        code = cf._code
        if code not in self.children:
            self.children[code] = cf
            _C.code_cache(code)[self] = cf._entries

    def clear(self):
        for code in self.children:
            _C.code_cache(code).pop(self, None)
        self.children.clear()

    def __call__(self, code, args):
        cf = self.children.get(code)
        return None if cf is None else cf._on_miss(code, args)

    def run(self, fn, args):
        """fn(*args) with this dispatcher's frames captured."""
        prev = _C.set_eval_frame(self)
        try:
            return fn(*args)
        finally:
            _C.set_eval_frame(prev)


@contextlib.contextmanager
def forward_replaced(mod, forward):
    """While the block runs, calling mod (Module.__call__, which runs its hooks, eagerly) calls `forward`
    instead of its forward: a module whose forward is compiled while its hooks run as they are (FSDP's
    all-gathers, user hooks). Through the instance's dict, since the frame hook, seeing only code
    objects, cannot tell apart forwards that decorators wrap in one closure's code (transformers')."""
    d = mod.__dict__
    own = d.get("forward")
    d["forward"] = forward
    try:
        yield
    finally:
        if own is None:
            d.pop("forward", None)
        else:
            d["forward"] = own


def ddp_forward_runner(ddp, compile_function):
    """A runner for DDP.forward's frame (its arguments bound as its code takes them: self, the inputs
    tuple, the keyword dict): DDP's own forward as written (its reducer's bookkeeping), the call of its
    module running the module's forward compiled (compile_function(fn) -> a compiled function)."""
    inner = ddp.module
    forward = plain_copy(type(ddp).forward)
    if getattr(type(inner), "_dyn_is_compiled", False) or "_dyn_orig_mod" in inner.__dict__:
        return forward  # DDP(dyn.compile(model)): compiled already
    own = inner.__dict__.get("forward")
    if own is not None:
        call = compile_function(own)
    else:
        compiled = compile_function(type(inner).forward)

        def call(*a, **k):
            return compiled(inner, *a, **k)

    def run(*args):
        with forward_replaced(inner, call):
            return forward(*args)
    return run


def hook_available():
    return _HOOK
