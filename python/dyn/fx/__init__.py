"""dyn as a torch.compile backend: torch.compile(model, backend="dyn") translates TorchDynamo's FX graphs
into dyn's graph dialect (translate.py) and compiles them with dyn's compiler (backend.py). The name is
registered with TorchDynamo by the package's `torch_dynamo_backends` entry point (pyproject.toml) and,
for the source tree, when dyn is imported (registration.py)."""
from .backend import backend
from .translate import Translation

__all__ = ["backend", "Translation"]
