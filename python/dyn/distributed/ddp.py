"""DistributedDataParallel around dyn-compiled code (docs/distributed.md).

DDP's own forward runs as PyTorch wrote it (its reducer's bookkeeping, no tensor math) and the module it
wraps is compiled as a frame of its own, whichever way round the user wrapped them. A training graph
captured inside DDP's forward is split where DDP's gradient buckets end, as TorchDynamo's DDPOptimizer
does: each piece is its own autograd node, so the gradients of the last layers are final, and their
bucket's all-reduce starts, while the backward of the earlier pieces still runs. One autograd node for
the whole graph would hand DDP every gradient at the end of the backward, with nothing left to overlap."""
import functools

import torch

from ..dynamic.symbolic import symbol_positions
from ..graph.graph import Graph


@functools.cache
def ddp_class():
    try:
        from torch.nn.parallel import DistributedDataParallel
    except ImportError:  # a build without torch.distributed
        return None
    return DistributedDataParallel


@functools.cache
def _fsdp_class():
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:
        return None
    return FSDPModule


def is_ddp_forward(func):
    cls = ddp_class()
    return cls is not None and func is cls.forward


def is_ddp_module(mod):
    cls = ddp_class()
    return cls is not None and isinstance(mod, cls)


def is_fsdp_module(mod):
    """A module that torch.distributed.fsdp.fully_shard manages (FSDP2): its hooks all-gather its
    parameters before forward and reshard them after (checked at every module call capture meets)."""
    cls = _fsdp_class()
    return cls is not None and isinstance(mod, cls)


def active_ddp():
    """The DDP module whose forward is running now (it sets this around the call of its module)."""
    cls = ddp_class()
    return None if cls is None else cls._get_active_ddp_module()


def _first_bucket_cap(cap):
    first = getattr(torch.distributed, "_DEFAULT_FIRST_BUCKET_BYTES", cap)
    return min(first, cap)


def bucket_starts(graph, examples, ddp):
    """Indices into graph.nodes where a new piece starts (ascending; [] for one piece). Parameters are
    counted in reverse graph order, as DDP fills its buckets in the order gradients become ready: the
    first bucket holds at most DDP's first-bucket bytes (1 MiB), later ones bucket_bytes_cap. A piece
    closes only once it holds a value a later piece or the output reads (else it would compute nothing
    for anyone); a parameter-free head is merged into the piece after it."""
    cap = int(getattr(ddp, "bucket_bytes_cap", 25 * 1024 * 1024))
    ignored = {id(p) for name, p in ddp.module.named_parameters()
               if name in getattr(ddp, "parameters_to_ignore", ())}
    params = {id(n): t for n, t in zip(graph.inputs, examples)
              if isinstance(t, torch.nn.Parameter) and t.requires_grad and id(t) not in ignored}
    if len(params) < 2:
        return []
    nodes = graph.nodes
    read_later = {id(o) for o in graph.outputs}  # values read by the pieces already closed, or returned
    pending = set()                              # values the open piece reads
    starts, size, external, counted = [], 0, False, set()
    for i in range(len(nodes) - 1, -1, -1):
        limit = _first_bucket_cap(cap) if not starts else cap
        if size >= limit and external:
            starts.append(i + 1)
            read_later |= pending
            pending, size, external = set(), 0, False
        n = nodes[i]
        external |= id(n) in read_later
        for x in n.inputs:
            pending.add(id(x))
            t = params.get(id(x))
            if t is not None and id(x) not in counted:
                counted.add(id(x))
                size += t.numel() * t.element_size()
    if starts and size == 0:  # the head reads no parameter: it joins the next piece
        starts.pop()
    # a multi-result call and its results stay together
    return sorted(s for s in starts if nodes[s].op != "torch_result")


def _differentiable(t):
    return t.is_floating_point() or t.is_complex()


class _Piece:
    """One piece of a split graph: its Graph, where each of its inputs comes from (("in", k): the
    graph's input k; ("v", id): a value an earlier piece returns) and the ids of the values it returns."""

    def __init__(self, graph, sources, returns):
        self.graph, self.sources, self.returns = graph, sources, returns


def split_graph(graph, starts):
    """graph cut into consecutive pieces at the node indices `starts`. Nodes without inputs that draw no
    random numbers (constants, factories) are copied into each piece that reads them."""
    nodes = graph.nodes
    bounds = [0] + list(starts) + [len(nodes)]
    piece_of = {}
    for p in range(len(bounds) - 1):
        for n in nodes[bounds[p]:bounds[p + 1]]:
            piece_of[id(n)] = p
    copied = {id(n) for n in nodes if not n.inputs and not n.attrs.get("seeded")}
    carriers = symbol_positions(graph.inputs) if graph.fake_mode is not None else {}
    input_pos = {id(n): k for k, n in enumerate(graph.inputs)}
    # the values each piece must return: read by a later piece, or an output of the graph
    needed = [dict() for _ in range(len(bounds) - 1)]
    for n in nodes:
        for x in n.inputs:
            p = piece_of.get(id(x))
            if p is not None and id(x) not in copied and p != piece_of[id(n)]:
                needed[p][id(x)] = x
    for o in graph.outputs:
        p = piece_of.get(id(o))
        if p is not None:
            needed[p][id(o)] = o
    pieces = []
    for p in range(len(bounds) - 1):
        g = Graph()
        g.device = graph.device
        g.fake_mode = graph.fake_mode  # symbolic sizes: the pieces print `?` dims as the graph does
        g.batch_hint = getattr(graph, "batch_hint", None)
        new, sources = {}, []

        def value(x):
            if id(x) in new:
                return new[id(x)]
            if id(x) in copied:
                new[id(x)] = g.add(x.op, [], x.meta, **x.attrs)
            else:
                if id(x) in input_pos:
                    src = graph.input_sources[input_pos[id(x)]]
                    sources.append(("in", input_pos[id(x)]))
                else:
                    src = f"piece {piece_of[id(x)]} value"
                    sources.append(("v", id(x)))
                new[id(x)] = g.add_input(x.meta, src)
            return new[id(x)]
        for n in nodes[bounds[p]:bounds[p + 1]]:
            if id(n) in copied:
                continue
            new[id(n)] = g.add(n.op, [value(x) for x in n.inputs], n.meta, **n.attrs)
        if carriers:  # symbolic sizes: each symbol a dim of a piece input (the graph's, read for its size alone)
            have = symbol_positions(g.inputs)
            for symbol, (k, _) in carriers.items():
                if symbol not in have:
                    value(graph.inputs[k])
        returns = list(needed[p])
        g.outputs = [value(needed[p][i]) for i in returns]
        pieces.append(_Piece(g, sources, returns))
    return pieces


class StagedKernel:
    """A training graph run as consecutive pieces, each compiled on its own (one autograd node each)."""
    trains = True

    def __init__(self, graph, pieces, kernels):
        self.pieces, self.kernels = pieces, kernels
        self.device_type = getattr(kernels[0], "device_type", None)
        self.stages = [(f"piece{p}.{s}", ir) for p, k in enumerate(kernels) for s, ir in getattr(k, "stages", ())]
        position = {id(n): k for k, n in enumerate(graph.inputs)}
        self.outputs = [("in", position[id(n)]) if id(n) in position else ("v", id(n)) for n in graph.outputs]

    def __call__(self, *inputs):
        values = {}
        for piece, kernel in zip(self.pieces, self.kernels):
            args = [inputs[k] if kind == "in" else values[k] for kind, k in piece.sources]
            for i, r in zip(piece.returns, kernel(*args)):
                values[i] = r
        return [inputs[k] if kind == "in" else values[k] for kind, k in self.outputs]


def staged_training(graph, examples, ddp, compile_piece, log, concrete=None):
    """A StagedKernel for a training graph captured inside DDP's forward, or None when it stays whole
    (one bucket's worth of parameters, or a piece that would not compile: the whole graph then compiles,
    or falls back, and is reported, as any other). concrete(shape): a shape with symbolic sizes at the
    examples' sizes (a graph with `?` dims: the example tensors of the values between pieces)."""
    starts = bucket_starts(graph, examples, ddp)
    if not starts:
        return None
    pieces = split_graph(graph, starts)
    grads = {id(n): bool(t.requires_grad and _differentiable(t)) for n, t in zip(graph.inputs, examples)}
    for n in graph.nodes:  # may carry a gradient: over-approximated (a value marked so that carries none is harmless)
        grads[id(n)] = any(grads.get(id(x), False) for x in n.inputs) and \
            (n.meta.is_floating_point() or n.meta.is_complex())
    device = next((t.device for t in examples), torch.device(graph.device or "cpu"))
    outputs = {id(o) for o in graph.outputs}
    kernels, channels_last = [], set()  # ids of the values a piece returns channels-last
    for piece in pieces:
        ex, cl_inputs = [], []
        for j, ((kind, k), n) in enumerate(zip(piece.sources, piece.graph.inputs)):
            if kind == "in":
                ex.append(examples[k])
            else:
                shape = concrete(n.meta.shape) if concrete is not None else n.meta.shape
                t = torch.empty(shape, dtype=n.meta.dtype, device=device)
                if k in channels_last:
                    cl_inputs.append(j)
                    t = t.contiguous(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
                ex.append(t.requires_grad_(grads[k]))
        # values only later pieces read cross in the layout they were computed in (channels-last between
        # convolutions), and so do their gradients: no transposes at the cuts
        free = [j for j, i in enumerate(piece.returns) if i not in outputs]
        kernel = compile_piece(piece.graph, ex, {"layout_free_outputs": free, "channels_last_inputs": cl_inputs})
        if kernel is None or kernel is piece.graph or not getattr(kernel, "trains", True):
            log(f"DDP bucket split abandoned: piece {len(kernels)} of {len(pieces)} does not compile")
            return None
        kernels.append(kernel)
        forward = getattr(kernel, "forward", None)
        channels_last |= {piece.returns[j] for j in getattr(forward, "channels_last", ()) if j < len(piece.returns)}
    log(f"training graph split at DDP's bucket boundaries into {len(pieces)} pieces "
        f"(nodes {[0] + starts}, bucket_bytes_cap {ddp.bucket_bytes_cap})")
    return StagedKernel(graph, pieces, kernels)
