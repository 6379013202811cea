"""Control flow: branches (a graph break on a tensor), jumps, iteration, generators, returns and with
blocks (Frame mixin)."""
import contextlib
import types

import torch

from ...ops import METHODS, TensorVar
from ..guards import Structure
from ..origins import is_traced_code
from ..values import Opaque
from .signals import PY312, GraphBreak, TracedException, _Return, _Yield


class ControlOps:
    # -- control flow
    def _cond_jump(self, inst, jump_if):
        v = self.pop()
        if isinstance(v, TensorVar) and "NONE" not in inst.opname:
            value = self.tr.ops.constant_value(v)
            if value is not None and value.numel() == 1:
                v = bool(value)  # computed from constants: the branch is known now
        if isinstance(v, TensorVar) and self.depth == 0 and self.tr.allow_breaks and "NONE" not in inst.opname:
            if self.handled(inst.offset):
                # the rest of the frame runs from this branch, eagerly, inside its try
                self.fail("data-dependent branch on a tensor inside a try block")
            here = self.index_of[inst.offset]
            target = self.jump(inst)
            if "FALSE" in inst.opname:
                true_pc, false_pc = here + 1, target
            else:
                true_pc, false_pc = target, here + 1
            raise GraphBreak(self, "data-dependent branch on a tensor", inst.offset, cond=v,
                             targets=(self.insts[true_pc].offset, self.insts[false_pc].offset))
        if "NONE" in inst.opname:
            c = v is None
            if "NOT_NONE" in inst.opname:
                c = not c
        else:
            c = self.truth(v)
            if "FALSE" in inst.opname:
                c = not c
        return self.jump(inst) if c else None

    def op_POP_JUMP_IF_TRUE(self, inst):
        return self._cond_jump(inst, True)

    op_POP_JUMP_IF_FALSE = op_POP_JUMP_IF_NONE = op_POP_JUMP_IF_NOT_NONE = op_POP_JUMP_IF_TRUE
    op_POP_JUMP_FORWARD_IF_TRUE = op_POP_JUMP_FORWARD_IF_FALSE = op_POP_JUMP_IF_TRUE
    op_POP_JUMP_BACKWARD_IF_TRUE = op_POP_JUMP_BACKWARD_IF_FALSE = op_POP_JUMP_IF_TRUE
    op_POP_JUMP_FORWARD_IF_NONE = op_POP_JUMP_FORWARD_IF_NOT_NONE = op_POP_JUMP_IF_TRUE
    op_POP_JUMP_BACKWARD_IF_NONE = op_POP_JUMP_BACKWARD_IF_NOT_NONE = op_POP_JUMP_IF_TRUE

    def op_JUMP_IF_TRUE_OR_POP(self, inst):
        c = self.truth(self.stack[-1])
        if "FALSE" in inst.opname:
            c = not c
        if c:
            return self.jump(inst)
        self.pop()

    op_JUMP_IF_FALSE_OR_POP = op_JUMP_IF_TRUE_OR_POP

    def op_JUMP_FORWARD(self, inst):
        return self.jump(inst)

    op_JUMP_BACKWARD = op_JUMP_BACKWARD_NO_INTERRUPT = op_JUMP = op_JUMP_NO_INTERRUPT = op_JUMP_FORWARD

    def op_GET_ITER(self, inst):
        self.push(self.iterate(self.pop()))

    def tensor_items(self, v):
        """What iterating a tensor gives (Tensor.__iter__: its unbind along dim 0, views of it), for at most
        64 rows; a 0-d tensor is not iterable (eager raises)."""
        if v.meta.dim() == 0 or v.meta.shape[0] > 64:
            self.fail("iterating over a 0-d tensor or one of more than 64 rows")
        return list(METHODS["unbind"](self.tr.ops, v, 0))

    def iterate(self, v):
        """iter(v) during capture. Iterators made outside the captured code (a generator passed in)
        are never advanced here: that would consume them at capture time."""
        if isinstance(v, TensorVar):
            return self._created(iter(self._created(self.tensor_items(v))))
        if isinstance(v, Opaque):
            self.fail(f"iterating over a {type(v.value).__name__}")
        if isinstance(v, SymGenerator) or id(v) in self.tr.created:
            it = iter(v)
            return it if it is v else self._created(it)
        if hasattr(type(v), "__next__"):
            self.fail(f"iterating over a {type(v).__name__} made outside the compiled code")
        if isinstance(v, torch.nn.Module):
            self.guard_module_structure(v)
        elif not isinstance(v, (tuple, list, dict, set, frozenset, str, range, bytes, type({}.keys()),
                                type({}.values()), type({}.items()))):
            it_fn = getattr(type(v), "__iter__", None)
            if not isinstance(it_fn, types.FunctionType):
                self.fail(f"iterating over a {type(v).__name__}")
            return self.iterate(self.call(it_fn, [v], {}))  # a user class's __iter__, inlined
        return self._created(iter(v))

    def source_of(self, obj):
        """The source path of a real object the capture reads from: the one it was reached through,
        else the object itself (a global, an object met while iterating), re-read from it at every call."""
        src = self.tr.sources.get(id(obj))
        if src is None and id(obj) not in self.tr.created:
            src = self.tr.sources[id(obj)] = ("obj", obj)
            self.tr.keep.append(obj)
        return src

    def guard_module_structure(self, mod):
        """Iterating, indexing or taking len() of a module container (Sequential, ModuleList, ...) reads its
        children: guard which modules, parameters and buffers it holds."""
        src = self.source_of(mod)
        if src is None:
            return
        for name in ("_modules", "_parameters", "_buffers"):
            d = getattr(mod, name, None)
            if type(d) is dict:
                self.tr.attr_guards.append((src + (name,), Structure(d, False)))

    def op_GET_YIELD_FROM_ITER(self, inst):
        self.push(self.iterate(self.pop()))

    def op_SEND(self, inst):
        """yield from: the delegate's next item, or its return value and a jump past the loop."""
        value = self.pop()
        if value is not None:
            self.fail("send() of a value into a generator")
        try:
            item = next(self.stack[-1])
        except StopIteration as e:
            if not PY312:
                self.pop()  # 3.11 pops the delegate here, 3.12 at END_SEND
            self.push(e.value)
            return self.jump(inst)
        self.push(item)

    def op_END_SEND(self, inst):
        value = self.pop()
        self.pop()
        self.push(value)

    def op_YIELD_VALUE(self, inst):
        if not self.generator:
            self.fail("yield")
        return _Yield(self.pop())

    def op_RETURN_GENERATOR(self, inst):
        if not self.generator:
            self.fail("generator")
        self.push(None)  # popped by the POP_TOP that follows (the value sent to start the generator)

    def op_FOR_ITER(self, inst):
        it = self.stack[-1]
        try:
            v = next(it)
        except StopIteration:
            self.pop()
            target = self.jump(inst)
            if self.insts[target].opname == "END_FOR":
                target += 1
            return target
        if isinstance(v, torch.Tensor):
            v = self.tr.wrap(v)
        self.push(v)

    def op_RETURN_VALUE(self, inst):
        return _Return(self.pop())

    def op_RETURN_CONST(self, inst):
        return _Return(inst.argval)

    # -- exceptions the traced program raises and handles (signals.TracedException)
    def op_RAISE_VARARGS(self, inst):
        if inst.arg == 0:
            self.fail("bare raise")
        cause = self.pop() if inst.arg == 2 else None
        exc = self.pop()
        if isinstance(exc, type) and issubclass(exc, BaseException) and exc.__module__ == "builtins":
            exc = exc()
        if not isinstance(exc, Exception) or type(exc).__module__ != "builtins" or \
                any(isinstance(a, (TensorVar, Opaque)) for a in exc.args):
            self.fail(f"raise {type(exc).__name__}")
        if inst.arg == 2:
            exc.__cause__ = cause
        raise TracedException(exc)

    def op_PUSH_EXC_INFO(self, inst):
        exc = self.pop()
        self.push(None)  # the exception being handled before (sys.exc_info is not modeled)
        self.push(exc)
        self.except_depth += 1

    def op_POP_EXCEPT(self, inst):
        self.pop()
        self.except_depth -= 1

    def op_CHECK_EXC_MATCH(self, inst):
        typ = self.pop()
        self.push(isinstance(self.stack[-1], typ))

    def op_RERAISE(self, inst):
        exc = self.pop()
        if inst.arg:
            self.pop()  # the offset the exception came from (f_lasti)
        if not isinstance(exc, BaseException):
            self.fail("re-raise of a value that is not an exception")
        raise TracedException(exc)

    def op_WITH_EXCEPT_START(self, inst):
        exit_fn = self.stack[-4]
        if not isinstance(exit_fn, TRACED_EXITS):
            self.fail("exception through a with block")
        exit_fn.exit()
        self.push(False)  # a grad-mode block does not swallow the exception

    # -- unsupported with a clear reason

    def op_LOAD_ASSERTION_ERROR(self, inst):
        self.fail("assertion failed (or assert with a data-dependent condition)")

    def op_BEFORE_WITH(self, inst):
        """`with torch.no_grad():` / `with torch.enable_grad():` are traced: the ops inside are marked with
        the grad mode they run under. Other context managers are unsupported."""
        mgr = self.pop()
        if type(mgr) is contextlib.nullcontext:  # does nothing (transformers' maybe_autocast when off)
            self.push(NoExit())
            self.push(mgr.enter_result)
            return
        if type(mgr) is torch.autograd.profiler.record_function:
            # a profiler range: the compiled graph shows in a profile as its kernels, not as the ranges
            # of the code it was captured from (TorchDynamo keeps them as graph ops)
            self.push(NoExit())
            self.push(mgr)
            return
        if isinstance(mgr, torch.amp.autocast_mode.autocast):
            if not isinstance(mgr.device, str) or not hasattr(mgr, "_cache_enabled"):
                self.fail("with statement (autocast made in script mode)")
            self.push(AutocastExit(self.tr, mgr.device, bool(mgr._enabled), mgr.fast_dtype, bool(mgr._cache_enabled)))
            self.push(mgr)  # __enter__ returns the autocast object
            return
        if type(mgr) is _SetGradEnabled:  # with torch.set_grad_enabled(mode): (calls.py)
            self.push(GradModeExit(self.tr, mgr.mode))
            self.push(None)
            return
        if type(mgr) is torch.inference_mode:
            if mgr.mode:  # ops made inside run under inference mode (the eager backend's too)
                self.push(GradModeExit(self.tr, False, inference=True))
            else:
                self.push(NoExit())  # inference_mode(False) outside inference mode: nothing changes
            self.push(None)
            return
        enter, exit_ = getattr(type(mgr), "__enter__", None), getattr(type(mgr), "__exit__", None)
        if isinstance(enter, types.FunctionType) and isinstance(exit_, types.FunctionType) and (
                is_traced_code(enter) and is_traced_code(exit_) or
                type(mgr) is contextlib._GeneratorContextManager):
            # a user context manager (a class with __enter__/__exit__, a @contextlib.contextmanager
            # generator): both traced; a break inside the block runs the rest of the frame eagerly there
            self.push(types.MethodType(exit_, mgr))
            self.push(self.call(enter, [mgr], {}))
            return
        if type(mgr) not in (torch.no_grad, torch.enable_grad):
            self.fail(f"with statement ({type(mgr).__name__})")
        self.push(GradModeExit(self.tr, type(mgr) is torch.enable_grad))
        self.push(None)  # what __enter__ returns



class GradModeExit:
    """The __exit__ of a traced grad-mode block: the ops made inside are marked with its mode."""

    def __init__(self, tracer, enabled, inference=False):
        self.tr, self.enabled, self.outer = tracer, enabled, tracer.graph.mode_attrs
        self.inference = inference
        tracer.grad_modes.append(enabled)
        tracer.inference_blocks.append(inference)
        tracer.graph.mode_attrs = {**self.outer, "grad_enabled": enabled}
        if inference:
            tracer.graph.mode_attrs["inference_mode"] = True

    def exit(self):
        self.tr.grad_modes.pop()
        self.tr.inference_blocks.pop()
        self.tr.graph.mode_attrs = self.outer



class _SetGradEnabled:
    """torch.set_grad_enabled(mode) made by the traced code, used as a with block (calls.py: its __init__
    would set the grad mode at once; as a plain call it is not captured)."""

    def __init__(self, mode):
        self.mode = mode


class AutocastExit:
    """The __exit__ of a traced `with torch.autocast(...)` block: the calls made inside apply autocast's
    casts (capture/autocast.py) for its device type, dtype and enabled flag."""

    def __init__(self, tracer, device_type, enabled, dtype, cache):
        self.tr, self.device, self.enabled, self.dtype, self.cache = tracer, device_type, enabled, dtype, cache
        tracer.autocast_modes.append((device_type, enabled, dtype, cache))

    def exit(self):
        self.tr.autocast_modes.pop()

    def slot(self):
        """How a resume function enters the block again (resume.py)."""
        return ("ac", self.device, self.enabled, self.dtype, self.cache)


class NoExit:
    """The __exit__ of a context manager that does nothing (contextlib.nullcontext)."""

    def exit(self):
        return None


class SymGenerator:
    """A user generator (or generator expression) called during capture: each next() resumes its frame
    symbolically up to the next yield, so it runs lazily and in step with its consumer, as in Python."""

    def __init__(self, frame):
        self.frame, self.pc, self.done = frame, 0, False

    def __iter__(self):
        return self

    def __next__(self):
        if self.done:
            raise StopIteration
        if self.pc:
            self.frame.push(None)  # the value of the yield expression (nothing is ever sent)
        try:
            r = self.frame.run(self.pc)
        except BaseException:
            self.done = True
            raise
        if isinstance(r, _Yield):
            self.pc = r.pc
            return r.value
        self.done = True
        raise StopIteration(r)  # with the generator's return value (`x = yield from gen()`)


TRACED_EXITS = (GradModeExit, NoExit, AutocastExit)  # with blocks whose __exit__ capture traces
