"""Registers dyn's backend under the name "dyn" with TorchDynamo. Importing torch._dynamo costs seconds,
so dyn does not import it: when it is already imported the backend is registered at once, else when its
backend registry module is first imported (a one-shot import hook). An installed dyn is also found through
its `torch_dynamo_backends` entry point; TorchDynamo then registers it itself, and this defers to that."""
import importlib.abc
import importlib.util
import sys

REGISTRY = "torch._dynamo.backends.registry"


def _register(registry):
    from importlib.metadata import EntryPoint

    from .backend import NAME, backend
    if NAME in registry._COMPILER_FNS or isinstance(registry._BACKENDS.get(NAME), EntryPoint):
        return  # registered, or TorchDynamo is loading dyn's entry point and registers it itself
    registry.register_backend(compiler_fn=backend, name=NAME)


class _WhenImported(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when the registry module is imported, registers dyn right after it runs."""

    def find_spec(self, name, path, target=None):
        if name != REGISTRY:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _register(module)
        spec.loader.exec_module = exec_module
        return spec


def register():
    """Makes torch.compile(backend="dyn") find dyn's backend (idempotent)."""
    registry = sys.modules.get(REGISTRY)
    if registry is not None:
        _register(registry)
    elif not any(isinstance(f, _WhenImported) for f in sys.meta_path):
        sys.meta_path.insert(0, _WhenImported())
