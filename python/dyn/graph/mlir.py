"""Graph-dialect MLIR text of a captured Graph (docs/capture_contract.md)."""
import math
import struct

import torch

from . import random
from .opset import ELEMENT_TYPES, OPS, Operand, operand_slots
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


SIZED_OPS = ("reshape", "expand", "iota", "random")  # ops given the sizes of their `?` result dims (graph/sizes.py)


def _attr_value(kind, v, meta=None):
    """An attribute's value as the assembly format prints it (no `: type` but a constant's)."""
    if kind == "f64":
        return _literal(float(v), torch.float64)
    if kind == "i64":
        return str(int(v))
    if kind == "bool":
        return "true" if v else "false"
    if kind == "str":
        return _string(v)
    if kind == "enum":
        return str(v)
    if kind == "elements":
        lit = _dense_literal(v, meta.dtype) if isinstance(v, torch.Tensor) else _literal(v, meta.dtype)
        return f"dense<{lit}> : {tensor_type(meta)}"
    if kind == "f64_array":
        return "[" + ", ".join("%.17e" % float(d) for d in v) + "]"
    return "[" + ", ".join(str(int(d)) for d in v) + "]"  # i64_array


def _attr_dict(d, a, shown):
    """The attributes the format does not print: an MLIR attribute dictionary (or nothing)."""
    items = []
    for (name, kind), default in zip(d.attrs, d.defaults):
        v = a.get(name)
        if name in shown or v is None or v is False and kind == "unit" or default is not None and v == default:
            continue
        if kind == "unit":
            items.append(name)
        elif kind in ("f64", "i64"):
            items.append(f"{name} = {_attr_value(kind, v)} : {kind}")
        elif kind.endswith("_array"):
            et = kind[:3]
            items.append(f"{name} = array<{et}: {_attr_value(kind, v)[1:-1]}>" if len(v) else f"{name} = array<{et}>")
        else:
            items.append(f"{name} = {_attr_value(kind, v)}")
    return "{" + ", ".join(items) + "}" if items else ""


def _format_names(fmt, kinds):
    """The attribute names a format prints itself."""
    names = set()
    for t in fmt:
        if t[0] == "attr":
            names.add(t[1])
        elif t[0] == "opt":
            names |= _format_names(t[2], kinds)
    return names


def _join(parts):
    """Format tokens separated as MLIR prints them (the parser takes any spacing)."""
    out = ""
    for p in parts:
        if not p:
            continue
        if out and not out.endswith("(") and p[0] not in ",)":
            out += " "
        out += p
    return out


def _line(n, sizes=()):
    """Node n's op in its registered assembly format (OPS[op].format, from the op's ODS
    assemblyFormat). sizes: the SSA names of its `?` result dims' sizes (graph/sizes.py)."""
    d, a = OPS[n.op], n.attrs
    slots = dict(zip(d.operands, operand_slots(n)))
    kinds = dict(d.attrs)
    metas = a.get("metas", (n.meta,))

    def values(name):  # [(SSA name, type)] of an operand
        at = slots[name]
        if name == "seed":
            return [(random.SEED, "tensor<i64>")]
        if name == "sizes":
            return [(s, "index") for s in sizes]
        if at is None:
            return []
        ats = at if isinstance(at, list) else [at]
        return [(n.inputs[k].name, tensor_type(n.inputs[k].meta)) for k in ats]

    def present(name):
        if name in slots:
            return bool(values(name))
        v, default = a.get(name), dict(zip((x for x, _ in d.attrs), d.defaults)).get(name)
        return v is not None and v is not False and (default is None or v != default)

    def operands():
        return [v for name in d.operands for v in values(name)]

    def tokens(fmt):
        for t in fmt:
            kind = t[0]
            if kind == "lit":
                yield t[1]
            elif kind == "operand":
                yield ", ".join(v for v, _ in values(t[1]))
            elif kind == "attr":
                if kinds[t[1]] != "unit":
                    yield _attr_value(kinds[t[1]], a[t[1]], n.meta)
            elif kind == "attrs":
                yield _attr_dict(d, a, _format_names(d.format, kinds))
            elif kind == "operands":
                yield ", ".join(v for v, _ in operands())
            elif kind == "type":
                yield ", ".join(ty for _, ty in values(t[1])) if t[1] in slots else tensor_type(n.meta)
            elif kind == "types":
                yield ", ".join(ty for _, ty in operands()) if t[1] == "operands" else \
                    ", ".join(tensor_type(m) for m in metas)
            elif kind == "functional":
                yield f"({', '.join(ty for _, ty in operands())}) -> ({', '.join(tensor_type(m) for m in metas)})"
            elif present(t[1]):  # an optional group, printed where its anchor is present
                yield from tokens(t[2])

    name = n.name if len(metas) == 1 else f"{n.name}:{len(metas)}"
    return f"{name} = graph.{n.op} {_join(tokens(d.format))}"


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
            sizes = size_values.operands(n.meta, lines) if symbolic and n.op in SIZED_OPS else ()
            if n.op == "attention_dropout":  # capture's, written as graph ops (graph/random.py)
                # a mask with a gradient of its own (T5's learned position bias): the math path differentiates
                # it; the fused kernel's backward does not
                unfused = n.attrs.get("fused") and len(n.inputs) > 3 and id(n.inputs[3]) in active
                line = "\n    ".join(random.attention_dropout_lines(_Unfused(n) if unfused else n, _literal))
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
