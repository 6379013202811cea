"""What a compiled graph holds in memory, for dyn.explain: the plan the compiler made (on CUDA one workspace
whose temporaries share memory where their lifetimes do not overlap; a training graph's values saved for the
backward) and the peak of the call explain made, measured by the allocators (CUDA: torch's, whose peak
statistics explain resets; CPU: dyn's host allocator, which holds the compiled code's temporaries)."""
import math

import torch

from ..native import C as _C

MiB = float(1 << 20)


def _nbytes(tensors):
    seen, total = set(), 0
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.device.type != "meta":
            s = t.untyped_storage()
            if s.data_ptr() not in seen:
                seen.add(s.data_ptr())
                total += s.nbytes()
    return total


def _part_plan(compiled):
    """The GPU plan of one compiled function (None on the CPU, where temporaries are allocated and freed
    around their uses by the host allocator)."""
    p = getattr(compiled, "memory_plan", None)
    if p is None:
        return None
    p = dict(p)
    sc = list(getattr(compiled, "scratch", ()))
    p["scratch_bytes"] = sum(sc[0::3])
    # the ones in the workspace: not a scratch buffer of their own, not placed at each call (`?` dims)
    p["placed"] = p["temporaries"] - p["scratch_buffers"] - p["runtime_sized"]
    p["placed_bytes"] = p["temporary_bytes"] - p["scratch_bytes"]
    return p


def plan(kernel):
    """{"forward": plan, "backward": plan, "saved_bytes": n} for a training kernel, {"forward": plan} for
    others; a plan is None on the CPU."""
    if getattr(kernel, "trains", False):
        fw = kernel.forward
        saved = 0
        for c in kernel.saved:  # forward results the backward reads (inputs are held by the caller anyway)
            k = -1 - c
            if c < 0 and k >= kernel.num_outputs and fw.specs[k] is not None:
                shape, _, dtype = fw.specs[k]
                saved += math.prod(shape) * dtype.itemsize
        return {"forward": _part_plan(fw.compiled), "backward": _part_plan(kernel.backward.compiled),
                "saved_bytes": saved}
    compiled = getattr(kernel, "compiled", None)
    return {"forward": _part_plan(compiled) if compiled is not None else None}


def measured(kernel, record):
    """kernel, with its calls' peak memory above what was allocated before each recorded in record.memory
    (the largest over the calls explain makes): the bytes the call allocated at most at once, and what it
    still holds after it (its outputs, a training graph's saved values)."""
    def call(*inputs):
        device = next((t.device for t in inputs if isinstance(t, torch.Tensor)), torch.device("cpu"))
        if device.type == "cuda":
            base = torch.cuda.memory_allocated(device)
            torch.cuda.reset_peak_memory_stats(device)
            outs = kernel(*inputs)
            peak = torch.cuda.max_memory_allocated(device) - base
            held = torch.cuda.memory_allocated(device) - base
            temps = None
        else:
            before = _C.host_cache_stats()["live_bytes"]
            _C.reset_host_peak()
            outs = kernel(*inputs)
            temps = _C.host_cache_stats()["peak_bytes"] - before
            held = _nbytes(outs if isinstance(outs, (list, tuple)) else [outs])
            saved = record.memory["plan"].get("saved_bytes") or 0
            peak = held + saved + temps  # an upper bound: the outputs are allocated before the call
        m = record.memory
        if m.get("peak_bytes") is None or peak > m["peak_bytes"]:
            m.update(peak_bytes=peak, held_bytes=held, temporary_peak_bytes=temps, device=device.type)
        return outs
    record.memory = {"plan": plan(kernel), "peak_bytes": None}
    return call


def _mib(n):
    return f"{n / MiB:.1f} MiB" if n >= 0.1 * MiB else f"{n / 1024:.1f} KiB"


def describe(memory):
    """One line for explain's output."""
    if not memory:
        return "not compiled by dyn"
    parts = []
    if memory.get("peak_bytes") is None:
        parts.append("not called")
    elif memory["device"] == "cuda":
        parts.append(f"peak {_mib(memory['peak_bytes'])} above the inputs, {_mib(memory['held_bytes'])} held after "
                     "the call (outputs" + (" and saved values)" if memory["plan"].get("saved_bytes") is not None
                                            else ")"))
    else:
        parts.append(f"temporaries {_mib(memory['temporary_peak_bytes'])} at most at once, outputs "
                     f"{_mib(memory['held_bytes'])}")
    p = memory["plan"]
    if p.get("saved_bytes") is not None:
        parts.append(f"saved for the backward {_mib(p['saved_bytes'])}")
    for name in ("forward", "backward"):
        g = p.get(name)
        if not g:
            continue
        s = (f"{name} workspace {_mib(g['workspace_bytes'])}: {g['placed']} temporaries of "
             f"{_mib(g['placed_bytes'])} placed by liveness")
        if g.get("hosted_bytes"):
            s += f" ({_mib(g['hosted_bytes'])} of them in output buffers, before the outputs are written)"
        if g["constant_bytes"]:
            s += f", constants {_mib(g['constant_bytes'])}"
        if g["runtime_sized"]:
            s += f", {g['runtime_sized']} more placed at each call (`?` dims)"
        if g["scratch_buffers"]:
            s += (f", {g['scratch_buffers']} more of {_mib(g['scratch_bytes'])} allocated around the steps "
                  "that use them")
        parts.append(s)
    return "; ".join(parts)
