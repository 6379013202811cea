"""The graph dialect's ops as the Python side names them: element types and op families shared by the
MLIR printer, the eager interpreter and the capture's op builders. Every graph op (its family, operands,
attributes, assembly format and eager semantics) comes from the op registry through dyn/_ops_generated.py."""
import torch

from .._ops_generated import EAGER, EXPR, FAMILIES, OPS  # noqa: F401 (re-exported)

ELEMENT_TYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "ui8",
    torch.bool: "i1",
}

UNARY = FAMILIES["unary"]
BINARY = FAMILIES["binary"] + FAMILIES["compare"]
REDUCE = FAMILIES["reduce"]

# operands that are never a node's inputs: a random op's `seed` is the function's %seed argument
# (graph/random.py), `sizes` the runtime sizes of a result's `?` dims (graph/sizes.py)
EXTERNAL_OPERANDS = ("seed", "sizes")


def operand_slots(n):
    """Where the registry's operands of node n are among its inputs, in the registry's order: an input
    position, None (an absent optional operand, or an external one), or a list of positions (a variadic
    operand). An op with one optional operand has it when it has more inputs than required operands;
    an op with several names those present as true attributes (`weight=True`)."""
    d = OPS[n.op]
    optional = sum(k == "optional" for k in d.operand_kinds)
    required = sum(k == "" and name not in EXTERNAL_OPERANDS for name, k in zip(d.operands, d.operand_kinds))
    slots, at, count = [], 0, len(n.inputs)
    for name, kind in zip(d.operands, d.operand_kinds):
        if name in EXTERNAL_OPERANDS:
            slots.append(None)
        elif kind == "variadic":
            slots.append(list(range(at, count - required)))
            at = count - required
        elif kind == "optional":
            present = count - at > required if optional == 1 else bool(n.attrs.get(name))
            slots.append(at if present else None)
            at += present
        else:
            slots.append(at)
            at += 1
            required -= 1
    if at != count:
        raise ValueError(f"graph.{n.op} node with {count} inputs for the operands {d.operands}")
    return slots


class Operand:
    """Where the k-th tensor operand goes in a generic torch_call node's argument template."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"%{self.index}"

    def __eq__(self, other):
        return type(other) is Operand and other.index == self.index

    def __hash__(self):
        return hash(("Operand", self.index))
