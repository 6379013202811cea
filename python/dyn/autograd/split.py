"""The joint, forward and backward IR of a training graph: the core's passes run on graph-dialect text,
and what the runtime reads of their result (each function's own module, result types, saved values)."""
import re

import torch

from ..graph.opset import ELEMENT_TYPES
from ..native import C as _C

AUTODIFF = "func.func(dyn-graph-autodiff)"
PARTITION = "dyn-graph-partition"
_DTYPES = {v: k for k, v in ELEMENT_TYPES.items()}
_TENSOR = re.compile(r"tensor<([^>]*)>")


def differentiate(text, memory_budget=None):
    """(joint IR, partitioned IR) of a module whose function marks arguments {dyn.requires_grad}. Raises
    RuntimeError with the core's located diagnostics where an op cannot be differentiated. memory_budget
    (0..1, None: 1) is dyn-graph-partition's memory-budget: below 1 the backward recomputes more to save
    less."""
    if _C is None or not hasattr(_C, "lower"):
        raise RuntimeError("dyn._C is not loaded (the extension failed to import): no differentiation pass")
    joint = _C.lower(text, AUTODIFF)
    partition = PARTITION if memory_budget is None else f"{PARTITION}{{memory-budget={float(memory_budget)!r}}}"
    return joint, _C.lower(joint, partition)


def functions(module):
    """{name: (signature line, text of a module holding only that function)} of printed MLIR; each module
    keeps the printed module's attributes (dyn.batch_hint)."""
    lines = module.splitlines()
    header = next((line for line in lines if line.startswith("module")), "module {")
    out, k = {}, 0
    while k < len(lines):
        line = lines[k]
        m = re.match(r"  func\.func @([\w$.]+)\(", line)
        if not m:
            k += 1
            continue
        end = k + 1
        while lines[end] != "  }":
            end += 1
        out[m.group(1)] = (line, header + "\n" + "\n".join(lines[k:end + 1]) + "\n}\n")
        k = end + 1
    return out


def with_attribute(module, name, values):
    """`module` (one function's module, as functions() gives it) with `name = array<i64: values>` added to
    the function's attributes."""
    lines = module.split("\n")
    for k, line in enumerate(lines):
        if line.startswith("  func.func @"):
            attr = f"{name} = array<i64: {', '.join(map(str, values))}>"
            if " attributes {" in line:
                lines[k] = line.replace(" attributes {", " attributes {" + attr + ", ", 1)
            else:
                lines[k] = line[:-len(" {")] + " attributes {" + attr + "} {"
            return "\n".join(lines)
    raise ValueError("no function in the module")


def with_result_attributes(module, name, values):
    """`module` (one function's module) with `name = v : i64` on result k for each k: v of `values`."""
    lines = module.split("\n")
    for n, line in enumerate(lines):
        if not line.startswith("  func.func @"):
            continue
        head, tail = line.split(") -> ", 1)
        rest = tail[tail.index(" attributes {"):] if " attributes {" in tail else " {"
        results = tail[:len(tail) - len(rest)]
        parts = _split_top(results[1:-1] if results.startswith("(") else results)
        for k, v in values.items():
            attr = f"{name} = {v} : i64"
            part = parts[k].rstrip()
            parts[k] = part[:-1] + f", {attr}}}" if part.endswith("}") else f"{part} {{{attr}}}"
        lines[n] = f"{head}) -> ({', '.join(p.strip() for p in parts)}){rest}"
        return "\n".join(lines)
    raise ValueError("no function in the module")


def _split_top(text):
    """Top-level comma-separated parts of a type list (commas inside <...> or {...} do not split)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def result_specs(signature):
    """[(shape, dtype)] of a function's results, from its printed signature line (None for a `?` dim)."""
    tail = signature.split(") -> ", 1)[1]
    tail = tail.split(" attributes ", 1)[0].rstrip(" {")
    if tail.startswith("("):
        tail = tail[1:tail.rindex(")")]
    specs = []
    for part in _split_top(tail):
        body = _TENSOR.search(part).group(1).split("x")
        specs.append((tuple(None if d == "?" else int(d) for d in body[:-1]), _DTYPES[body[-1]]))
    return specs


def result_sizes(signature):
    """The forward's `dyn.result_sizes` (dyn-graph-partition, where a result has `?` dims): per result, each
    dim's size as a Python expression over `s[k][i]` (dim i of argument k), or None where the core could not
    express it; None where the function has no such attribute."""
    m = re.search(r'dyn\.result_sizes = "([^"]*)"', signature)
    if m is None:
        return None
    return [[None if e == "?" else e for e in part.split(";")] if part else [] for part in m.group(1).split("|")]


def int_array(signature, name):
    """The values of `name = array<i64: ...>` in a function's attributes."""
    m = re.search(re.escape(name) + r" = array<i64(?:: ([-\d, ]*))?>", signature)
    if m is None:
        raise ValueError(f"{name} missing from {signature}")
    return [int(x) for x in m.group(1).split(",")] if m.group(1) else []

