"""mode="reduce-overhead" on CUDA: a compiled graph's launch plan recorded once as a CUDA graph and
replayed, so that a call costs a few copies and one graph launch instead of a driver launch per kernel
and an ATen dispatch per library call (torch.compile's "reduce-overhead" does the same for inductor's
kernels with its cudagraph trees).

What keeps a replay right:
- The graph reads and writes the addresses it was recorded with. An input whose address was the same in
  the two calls before the recording (parameters and buffers: module state) is read in place, and every
  replay checks that this call's input is still there; every other input is copied into a buffer of the
  graph's own first.
- Outputs are the graph's own buffers, rewritten by the next replay: each call returns copies, since a
  caller may keep the outputs of several calls.
- The workspace (temporaries, and the dense constants, uploaded once before the recording) and the seed
  of random ops (copied in at each call) are the graph's own.
A call the graph cannot serve (an input read in place found at another address) runs through the launch
plan as it would without the mode; a recording that fails (a library call that synchronizes) warns once
and leaves the kernel on the launch plan.

Like inductor's, a replay is stream-ordered on torch's current stream: calls of one compiled function
issued concurrently from several streams share the graph's buffers."""
import warnings

import torch

from .launch import raw_stream
from .session import current


class GraphReplay:
    """The CUDA graph of one DynCUDAKernel: call it with a call's inputs; None means "not served, run the
    launch plan"."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.seen = None      # the input addresses of the call before the recording
        self.graph = None     # torch.cuda.CUDAGraph once recorded
        self.off = False      # recording failed or cannot work for these inputs

    def __call__(self, inputs):
        if self.off:
            return None
        k = self.kernel
        try:
            ins = k._inputs(inputs)
        except RuntimeError:
            return None  # the launch plan says what is wrong
        if self.graph is None:
            return self._record(ins)
        for i in self.in_place:
            if ins[i].data_ptr() != self.addresses[i]:
                current().count("cuda_graph_misses")
                return None
        for i in self.copied:
            self.inputs[i].copy_(ins[i])
        if self.seed is not None:
            self.seed.copy_(k._seed(self.device)[0])
        self.graph.replay()
        current().count("cuda_graph_replays")
        return [o.clone() for o in self.outputs]

    def _record(self, ins):
        """The first call warms up (module loads, library handles) and notes the input addresses; the
        second records the graph and replays it for its own outputs."""
        k = self.kernel
        addresses = [t.data_ptr() for t in ins]
        if self.seen is None:
            self.seen = addresses
            return None
        self.device = ins[0].device if ins else torch.device("cuda", torch.cuda.current_device())
        self.addresses = addresses
        self.in_place = [i for i, (a, b) in enumerate(zip(addresses, self.seen)) if a == b and a % 16 == 0]
        self.copied = [i for i in range(len(ins)) if i not in self.in_place]
        if any(k.layouts[i] is not None for i in self.copied):
            self.off = True  # a strided input read in place that moves: no buffer of the graph's own for it
            return None
        self.inputs = list(ins)
        for i in self.copied:  # fresh contiguous buffers: 16-byte aligned by torch's allocator
            self.inputs[i] = torch.empty_like(ins[i], memory_format=torch.contiguous_format)
            self.inputs[i].copy_(ins[i])
        self.seed = k._seed(self.device)[0].clone() if k.seeded else None
        self.outputs, written = k._outputs(self.device)
        size = k.compiled.workspace_bytes
        self.workspace = torch.empty(size, dtype=torch.uint8, device=self.device) if size else None
        ws = self.workspace.data_ptr() if size else 0
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.device(self.device):
                k.compiled.upload_constants(raw_stream(self.device), ws)
                with torch.cuda.graph(graph):
                    k.compiled.run(self.inputs + ([self.seed] if self.seed is not None else []), written,
                                   raw_stream(self.device), ws,
                                   upload_constants=False)
        except Exception as e:  # noqa: BLE001 - any failure to record leaves the launch plan in charge
            self.off = True
            self.outputs = self.inputs = self.workspace = None
            warnings.warn(f"dyn: mode='reduce-overhead' could not record a CUDA graph, launching each "
                          f"kernel instead: {str(e)[:300]}", stacklevel=4)
            return None
        self.graph = graph
        current().count("cuda_graphs")
        self.graph.replay()
        current().count("cuda_graph_replays")
        return [o.clone() for o in self.outputs]
