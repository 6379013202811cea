"""Graph-dialect MLIR text of a captured Graph (docs/capture_contract.md)."""
import math
import struct

import torch

from . import families, random
from .norms import NORM_OPS, norm_line
from .opset import ELEMENT_TYPES, OPS, REDUCE, Operand
from ..dynamic.symbolic import holds_symbolic, size_expr, static_size
from .sizes import SizeValues

# dtypes outside the graph dialect's element types, as MLIR types (torch_call arguments)
_OTHER_TYPES = {torch.complex64: "complex<f32>",
                torch.complex128: "complex<f64>"}


def tensor_type(meta):
    if meta.dtype not in ELEMENT_TYPES:
        raise NotImplementedError(f"dtype {meta.dtype} is not supported by the graph dialect")
    dims = "".join(f"{d}x" if type(d) is int else f"{_dim(d)}x" for d in meta.shape)
    return f"tensor<{dims}{ELEMENT_TYPES[meta.dtype]}>"


def _dim(d):
    """A size in a tensor type: a symbolic one (a dynamic capture's) is `?` unless a guard fixed it."""
    v = static_size(d)
    return "?" if v is None else str(v)


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



def _dense_literal(values, dtype):
    """The elements of a constant tensor as an MLIR dense literal: nested lists, one per dim."""
    def text(v):
        return "[" + ", ".join(text(x) for x in v) + "]" if isinstance(v, list) else _literal(v, dtype)
    return text(values.tolist())


def _dims(ds):
    return "[" + ", ".join(str(int(d)) for d in ds) + "]"


SIZED_OPS = ("reshape", "expand", "iota", "random")  # ops given the sizes of their `?` result dims (graph/sizes.py)


def _line(n, sizes=""):
    r = tensor_type(n.meta)
    ins = ", ".join(i.name for i in n.inputs) + sizes
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
    if op == "iota":
        return f"{n.name} = graph.iota{sizes} : {r}"
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
    if op in WINDOW_OPS:
        return f"{n.name} = graph.{op} {_window_operands(n)}{_window_attrs(op, a)} : {tys} -> {r}"
    if op in OPS and OPS[op].family in FUNCTIONAL_FAMILIES:  # one result or several (%n:2)
        metas = a.get("metas", (n.meta,))
        name = n.name if len(metas) == 1 else f"{n.name}:{len(metas)}"
        rets = ", ".join(tensor_type(m) for m in metas)
        return f"{name} = graph.{op} {ins} {_registered_attrs(op, a)} : ({tys}) -> ({rets})"
    if op in OPS and OPS[op].attrs:  # registered ops print their attributes in the attr-dict
        return f"{n.name} = graph.{op} {ins} {_registered_attrs(op, a)} : {tys} -> {r}"
    if op in families.OPS:
        return families.line(n, ins, tys, r, _dims, _literal)
    if op in random.OPS:
        return random.line(n, ins, tys, r, _literal)
    if op in NORM_OPS:  # with updated running statistics: three results
        name, rets = n.name, r
        if a.get("results") == 3:
            name, rets = f"{n.name}:3", ", ".join(tensor_type(m) for m in a["metas"])
        return f"{name} = graph.{op} {norm_line(n, lambda v: _literal(v, torch.float64))} : {tys} -> {rets}"
    return f"{n.name} = graph.{op} {ins} : {tys} -> {r}"


# registered families printed as `operands attr-dict : functional-type(operands, results)`
FUNCTIONAL_FAMILIES = ("library", "pool_indices", "norm_stats", "bilinear", "multi_margin_loss", "embedding_bag",
                       "frexp")


def _registered_attrs(op, a):
    """A registered op's attributes as an MLIR attribute dictionary (the registry gives their kinds)."""
    items = []
    for name, kind in OPS[op].attrs:
        v = a.get(name)
        if kind == "unit":
            if v:
                items.append(name)
            continue
        if v is None:
            continue
        if kind == "f64":
            items.append(f"{name} = {_literal(float(v), torch.float64)} : f64")
        elif kind == "i64":
            items.append(f"{name} = {int(v)} : i64")
        elif kind == "bool":
            items.append(f"{name} = {'true' if v else 'false'}")
        elif kind == "str":
            items.append(f"{name} = {_string(v)}")
        elif kind == "f64_array":
            items.append(f"{name} = array<f64: {', '.join('%.17e' % float(d) for d in v)}>" if len(v) else
                         f"{name} = array<f64>")
        else:  # i64_array
            items.append(f"{name} = array<i64: {', '.join(str(int(d)) for d in v)}>" if len(v) else
                         f"{name} = array<i64>")
    return "{" + ", ".join(items) + "}"


WINDOW_OPS = ("convolution", "max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool", "pad",
              "scaled_dot_product_attention")


def _window_operands(n):
    names = [i.name for i in n.inputs]
    if n.op == "convolution" and len(names) == 3:
        return f"{names[0]}, {names[1]} bias {names[2]}"
    if n.op == "scaled_dot_product_attention" and len(names) == 4:
        return f"{names[0]}, {names[1]}, {names[2]} mask {names[3]}"
    return ", ".join(names)


def _window_attrs(op, a):
    """The attributes of the convolution, pooling, padding and attention ops, in their assembly order."""
    if op == "convolution":
        s = (f" stride {_dims(a['stride'])} padding {_dims(a['padding'])} dilation {_dims(a['dilation'])}"
             f" groups {a['groups']}")
        if a["transposed"]:
            s += f" transposed output_padding {_dims(a['output_padding'])}"
        return s
    if op in ("max_pool", "avg_pool"):
        s = f" kernel {_dims(a['kernel'])} stride {_dims(a['stride'])} padding {_dims(a['padding'])}"
        if op == "max_pool":
            s += f" dilation {_dims(a['dilation'])}"
        if a["ceil_mode"]:
            s += " ceil_mode"
        if op == "avg_pool":
            if a["count_include_pad"]:
                s += " count_include_pad"
            if a["divisor_override"] is not None:
                s += f" divisor_override {int(a['divisor_override'])}"
        return s
    if op in ("adaptive_avg_pool", "adaptive_max_pool"):
        return f" output_size {_dims(a['output_size'])}"
    if op == "pad":
        s = f" {a['mode']} low {_dims(a['low'])} high {_dims(a['high'])}"
        if a["value"] != 0.0:
            s += f" value {_literal(a['value'], torch.float64)}"
        return s
    s = " causal" if a["is_causal"] else ""  # scaled_dot_product_attention
    if a["scale"] is not None:
        s += f" scale {_literal(a['scale'], torch.float64)}"
    return s


def _string(text):
    """An MLIR string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.extend("\\%02X" % b for b in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


def _attr(v):
    """A torch_call argument as an MLIR attribute: operand k as `k : index`, None as `unit`, a dtype as
    its type, tuples and lists as arrays."""
    if type(v) is Operand:
        return f"{v.index} : index"
    if v is None:
        return "unit"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v} : i64"
    if isinstance(v, float):
        return f"{_literal(v, torch.float64)} : f64"
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, torch.dtype):
        return ELEMENT_TYPES.get(v) or _OTHER_TYPES.get(v) or _string(str(v))
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(_attr(x) for x in v) + "]"
    return _string(str(v))  # device, memory format, layout


def _key(k):
    return k if k.isidentifier() and k.isascii() else _string(k)


def _torch_call(n):
    a = n.attrs
    results = [n] if a["results"] == 1 and "structure" not in a else None
    outs = [tensor_type(n.meta)] if results else [tensor_type(m) for m in a["metas"]]
    name = n.name if len(outs) == 1 else f"{n.name}:{len(outs)}"
    attrs = [f"args = {_attr(list(a['args']))}"]
    if a["kwargs"]:
        attrs.append("kwargs = {" + ", ".join(f"{_key(k)} = {_attr(v)}" for k, v in a["kwargs"].items()) + "}")
    if a.get("inplace") is not None:
        attrs.append(f"in_place = {a['inplace']} : i64")
    if a.get("seeded"):
        attrs.append("seeded")
    tys = ", ".join(tensor_type(i.meta) for i in n.inputs)
    rets = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    return (f"{name} = graph.torch_call {_string(a['callee'])}({', '.join(i.name for i in n.inputs)}) "
            f"{{{', '.join(attrs)}}} : ({tys}) -> {rets}")


def _stops_grad(n):
    """A node traced inside `with torch.no_grad()`: its value carries no gradient."""
    return n.attrs.get("grad_enabled") is False or bool(n.attrs.get("no_grad"))


def carries_grad(graph, requires_grad):
    """Whether a graph output depends differentiably on an input marked in requires_grad (a bool per
    input): a graph whose inputs require grad but whose every op ran under no_grad (an optimizer step)
    needs no backward."""
    active = {i for i, m in zip(graph.inputs, requires_grad) if m}
    for n in graph.nodes:
        metas = n.meta if isinstance(n.meta, (tuple, list)) else (n.meta,)
        if n.op != "detach" and not _stops_grad(n) and any(m.dtype.is_floating_point or m.dtype.is_complex
                                                            for m in metas) and any(i in active for i in n.inputs):
            active.add(n)
    return any(o in active for o in graph.outputs)


class _Unfused:
    """A node printed with `fused` off (its other attributes, inputs and meta as they are)."""
    def __init__(self, n):
        self.name, self.op, self.inputs, self.meta = n.name, n.op, n.inputs, n.meta
        self.attrs = {**n.attrs, "fused": False}


def module_text(graph, func_name="forward", requires_grad=None, updates=None):
    """The graph as a func.func in an MLIR module. requires_grad (a bool per input): the inputs to
    differentiate with respect to ({dyn.requires_grad}, for dyn-graph-autodiff); nodes traced with grad
    off are then followed by a graph.detach. updates ({output index: input index}): outputs the runtime
    writes back into an input ({dyn.updates_arg}: the fusion may give them the input's buffer)."""
    marks = requires_grad or [False] * len(graph.inputs)
    args = ", ".join(f"{i.name}: {tensor_type(i.meta)}" + (" {dyn.requires_grad}" if m else "")
                     for i, m in zip(graph.inputs, marks))
    if random.has_random(graph):  # the call's seed, drawn by the runtime (graph/random.py)
        args += (", " if args else "") + f"{random.SEED}: tensor<i64>"
    rets = ", ".join(tensor_type(o.meta) for o in graph.outputs)
    results = ", ".join(tensor_type(o.meta) + (f" {{dyn.updates_arg = {updates[k]} : i64}}"
                                                if updates and k in updates else "")
                        for k, o in enumerate(graph.outputs))
    hint = getattr(graph, "batch_hint", None)  # a `?` batch's expected size (dyn-propagate-layouts)
    header = f"module attributes {{dyn.batch_hint = {int(hint)} : i64}} {{" if hint else "module {"
    lines = [header, f"  func.func @{func_name}({args}) -> ({results}) {{"]
    symbolic = getattr(graph, "fake_mode", None) is not None
    size_values = SizeValues(graph, tensor_type) if symbolic else None
    recompute = []  # positions among the body's ops of those in checkpoint regions (training text)
    ops = 0  # body ops printed so far
    active = {id(i) for i, m in zip(graph.inputs, marks) if m}  # values computed from a differentiated input
    for n in graph.nodes:
        if requires_grad and n.op != "detach" and any(id(i) in active for i in n.inputs):
            active.add(id(n))
        if requires_grad and n.attrs.get("recompute") and n.op not in ("detach", "torch_result"):
            recompute.append(ops)
        printed = len(lines)
        if n.op == "detach":
            lines.append(f"    {n.name} = graph.detach {n.inputs[0].name} : {tensor_type(n.meta)}")
        elif n.op == "dynamic_slice":
            x = n.inputs[0]
            a, b = (size_values.value(size_expr(n.attrs[k]), lines) for k in ("start", "end"))
            lines.append(f"    {n.name} = graph.dynamic_slice {x.name}, {a}, {b} dim {n.attrs['dim']} : "
                         f"{tensor_type(x.meta)}, index, index -> {tensor_type(n.meta)}")
        elif n.op != "torch_result":
            if symbolic and n.op not in ("constant",) and holds_symbolic(n.attrs):
                raise NotImplementedError(f"graph.{n.op} with an attribute computed from a dynamic size")
            sizes = size_values.operands(n.meta, lines) if symbolic and n.op in SIZED_OPS else ""
            if n.op == "attention_dropout" and n.attrs.get("fused") and len(n.inputs) > 3 and id(n.inputs[3]) in active:
                # a mask with a gradient of its own (T5's learned position bias): the math path differentiates
                # it; the fused kernel's backward does not
                line = _line(_Unfused(n), sizes)
            else:
                line = _torch_call(n) if n.op == "torch_call" else _line(n, sizes)
            if requires_grad and _stops_grad(n) and line.startswith(n.name + " = "):
                kept = f"%nograd{n.name[1:]}"
                line = f"{kept}{line[len(n.name):]}\n    {n.name} = graph.detach {kept} : {tensor_type(n.meta)}"
            lines.append("    " + line)
        ops += sum(line.count("\n") + 1 for line in lines[printed:])
    if graph.outputs:
        lines.append(f"    return {', '.join(o.name for o in graph.outputs)} : {rets}")
    else:
        lines.append("    return")
    lines += ["  }", "}"]
    if recompute:  # dyn-graph-autodiff moves them onto the ops; dyn-graph-partition recomputes those ops
        lines[1] = lines[1][:-1] + f"attributes {{dyn.recompute = array<i64: {', '.join(map(str, recompute))}>}} {{"
    return "\n".join(lines) + "\n"
