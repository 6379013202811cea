"""The graph dialect's ops as the Python side names them: element types and op families shared by the
MLIR printer, the eager interpreter and the capture's op builders. The registered ops (their families,
attributes and eager semantics) come from the op registry through dyn/_ops_generated.py."""
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
