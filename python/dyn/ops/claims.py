"""What dyn claims to capture natively: the torch callables and Tensor method names that have a handler
(handlers/tables.py), or that capture traces into as compositions of such ops (TRACED_FUNCS). The one place
the OpInfo test (test/python/test_opinfo.py), the coverage benchmark and docs/ops.md read the claim from,
so that it moves to the op registry in one step."""
from .handlers import METHODS, TORCH_FUNCS, TRACED_FUNCS


def claims(function=None, method=None):
    """Whether capture has a handler for the callable `function` (torch.add, F.relu) or for the Tensor
    method named `method` ("add", "add_")."""
    if function is not None:
        try:
            return function in TORCH_FUNCS or function in TRACED_FUNCS
        except TypeError:  # unhashable: no handler
            return False
    return method is not None and method in METHODS
