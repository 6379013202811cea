"""The captured graph: SSA nodes over meta tensors. str() is graph-dialect MLIR text (mlir.py); calling it
runs PyTorch ops (eager.py, the "eager" backend)."""
import torch

from ..errors import Unsupported
from .eager import python_function
from .mlir import module_text, tensor_type


class Node:
    """One SSA value. op is 'input', 'constant' or a graph-dialect op name without prefix.
    host: eager holds this value on the CPU while the graph runs on CUDA (a tensor a factory made there,
    or computed from such tensors only): computed on the graph's device like any other, copied to the CPU
    where it leaves the graph (Graph.host_outputs). on_device: computed from what eager holds on the graph's
    device (a CUDA input, a random draw there), not from constants only."""
    __slots__ = ("name", "op", "inputs", "attrs", "meta", "index", "host", "on_device")

    def __init__(self, name, op, inputs, attrs, meta):
        self.name, self.op, self.inputs, self.attrs, self.meta = name, op, list(inputs), dict(attrs), meta
        self.index = -1
        self.host = _on_host(self.inputs)
        self.on_device = bool(attrs.get("seeded")) or any(i.on_device and not i.host for i in self.inputs)

    def __repr__(self):
        return f"Node({self.name} = {self.op})"



def _on_host(inputs):
    """Eager's device rule for a result: on the CPU when its tensors are, where CPU scalars (0-d) mix with
    CUDA tensors; a constant scalar of the graph's own (no inputs, 0-d) takes any device."""
    if not any(i.host for i in inputs):
        return False
    return all(i.host or (not i.inputs and i.op != "input" and i.meta.dim() == 0) for i in inputs)


class Graph:
    """A captured graph. str() is the graph-dialect MLIR module; calling it runs PyTorch ops."""

    def __init__(self):
        self.inputs = []    # input Nodes, in function argument order
        self.nodes = []     # every non-input Node, topological
        self.outputs = []   # Nodes returned
        self.input_sources = []  # human-readable origin of each input (for printing/guards)
        self.device = None  # the device the graph runs on (constants are made there), None: the CPU
        self.mode_attrs = {}  # attributes every new node gets (grad_enabled inside a traced no_grad block)
        self.random_refused = None  # while set, the reason a random (seeded) node is not captured now
        self.eager_seed = None  # while set, random ops draw eager's numbers from this seed (seeded_random)
        self.eager_seed_draws = 0  # seeded_random nodes made since eager_seed was set
        self.fake_mode = None  # a capture with symbolic sizes: constants' metas are fake tensors of its mode
        self._count = 0

    def take_eager_seed(self, what):
        """The seed of the one eager draw allowed inside torch.testing's wrapper_set_seed (seeded_random,
        seeded_attention): a second would draw from the seed again where eager continues the sequence."""
        if self.eager_seed is None:
            raise Unsupported(f"{what}: eager's numbers only inside torch.testing's wrapper_set_seed")
        if self.eager_seed_draws:
            raise Unsupported("a second random op inside torch.testing's wrapper_set_seed (each would start "
                              "from the seed again)")
        self.eager_seed_draws += 1
        return self.eager_seed

    # -- building -------------------------------------------------------------------------------
    def add_input(self, meta, source="?"):
        if self.fake_mode is not None and type(meta) is torch.Tensor:
            meta = self._faked(meta)
        n = Node(f"%arg{len(self.inputs)}", "input", (), {}, meta)
        n.index = len(self.inputs)
        n.on_device = True  # until the tracer marks it host
        self.inputs.append(n)
        self.input_sources.append(source)
        return n

    def add(self, op, inputs, meta, **attrs):
        if self.random_refused is not None and attrs.get("seeded"):
            raise Unsupported(self.random_refused)
        if self.mode_attrs:
            attrs = {**self.mode_attrs, **attrs}
        if self.fake_mode is not None and type(meta) is torch.Tensor:
            meta = self._faked(meta)
        if op == "torch_result":  # result k of a torch_call with several: %call#k (no line of its own)
            call = inputs[0]
            n = Node(call.name if call.attrs["results"] == 1 else f"{call.name}#{attrs['result']}", op, inputs,
                     attrs, meta)
        else:
            n = Node(f"%{self._count}", op, inputs, attrs, meta)
            self._count += 1
        self.nodes.append(n)
        return n

    def _on_device(self):
        """Attrs that make a constant on the graph's device when run (none on the CPU)."""
        if self.device is None or torch.device(self.device).type == "cpu":
            return {}
        return {"device": self.device}

    def _faked(self, meta):
        """A plain meta tensor as a fake one of the same layout (so ops on it see symbolic sizes)."""
        with self.fake_mode:
            return torch.empty_strided(tuple(meta.shape), tuple(meta.stride()), dtype=meta.dtype, device="meta",
                                       requires_grad=meta.requires_grad)

    def _meta(self, shape, dtype):
        if self.fake_mode is None:
            return torch.empty(shape, dtype=dtype, device="meta")
        with self.fake_mode:
            return torch.empty(shape, dtype=dtype, device="meta")

    def constant(self, value, dtype):
        meta = self._meta((), dtype)
        return self.add("constant", (), meta, value=value, **self._on_device())

    def dense(self, values):
        """A constant tensor with the elements of `values` (a CPU tensor)."""
        meta = self._meta(tuple(values.shape), values.dtype)
        return self.add("constant", (), meta, value=values, **self._on_device())

    def ops(self):
        return [n.op for n in self.nodes]

    def host_outputs(self):
        """The outputs eager holds on the CPU in a graph on CUDA (moved there after each run)."""
        return [k for k, n in enumerate(self.outputs) if n.host]

    # -- text -----------------------------------------------------------------------------------
    def mlir(self, func_name="forward", requires_grad=None, updates=None):
        return module_text(self, func_name, requires_grad, updates)

    __str__ = mlir

    def __repr__(self):
        return f"<dyn.Graph: {len(self.inputs)} inputs, {len(self.nodes)} ops, {len(self.outputs)} outputs>"

    def print_tabular(self, file=None):
        rows = [("opcode", "name", "target", "args", "type")]
        for i, src in zip(self.inputs, self.input_sources):
            rows.append(("placeholder", i.name, src, "", tensor_type(i.meta)))
        for n in self.nodes:
            args = ", ".join(x.name for x in n.inputs)
            if n.attrs:
                args = (args + " " if args else "") + " ".join(f"{k}={v}" for k, v in n.attrs.items())
            rows.append(("call_function", n.name, "graph." + n.op, args, tensor_type(n.meta)))
        rows.append(("output", "output", "output", ", ".join(o.name for o in self.outputs), ""))
        widths = [max(len(str(r[c])) for r in rows) for c in range(5)]
        text = "\n".join("  ".join(str(r[c]).ljust(widths[c]) for c in range(5)).rstrip() for r in rows)
        print(text, file=file)
        return text

    # -- eager execution --------------------------------------------------------------------------
    def __call__(self, *inputs):
        key = (len(self.nodes), len(self.outputs))
        fn, built_for = self.__dict__.get("_python", (None, None))
        if built_for != key:  # generated when first run, again if the graph changed (eager.py)
            fn = python_function(self)
            self._python = (fn, key)
        return fn(*inputs)
