"""Calls: functions are inlined, torch functions go to their handlers, builtins fold, and a call dyn
cannot capture breaks the graph in the top frame (Frame mixin)."""
import abc
import builtins
import collections
import dis
import functools
import inspect
import itertools
import operator
import sys
import types
import warnings
from collections import OrderedDict

import torch
import torch.utils._contextlib

from ...errors import Unsupported
from ...ops import METHODS, TENSOR_ATTRS, TensorVar
from ...ops.norms import SUBSTITUTES
from ...ops.handlers import METHOD_KEYWORDS, TORCH_KEYWORDS, generic_method, rename, torch_handler
from ..autocast import cast_arguments
from ..children import frame_target, interceptable
from ..guards import ModuleGuard, Structure
from ..origins import is_torch_builtin, is_torch_code, is_torch_class, is_numeric_library
from ..values import (NULL, BoundTensorMethod, Opaque, OpaqueMethod, _contains_tensor, _dict_base,
                      _is_user_dict_class, holds_internal, is_constant, is_namedtuple)
from .attributes import _MISSING
from ...distributed.ddp import is_ddp_module, is_fsdp_module
from .control import TRACED_EXITS, SymGenerator, _SetGradEnabled
from .library_calls import CONTAINER_METHODS, MUTATING, NOT_HANDLED
from .operators import OPERATOR_FUNCS
from .signals import CAPTURE_ERRORS, PY312, GraphBreak, Restart, TracedException

# builtins that are pure and may be called on constant arguments
_PURE_BUILTINS = {getattr(builtins, n) for n in (
    "len isinstance issubclass range tuple list dict set frozenset int float bool str min max abs "
    "enumerate zip reversed sorted getattr hasattr round divmod pow all any sum iter next slice type "
    "callable repr format hash id ord chr map filter").split()} | {dict.fromkeys}
_PURE_MODULES = ("math", "operator", "_operator", "itertools", "functools")
# torch functions that make a tensor from Python values alone
_FACTORIES = frozenset({"zeros", "ones", "full", "empty", "arange", "tensor", "as_tensor", "scalar_tensor", "linspace",
                        "logspace", "eye", "empty_permuted", "rand", "randn", "randint", "normal"})
# containers a call makes anew: the traced code may change them (swin's shift_size.copy())
_MUTABLE = (list, dict, set)
# results of pure calls that hold no traced values (everything else a pure call returns is "created")
_REAL_RESULTS = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, torch.finfo, torch.iinfo,
                 torch.no_grad, torch.enable_grad, torch.inference_mode, torch.autograd.profiler.record_function)


_CLONE = torch.utils._contextlib._DecoratorContextManager.clone
# torch's autocast queries -> (device type or None: the first argument, index in (enabled, dtype))
_AUTOCAST_QUERIES = {torch.is_autocast_enabled: (None, 0), torch.get_autocast_dtype: (None, 1)}
for _name, _dev, _what in (("is_autocast_cpu_enabled", "cpu", 0), ("get_autocast_cpu_dtype", "cpu", 1),
                           ("get_autocast_gpu_dtype", "cuda", 1)):
    if hasattr(torch, _name):
        _AUTOCAST_QUERIES[getattr(torch, _name)] = (_dev, _what)


def _state_queries():
    """torch functions of no arguments that read process state: their value while capturing, guarded
    (a call where it changed captures again)."""
    import torch.distributed
    table = {torch.autograd._is_checkpoint_valid: "checkpoint valid",
             torch._C._are_functorch_transforms_active: "functorch transforms active",
             torch._C._get_privateuse1_backend_name: "privateuse1 backend name",
             torch.distributed.is_available: "distributed available"}
    if torch.distributed.is_available():
        table[torch.distributed.is_initialized] = "distributed initialized"
    return table


_STATE_QUERIES = _state_queries()


def _compiler_queries():
    """Functions that ask whether code is being compiled, traced or scripted, with the answer they get
    while dyn captures (TorchDynamo's: compiling yes; exporting, scripting, FX or JIT tracing no).
    Libraries take their compile-friendly paths on them; eager runs after a graph break see False."""
    import torch.compiler
    import torch.jit
    table = {torch.compiler.is_compiling: True, torch.compiler.is_dynamo_compiling: True,
             torch.compiler.is_exporting: False, torch.jit.is_scripting: False, torch.jit.is_tracing: False,
             torch._C._get_tracing_state: None}
    for mod, name, v in (("torch._utils", "is_compiling", True), ("torch._dynamo", "is_compiling", True),
                         ("torch._dynamo.external_utils", "is_compiling", True),
                         ("torch.fx._symbolic_trace", "is_fx_tracing", False),
                         ("torch.onnx", "is_in_onnx_export", False),
                         ("torch.nn.modules.activation", "_is_make_fx_tracing", False)):
        f = getattr(sys.modules.get(mod), name, None)  # only where already imported (no import cost)
        if f is not None:
            table[f] = v
    return table


# Tensor methods that hand a tensor's values to Python
_READS = frozenset({"item", "tolist", "__bool__", "__int__", "__float__", "__index__"})


class CallOps:
    # -- functions
    def op_MAKE_FUNCTION(self, inst):
        code = self.pop()
        if not PY312 and isinstance(code, str):  # 3.10-style qualname
            code = self.pop()
        flags = inst.arg
        closure = self.pop() if flags & 0x08 else None
        if flags & 0x04:
            self.pop()
        kwdefaults = self.pop() if flags & 0x02 else None
        defaults = self.pop() if flags & 0x01 else None
        fn = types.FunctionType(code, self.globals, code.co_name, defaults, closure)
        if kwdefaults:
            fn.__kwdefaults__ = kwdefaults
        self.push(self._created(fn))

    def op_CALL(self, inst):
        argc = inst.arg
        args = self.popn(argc)
        b, a = self.pop(), self.pop()
        if a is NULL:
            fn = b
        else:
            fn, args = a, [b] + args
        kwargs = {}
        if self.kw_names:
            names = self.kw_names
            self.kw_names = None
            vals = args[len(args) - len(names):]
            args = args[:len(args) - len(names)]
            kwargs = dict(zip(names, vals))
        r = self.call_or_break(inst, fn, args, kwargs)
        if type(r) is _SetGradEnabled and self.insts[self.index_of[inst.offset] + 1].opname != "BEFORE_WITH":
            self.fail("torch.set_grad_enabled() called as a function (it sets the grad mode at once)")
        self.push(r)

    def call_or_break(self, inst, fn, args, kwargs):
        """In the top frame with breaks allowed, a call dyn cannot capture (print, .item(), numpy, a user
        function that breaks inside) ends the graph: Python makes the call and the frame resumes after
        it. The first failure restarts the capture so that no partial effect of the call is kept."""
        tr = self.tr
        if self.records_callees:  # the frames it runs (if it ever runs eagerly, they are captured on their own)
            t = frame_target(fn.func if type(fn) is functools.partial else fn)
            if t is not None and id(t[0]) not in tr.created:  # not a comprehension or lambda made here
                tr.callees[t[0]] = None
        if self.depth or not tr.allow_breaks:
            return self.call(fn, args, kwargs)
        if self.handled(inst.offset):  # inside a try: the rest of the frame runs from this call, eagerly
            try:
                return self.call(fn, args, kwargs)
            except (Unsupported, *CAPTURE_ERRORS) as e:
                why = e if isinstance(e, Unsupported) else Unsupported(f"{type(e).__name__} while capturing: {e}")
                raise Restart(inst.offset, why.locate(self.code.co_filename, self.lineno), eager=True)
        if fn is print:
            tr.break_at.setdefault(inst.offset, Unsupported("print"))
        why = tr.break_at.get(inst.offset)
        if why is not None:
            here = self.index_of[inst.offset]
            raise GraphBreak(self, why, inst.offset, call=(fn, tuple(args), kwargs),
                             targets=(self.insts[here + 1].offset,))
        try:
            return self.call(fn, args, kwargs)
        except Unsupported as e:
            e.locate(self.code.co_filename, self.lineno)
            raise Restart(inst.offset, e)
        except CAPTURE_ERRORS as e:
            raise Restart(inst.offset, Unsupported(f"{type(e).__name__} while capturing a call: {e}",
                                                   self.code.co_filename, self.lineno))

    def op_CALL_FUNCTION_EX(self, inst):
        kwargs = self.pop() if inst.arg & 1 else {}
        args = self.pop()
        fn = self.pop()
        if self.stack and self.stack[-1] is NULL:
            self.pop()
        if isinstance(args, TensorVar) or isinstance(kwargs, TensorVar):
            self.fail("*args from a tensor")
        self.push(self.call_or_break(inst, fn, list(args), dict(kwargs)))

    def call(self, fn, args, kwargs):
        tr = self.tr
        if fn is operator.getitem and len(args) == 2 and not kwargs:
            return self.subscr(*args)  # obj[idx] (BINARY_SUBSCR in the top frame comes here)
        if isinstance(fn, BoundTensorMethod):
            targs, kwargs = cast_arguments(self, None, [fn.tensor] + list(args), kwargs, method=fn.name)
            if targs[0] is not fn.tensor:
                fn = BoundTensorMethod(targs[0], fn.name)
            args = targs[1:]
            if fn.name in _READS and not args and not kwargs:
                value = tr.ops.constant_value(fn.tensor)
                if value is not None and (fn.name == "tolist" or value.numel() == 1):
                    return getattr(value, fn.name)()  # a value computed from constants: Python reads it
            if fn.name not in METHODS:
                return generic_method(tr.ops, fn.tensor, fn.name, tuple(args), kwargs)
            args, kwargs = rename(METHOD_KEYWORDS, fn.name, args, kwargs)
            return METHODS[fn.name](tr.ops, fn.tensor, *args, **kwargs)
        if isinstance(fn, TensorVar):
            self.fail("calling a tensor")
        if isinstance(fn, (Opaque, OpaqueMethod)) or (
                not isinstance(fn, (types.FunctionType, torch.nn.Module)) and
                any(isinstance(a, (Opaque, OpaqueMethod)) for a in list(args) + list(kwargs.values()))):
            what = fn.obj.value if isinstance(fn, OpaqueMethod) else next(
                (a.value for a in list(args) + list(kwargs.values()) if isinstance(a, Opaque)), fn)
            if isinstance(fn, OpaqueMethod):
                name = f"{type(fn.obj.value).__name__}.{fn.name}"
            else:
                name = _callable_name(fn.value if isinstance(fn, Opaque) else fn)
            self.fail(f"call {name} with a {type(what).__module__}.{type(what).__name__}")
        if getattr(type(fn), "_dyn_is_compiled", False):  # another dyn.compile'd function: inline what it wraps
            return self.call(fn._dyn_inline_target, args, kwargs)
        if isinstance(fn, torch.jit.ScriptFunction) and hasattr(fn, "_torchdynamo_inline"):
            return self.call(fn._torchdynamo_inline, args, kwargs)  # torch.jit.script keeps the Python function
        if type(fn) is functools.partial:
            pargs = [tr.wrap(a) if isinstance(a, torch.Tensor) else a for a in fn.args]
            pkw = {k: tr.wrap(a) if isinstance(a, torch.Tensor) else a for k, a in fn.keywords.items()}
            return self.call(fn.func, pargs + list(args), {**pkw, **kwargs})
        if _hashable(fn):
            r = self.call_library(fn, args, kwargs)
            if r is not NOT_HANDLED:
                return r
        if fn is super and not args:
            return self.zero_arg_super()
        if isinstance(fn, type) and (_is_user_class(fn) or _is_user_dict_class(fn)):
            return self.instantiate(fn, args, kwargs)
        if fn is torch.set_grad_enabled and len(args) + len(kwargs) == 1 and \
                type((list(args) + list(kwargs.values()))[0]) is bool and set(kwargs) <= {"mode"}:
            return _SetGradEnabled((list(args) + list(kwargs.values()))[0])  # entered by `with` (control.py)
        if isinstance(fn, type) and issubclass(fn, torch.amp.autocast_mode.autocast):
            return self.make_autocast(fn, args, kwargs)
        if isinstance(fn, type) and issubclass(fn, torch.nn.Module) and _constructible_module(fn):
            return self.make_torch_module(fn, args, kwargs)
        if isinstance(fn, type) and issubclass(fn, tuple) and hasattr(fn, "_fields") and \
                getattr(fn.__new__, "__module__", "").startswith("namedtuple_"):
            return fn(*args, **kwargs)  # a namedtuple: its generated __new__ only builds the tuple
        if fn in _ITERATING_BUILTINS if _hashable(fn) else False:
            # the iterables among the arguments: zip's all, min's and max's only alone (max(a, 0)
            # compares its arguments), the others' first (sum's start, next's default are values)
            n = len(args) if fn is zip else 0 if fn in (min, max) and len(args) > 1 else 1
            args = [self.iterate(a) if i < n and _needs_iterate(a) else a for i, a in enumerate(args)]
            if fn in (sorted, min, max) and kwargs.get("key") is not None and not (
                    _hashable(kwargs["key"]) and kwargs["key"] in _PURE_BUILTINS):
                return self.call_with_key(fn, args, kwargs)
        if fn is len and len(args) == 1 and not isinstance(args[0], TensorVar):
            obj = args[0]
            if isinstance(obj, torch.nn.Module):
                self.guard_module_structure(obj)
            elif isinstance(getattr(type(obj), "__len__", None), types.FunctionType):
                return self.call(type(obj).__len__, [obj], {})
        if _hashable(fn) and fn in _DTYPE_FUNCTIONS and all(isinstance(a, torch.dtype) for a in args) and \
                all(isinstance(v, torch.dtype) for v in kwargs.values()):
            return fn(*args, **kwargs)  # a function of dtypes alone (torch.promote_types): a constant
        h = torch_handler(fn) if _hashable(fn) else None
        if h is not None:
            if not any(_contains_tensor(a) for a in args) and not any(_contains_tensor(v) for v in kwargs.values()) \
                    and fn.__name__ not in _FACTORIES:
                self.fail(f"torch.{fn.__name__} without tensor arguments")
            args, kwargs = cast_arguments(self, fn, args, kwargs)
            args, kwargs = rename(TORCH_KEYWORDS, fn, args, kwargs)
            return h(tr.ops, *args, **kwargs)
        if isinstance(fn, types.MethodType) and isinstance(fn.__self__, torch.Tensor):
            self.fail("method of a real tensor")
        if isinstance(fn, torch.nn.Module):
            return self.call_module(fn, args, kwargs)
        if fn is inspect.signature and len(args) == 1 and not kwargs and (
                isinstance(args[0], types.FunctionType) or isinstance(args[0], types.MethodType) and
                isinstance(args[0].__func__, types.FunctionType)):
            # of a function (guarded by identity, bound methods by their function): its code and
            # defaults decide it (transformers' apply_chunking_to_forward counts the parameters)
            return inspect.signature(args[0])
        if isinstance(fn, types.MethodType) and fn.__func__ is _CLONE and type(fn.__self__) in (
                torch.no_grad, torch.enable_grad):
            return type(fn.__self__)()  # @torch.no_grad() on a function: its decorate_context clones it
        if isinstance(fn, types.MethodType) and fn.__func__ is torch.inference_mode.clone and not args:
            return torch.inference_mode(fn.__self__.mode)  # @torch.inference_mode(): a new one, entered
        if isinstance(fn, types.MethodType) and fn.__func__ is torch.set_grad_enabled.clone and not args:
            return _SetGradEnabled(fn.__self__.mode)  # its __init__ would set the grad mode now
        if fn is torch.jit.annotate and len(args) + len(kwargs) == 2:  # TorchScript's type hint: the value
            return dict(zip(("the_type", "the_value"), args), **kwargs)["the_value"]
        if not args and not kwargs and _hashable(fn):
            queries = tr.compiler_queries
            if queries is None:
                queries = tr.compiler_queries = _compiler_queries()
            if fn in queries:
                return queries[fn]
            if fn in _STATE_QUERIES:
                return tr.read_state(_STATE_QUERIES[fn], fn)
            if fn is torch._C._is_any_autocast_enabled:
                if not tr.autocast_modes:
                    return tr.read_state("any autocast enabled", fn)
                # inside a traced autocast block: that block's state, the caller's for other devices
                devices = {"cpu", "cuda"} | {m[0] for m in tr.autocast_modes}
                return any(tr.autocast_state(d)[0] for d in sorted(devices))
        if isinstance(fn, types.MethodType):
            return self.call(fn.__func__, [fn.__self__] + list(args), kwargs)
        if isinstance(fn, types.FunctionType):
            if is_torch_code(fn):  # PyTorch's (or dyn's) own Python: decided by where its code is
                return self.call_torch_python(fn, args, kwargs)
            if is_numeric_library(fn):
                self.fail(f"call to {_callable_name(fn)}")
            return self.inline(fn, args, kwargs)
        if isinstance(fn, types.BuiltinMethodType) and type(fn.__self__) in _CONTAINER_METHODS:
            obj = fn.__self__
            tr.uses_identity(*args)  # keys, items compared
            if fn.__name__ not in _CONTAINER_METHODS[type(obj)]:
                self.fail(f"{type(obj).__name__}.{fn.__name__}")
            if fn.__name__ in _MUTATING and id(obj) not in tr.created:
                self.mutate(obj, f"{type(obj).__name__}.{fn.__name__} on a container not created here (mutation)")
            try:
                r = fn(*args, **kwargs)
            except (KeyError, IndexError, ValueError) as e:
                raise TracedException(e)  # a missing key or item, as eager raises it
            if not is_constant(r) or type(r) in _MUTABLE:
                self._created(r)  # views and iterators over traced containers; a list's copy is new
            return r
        if fn is isinstance:
            obj, cls = args
            if isinstance(obj, TensorVar):
                if obj.input_index is not None:  # the input's exact type is guarded (Parameter or Tensor)
                    return isinstance(tr.input_tensors[obj.input_index], cls)
                return isinstance(torch.empty(0), cls)
        if fn is len and args and isinstance(args[0], TensorVar):
            if args[0].meta.dim() == 0:
                self.fail("len() of a 0-d tensor")
            return args[0].meta.shape[0]
        if fn is getattr and len(args) >= 2:
            if len(args) == 3:
                try:
                    return self.getattr(args[0], args[1])
                except Unsupported:
                    raise
                except AttributeError:
                    return args[2]
            return self.getattr(args[0], args[1])
        if fn is hasattr and isinstance(args[0], TensorVar):
            return args[1] in TENSOR_ATTRS or args[1] in METHODS
        if fn in (id, hash):
            tr.uses_identity(*args)
        if fn is hasattr and len(args) == 2 and not kwargs:
            return self.has_attr(*args)
        if fn is setattr and len(args) == 3 and not kwargs:
            return self.store_attr(*args)
        if fn is delattr and len(args) == 2 and not kwargs:
            return self.delete_attr(*args)
        if fn is vars and len(args) == 1 and tr.side.has_attrs(args[0]):
            self.fail("vars() of an object with attribute writes pending")
        if type(fn) is types.MethodWrapperType and fn.__name__ == "__iter__" and not args and not kwargs and \
                type(fn.__self__) in (range, tuple, list, dict, set, frozenset, str):
            return self.iterate(fn.__self__)  # range(5).__iter__(): iter() of it
        if type(fn) in (types.MethodWrapperType, types.WrapperDescriptorType):
            r = self.object_method(fn, args, kwargs)
            if r is not _MISSING:
                return r
        if type(fn) in (types.MethodWrapperType, types.BuiltinMethodType) and isinstance(fn.__self__, dict) and \
                type(fn.__self__) is not dict and _is_user_dict_class(type(fn.__self__)):
            if id(fn.__self__) in tr.created:
                return self.created_dict_method(fn, args, kwargs)
            return self.real_dict_method(fn, args, kwargs)
        pure = (_hashable(fn) and fn in _PURE_BUILTINS) or \
            (getattr(fn, "__module__", None) in _PURE_MODULES and callable(fn)) or \
            fn in (torch.Size, torch.device, torch.finfo, torch.iinfo, torch.is_grad_enabled, torch.no_grad,
                   torch.enable_grad, torch.inference_mode, torch.get_default_dtype,
                   torch.autograd.profiler.record_function) if _hashable(fn) else False
        if fn is torch.is_grad_enabled:
            return tr.grad_enabled()
        if isinstance(fn, TRACED_EXITS):
            return fn.exit()
        if _hashable(fn) and fn in _AUTOCAST_QUERIES and not kwargs and all(type(a) is str for a in args):
            # autocast state: the traced blocks', else the caller's (read, and guarded)
            dev, what = _AUTOCAST_QUERIES[fn]
            if dev is None:
                dev = args[0] if args else "cuda"
            return tr.autocast_state(dev)[what]
        if fn is torch.is_inference_mode_enabled and not args and not kwargs:
            return any(tr.inference_blocks) or tr.read_state("inference mode", torch.is_inference_mode_enabled)
        if fn is torch.is_autocast_cache_enabled and not args and not kwargs:
            return tr.autocast_cache()
        if pure:
            if fn in (min, max, sum, sorted) and len(args) >= 1 and id(args[0]) in tr.created and \
                    not isinstance(args[0], (list, tuple)):
                args = [self._created(list(args[0]))] + list(args[1:])  # consumed whole anyway
            if fn in (any, all) and len(args) == 1 and not kwargs:
                return self.any_all(fn is any, args[0])
            if fn in (min, max, sum, abs, bool, float, int) and (
                    any(_contains_tensor(a) for a in args) or any(_contains_tensor(v) for v in kwargs.values())):
                if fn in (float, int, bool):
                    value = tr.ops.constant_value(args[0]) if len(args) == 1 and not kwargs else None
                    if value is not None and value.numel() == 1:
                        return fn(value)  # computed from constants: no data to depend on
                    self.fail(f"{fn.__name__}() of a tensor (data-dependent)")
                if fn is abs and len(args) == 1 and not kwargs:
                    return tr.ops.unary("abs", args[0])
                if fn is sum and 1 <= len(args) + len(kwargs) <= 2 and set(kwargs) <= {"start"} and args:
                    acc = kwargs["start"] if "start" in kwargs else args[1] if len(args) > 1 else 0
                    for x in args[0]:
                        acc = self.binary("+", acc, x)
                    return acc
                self.fail(f"{fn.__name__}() over tensors (data-dependent)")
            if fn is type and len(args) == 1 and not kwargs:
                return self.type_of(args[0])
            if fn is callable and len(args) == 1 and isinstance(args[0], TensorVar):
                return False
            op = OPERATOR_FUNCS.get(fn)
            if op is not None and not kwargs and len(args) == (1 if op[0] == "unary" else 2):
                return getattr(self, op[0])(op[1], *args)
            seen = list(args)
            if seen and fn in _ITERATING_BUILTINS and type(seen[0]) is dict:
                seen[0] = list(seen[0])  # iterating a dict yields its keys only
            if fn not in _STRUCTURAL and type(fn) is not operator.itemgetter and (
                    any(holds_internal(a, tr) for a in seen) or any(holds_internal(v, tr) for v in kwargs.values())) or \
                    fn in (isinstance, issubclass) and args and holds_internal(args[0], tr) and \
                    not (type(args[0]) in tr.created_classes and id(args[0]) in tr.created) and \
                    not _real_container(args[0]):
                # the real function would see dyn's placeholders (truth of a tensor, its repr, its id...)
                self.fail(f"{_callable_name(fn)}() of a tensor or of a value made while capturing")
            try:
                r = fn(*args, **kwargs)
            except StopIteration as e:
                if fn is not next:
                    raise
                raise TracedException(StopIteration(*e.args))  # next() of an exhausted iterator, as eager raises it
            if (not is_constant(r) or type(r) in _MUTABLE) and not isinstance(r, _REAL_RESULTS):
                self._created(r)  # containers, iterators and views over traced values; new lists
            return r
        if isinstance(fn, type) and fn in (tuple, list, dict, set):
            return self._created(fn(*args, **kwargs))
        if isinstance(fn, type) and issubclass(fn, Exception) and fn.__module__ == "builtins" and \
                all(is_constant(a) for a in args) and not kwargs:
            return fn(*args)  # an exception to raise (KeyError("..."))
        if isinstance(fn, types.MethodWrapperType) and fn.__name__ == "__init__" and \
                type(fn.__self__) in tr.created_classes and not args and not kwargs:
            return None  # object.__init__ (super().__init__() of a user class made here)
        if isinstance(fn, types.MethodWrapperType) and fn.__name__ == "__init__" and \
                type(fn.__self__) in (list, dict, set, collections.deque):
            # s.__init__(other): empties s and fills it again; only a container made here may change
            if id(fn.__self__) not in tr.created:
                self.fail(f"{type(fn.__self__).__name__}.__init__ on a container not created here (mutation)")
            args = [self.iterate(a) if _needs_iterate(a) else a for a in args]
            return fn(*args, **kwargs)
        if is_torch_builtin(fn):
            return self.call_torch_builtin(fn, args, kwargs)
        call = getattr(type(fn), "__call__", None)
        if isinstance(call, types.FunctionType) and not isinstance(fn, type):
            return self.call(call, [fn] + list(args), kwargs)  # an instance of a user class with __call__
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
        self.fail(f"call to unsupported function {name}")

    def inline(self, fn, args, kwargs):
        """fn's frame traced as part of this graph (a generator function runs lazily as it is consumed)."""
        if fn.__code__.co_flags & 0x20:
            return self._created(SymGenerator(self.child_frame(fn, args, kwargs, generator=True)))
        return self.child_frame(fn, args, kwargs).run()

    def child_frame(self, fn, args, kwargs, generator=False):
        """The frame of an inlined call. Its calls are recorded as callees of the compiled frame when the
        compiled frame, run eagerly, would run this one as plain Python (a closure, such as a decorator's
        wrapper, which the frame hook cannot stand in for), so that the user functions it calls are
        captured as frames of their own."""
        f = type(self)(self.tr, fn, args, kwargs, self.depth + 1, generator=generator)
        f.records_callees = self.records_callees and not interceptable(fn)
        return f

    def any_all(self, is_any, iterable):
        """any()/all() item by item, stopping where Python stops: the truth of a tensor is data-dependent,
        that of a placeholder dyn made is not Python's."""
        for item in self.iterate(iterable):
            if isinstance(item, TensorVar) or holds_internal(item, self.tr) and \
                    not isinstance(item, (list, tuple, dict, set, frozenset)):
                self.fail(f"{'any' if is_any else 'all'}() of a tensor (data-dependent)")
            if self.truth(item) == is_any:
                return is_any
        return not is_any

    def type_of(self, v):
        """type(v): a tensor's real type (an input's is guarded: Parameter or Tensor; a computed tensor is
        a Tensor); never the type of one of dyn's placeholders."""
        if isinstance(v, TensorVar):
            return type(self.tr.input_tensors[v.input_index]) if v.input_index is not None else torch.Tensor
        if holds_internal(v, self.tr) and not (type(v) in self.tr.created_classes or
                                               type(v) in (tuple, list, dict, set, frozenset, slice) or
                                               isinstance(v, tuple)):
            self.fail(f"type() of a value made while capturing ({type(v).__name__})")
        return type(v)

    def zero_arg_super(self):
        """super() inside a method: the class from the __class__ cell, the first argument."""
        cell = self.cells.get("__class__")
        if cell is None or not self.code.co_varnames:
            self.fail("super() outside a method")
        first = self.code.co_varnames[0]
        obj = self.locals[first] if first in self.locals else self.cells[first].cell_contents
        return super(cell.cell_contents, obj)

    def op_LOAD_SUPER_ATTR(self, inst):  # 3.12: super().name and super(cls, obj).name
        obj, cls, sup = self.pop(), self.pop(), self.pop()
        if sup is not super:
            self.fail("LOAD_SUPER_ATTR with a super other than the builtin")
        v = self.getattr(super(cls, obj), inst.argval)
        if inst.arg & 1:
            self.push(NULL)
        self.push(v)

    def instantiate(self, cls, args, kwargs):
        """cls(*args) for a plain user class: a new object made while capturing, its __init__ inlined.
        It lives only inside the capture (returning it or keeping it across a graph break is unsupported)."""
        dict_base = _dict_base(cls)
        obj = dict_base.__new__(cls) if dict_base is not None else object.__new__(cls)  # empty, no effect
        self._created(obj)
        self.tr.created_classes.add(cls)
        init = getattr(cls, "__init__")
        if dict_base is not None and init is dict_base.__init__:
            if any(_contains_tensor(a) for a in list(args) + list(kwargs.values())) and \
                    not all(type(a) in (dict, list, tuple) for a in args):
                self.fail(f"{cls.__name__}() from an iterable of tensors")
            init(obj, *args, **kwargs)  # the dict's own items (a dict made here or keyword arguments)
        elif init is not object.__init__:
            self.call(init, [obj] + list(args), kwargs)
        elif args or kwargs:
            self.fail(f"{cls.__name__}() takes no arguments")
        return obj

    def make_autocast(self, cls, args, kwargs):
        """torch.autocast(...) (torch.amp.autocast, torch.cuda.amp.autocast, torch.cpu.amp.autocast): made
        now from constant arguments, a dtype or cache flag left out taken from the traced code's autocast
        state (as autocast.__init__ takes it from the current state); entered by `with` (control.py)."""
        if not all(is_constant(a) for a in list(args) + list(kwargs.values())):
            self.fail(f"{cls.__name__}() with arguments that are not constants")
        try:
            ba = inspect.signature(cls.__init__).bind(None, *args, **kwargs)
        except TypeError as e:
            self.fail(f"{cls.__name__}(): {e}")
        ba.apply_defaults()
        a = dict(ba.arguments)
        a.pop(next(iter(a)))  # self
        if "device_type" in a and a.get("dtype", 0) is None and isinstance(a["device_type"], str):
            a["dtype"] = self.tr.autocast_state(a["device_type"])[1]
        if a.get("cache_enabled", 0) is None:
            a["cache_enabled"] = self.tr.autocast_cache()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # torch.cuda.amp.autocast is deprecated
                return cls(**a)
        except (RuntimeError, ValueError, AssertionError) as e:
            self.fail(f"{cls.__name__}(): {e}")  # eager raises

    def make_torch_module(self, cls, args, kwargs):
        """A module made inside forward (`loss_fct = CrossEntropyLoss()`, transformers' `ACT2FN["silu"]`
        making a SiLUActivation at every call): made now from constant arguments, the random state kept;
        one that holds parameters or buffers (initialized from random numbers eager would draw at every
        call) is not captured. It lives only inside the capture (_constructible_module: which classes)."""
        if not all(is_constant(a) for a in list(args) + list(kwargs.values())):
            self.fail(f"{cls.__name__}() with arguments that are not constants")
        with torch.random.fork_rng(devices=[]):
            mod = cls(*args, **kwargs)
        if next(mod.parameters(), None) is not None or next(mod.buffers(), None) is not None:
            self.fail(f"{cls.__name__}() made inside the traced code holds parameters or buffers")
        return self._created(mod)

    def real_dict_method(self, fn, args, kwargs):
        """A dict method that only reads, bound to a dict-subclass object the frame did not make (a
        ModelOutput argument): answered by a traced copy of its items, read through their keys (guarded)."""
        obj, name = fn.__self__, fn.__name__
        base = _dict_base(type(obj))
        if name not in _DICT_READS or fn != getattr(base, name).__get__(obj):
            self.fail(f"{type(obj).__name__}.{name} on an object not created here")
        items = self.tr.copies.get(id(obj))
        if items is None:
            src = self.source_of(obj)
            if src is None or len(obj) > 64 or not all(type(k) in (str, int) for k in obj):
                self.fail(f"{type(obj).__name__}.{name} on an object not created here")
            self.tr.attr_guards.append((src, Structure(obj, True)))
            items = {k: self.tr.wrap(v, src + (("item", k),)) for k, v in base.items(obj)}
            self.tr.traced.add(id(items))
            self.tr.keep.append(items)
            self.tr.copies[id(obj)] = items
        try:
            r = getattr(items, name)(*args, **kwargs)
        except (KeyError, IndexError) as e:
            raise TracedException(e)
        if not is_constant(r):
            self._created(r)
        return r

    def created_dict_method(self, fn, args, kwargs):
        """A method of dict or OrderedDict bound to an instance of a dict subclass made while capturing
        (transformers' ModelOutput: super().__setitem__, self.keys()): called on it directly."""
        obj, name = fn.__self__, fn.__name__
        base = _dict_base(type(obj))
        if base is None or name not in _DICT_METHODS or getattr(base, name, None) is None or \
                fn != getattr(base, name).__get__(obj):
            self.fail(f"{type(obj).__name__}.{name}")
        try:
            r = fn(*args, **kwargs)
        except (KeyError, IndexError) as e:
            raise TracedException(e)
        if not is_constant(r):
            self._created(r)
        return r

    def call_with_key(self, fn, args, kwargs):
        """sorted/min/max with a user key function: the keys are computed by inlining it and must be
        Python values (ordering by tensor values is data-dependent)."""
        kwargs = dict(kwargs)
        key = kwargs.pop("key")
        items = list(args[0]) if len(args) == 1 else list(args)
        keys = [self.call(key, [x], {}) for x in items]
        if any(_contains_tensor(k) for k in keys):
            self.fail(f"{fn.__name__}() with a key that depends on tensor values")
        order = list(range(len(items)))
        if fn is sorted:
            order.sort(key=lambda i: keys[i], reverse=kwargs.pop("reverse", False))
            return self._created([items[i] for i in order])
        if not items:
            if "default" in kwargs:
                return kwargs["default"]
            self.fail(f"{fn.__name__}() of an empty sequence")
        return items[fn(order, key=lambda i: keys[i])]

    def call_module(self, mod, args, kwargs):
        from torch.nn.modules import module as _m
        if is_ddp_module(mod):
            self.fail("DistributedDataParallel's forward runs eagerly (its reducer's bookkeeping); the module it "
                      "wraps is compiled as a frame of its own")
        if is_fsdp_module(mod):
            self.fail("a module fully_shard manages (FSDP2): its hooks (all-gather, reshard) run eagerly, "
                      "its forward is compiled as a frame of its own")
        if mod._backward_hooks or mod._backward_pre_hooks or _m._global_backward_hooks or \
                _m._global_backward_pre_hooks:
            self.fail("module backward hooks")
        if mod._forward_hooks or mod._forward_pre_hooks or _m._global_forward_hooks or _m._global_forward_pre_hooks:
            # forward (pre-)hooks: Module.__call__ traced as it runs them (the hook dicts read through the
            # module are guarded by their structure, the global ones as globals)
            return self.inline(torch.nn.Module._call_impl, [mod] + list(args), kwargs)
        # inlining forward assumed no hooks and this forward: a hook registered or forward patched
        # later re-captures (one module guard per module, checked in C)
        src = self.source_of(mod)
        for name in ("_global_forward_hooks", "_global_forward_pre_hooks"):
            self.tr.attr_guards.append((("obj", _m, name), Structure(getattr(_m, name), False)))
        fwd = mod.__dict__.get("forward", type(mod).forward)
        if src is not None:
            self.tr.attr_guards.append((src, ModuleGuard(fwd)))
        if "forward" in mod.__dict__:
            return self.call(fwd, args, kwargs)
        if not isinstance(fwd, types.FunctionType):
            self.fail(f"forward of {type(mod).__name__}")
        traced = SUBSTITUTES.get(fwd, fwd)  # torch code dyn traces rewritten (ops/norms.py: BatchNorm)
        return self.child_frame(traced, [mod] + list(args), kwargs).run()


_CONTAINER_METHODS = {
    list: {"append", "extend", "insert", "pop", "copy", "index", "count", "reverse", "clear"},
    dict: {"get", "keys", "values", "items", "update", "setdefault", "pop", "copy", "clear"},
    set: {"add", "update", "discard", "copy", "union", "intersection", "difference", "issubset"},
    tuple: {"index", "count"},
    str: {"format", "join", "split", "strip", "startswith", "endswith", "lower", "upper", "replace", "rsplit",
          "lstrip", "rstrip", "partition", "rpartition", "find", "rfind", "count", "isdigit", "isidentifier",
          "removeprefix", "removesuffix"},
}
_CONTAINER_METHODS.update(CONTAINER_METHODS)
_MUTATING = {"append", "extend", "insert", "pop", "reverse", "clear", "update", "setdefault", "add", "discard"} | \
    MUTATING


# torch's functions of dtypes: called while capturing when every argument is a dtype
_DTYPE_FUNCTIONS = {torch.promote_types, torch.can_cast}

# pure functions that only arrange the values they are given (never look at them but by identity or
# hash, which for tensors is identity in eager too): they may hold dyn's placeholders
_STRUCTURAL = {len, isinstance, issubclass, tuple, list, dict, set, frozenset, enumerate, zip, reversed, iter,
               next, slice, operator.is_, operator.is_not, operator.itemgetter, itertools.chain,
               itertools.chain.from_iterable, itertools.islice, itertools.repeat, itertools.product,
               itertools.zip_longest, itertools.combinations, itertools.permutations, functools.partial}
if hasattr(itertools, "pairwise"):
    _STRUCTURAL.add(itertools.pairwise)

_ITERATING_BUILTINS = {list, tuple, set, frozenset, dict, enumerate, zip, sorted, reversed, sum, min, max, any,
                       all, iter, next, map, filter}


def _needs_iterate(a):
    """An argument an iterating builtin would iterate with code dyn must see (or must not run): a tensor's
    rows are its unbind (ControlOps.tensor_items)."""
    return isinstance(a, (torch.nn.Module, TensorVar)) or (
        not isinstance(a, (tuple, list, dict, set, frozenset, str, range, bytes, TensorVar, SymGenerator))
        and (hasattr(type(a), "__next__") or isinstance(getattr(type(a), "__iter__", None), types.FunctionType)))



def _constructible_module(cls):
    """Whether a module class made inside forward can be made once while capturing instead of at every
    call: torch.nn's, and subclasses whose own __init__ methods assign no global or closure variable
    (activation and loss wrappers; an __init__ that counts its instances is left to eager)."""
    for c in cls.__mro__:
        if (c.__module__ or "").startswith("torch.nn.") or c is object:
            continue
        init = c.__dict__.get("__init__")
        if init is None:
            continue
        code = getattr(init, "__code__", None)
        if code is None or any(i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF")
                               for i in dis.get_instructions(code)):
            return False
    return True


def _is_user_class(cls):
    """A plain Python class (not torch's, not a builtin's subclass, default metaclass and __new__)."""
    if type(cls) not in (type, abc.ABCMeta) or cls.__new__ is not object.__new__ or \
            getattr(cls, "__abstractmethods__", None):
        return False
    for c in cls.__mro__:
        if c is object or c is abc.ABC:
            continue
        if c.__module__ == "builtins" or is_torch_class(c) or is_numeric_library(c) or \
                any(n in c.__dict__ for n in ("__slots__", "__setattr__", "__delattr__", "__getattribute__")):
            return False
    return True


def _real_container(v):
    """A Python container (its type is real whatever it holds): isinstance(args, tuple) is answered."""
    return type(v) in (tuple, list, dict, set, frozenset) or is_namedtuple(v)


_DICT_READS = {"__getitem__", "__contains__", "__len__", "__iter__", "keys", "values", "items", "get", "copy",
               "__eq__", "__ne__"}
_DICT_METHODS = {"__setitem__", "__getitem__", "__delitem__", "__contains__", "__len__", "__iter__", "keys", "values",
                 "items", "get", "copy", "__eq__", "__ne__", "move_to_end"}


def _callable_name(f):
    """How a break reason names a function: scipy.special.erf, numpy ufunc add, Tensor.numpy."""
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__
    if type(f).__name__ == "ufunc":
        return f"numpy ufunc {name}"
    if name.startswith("_VariableFunctionsClass."):
        return "torch." + f.__name__
    mod = getattr(f, "__module__", None)
    return f"{mod}.{name}" if isinstance(mod, str) and mod not in ("builtins",) else name


def _hashable(fn):
    try:
        hash(fn)
        return True
    except TypeError:
        return False
