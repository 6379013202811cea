"""Which backend ran each captured graph and, where dyn's compiler did not, why. One GraphRun per graph,
kept by the compiled function (dyn.explain) and by the Session (dyn.stats); a fallback of the dyn backend
is logged under DYN_LOGS=fallbacks with the user's line."""
from .. import backends as B

PYTHON = "eager (the frame runs in Python)"
TORCH_OPS = "eager (PyTorch ops)"


class GraphRun:
    """One captured graph. backend: what runs it; compiled: dyn's compiler made the code that runs;
    reason: why not, when it did not; where: the user's function (file:line); fallback: the dyn backend
    was asked for and did not compile it; memory: what dyn.explain measured of its calls (capture/memory.py)."""
    __slots__ = ("graph", "backend", "compiled", "reason", "where", "fallback", "memory")

    def __init__(self, graph, backend, compiled, reason, where, fallback):
        self.graph, self.backend, self.compiled, self.reason = graph, backend, compiled, reason
        self.where, self.fallback = where, fallback
        self.memory = None

    @property
    def eager(self):
        return self.backend in (PYTHON, TORCH_OPS)

    def as_dict(self):
        return {"graph": self.graph, "backend": self.backend, "where": self.where, "reason": self.reason}

    def __str__(self):
        return self.backend + (f" ({self.reason})" if self.reason else "")


def classify(kernel, graph, examples, backend_name, custom):
    """(backend, compiled, reason) for a graph the backend was given; kernel is what it returned."""
    if custom:
        return backend_name, False, None
    if backend_name == "eager":
        return TORCH_OPS, False, "backend='eager'"
    if kernel is None:
        return PYTHON, False, B.fallback_reason(graph, examples) or "the dyn backend gave no runner"
    if kernel is graph:
        return TORCH_OPS, False, B.fallback_reason(graph, examples)
    device = getattr(kernel, "device_type", None) or B._plan(graph, examples)[1].type
    if getattr(kernel, "trains", False):  # one autograd node: dyn's forward and backward
        return f"dyn ({device}, forward and backward)", True, None
    return f"dyn ({device})", True, None


def failure(backend_name, custom, error):
    """The reason for a backend that raised: the first diagnostic of a compiler error (the op and what
    its lowering needs, say), else the message's first line."""
    lines = [line.strip() for line in str(error).strip().splitlines()]
    what = f"the {backend_name} backend" if custom or backend_name != "dyn" else "dyn's compiler"
    first = lines[0] if lines else type(error).__name__
    diagnostic = next((line.split("error: ", 1)[1] for line in lines if "error: " in line), None)
    if diagnostic:
        stage = first[:-len(" failed:")] if first.endswith(" failed:") else None
        return f"{what} failed" + (f" ({stage})" if stage else "") + f": {diagnostic}"
    return f"{what} failed: {first}"
