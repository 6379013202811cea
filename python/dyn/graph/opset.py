"""The graph dialect's ops as the Python side names them: element types and op families shared by the
MLIR printer, the eager interpreter and the capture's op builders."""
import torch

ELEMENT_TYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.bool: "i1",
}

UNARY = ("neg abs exp log sin cos tan tanh sigmoid relu sqrt rsqrt reciprocal erf floor ceil log1p "
         "expm1 logical_not").split()
BINARY = "add sub mul div pow maximum minimum remainder eq ne lt le gt ge logical_and logical_or".split()
REDUCE = "sum mean amax amin prod".split()


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
