"""A training graph compiled by dyn: its forward and backward functions and the autograd node that runs them.

The graph is printed with its differentiable inputs marked, differentiated and partitioned by the core
(split.py), and the two functions are compiled for the graph's device. Each call is one
torch.autograd.Function node: the forward kernel computes the results and the values the backward needs
(those that are forward inputs are not copied: the inputs themselves are saved), the backward kernel
computes every differentiable input's gradient from them and the results' cotangents."""
import os

import torch

from ..launch import EMPTY_STRIDED_CPU, contiguous_strides, dump_stages, gpu_target, run_compiled
from ..graph.random import draw_seed, has_random
from ..native import C as _C
from ..session import current
from . import split


class DifferentiationError(RuntimeError):
    """The core could not differentiate the graph (an op without a derivative rule, say)."""


def _to_channels_last(rank):
    """The permutation from [N, C, *spatial] to [N, *spatial, C]."""
    return (0, *range(2, rank), 1)


def _from_channels_last(rank):
    return (0, rank - 1, *range(1, rank - 1))


class _Part:
    """One compiled function of the split: fresh outputs of its result types, written by the kernels.
    Results listed by the compiled function's `channels_last_results` are written [N, *spatial, C] and
    returned as torch's channels-last tensors; inputs listed in `channels_last_inputs` are read so."""

    def __init__(self, ir, name, device, specs, num_inputs, keep, channels_last_inputs=()):
        self.device = device
        n = num_inputs + len(specs)
        if device.type == "cuda":
            self.compiled = _C.compile_gpu(ir, name, keep, n, gpu_target(device))
        else:
            self.compiled = _C.compile(ir, name, keep, 3, n)
        self.channels_last = set(self.compiled.channels_last_results)
        self.specs = []
        for k, (s, d) in enumerate(specs):
            if k in self.channels_last:
                s = tuple(s[i] for i in _to_channels_last(len(s)))
            self.specs.append((s, contiguous_strides(s), d))
        self.views = [(k, _from_channels_last(len(self.specs[k][0]))) for k in sorted(self.channels_last)]
        self.reads = [(j, _to_channels_last(r)) for j, r in channels_last_inputs]

    def __call__(self, inputs):
        if self.device.type == "cpu" and EMPTY_STRIDED_CPU is not None:
            outs = [EMPTY_STRIDED_CPU(s, st, d) for s, st, d in self.specs]
        else:
            outs = [torch.empty(s, dtype=d, device=self.device) for s, _, d in self.specs]
        for j, perm in self.reads:
            inputs[j] = inputs[j].permute(perm)
        run_compiled(self.compiled, self.device, inputs, outs)
        for k, perm in self.views:
            outs[k] = outs[k].permute(perm)
        return outs


class TrainingKernel:
    """Compiled forward and backward of a graph whose inputs listed in `requires_grad` are differentiated.
    Calling it runs the forward as one autograd node; outputs that carry no gradient are marked so."""
    device_type = None
    trains = True  # explain: "dyn (<device>, forward and backward)"

    def __init__(self, graph, example_inputs, requires_grad, keep_stages=False):
        self.graph = graph
        devices = {t.device for t in example_inputs}
        self.device = devices.pop() if devices else torch.device(graph.device or "cpu")
        self.device_type = self.device.type
        self.seeded = has_random(graph)
        self.wrt = [k for k, r in enumerate(requires_grad) if r]
        text = graph.mlir("train", requires_grad=requires_grad)
        try:
            joint, parts = split.differentiate(text)
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
        # saved values only the backward reads may stay in the layout the forward computed them in
        # (channels-last between convolutions): the backward then reads them so
        free = sorted({-1 - c for c in self.saved if c < 0 and -1 - c >= self.num_outputs
                       and len(fw_specs[-1 - c][0]) in (4, 5)})
        if free:
            fw_ir = split.with_attribute(fw_ir, "dyn.layout_free_results", free)
        self.forward = _Part(fw_ir, "train_forward", self.device, fw_specs, n_in, keep)
        cl_reads = [(j, len(fw_specs[-1 - c][0])) for j, c in enumerate(self.saved)
                    if c < 0 and -1 - c in self.forward.channels_last]
        if cl_reads:
            bw_ir = split.with_attribute(bw_ir, "dyn.channels_last_args", [j for j, _ in cl_reads])
        self.backward = _Part(bw_ir, "train_backward", self.device, split.result_specs(bw_sig),
                              len(self.saved) + len(self.differentiable), keep, cl_reads)
        self._nondiff = [k for k in range(self.num_outputs) if k not in set(self.differentiable)]
        self.stages = [("training", text), ("joint", joint), ("forward", fw_ir), ("backward", bw_ir)]
        if keep:
            self.stages += [("forward." + s, ir) for s, ir in self.forward.compiled.stages]
            self.stages += [("backward." + s, ir) for s, ir in self.backward.compiled.stages]
        counters = current().counters
        counters["graphs_compiled"] += 2
        counters["backward_graphs"] += 1
        counters["compile_seconds"] += self.forward.compiled.compile_seconds + \
            self.backward.compiled.compile_seconds
        if debug:
            dump_stages(self.stages)

    def __call__(self, *inputs):
        if not torch.is_grad_enabled():  # called under no_grad after all: no node to record
            return self._forward(list(inputs))[0][:self.num_outputs]
        return list(_GraphFunction.apply(self, *inputs))

    def _forward(self, inputs):
        if self.seeded:
            inputs = inputs + [draw_seed(self.device)]
        return self.forward(inputs), inputs


class _GraphFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, kernel, *inputs):
        outs, fw_inputs = kernel._forward(list(inputs))
        n = kernel.num_outputs
        results = outs[:n]
        ctx.save_for_backward(*[fw_inputs[c] if c >= 0 else outs[-1 - c] for c in kernel.saved])
        ctx.kernel = kernel
        ctx.mark_non_differentiable(*[results[k] for k in kernel._nondiff])
        return tuple(results)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        kernel = ctx.kernel
        cotangents = [grads[k] for k in kernel.differentiable]
        gin = kernel.backward(list(ctx.saved_tensors) + cotangents)
        out = [None] * (len(ctx.needs_input_grad) - 1)
        for j, k in enumerate(kernel.wrt):
            out[k] = gin[j]
        return (None, *out)
