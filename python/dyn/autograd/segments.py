"""The compiled training functions run step by step on the GPU, so that their memory follows eager's.

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

An extension built without torch's headers has no `run_held` (nor the library calls a real model's GEMMs
need): its functions run whole, with no scratch buffers."""
import torch

from ..launch import _ready, raw_stream
from ..native import C as _C

# whether this extension runs compiled GPU functions step by step
HELD = hasattr(getattr(_C, "CompiledGpu", None), "run_held")

# temporaries of a CUDA backward at least this large are scratch buffers allocated and dropped around their steps
# (ResNet-50's training step at batch 8 peaked at 718.5 MiB with 4 MiB, 710.6 with 1 MiB; eager 718.9; BERT-base
# 616 -> 611 MiB, eager 608)
SCRATCH_MIN_BYTES = (1 << 20) if HELD else 0

# a forward with at least this many outputs (its saved values) runs step by step: its first kernel starts after
# its first output's allocation; one with fewer runs whole (nothing to gain)
FORWARD_MIN_OUTPUTS = 32


def usable(part):
    """Whether `part` (a compiled _Part, a backward) runs step by step: a static CUDA function with steps."""
    return HELD and part.device.type == "cuda" and not part.buffer_dims and part.compiled.num_launches > 0


def forward_usable(part):
    """Whether a forward `part` runs step by step: as usable(), with many outputs and no scratch buffers."""
    return usable(part) and not part.scratch and len(part.specs) >= FORWARD_MIN_OUTPUTS


def run(part, inputs, taken=None):
    """The outputs of `part` on `inputs`, a list this call takes over (emptied: its references are dropped as
    the last steps reading them run). `taken`: {output: the tensor it is written into} (an input the function
    updates in place, dyn.updates_arg)."""
    for j, perm in part.reads:
        inputs[j] = inputs[j].permute(perm)
    inputs[:] = _ready(inputs, part.device)
    held = getattr(part, "_held_specs", None)
    if held is None:
        held = part._held_specs = [(tuple(s), tuple(st), d) for s, st, d in part.specs]
    device = part.device
    index = torch.cuda.current_device() if device.index is None else device.index
    with torch.cuda.device(index):
        outs = part.compiled.run_held(inputs, held, taken or None, raw_stream(device), index)
    for k, perm in part.views:
        outs[k] = outs[k].permute(perm)
    return outs
