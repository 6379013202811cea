"""Graph-dialect MLIR text of a captured Graph (docs/capture_contract.md)."""
import math
import struct

import torch

from .opset import ELEMENT_TYPES, REDUCE


def tensor_type(meta):
    if meta.dtype not in ELEMENT_TYPES:
        raise NotImplementedError(f"dtype {meta.dtype} is not supported by the graph dialect")
    dims = "".join(f"{d}x" for d in meta.shape)
    return f"tensor<{dims}{ELEMENT_TYPES[meta.dtype]}>"


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


def _line(n):
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


def module_text(graph, func_name="forward"):
    """The graph as a func.func in an MLIR module."""
    args = ", ".join(f"{i.name}: {tensor_type(i.meta)}" for i in graph.inputs)
    rets = ", ".join(tensor_type(o.meta) for o in graph.outputs)
    lines = ["module {", f"  func.func @{func_name}({args}) -> ({rets}) {{"]
    for n in graph.nodes:
        if n.op != "detach":
            lines.append("    " + _line(n))
    if graph.outputs:
        lines.append(f"    return {', '.join(o.name for o in graph.outputs)} : {rets}")
    else:
        lines.append("    return")
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"
