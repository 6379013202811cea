"""The compiled backward run step by step on the GPU, so that its memory follows eager's.

One call of a compiled backward reads every saved value and writes every gradient. Run as one launch plan,
all of its outputs are allocated before the first kernel and all of its inputs live until the last one, so
its peak holds every saved activation and every gradient at once, where eager's backward frees each saved
tensor after the node that reads it and allocates each gradient when its node runs. Here the plan runs in
ranges of its steps (the launches and library calls, `buffer_steps` giving each buffer's first and last):
each gradient is allocated right before the first step that writes it and each input dropped right after
the last step that reads it (`run_held`, in C++: a few microseconds a buffer). With
`ctx.maybe_clear_saved_tensors()` (when the graph is not retained, as AOTAutograd does) the list it takes
holds the only references to the saved values, so their memory returns to torch's caching allocator, which
reuses it, stream-ordered, for the gradients and the engine's later tensors; nothing synchronizes. A
training forward with many outputs (its saved values) runs so too: its first kernel starts after its first
output's allocation, not after all of them (ResNet-50's at batch 256 returns ~400 tensors).

The small temporaries live in one workspace, held from the first step that uses it to the last (the last
steps of a backward, which write the largest parameter gradients, often use none of it); the large ones (a
layer's activation gradient) would all be held from the backward's start, beside every saved value. They
are compiled as scratch buffers of their own instead (compile_gpu's scratch_min_bytes), allocated and
dropped around their steps as the outputs and inputs are.

Without `run_held` (an extension built without torch's headers) the plan runs in parts from Python: a part
ends before a step that allocates once enough input bytes have died, or once its own allocations reach a
sixteenth of the call's buffers (64 MiB at most, unless that makes more than 256 parts)."""
import torch

from ..launch import EMPTY_STRIDED_CUDA, _ready, raw_stream


# run step by step in C++ where the extension has it (run_held); False: the parts below, from Python
HELD = True

# a part ends once it allocates, or follows the death of, this share of a call's input, output and scratch bytes
# (at least MIN_PART_BYTES, at most MAX_PART_BYTES: what a part allocates before the inputs it reads last are
# dropped is held beside them, so a large backward gets more parts, not larger ones; but at most MAX_PARTS, each a
# host call: the seed's batch-256 backward moves tens of GB)
PARTS = 16
MIN_PART_BYTES = 1 << 20
MAX_PART_BYTES = 64 << 20
MAX_PARTS = 256
# temporaries of a CUDA backward at least this large are scratch buffers allocated and dropped around their steps
# (run step by step, ResNet-50's training step at batch 8 peaked at 718.5 MiB with 4 MiB, 710.6 with 1 MiB; eager
# 718.9; BERT-base 616 -> 611 MiB, eager 608)
SCRATCH_MIN_BYTES = 1 << 20


def plan(buffer_steps, num_steps, in_bytes, out_bytes, scratch=()):
    """[(begin, end, outputs to allocate before, inputs to drop after, scratch buffers to allocate before,
    scratch buffers to drop after)] covering steps [0, num_steps), from each buffer's (first, last) step
    (inputs, then outputs, flattened: the compiled function's buffer_steps), the bytes of the inputs and the
    outputs, and the scratch buffers' (bytes, first, last), flattened (the compiled function's scratch)."""
    n_in = len(in_bytes)
    first = [buffer_steps[2 * (n_in + k)] for k in range(len(out_bytes))]
    last = [buffer_steps[2 * j + 1] for j in range(n_in)]
    alloc_at, free_at, s_alloc_at, s_free_at = {}, {}, {}, {}
    for k, s in enumerate(first):
        alloc_at.setdefault(max(s, 0), []).append(k)  # an output no step writes: allocated at the start
    for j, s in enumerate(last):
        free_at.setdefault(s, []).append(j)  # -1: an input no step reads, dropped before the first part
    s_bytes = list(scratch[0::3])
    for i, (s, e) in enumerate(zip(scratch[1::3], scratch[2::3])):
        s_alloc_at.setdefault(s, []).append(i)
        s_free_at.setdefault(e, []).append(i)
    total = sum(in_bytes) + sum(out_bytes) + sum(s_bytes)
    limit = max(min(total // PARTS, MAX_PART_BYTES), total // MAX_PARTS, MIN_PART_BYTES)
    cuts, dead, allocated = [0], 0, 0
    for s in range(num_steps):
        new = sum(out_bytes[k] for k in alloc_at.get(s, ())) + sum(s_bytes[i] for i in s_alloc_at.get(s, ()))
        if s > cuts[-1] and new and (dead >= limit or allocated + new > limit):
            cuts.append(s)
            dead = allocated = 0
        allocated += new
        dead += sum(in_bytes[j] for j in free_at.get(s, ())) + sum(s_bytes[i] for i in s_free_at.get(s, ()))
    cuts.append(num_steps)
    parts = []
    for i in range(len(cuts) - 1):
        b, e = cuts[i], cuts[i + 1]
        alloc = [k for s in range(b, e) for k in alloc_at.get(s, ())]
        free = [j for s in range(b, e) for j in free_at.get(s, ())]
        if i == 0:
            free = free_at.get(-1, []) + free
        s_alloc = [k for s in range(b, e) for k in s_alloc_at.get(s, ())]
        s_free = [k for s in range(b, e) for k in s_free_at.get(s, ())]
        parts.append((b, e, alloc, free, s_alloc, s_free))
    return parts


# A forward's parts: the first allocates the outputs of its steps until this share of the call's output bytes,
# each next one twice as much (the last the rest), so its first kernel starts after a few allocations, not
# after all of them (ResNet-50's training forward at batch 256 returns ~400 tensors, its saved values, which
# took 2 ms to allocate before the first kernel); only a forward of at least FORWARD_MIN_OUTPUTS outputs and
# FORWARD_MIN_BYTES of them, whose kernels outlast the allocations (at batch 8 the corpus's CNNs are host-bound:
# there parts only add calls)
FORWARD_FIRST_SHARE = 64
FORWARD_MIN_OUTPUTS = 32
FORWARD_MIN_BYTES = 1 << 30


def forward_plan(buffer_steps, num_steps, n_in, out_bytes):
    """plan()'s parts for a forward: no input is dropped (the caller holds them), outputs are allocated before
    the part that first uses them, and the parts grow geometrically in the output bytes they allocate."""
    first = [buffer_steps[2 * (n_in + k)] for k in range(len(out_bytes))]
    alloc_at = {}
    for k, s in enumerate(first):
        alloc_at.setdefault(max(s, 0), []).append(k)
    limit = max(sum(out_bytes) // FORWARD_FIRST_SHARE, MIN_PART_BYTES)
    cuts, allocated = [0], 0
    for s in range(num_steps):
        new = sum(out_bytes[k] for k in alloc_at.get(s, ()))
        if s > cuts[-1] and new and allocated + new > limit:
            cuts.append(s)
            allocated, limit = 0, 2 * limit
        allocated += new
    cuts.append(num_steps)
    return [(b, e, [k for s in range(b, e) for k in alloc_at.get(s, ())], [], [], []) for b, e in zip(cuts, cuts[1:])]


def forward_usable(part):
    """Whether a forward `part` (a compiled _Part) runs in parts: static CUDA, many outputs, more than one part."""
    if part.device.type != "cuda" or part.buffer_dims or part.scratch or \
            len(part.specs) < FORWARD_MIN_OUTPUTS or not hasattr(part.compiled, "run_steps") or \
            not part.compiled.num_launches:
        return False
    if HELD and hasattr(part.compiled, "run_held"):  # its outputs allocated one by one between the launches
        return True
    parts = getattr(part, "_forward_segments", None)
    if parts is None:
        out_bytes = [torch.Size(s).numel() * torch.empty((), dtype=d).element_size() for s, _, d in part.specs]
        parts = part._forward_segments = forward_plan(list(part.compiled.buffer_steps), part.compiled.num_launches,
                                                      part.num_inputs, out_bytes) \
            if sum(out_bytes) >= FORWARD_MIN_BYTES else ()  # (too small: run whole)
    return len(parts) > 1


def usable(part):
    """Whether `part` (a compiled _Part) can run so: a static CUDA function held step by step (run_held), or
    with more than one part."""
    if part.device.type != "cuda" or part.buffer_dims or not hasattr(part.compiled, "run_steps") or \
            not part.compiled.num_launches:
        return False
    if HELD and hasattr(part.compiled, "run_held"):
        return True
    parts = getattr(part, "_segments", None)
    # a function with scratch buffers runs only so (its whole-call entry takes no scratch pointers)
    return parts is None or len(parts) > 1 or bool(part.scratch)


def _held(part, inputs, taken):
    """run()'s outputs step by step in C++: each buffer held only while its steps run (`inputs` emptied)."""
    held = getattr(part, "_held_specs", None)
    if held is None:
        held = part._held_specs = [(tuple(s), tuple(st), d) for s, st, d in part.specs]
    device = part.device
    index = torch.cuda.current_device() if device.index is None else device.index
    with torch.cuda.device(index):
        return part.compiled.run_held(inputs, held, taken or None, raw_stream(device), index)


def run(part, inputs, parts=None, taken=None):
    """The outputs of `part` (the backward's _Part) on `inputs`, a list this call takes over: its entries are
    dropped (set to None) once no later step reads them. `parts`: another plan (forward_plan's); `taken`:
    {output: the tensor it is written into} (an input the function updates in place, dyn.updates_arg)."""
    compiled, device, specs = part.compiled, part.device, part.specs
    for j, perm in part.reads:
        inputs[j] = inputs[j].permute(perm)
    inputs[:] = _ready(inputs, device)
    if HELD and hasattr(compiled, "run_held"):
        outs = _held(part, inputs, taken)
        for k, perm in part.views:
            outs[k] = outs[k].permute(perm)
        return outs
    n_in = len(inputs)
    parts = parts or getattr(part, "_segments", None)
    if parts is None:
        out_bytes = [torch.Size(s).numel() * torch.empty((), dtype=d).element_size() for s, _, d in specs]
        parts = part._segments = plan(list(compiled.buffer_steps), compiled.num_launches,
                                      [t.untyped_storage().nbytes() for t in inputs], out_bytes, part.scratch)
    scratch = part.scratch
    n_out = len(specs)
    ptrs = [t.data_ptr() for t in inputs] + [0] * (n_out + len(scratch) // 3)
    outs = [None] * n_out
    for k, t in (taken or {}).items():
        outs[k] = t
        ptrs[n_in + k] = t.data_ptr()
    held = {}  # scratch buffers allocated and not yet dropped
    size = compiled.workspace_bytes
    # the workspace is held from the part of its first step to the part of its last (a backward's last
    # parts, which allocate the largest gradients, often use none of it)
    ws_first, ws_last = getattr(compiled, "workspace_steps", (0, 1 << 62))
    workspace, ws = None, 0
    with torch.cuda.device(device):
        # on the current device, without Python argument parsing where the torch build has it (as _Part's)
        empty = EMPTY_STRIDED_CUDA or (lambda s, st, d: torch.empty_strided(s, st, dtype=d, device=device))
        stream = raw_stream(device)
        for begin, end, alloc, free, s_alloc, s_free in parts:
            for k in alloc:
                if outs[k] is None:
                    outs[k] = empty(*specs[k])
                    ptrs[n_in + k] = outs[k].data_ptr()
            for i in s_alloc:
                held[i] = empty((scratch[3 * i],), (1,), torch.uint8)
                ptrs[n_in + n_out + i] = held[i].data_ptr()
            if size and workspace is None and begin <= ws_last and ws_first < end:
                workspace = torch.empty(size, dtype=torch.uint8, device=device)
                ws = workspace.data_ptr()
            compiled.run_steps(ptrs, stream, ws, begin, end)
            if workspace is not None and end > ws_last:  # stream-ordered reuse, as the scratch buffers'
                workspace, ws = None, 0
            for j in free:
                inputs[j] = None
                ptrs[j] = 0
            for i in s_free:  # the caching allocator reuses it, stream-ordered, for the next parts
                del held[i]
                ptrs[n_in + n_out + i] = 0
    for k, perm in part.views:
        outs[k] = outs[k].permute(perm)
    return outs
