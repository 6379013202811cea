"""The captured graph: SSA nodes over meta tensors, emitted as graph-dialect MLIR text
(docs/capture_contract.md) and runnable with PyTorch ops (the "eager" backend)."""
import math
import struct

import torch

_ELT = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.bool: "i1",
}

UNARY = ("neg abs exp log sin cos tan tanh sigmoid relu sqrt rsqrt reciprocal erf floor ceil log1p "
         "expm1 logical_not").split()
BINARY = "add sub mul div pow maximum minimum remainder eq ne lt le gt ge logical_and logical_or".split()
REDUCE = "sum mean amax amin prod".split()


def tensor_type(meta):
    if meta.dtype not in _ELT:
        raise NotImplementedError(f"dtype {meta.dtype} is not supported by the graph dialect")
    dims = "".join(f"{d}x" for d in meta.shape)
    return f"tensor<{dims}{_ELT[meta.dtype]}>"


def _literal(value, dtype):
    if dtype == torch.bool:
        return "true" if bool(value) else "false"
    if not dtype.is_floating_point:
        return str(int(value))
    v = float(value)
    if math.isfinite(v):
        return "%.17e" % v
    # non-finite values as bit patterns of the element type
    if dtype == torch.float64:
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", v))[0]
    if dtype == torch.float32:
        return "0x%08X" % struct.unpack("<I", struct.pack("<f", v))[0]
    if dtype == torch.float16:
        return "0x%04X" % struct.unpack("<H", struct.pack("<e", v))[0]
    bits = struct.unpack("<I", struct.pack("<f", v))[0] >> 16
    return "0x%04X" % bits


class Node:
    """One SSA value. op is 'input', 'constant' or a graph-dialect op name without prefix."""
    __slots__ = ("name", "op", "inputs", "attrs", "meta", "index")

    def __init__(self, name, op, inputs, attrs, meta):
        self.name, self.op, self.inputs, self.attrs, self.meta = name, op, list(inputs), dict(attrs), meta
        self.index = -1

    def __repr__(self):
        return f"Node({self.name} = {self.op})"


def _dense_literal(values, dtype):
    """The elements of a constant tensor as an MLIR dense literal: nested lists, one per dim."""
    def text(v):
        return "[" + ", ".join(text(x) for x in v) + "]" if isinstance(v, list) else _literal(v, dtype)
    return text(values.tolist())


def _dims(ds):
    return "[" + ", ".join(str(int(d)) for d in ds) + "]"


class Graph:
    """A captured graph. str() is the graph-dialect MLIR module; calling it runs PyTorch ops."""

    def __init__(self):
        self.inputs = []    # input Nodes, in function argument order
        self.nodes = []     # every non-input Node, topological
        self.outputs = []   # Nodes returned
        self.input_sources = []  # human-readable origin of each input (for printing/guards)
        self.device = None  # the device the graph runs on (constants are made there), None: the CPU
        self.mode_attrs = {}  # attributes every new node gets (grad_enabled inside a traced no_grad block)
        self._count = 0

    # -- building -------------------------------------------------------------------------------
    def add_input(self, meta, source="?"):
        n = Node(f"%arg{len(self.inputs)}", "input", (), {}, meta)
        n.index = len(self.inputs)
        self.inputs.append(n)
        self.input_sources.append(source)
        return n

    def add(self, op, inputs, meta, **attrs):
        if self.mode_attrs:
            attrs = {**self.mode_attrs, **attrs}
        if op == "detach":  # autograd only: the same value in the graph dialect (no line of its own)
            n = Node(inputs[0].name, op, inputs, attrs, meta)
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

    def constant(self, value, dtype):
        meta = torch.empty((), dtype=dtype, device="meta")
        return self.add("constant", (), meta, value=value, **self._on_device())

    def dense(self, values):
        """A constant tensor with the elements of `values` (a CPU tensor)."""
        meta = torch.empty(tuple(values.shape), dtype=values.dtype, device="meta")
        return self.add("constant", (), meta, value=values, **self._on_device())

    def ops(self):
        return [n.op for n in self.nodes]

    # -- text -----------------------------------------------------------------------------------
    def _line(self, n):
        r = tensor_type(n.meta)
        ins = ", ".join(i.name for i in n.inputs)
        tys = ", ".join(tensor_type(i.meta) for i in n.inputs)
        op, a = n.op, n.attrs
        if op == "constant":
            v = a["value"]
            lit = _dense_literal(v, n.meta.dtype) if isinstance(v, torch.Tensor) else _literal(v, n.meta.dtype)
            return f"{n.name} = graph.constant dense<{lit}> : {r}"
        if op in REDUCE:
            kd = " keepdim" if a.get("keepdim") else ""
            return f"{n.name} = graph.{op} {ins} dims {_dims(a['dims'])}{kd} : {tys} -> {r}"
        if op in ("softmax", "log_softmax"):
            return f"{n.name} = graph.{op} {ins} dim {a['dim']} : {tys} -> {r}"
        if op == "permute":
            return f"{n.name} = graph.permute {ins} dims {_dims(a['dims'])} : {tys} -> {r}"
        if op == "slice":
            return (f"{n.name} = graph.slice {ins} dim {a['dim']} start {a['start']} end {a['end']} "
                    f"step {a['step']} : {tys} -> {r}")
        if op == "cat":
            return f"{n.name} = graph.cat {ins} dim {a['dim']} : {tys} -> {r}"
        if op == "gather":
            x, i = n.inputs
            return (f"{n.name} = graph.gather {x.name} dim {a['dim']} index {i.name} : {tys} -> {r}")
        return f"{n.name} = graph.{op} {ins} : {tys} -> {r}"

    def mlir(self, func_name="forward"):
        args = ", ".join(f"{i.name}: {tensor_type(i.meta)}" for i in self.inputs)
        rets = ", ".join(tensor_type(o.meta) for o in self.outputs)
        lines = ["module {", f"  func.func @{func_name}({args}) -> ({rets}) {{"]
        for n in self.nodes:
            if n.op != "detach":
                lines.append("    " + self._line(n))
        if self.outputs:
            lines.append(f"    return {', '.join(o.name for o in self.outputs)} : {rets}")
        else:
            lines.append("    return")
        lines += ["  }", "}"]
        return "\n".join(lines) + "\n"

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
        if built_for != key:  # generated when first run, again if the graph changed (graph_python.py)
            from .graph_python import python_function
            fn = python_function(self)
            self._python = (fn, key)
        return fn(*inputs)


def run_node(n, xs):
    op, a = n.op, n.attrs
    if op == "constant":
        v, device = a["value"], a.get("device", "cpu")
        if isinstance(v, torch.Tensor):  # a copy: the caller may update a returned constant in place
            return v.to(device=device, copy=True)
        return torch.tensor(v, dtype=n.meta.dtype, device=device)
    if op in UNARY:
        return getattr(torch, op)(xs[0])
    if op in BINARY:
        rt = n.meta.dtype
        if op == "div" and not rt.is_floating_point:  # integer division truncates (the lowering's divsi)
            return torch.div(xs[0].to(rt), xs[1].to(rt), rounding_mode="trunc")
        if op in ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "remainder"):
            return getattr(torch, op)(xs[0].to(rt), xs[1].to(rt))
        return getattr(torch, op)(xs[0], xs[1])
    if op == "where":
        return torch.where(xs[0], xs[1], xs[2]).to(n.meta.dtype)
    if op in REDUCE:
        x, dims, kd = xs[0], list(a["dims"]), bool(a.get("keepdim"))
        if op == "prod":
            for d in sorted(dims, reverse=True):
                x = torch.prod(x, d, keepdim=kd)
            return x
        if not dims:
            return x.clone()
        return getattr(torch, op)(x, dims, keepdim=kd)
    if op == "softmax":
        return torch.softmax(xs[0], a["dim"])
    if op == "log_softmax":
        return torch.log_softmax(xs[0], a["dim"])
    if op == "matmul":
        return torch.matmul(xs[0], xs[1])
    if op == "reshape":
        return xs[0].reshape(n.meta.shape)
    if op == "permute":
        return xs[0].permute(list(a["dims"]))
    if op == "expand":
        return xs[0].expand(n.meta.shape)
    if op == "slice":
        idx = [slice(None)] * a["dim"] + [slice(a["start"], a["end"], a["step"])]
        return xs[0][tuple(idx)]
    if op == "cat":
        return torch.cat(xs, a["dim"])
    if op == "convert":
        return xs[0].to(n.meta.dtype)
    if op == "gather":  # a negative index counts from the end, as the compiled gather's does
        x, i, d = xs[0], xs[1].long(), a["dim"]
        return torch.gather(x, d, torch.where(i < 0, i + x.shape[d], i))
    raise NotImplementedError(op)
