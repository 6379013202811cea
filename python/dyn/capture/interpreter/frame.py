"""The symbolic bytecode evaluator (the InstructionTranslator): runs a function's CPython 3.11/3.12
bytecode over symbolic values. Tensors are TensorVars (graph nodes over meta tensors); everything else is
a real Python value and constant-folds. Calls into user Python functions and nn.Module forwards are
inlined. Anything unsupported raises Unsupported with the user's file:line. Opcodes are grouped by kind
in the mixins Frame is made of."""
import builtins
import dis
import types

import torch

from ...errors import Unsupported
from ..tracer import Tracer
from .attributes import AttrOps
from .building import BuildOps
from .calls import CallOps
from .control import TRACED_EXITS, ControlOps
from .loads import LoadStoreOps
from .operators import OperatorOps
from .library_calls import LibraryCalls
from .optimizers import OptimizerCalls
from .signals import CAPTURE_ERRORS, DeviceSwitch, GraphBreak, Restart, TracedException, _Return, _Yield
from .torch_calls import TorchFunctionCalls

MAX_STEPS = 200000
MAX_DEPTH = 40


class Frame(LoadStoreOps, AttrOps, BuildOps, OperatorOps, ControlOps, CallOps, TorchFunctionCalls, LibraryCalls,
            OptimizerCalls):
    """Symbolic execution of one code object."""

    def __init__(self, tracer, func, args, kwargs, depth=0, bound_locals=None, generator=False):
        self.tr = tracer
        self.func = func
        self.code = func.__code__
        self.depth = depth
        if depth > MAX_DEPTH:
            raise Unsupported("inlining too deep (recursion?)")
        co = self.code
        if co.co_flags & (0x80 | 0x200 | 0x100) or (co.co_flags & 0x20 and not generator):  # coroutine/async
            raise Unsupported(f"generator or coroutine {co.co_name}")
        self.generator = generator
        self.globals = func.__globals__
        self.builtins = self.globals.get("__builtins__", builtins)
        if isinstance(self.builtins, types.ModuleType):
            self.builtins = self.builtins.__dict__
        self.locals = bound_locals if bound_locals is not None else self._bind(func, args, kwargs)
        self.cells = {}
        self.stack = []
        self.kw_names = None
        self.insts, self.index_of, self._entries = _code_info(tracer.session, co)
        self._handled = None
        self.except_depth = 0  # except blocks entered (PUSH_EXC_INFO) and not left: no graph break there
        self.lineno = co.co_firstlineno
        self.records_callees = depth == 0  # see CallOps.child_frame

    def _bind(self, func, args, kwargs):
        import inspect
        co = func.__code__
        nargs = co.co_argcount + co.co_kwonlyargcount + bool(co.co_flags & 0x04) + bool(co.co_flags & 0x08)
        # 0x04 *args, 0x08 **kwargs: bound below (a new tuple and dict per call, empty when none is passed)
        if not kwargs and not (co.co_flags & 0x0C) and co.co_kwonlyargcount == 0 and \
                len(args) == co.co_argcount:
            return dict(zip(co.co_varnames, args))
        try:
            sig = inspect.signature(func, follow_wrapped=False)
            ba = sig.bind(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise Unsupported(f"cannot bind arguments of {co.co_name}: {e}")
        ba.apply_defaults()
        bound = {n: ba.arguments[n] for n in co.co_varnames[:nargs] if n in ba.arguments}
        if co.co_flags & 0x08:  # **kwargs is a new dict per call: the callee may mutate it
            self._created(bound[co.co_varnames[nargs - 1]])
        return bound

    def fail(self, reason):
        raise Unsupported(reason, self.code.co_filename, self.lineno)

    def handled(self, offset):
        """Whether an exception at offset is caught in this frame by anything but the traced grad-mode
        with blocks it is in (a try body, another with block): a call, store or branch there must be made
        inside the frame's own code, never by a graph-break runner. Inside `with torch.no_grad():` alone
        the runner makes it under the block's grad mode and the resume function enters the block again
        (TorchDynamo breaks there too; inside a try it does not). The same for `with nullcontext():`."""
        if self._handled is None:
            self._handled = [(e.start, e.end, e.target, e.depth) for e in self.exception_entries()]
        off = offset
        for _ in range(len(self._handled) + 1):
            e = next((e for e in self._handled if e[0] <= off < e[1]), None)
            if e is None:
                return False
            k = self.index_of.get(e[2])
            if k is None or k + 1 >= len(self.insts) or self.insts[k].opname != "PUSH_EXC_INFO" or \
                    self.insts[k + 1].opname != "WITH_EXCEPT_START" or not 0 < e[3] <= len(self.stack) or \
                    not isinstance(self.stack[e[3] - 1], TRACED_EXITS):
                return True  # a try, or a with block of another context manager
            # a traced with block: where an exception leaving its __exit__ goes (the handler's cleanup)
            # is covered by the next enclosing handler, if any
            cleanup = next((c for c in self._handled if c[0] <= e[2] < c[1]), None)
            if cleanup is None:
                return True
            off = cleanup[2]
        return True

    # -- stack helpers
    def pop(self):
        return self.stack.pop()

    def popn(self, n):
        if n == 0:
            return []
        vals = self.stack[-n:]
        del self.stack[-n:]
        return vals

    def push(self, v):
        self.stack.append(v)

    def run(self, pc=0):
        insts = self.insts
        while True:
            self.tr.steps += 1
            if self.tr.steps > MAX_STEPS:
                self.fail("too many instructions")
            inst = insts[pc]
            pos = inst.positions
            if pos is not None and pos.lineno is not None:
                self.lineno = pos.lineno
            op = inst.opname
            handler = getattr(self, "op_" + op, None)
            top = self.depth == 0 and self.tr.allow_breaks
            before = list(self.stack) if top else None
            version = self.tr.side.version
            try:
                if top and inst.offset in self.tr.eager_at:
                    raise self.tr.eager_at[inst.offset]
                if handler is None:
                    self.fail(f"unsupported bytecode {op}")
                try:
                    r = handler(inst)
                except Unsupported as e:
                    raise e.locate(self.code.co_filename, self.lineno)
                except CAPTURE_ERRORS as e:
                    self.fail(f"{type(e).__name__} while capturing {op}: {e}")
                except TracedException as e:
                    r = self.unwind(inst, e)
            except Unsupported as e:
                if not top or not self.tr.graph.nodes or self.except_depth:
                    raise
                if self.tr.side.version != version:  # it recorded side effects: capture again, clean
                    raise Restart(inst.offset, e, eager=True)
                # the graph so far is worth keeping: break before this instruction; the rest of the
                # frame (this instruction included) runs eagerly in a resume function
                self.stack = before
                raise GraphBreak(self, e, inst.offset, targets=(inst.offset,), eager_rest=True)
            if r is None:
                pc += 1
            elif isinstance(r, _Return):
                return r.value
            elif isinstance(r, _Yield):
                r.pc = pc + 1
                return r
            else:
                pc = r

    def jump(self, inst):
        return self.index_of[inst.argval]

    def unwind(self, inst, e):
        """The traced program raised e at inst: to the handler of this frame's exception table that covers
        inst (stack cut to its depth, the offset pushed when it wants lasti, then the exception), else out
        of the frame; out of the compiled frame it is not captured."""
        for entry in self.exception_entries():
            if entry.start <= inst.offset < entry.end:
                del self.stack[entry.depth:]
                if entry.lasti:
                    self.push(inst.offset)
                self.push(e.exc)
                return self.index_of[entry.target]
        if self.depth == 0:
            self.fail(f"{type(e.exc).__name__} raised out of the compiled frame: {e.exc}")
        raise e

    def exception_entries(self):
        return self._entries


def _code_info(session, co):
    """(instructions, offset -> index, exception table entries) of a code object, disassembled once per
    session (a model inlines the same few functions hundreds of times; the lists are only read)."""
    info = session.code_info.get(co)
    if info is None:
        insts = list(dis.get_instructions(co))
        info = session.code_info[co] = (insts, {inst.offset: i for i, inst in enumerate(insts)},
                                        list(dis.Bytecode(co).exception_entries))
    return info


def trace(func, args, device, session, allow_breaks=False, callees=None, symbolic=None):
    """Captures func(*args) where args are the frame's bound arguments in code order. Returns
    (tracer, output_structure, graph_break) where graph_break is a GraphBreak or None. callees (a
    dict, filled across restarts): the user functions the frame was seen to call. symbolic: a function
    making a fresh dynamic/symbolic.SymbolicSizes per attempt (a capture with symbolic dims), or None."""
    callees = {} if callees is None else callees
    co = func.__code__
    nargs = co.co_argcount + co.co_kwonlyargcount + bool(co.co_flags & 0x04) + bool(co.co_flags & 0x08)
    varkw = nargs - 1 if co.co_flags & 0x08 else None
    break_at, eager_at = {}, {}
    unset = device is None  # no tensor argument: the CPU, or CUDA once the code reads a tensor there
    device = device or torch.device("cpu")
    for _ in range(16):
        tr = Tracer(device, session)
        tr.device_unset = unset
        tr.allow_breaks = allow_breaks
        tr.break_at = dict(break_at)
        tr.eager_at = dict(eager_at)
        tr.callees = callees
        if symbolic is not None:
            tr.symbolic = symbolic()
            tr.graph.fake_mode = tr.symbolic.mode
        wrapped = [tr.wrap_kwargs(a, ("arg", i)) if i == varkw else tr.wrap(a, ("arg", i))
                   for i, a in enumerate(args)]
        frame = Frame(tr, func, (), {}, 0, dict(zip(co.co_varnames[:nargs], wrapped)))
        try:
            return tr, frame.run(0), None
        except GraphBreak as b:
            return tr, None, b
        except Restart as r:
            (eager_at if r.eager else break_at)[r.offset] = r.why
        except DeviceSwitch as d:
            device, unset = d.device, False
    raise Unsupported("too many graph breaks", co.co_filename, co.co_firstlineno)
