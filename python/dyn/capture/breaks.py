"""Graph breaks: what the code after a break needs (markers for the call, the stack and the locals, and
the resume points) and the runner that runs a graph, makes the call or store Python must make, and calls
the resume function of the rest of the frame."""
import contextlib

import torch

from ..errors import Unsupported
from . import resume
from .interpreter.control import AutocastExit, GradModeExit, NoExit
from .marks import _ITER_TYPES, Marker, unmark
from .paths import _gatherer
from .runners import _rebuilder
from .side_effects import replay
from .values import NULL


class _Break:
    """What a resume needs from a graph break: markers for the call and the stack and locals (StateRef
    for live tensors the graph outputs, _Src for objects re-read from the arguments, _Fresh for
    containers built by the traced code) and the resume points."""

    def __init__(self, func, br, tr, fail):
        self.reason, self.where, self.offset = br.reason, (br.filename, br.lineno), br.offset
        self.eager_rest = br.eager_rest
        self.grad_mode = br.grad_mode  # the innermost traced grad-mode block's mode at the break, or None
        self.callees = list(tr.callees)  # user functions the frame calls (for an eager rest)
        co = func.__code__

        marker = Marker(tr, fail)
        self.state, mark = marker.state, marker.mark

        self.call = self.store = None
        if br.call is not None:
            fn, a, kw = br.call
            self.call = (mark(fn), [mark(x) for x in a], {k: mark(x) for k, x in kw.items()})
        if br.store is not None:
            kind, obj, name, value = br.store
            self.store = (kind, obj if kind in ("global", "delglobal") else mark(obj), name, mark(value))
        self.slots, self.stack = [], []
        self.autocast = []  # the autocast (inference mode) blocks of the break, outermost first: the call is made in them
        for v in br.stack:
            if v is NULL:
                self.slots.append(resume.NULL_SLOT)
            elif isinstance(v, GradModeExit):  # inside `with torch.no_grad()`: the resume enters it again
                self.slots.append("im" if v.inference else "g1" if v.enabled else "g0")
                if v.inference:
                    self.autocast.append("im")
            elif isinstance(v, NoExit):  # inside `with contextlib.nullcontext()`: entered again likewise
                self.slots.append("nc")
            elif isinstance(v, AutocastExit):  # inside `with torch.autocast(...)`: entered again likewise
                self.slots.append(v.slot())
                self.autocast.append(v.slot())
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
        # side effects made before the break: replayed before the call Python makes (or the branch)
        self.effects = tr.side.marks(marker) if tr.side else None
        self.code = co
        try:  # built now so that a frame that cannot resume runs eagerly from its start
            self.codes = [resume.resume_code(co, t, self.slots, n, tr.session.resume_origins) for t, n in zip(self.targets, self.names)]
        except Unsupported as e:
            fail(e.reason)


def _break_runner(cf, tr, tmpl, kernel, brk):
    gather = _gatherer(tr.input_sources)
    rebuild = _rebuilder(tmpl)
    resumes = [None] * len(brk.targets)
    call, store, stack, local_marks, mode = brk.call, brk.store, brk.stack, brk.locals, brk.grad_mode
    effects, autocast = brk.effects, brk.autocast

    def resume_at(k, args):
        if resumes[k] is None:
            resumes[k] = cf._resume(brk, k, args)
        return resumes[k]

    def run(*args):
        ins = gather(args)
        cond, state = rebuild(kernel(*ins) if kernel is not None else (), ins, args)
        # everything the rest needs is resolved first, from the state the graph saw; then the side
        # effects recorded before the break are made, then the call or store Python makes
        memo = {}
        vals = [unmark(v, state, args, memo) for v in stack]
        k = 0 if call is not None or store is not None or cond is None else (0 if cond else 1)
        local_vals = [unmark(local_marks[n], state, args, memo) for n in brk.names[k]]
        if call is not None:
            fn, cargs, ckw = call
            fn = unmark(fn, state, args, memo)
            cargs = [unmark(v, state, args, memo) for v in cargs]
            ckw = {k: unmark(v, state, args, memo) for k, v in ckw.items()}
        elif store is not None:
            kind, obj, name, value = store
            value = unmark(value, state, args, memo)
            if kind not in ("global", "delglobal"):
                obj = unmark(obj, state, args, memo)
        if effects:
            replay(effects, state, args, memo)
        if call is not None:
            if mode is None and not autocast:
                vals.append(cf._call_through(fn, cargs, ckw))
            else:  # made inside the frame's `with torch.no_grad()` (autocast) blocks, which the resume enters again
                with contextlib.ExitStack() as blocks:
                    for s in autocast:
                        blocks.enter_context(resume.with_factory(s)())
                    if mode is not None:
                        blocks.enter_context(torch.set_grad_enabled(mode))
                    vals.append(cf._call_through(fn, cargs, ckw))
        elif store is not None:
            if kind == "global":
                obj[name] = value
            elif kind == "delglobal":
                del obj[name]
            elif kind == "delattr":
                delattr(obj, name)
            else:
                setattr(obj, name, value)
        vals.extend(local_vals)
        return resume_at(k, vals)[0](*vals)
    return run
