"""A training graph compiled by dyn: its forward and backward functions and the autograd node that runs them.

The graph is printed with its differentiable inputs marked, differentiated and partitioned by the core
(split.py), and the two functions are compiled for the graph's device. Each call is one
torch.autograd.Function node: the forward kernel computes the results and the values the backward needs
(those that are forward inputs are not copied: the inputs themselves are saved), the backward kernel
computes every differentiable input's gradient from them and the results' cotangents.

With symbolic sizes (docs/dynamic_shapes.md) the two functions have `?` dims and are compiled once: each call
sizes the forward's results from expressions over its inputs' sizes that dyn-graph-partition gives
(`dyn.result_sizes`), the backward's results (the gradients) from the differentiable inputs' sizes recorded
at the forward, and passes each compiled function the runtime sizes its `buffer_sizes` lists."""
import math
import os
import re

import torch

from ..launch import (EMPTY_STRIDED_CPU, EMPTY_STRIDED_CUDA, compile_native, contiguous_strides, dump_stages,
                      gpu_target, run_compiled)
from ..graph.random import draw_seed, has_random
from ..native import C as _C
from ..session import current
from . import segments, split


class DifferentiationError(RuntimeError):
    """The core could not differentiate the graph (an op without a derivative rule, say)."""


class SymbolicTrainingError(Exception):
    """A training graph with `?` dims that the runtime cannot size (a saved value whose sizes are not a
    function of the inputs' sizes); the capture then specializes the sizes."""


def _sizes_function(exprs):
    """sizes(inputs) -> [shape per result] from per-result lists of Python expressions over `s[k][i]`
    (dyn.result_sizes). Generated Python."""
    used = sorted({int(k) for row in exprs for e in row for k in re.findall(r"s\[(\d+)\]", e)})
    lines = ["def sizes(ins):"] + [f"    s{k} = ins[{k}].shape" for k in used]
    rows = ["(" + "".join(re.sub(r"s\[(\d+)\]", r"s\1", e) + ", " for e in row) + ")" for row in exprs]
    lines.append("    return [" + ", ".join(rows) + "]")
    ns = {"math": math}
    exec(compile("\n".join(lines), "<dyn training sizes>", "exec"), ns)
    return ns["sizes"]


def _to_channels_last(rank):
    """The permutation from [N, C, *spatial] to [N, *spatial, C]."""
    return (0, *range(2, rank), 1)


def _from_channels_last(rank):
    return (0, rank - 1, *range(1, rank - 1))


class _Part:
    """One compiled function of the split: fresh outputs of its result types, written by the kernels.
    Results listed by the compiled function's `channels_last_results` are written [N, *spatial, C] and
    returned as torch's channels-last tensors; inputs listed in `channels_last_inputs` are read so. Where
    results have `?` dims, `sizes(inputs)` gives their shapes (or each call passes them), and the runtime
    sizes the compiled function asks for are read from its buffers."""

    def __init__(self, ir, name, device, specs, num_inputs, keep, channels_last_inputs=(), sizes=None,
                 scratch_min_bytes=0):
        self.device = device
        n = num_inputs + len(specs)
        if device.type == "cuda":
            self.compiled = compile_native(_C.compile_gpu, ir, name, keep, n, gpu_target(device), scratch_min_bytes)
            # (bytes, first step, last step) per scratch temporary, read once: the parts allocate them per call
            self.scratch = list(self.compiled.scratch)
        else:
            self.compiled = compile_native(_C.compile, ir, name, keep, 3, n)
            self.scratch = []
        self.channels_last = set(self.compiled.channels_last_results)
        pairs = list(self.compiled.buffer_sizes)
        self.buffer_dims = list(zip(pairs[0::2], pairs[1::2]))
        self.dynamic = any(d is None for s, _ in specs for d in s)
        self.sizes = sizes
        self.dtypes = [d for _, d in specs]
        self.perms = {k: _to_channels_last(len(specs[k][0])) for k in self.channels_last}
        # (shape, strides, dtype) per output; with `?` dims None where a dim is `?` (sized at each call)
        self.specs = []
        for k, (s, d) in enumerate(specs):
            if any(x is None for x in s):
                self.specs.append(None)
                continue
            if k in self.channels_last:
                s = tuple(s[i] for i in _to_channels_last(len(s)))
            self.specs.append((s, contiguous_strides(s), d))
        self.sized = [k for k, spec in enumerate(self.specs) if spec is None]
        self.views = [(k, _from_channels_last(len(specs[k][0]))) for k in sorted(self.channels_last)]
        self.reads = [(j, _to_channels_last(r)) for j, r in channels_last_inputs]
        # (result, input) pairs the fusion writes in place (dyn.updates_arg): the input is the result's buffer
        self.aliases = [(k, j) for k, j in enumerate(getattr(self.compiled, "in_place", ())) if j >= 0]
        self.cuda_index = device.index if device.type == "cuda" else None
        self.num_inputs = num_inputs
        self.size_only = ()  # inputs whose values the function never reads (a backward's sized cotangents)

    def __call__(self, inputs, shapes=None):
        if not self.dynamic and segments.forward_usable(self):  # CUDA: outputs allocated step by step
            return segments.run(self, list(inputs), self._taken(inputs))
        if self.dynamic:  # the outputs with `?` dims sized from this call's inputs
            shapes = self.sizes(inputs) if shapes is None else shapes
            specs = list(self.specs)
            for k in self.sized:
                s = shapes[k]
                if k in self.perms:
                    s = tuple(s[i] for i in self.perms[k])
                specs[k] = (s, contiguous_strides(s), self.dtypes[k])
        else:
            specs = self.specs
        outs = _allocate(specs, self.device, self.cuda_index, self._taken(inputs))
        if self.reads:  # the caller's list stays as it was (the forward saves its inputs from it)
            inputs = list(inputs)
        for j, perm in self.reads:
            inputs[j] = inputs[j].permute(perm)
        sizes = ()
        if self.buffer_dims:
            buffers = list(inputs) + outs
            sizes = [buffers[b].shape[d] for b, d in self.buffer_dims]
        if self.size_only:  # read for their sizes alone (taken above): their one-element storage is passed
            inputs = list(inputs)
            for j in self.size_only:
                inputs[j] = torch.as_strided(inputs[j], (1,), (1,))
        run_compiled(self.compiled, self.device, inputs, outs, sizes=sizes)
        for k, perm in self.views:
            outs[k] = outs[k].permute(perm)
        return outs

    def _taken(self, inputs):
        """{output: the input it updates in place (dyn.updates_arg)}, where the input is contiguous (16-byte
        aligned on the GPU), as the code reads it: written there, not into a fresh output."""
        taken = {}
        for k, j in self.aliases:
            t = inputs[j]
            if t.is_contiguous() and (self.cuda_index is None or t.data_ptr() % 16 == 0):
                taken[k] = t
        return taken


def _allocate(specs, device, cuda_index, taken):
    """Fresh tensors of (shape, strides, dtype) specs, taken[k] where given: through torch's allocation calls
    without Python argument parsing where the torch build has them (a few microseconds less per output)."""
    if device.type == "cpu" and EMPTY_STRIDED_CPU is not None:
        empty = EMPTY_STRIDED_CPU
    elif EMPTY_STRIDED_CUDA is not None and cuda_index is not None and cuda_index == torch.cuda.current_device():
        empty = EMPTY_STRIDED_CUDA  # allocates on the current device
    else:
        return [taken[k] if k in taken else torch.empty_strided(s, st, dtype=d, device=device)
                for k, (s, st, d) in enumerate(specs)]
    if taken:
        return [taken[k] if k in taken else empty(s, st, d) for k, (s, st, d) in enumerate(specs)]
    return [empty(s, st, d) for s, st, d in specs]


class TrainingKernel:
    """Compiled forward and backward of a graph whose inputs listed in `requires_grad` are differentiated.
    Calling it runs the forward as one autograd node whose outputs are those that carry a gradient; the others
    are returned beside it as plain tensors, and outputs that update an input (batch norm's running statistics)
    are written into it where the fusion allows (the runner then bumps its version counter)."""
    device_type = None
    trains = True  # explain: "dyn (<device>, forward and backward)"

    def __init__(self, graph, example_inputs, requires_grad, keep_stages=False, symbolic=False, memory_budget=None,
                 layout_free_outputs=(), channels_last_inputs=()):
        """layout_free_outputs: graph outputs the caller takes in the layout they were computed in (a DDP
        piece's values for the next piece); channels_last_inputs: graph inputs the caller passes channels-last
        where it can (such values of an earlier piece), read so, their gradients returned so where computed so.
        Both are hints: a tensor in another layout is converted on the way in, as any non-contiguous input."""
        self.graph = graph
        devices = {t.device for t in example_inputs}
        self.device = devices.pop() if devices else torch.device(graph.device or "cpu")
        self.device_type = self.device.type
        self.seeded = has_random(graph)
        self.wrt = [k for k, r in enumerate(requires_grad) if r]
        text = graph.mlir("train", requires_grad=requires_grad)
        try:
            joint, parts = split.differentiate(text, memory_budget)
        except RuntimeError as e:
            raise DifferentiationError(str(e)) from None
        fns = split.functions(parts)
        fw_sig, fw_ir = fns["train_forward"]
        bw_sig, bw_ir = fns["train_backward"]
        self.num_outputs = len(graph.outputs)
        self.saved = split.int_array(bw_sig, "dyn.saved")
        self.differentiable = split.int_array(bw_sig, "dyn.differentiable")
        debug = os.environ.get("DYN_COMPILE_DEBUG") == "1"
        keep = keep_stages or debug
        n_in = len(graph.inputs) + self.seeded
        fw_specs = split.result_specs(fw_sig)
        bw_specs = split.result_specs(bw_sig)
        self.dynamic = any(d is None for sh, _ in fw_specs + bw_specs for d in sh)
        fw_sizes = None
        if self.dynamic:
            if not symbolic:
                raise SymbolicTrainingError("the forward or backward function has dynamic dims")
            fw_sizes = _sizes_function(self._result_sizes(fw_sig, fw_specs))
        # saved values only the backward reads may stay in the layout the forward computed them in
        # (channels-last between convolutions): the backward then reads them so (with `?` dims too)
        free = sorted({-1 - c for c in self.saved if c < 0 and -1 - c >= self.num_outputs
                       and len(fw_specs[-1 - c][0]) in (4, 5)} |
                      {k for k in layout_free_outputs if len(fw_specs[k][0]) in (4, 5)})
        cl_inputs = [] if self.dynamic else \
            [(j, len(example_inputs[j].shape)) for j in sorted(set(channels_last_inputs))
             if len(example_inputs[j].shape) in (4, 5)]
        if free:
            fw_ir = split.with_attribute(fw_ir, "dyn.layout_free_results", free)
        if cl_inputs:
            fw_ir = split.with_attribute(fw_ir, "dyn.channels_last_args", [j for j, _ in cl_inputs])
        updates = self._in_place_updates(requires_grad)
        if updates:
            fw_ir = split.with_result_attributes(fw_ir, "dyn.updates_arg", updates)
        self.forward = _Part(fw_ir, "train_forward", self.device, fw_specs, n_in, keep, cl_inputs, sizes=fw_sizes)
        self._slots = list(self.differentiable)  # the outputs the autograd node returns, in the backward's order
        self._bw = (bw_ir, bw_specs, keep, dict(cl_inputs), fw_specs)
        # Backward variants by the outputs whose cotangent autograd passes as None (zero_outputs): compiled
        # without those arguments (dyn-graph-zero-cotangents; one with `?` dims keeps its argument for its
        # sizes, and the call passes one element for it). Graphs whose cotangents are plain tensors take None
        # (late_zeros); the first variant is the likely one: a graph returning a scalar loss beside other
        # outputs (an LM's logits, its key/value cache) is mostly differentiated through the loss alone.
        self._variants = {}
        self.late_zeros = not set(self._slots) & self.forward.channels_last
        likely = frozenset(k for k in self._slots if fw_specs[k][0] != ()) \
            if self.late_zeros and any(fw_specs[k][0] == () for k in self._slots) else frozenset()
        self._chosen = {}  # the None pattern of a backward call -> the variant it runs
        self._size_carriers = {}  # dtype -> the one element a sized-only zero cotangent expands
        self.backward = None  # (set first: _backward_variant dumps the variants compiled later)
        self.backward = self._backward_variant(likely)
        self.stages = [("training", text), ("joint", joint), ("forward", fw_ir),
                       ("backward", self.backward.ir)]
        if keep:
            self.stages += [("forward." + s, ir) for s, ir in self.forward.compiled.stages]
            self.stages += [("backward." + s, ir) for s, ir in self.backward.compiled.stages]
        counters = current().counters
        counters["graphs_compiled"] += 1
        if self.dynamic:
            counters["dynamic_graphs_compiled"] += 2
        counters["compile_seconds"] += self.forward.compiled.compile_seconds
        if debug:
            dump_stages(self.stages)

    def _backward_variant(self, zero):
        """The backward compiled for the outputs in `zero` getting no cotangent (a _Part with `.cotangents`,
        the outputs whose cotangents it takes, in order, and `.ir`), compiled once per such set."""
        part = self._variants.get(zero)
        if part is not None:
            return part
        bw_ir, bw_specs, keep, cl_in, fw_specs = self._bw
        kept = list(self.differentiable)
        if zero:
            bw_ir = _C.lower(bw_ir, "func.func(dyn-graph-zero-cotangents{outputs=%s})" % ",".join(map(str, sorted(zero))))
            sig = split.functions(bw_ir)["train_backward"][0]
            kept = split.int_array(sig, "dyn.differentiable")
            # cotangents with `?` dims stay arguments for their sizes alone: any tensor of the shape will do
            sized = split.int_array(sig, "dyn.sized_cotangents") if "dyn.sized_cotangents" in sig else []
        else:
            sized = []
        # the backward reads channels-last what the forward produced or took so: saved results and inputs, and
        # the cotangents of outputs returned so (autograd may hand those over in any layout: converted then)
        cl_reads = [(j, len(fw_specs[-1 - c][0])) for j, c in enumerate(self.saved)
                    if c < 0 and -1 - c in self.forward.channels_last]
        cl_reads += [(j, cl_in[c]) for j, c in enumerate(self.saved) if c >= 0 and c in cl_in]
        cl_reads += [(len(self.saved) + j, len(fw_specs[k][0])) for j, k in enumerate(kept)
                     if k in self.forward.channels_last]
        if cl_reads:
            bw_ir = split.with_attribute(bw_ir, "dyn.channels_last_args", sorted(j for j, _ in cl_reads))
        cl_grads = [r for r, k in enumerate(self.wrt) if k in cl_in]
        if cl_grads:
            bw_ir = split.with_attribute(bw_ir, "dyn.layout_free_results", cl_grads)
        # on CUDA its large temporaries are buffers of their own allocated and dropped around their steps
        # (segments.py), as eager's backward does with each layer's gradients
        part = _Part(bw_ir, "train_backward", self.device, bw_specs, len(self.saved) + len(kept), keep, cl_reads,
                     scratch_min_bytes=segments.SCRATCH_MIN_BYTES)
        part.cotangents, part.ir, part.sized_only = kept, bw_ir, frozenset(sized)
        part.size_only = [len(self.saved) + kept.index(k) for k in sized]
        self._variants[zero] = part
        counters = current().counters
        counters["graphs_compiled"] += 1
        counters["backward_graphs"] += 1
        counters["compile_seconds"] += part.compiled.compile_seconds
        if self.backward is not None and os.environ.get("DYN_COMPILE_DEBUG") == "1":  # a variant compiled later
            name = "backward" + "".join(f"_zero{k}" for k in sorted(zero))
            dump_stages([(name, bw_ir)] + [(f"{name}.{s}", ir) for s, ir in part.compiled.stages])
        return part

    def backward_for(self, grads, shapes=None):
        """(the backward variant, its cotangent inputs) for the cotangents autograd passed (None for an output
        it gives none): the compiled variant that drops the most of the None ones, else one compiled now for
        exactly those; zeros for the None ones it takes."""
        none = frozenset(k for k, g in zip(self._slots, grads) if g is None)
        part = self._chosen.get(none)
        if part is None:
            best = max((z for z in self._variants if z <= none), key=len, default=None)
            part = self._chosen[none] = self._variants[best] if best is not None else self._backward_variant(none)
        if not none:  # every cotangent given: the full variant, in the slots' order
            return part, list(grads)
        given = dict(zip(self._slots, grads))
        return part, [given[k] if given[k] is not None else self._zero_cotangent(part, k, shapes)
                      for k in part.cotangents]

    def _zero_cotangent(self, part, k, shapes):
        """The cotangent of output k that autograd gave as None, for a variant that takes it: zeros; for one
        that reads only its sizes (`?` dims, dyn.sized_cotangents), one element expanded to the shape (the
        call passes that element: no memory of the output's size)."""
        if self.dynamic:
            shape, dtype = shapes[self._slots.index(k)], self.forward.dtypes[k]
        else:
            shape, _, dtype = self.forward.specs[k]
        if k in part.sized_only:  # (never read: one element per dtype serves every call)
            one = self._size_carriers.get(dtype)
            if one is None:
                one = self._size_carriers[dtype] = torch.empty((), dtype=dtype, device=self.device)
            return one.expand(shape)
        return torch.zeros(shape, dtype=dtype, device=self.device)

    def _in_place_updates(self, requires_grad):
        """{forward result k: input j} for the graph outputs that update an input (graph.updates, capture's
        candidates) which the fusion may write into the input itself: not an input that carries a gradient
        or that the backward reads, nor a result that carries one or is saved (dyn.saved)."""
        position = {id(n): j for j, n in enumerate(self.graph.inputs)}
        saved = set(self.saved)
        return {k: position[id(n)] for k, n in (getattr(self.graph, "updates", None) or {}).items()
                if k < self.num_outputs and k not in self.differentiable and -1 - k not in saved
                and id(n) in position and not requires_grad[position[id(n)]] and position[id(n)] not in saved}

    def _result_sizes(self, fw_sig, fw_specs):
        """Each forward result's sizes as expressions over the forward's inputs' (`s[k][i]`): the core's,
        else, for a graph output, its symbolic sizes from capture; SymbolicTrainingError where a saved value's
        are neither."""
        exprs = split.result_sizes(fw_sig) or [[str(d) for d in sh] for sh, _ in fw_specs]
        for k, row in enumerate(exprs):
            if all(e is not None for e in row):
                continue
            if k >= self.num_outputs:
                shape = "x".join("?" if d is None else str(d) for d in fw_specs[k][0])
                raise SymbolicTrainingError(f"the sizes of a value saved for the backward (tensor<{shape}>) are not "
                                            "a function of the graph inputs' sizes")
            exprs[k] = [e if e is not None else _meta_expression(self.graph, k, i) for i, e in enumerate(row)]
        return exprs

    def __call__(self, *inputs):
        if not torch.is_grad_enabled() or not self._slots:  # no node to record (under no_grad after all)
            return self._forward(list(inputs))[0][:self.num_outputs]
        # only the inputs that get a gradient pass through apply and only the outputs that carry one come
        # out of it (the others are plain tensors, as mark_non_differentiable makes them, without the zero
        # cotangents autograd would materialize for them): per-tensor work of apply and the backward halved
        results = []
        diff = _GraphFunction.apply(self, inputs, results, *[inputs[k] for k in self.wrt])
        for k, t in zip(self._slots, diff):
            results[k] = t
        return results

    def _forward(self, inputs):
        if self.seeded:
            inputs = inputs + [draw_seed(self.device)]
        return self.forward(inputs), inputs


class _GraphFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, kernel, inputs, results, *wrt):
        """inputs: all the graph's; results (filled): every graph output; returns the differentiable ones."""
        outs, fw_inputs = kernel._forward(list(inputs))
        results += outs[:kernel.num_outputs]
        ctx.save_for_backward(*[fw_inputs[c] if c >= 0 else outs[-1 - c] for c in kernel.saved])
        ctx.kernel = kernel
        if kernel.dynamic:  # the gradients' sizes: their inputs'; the outputs' (for cotangents given as None)
            ctx.grad_shapes = [tuple(fw_inputs[k].shape) for k in kernel.wrt]
            ctx.out_shapes = [results[k].shape for k in kernel._slots]
        if kernel.late_zeros:  # an output no gradient reaches gets None: a backward variant without it
            ctx.set_materialize_grads(False)
        return tuple(results[k] for k in kernel._slots)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        kernel = ctx.kernel  # grads: the cotangents of the differentiable outputs, in their order
        if kernel.late_zeros:
            part, cotangents = kernel.backward_for(grads, getattr(ctx, "out_shapes", None))
        else:
            part, cotangents = kernel.backward, list(grads)
        inputs = list(ctx.saved_tensors) + cotangents
        if segments.usable(part):  # CUDA: step by step, freeing saved values as eager does
            getattr(ctx, "maybe_clear_saved_tensors", lambda: None)()  # unless the graph is retained: `inputs`
            # then holds the saved values' only references
            gin = segments.run(part, inputs)
        else:
            gin = part(inputs, ctx.grad_shapes if kernel.dynamic else None)
        return (None, None, None, *gin)


def _meta_expression(graph, k, i):
    """Dim i of graph output k as an expression over `s[j][d]` (dim d of graph input j), from the symbolic
    sizes capture gave it."""
    import sympy
    from torch.utils._sympy.printers import PythonPrinter
    from ..dynamic.symbolic import size_expr, symbol_positions
    at = symbol_positions(graph.inputs)
    e = size_expr(graph.outputs[k].meta.shape[i])
    if e.free_symbols - set(at):
        raise SymbolicTrainingError(f"a size of output {k} depends on a symbol no graph input carries")
    names = {sym: sympy.Symbol(f"s[{j}][{d}]", integer=True) for sym, (j, d) in at.items()}
    return PythonPrinter().doprint(e.xreplace(names))
