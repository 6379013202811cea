"""Graph breaks: what the code after a break needs (markers for the call, the stack and the locals, and
the resume points) and the runner that runs a graph, makes the call or store Python must make, and calls
the resume function of the rest of the frame."""
import types

import torch

from ..errors import Unsupported
from ..ops import TensorVar
from . import resume
from .interpreter.control import GradModeExit
from .paths import _gatherer, _resolver
from .runners import _rebuilder
from .values import NULL, BoundTensorMethod, Opaque, OpaqueMethod, _contains_tensor, is_constant


class _Src:
    """An object the traced code reached from the frame's arguments: re-read at every call."""
    __slots__ = ("get",)

    def __init__(self, path):
        self.get = _resolver(path)


class _Fresh:
    """A list/dict/set the traced code created: a new one at every call (one per marker)."""
    __slots__ = ("kind", "items")

    def __init__(self, kind, items):
        self.kind, self.items = kind, items


class _Method:
    __slots__ = ("obj", "name", "func")

    def __init__(self, obj, name, func=None):
        self.obj, self.name, self.func = obj, name, func


_ITER_TYPES = (type(iter(())), type(iter([])), type(iter(range(0))), zip, enumerate, reversed,
               type(iter({})), type({}.items()), type(iter({}.items())), type(iter({}.values())),
               type(iter(set())), map, filter)



class _Break:
    """What a resume needs from a graph break: markers for the call and the stack and locals (StateRef
    for live tensors the graph outputs, _Src for objects re-read from the arguments, _Fresh for
    containers built by the traced code) and the resume points."""

    def __init__(self, func, br, tr, fail):
        self.reason, self.where, self.offset = br.reason, (br.filename, br.lineno), br.offset
        self.eager_rest = br.eager_rest
        self.grad_mode = br.grad_mode  # the innermost traced grad-mode block's mode at the break, or None
        self.callees = list(tr.callees)  # user functions the frame calls (for an eager rest)
        self.state, index, fresh = [], {}, {}
        co = func.__code__

        def mark(v):
            if isinstance(v, TensorVar):
                k = index.get(v.node)
                if k is None:
                    k = index[v.node] = len(self.state)
                    self.state.append(v)
                return StateRef(k)
            if v is NULL:
                fail("NULL value")
            src = tr.sources.get(id(v))
            if src is not None:
                return _Src(src)
            if type(v) is tuple:
                return tuple(mark(x) for x in v)
            if type(v) in (list, dict, set) and id(v) in tr.created:
                m = fresh.get(id(v))
                if m is None:
                    m = fresh[id(v)] = _Fresh(type(v), None)
                    m.items = [(k, mark(x)) for k, x in v.items()] if type(v) is dict else [mark(x) for x in v]
                return m
            if is_constant(v):
                return v  # a list here is a real one (a global's, a module's): the very object, mutable
            if isinstance(v, BoundTensorMethod):
                return _Method(mark(v.tensor), v.name)
            if isinstance(v, OpaqueMethod):
                return _Method(mark(v.obj), v.name)
            if isinstance(v, Opaque):
                fail("an opaque value with no source")
            if isinstance(v, types.BuiltinMethodType) and type(v.__self__) in (list, dict, set):
                return _Method(mark(v.__self__), v.__name__)
            if isinstance(v, types.MethodType):
                return _Method(mark(v.__self__), None, v.__func__)
            if isinstance(v, types.FunctionType) and id(v) in tr.created and \
                    (v.__closure__ or not is_constant(v.__defaults__ or ())):
                fail("a function defined in the frame")
            if isinstance(v, _ITER_TYPES) or id(v) in tr.created and not isinstance(v, types.FunctionType):
                fail(f"a live {type(v).__name__}")
            if isinstance(v, (list, dict, set, tuple)) or _contains_tensor(v):
                fail(f"a live {type(v).__name__}")
            if type(v) is range or not type(v).__module__.startswith("dyn."):
                return v  # a real object the frame holds (module, function, class, library object)
            fail(f"a live {type(v).__name__}")  # an object standing for values while capturing

        self.call = self.store = None
        if br.call is not None:
            fn, a, kw = br.call
            self.call = (mark(fn), [mark(x) for x in a], {k: mark(x) for k, x in kw.items()})
        if br.store is not None:
            kind, obj, name, value = br.store
            self.store = (kind, obj if kind in ("global", "delglobal") else mark(obj), name, mark(value))
        self.slots, self.stack = [], []
        for v in br.stack:
            if v is NULL:
                self.slots.append(resume.NULL_SLOT)
            elif isinstance(v, GradModeExit):  # inside `with torch.no_grad()`: the resume enters it again
                self.slots.append("g1" if v.enabled else "g0")
            elif isinstance(v, _ITER_TYPES):
                self.slots.append(resume.ITER_SLOT)
                self.stack.append(tuple(mark(x) for x in v))  # the rest of the loop; consumed here
            else:
                self.slots.append(resume.VALUE)
                self.stack.append(mark(v))
        if br.call is not None:
            self.slots.append(resume.VALUE)  # the call's result
        bound = dict(br.locals)
        for name, cell in br.cells.items():
            try:
                bound[name] = cell.cell_contents
            except ValueError:
                pass
        self.targets, self.names = br.targets, []
        for t in br.targets:
            live, in_loop = resume.analyze(co, t, br.offset)
            if in_loop:
                fail("graph break inside a loop (the frame runs eagerly)")
            self.names.append(tuple(n for n in dict.fromkeys(co.co_varnames + co.co_cellvars)
                                    if n in live and n in bound))
        names = set().union(*self.names)
        self.locals = {n: mark(bound[n]) for n in names}
        self.code = co
        try:  # built now so that a frame that cannot resume runs eagerly from its start
            self.codes = [resume.resume_code(co, t, self.slots, n, tr.session.resume_origins) for t, n in zip(self.targets, self.names)]
        except Unsupported as e:
            fail(e.reason)


def _unmark(v, state, args, memo):
    if isinstance(v, StateRef):
        return state[v.k]
    t = type(v)
    if t is tuple:
        return tuple(_unmark(x, state, args, memo) for x in v)
    if t is _Src:
        return v.get(args)
    if t is _Fresh:
        r = memo.get(id(v))
        if r is None:
            if v.kind is dict:
                r = memo[id(v)] = {}
                r.update((k, _unmark(x, state, args, memo)) for k, x in v.items)
            else:
                r = memo[id(v)] = v.kind()
                items = [_unmark(x, state, args, memo) for x in v.items]
                r.extend(items) if v.kind is list else r.update(items)
        return r
    if t is _Method:
        obj = _unmark(v.obj, state, args, memo)
        return types.MethodType(v.func, obj) if v.func is not None else getattr(obj, v.name)
    return v


class StateRef:
    """The k-th live tensor handed from a graph to the code after its break."""
    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k



def _break_runner(cf, tr, tmpl, kernel, brk):
    gather = _gatherer(tr.input_sources)
    rebuild = _rebuilder(tmpl)
    resumes = [None] * len(brk.targets)
    call, store, stack, local_marks, mode = brk.call, brk.store, brk.stack, brk.locals, brk.grad_mode

    def resume_at(k, args):
        if resumes[k] is None:
            resumes[k] = cf._resume(brk, k, args)
        return resumes[k]

    def run(*args):
        ins = gather(args)
        cond, state = rebuild(kernel(*ins) if kernel is not None else (), ins)
        memo = {}
        vals = [_unmark(v, state, args, memo) for v in stack]
        if call is not None:
            fn, cargs, ckw = call
            fn = _unmark(fn, state, args, memo)
            cargs = [_unmark(v, state, args, memo) for v in cargs]
            ckw = {k: _unmark(v, state, args, memo) for k, v in ckw.items()}
            if mode is None:
                vals.append(cf._call_through(fn, cargs, ckw))
            else:  # made inside the frame's `with torch.no_grad()` block, which the resume enters again
                with torch.set_grad_enabled(mode):
                    vals.append(cf._call_through(fn, cargs, ckw))
            k = 0
        elif store is not None or cond is None:
            if store is not None:
                kind, obj, name, value = store
                value = _unmark(value, state, args, memo)
                if kind == "global":
                    obj[name] = value
                elif kind == "delglobal":
                    del obj[name]
                elif kind == "delattr":
                    delattr(_unmark(obj, state, args, memo), name)
                else:
                    setattr(_unmark(obj, state, args, memo), name, value)
            k = 0
        else:
            k = 0 if cond else 1
        names = brk.names[k]
        vals.extend(_unmark(local_marks[n], state, args, memo) for n in names)
        return resume_at(k, vals)[0](*vals)
    return run
