"""How a frame's symbolic run stops: GraphBreak (the top frame ends the graph here), Restart (capture
again, breaking earlier), _Return and _Yield; and the errors a handler may raise on inputs it cannot
capture (reported as unsupported, never propagated)."""
import sys

from ...errors import Unsupported

PY312 = sys.version_info >= (3, 12)
# errors a handler may raise on inputs it cannot capture: reported as unsupported, never propagated
CAPTURE_ERRORS = (TypeError, ValueError, IndexError, KeyError, AttributeError, RuntimeError, OverflowError,
                   NotImplementedError, ZeroDivisionError, AssertionError)


class GraphBreak(Exception):
    """The top frame stops capture at instruction `offset`: before a call Python must make (`call`
    = (fn, args, kwargs)), or at a jump on a tensor (`cond`). `targets` are the offsets where the frame
    resumes (after the call; or the true and the false side). The stack and locals are the frame's at
    that point, without the call's operands or the condition."""

    def __init__(self, frame, why, offset, call=None, cond=None, targets=(), store=None, eager_rest=False):
        super().__init__(str(why))
        self.reason = why.reason if isinstance(why, Unsupported) else why
        self.filename = getattr(why, "filename", None) or frame.code.co_filename
        self.lineno = getattr(why, "lineno", None) or frame.lineno
        self.offset, self.call, self.cond, self.targets, self.store = offset, call, cond, targets, store
        self.eager_rest = eager_rest
        modes = frame.tr.grad_modes  # blocks entered by this frame (a break is in the top frame)
        self.grad_mode = modes[-1] if modes else None
        self.locals, self.stack = dict(frame.locals), list(frame.stack)
        self.cells = {n: c for n, c in frame.cells.items() if n in frame.code.co_cellvars}
        self.code = frame.code


class DeviceSwitch(Exception):
    """Capture again for `device`: a frame with no tensor argument (a train step reading its model and
    optimizer from closures or globals) met a CUDA tensor while capturing for the CPU."""

    def __init__(self, device):
        super().__init__(f"capture again for {device}")
        self.device = device


class Restart(Exception):
    """Capture again from the start, breaking the graph at `offset` this time: before the call there
    (or, when eager, running the rest of the frame from that instruction eagerly)."""

    def __init__(self, offset, why, eager=False):
        super().__init__(str(why))
        self.offset, self.why, self.eager = offset, why, eager


class _Return:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value



class _Yield:
    __slots__ = ("value", "pc")

    def __init__(self, value):
        self.value, self.pc = value, None


class TracedException(Exception):
    """An exception the traced program raises (a missing key, `raise KeyError(...)`), as eager would
    raise it: it unwinds the symbolic frames to the innermost handler of their exception tables (a try
    block of an inlined function); one that leaves the compiled frame is not captured (eager raises it)."""

    def __init__(self, exc):
        super().__init__(repr(exc))
        self.exc = exc
