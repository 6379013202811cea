"""Calls into PyTorch itself (Frame mixin). What is PyTorch is decided by the object (capture/origins.py):
its C functions and dispatcher ops, and Python functions whose code is in the torch package. Those are
never traced into, except torch.nn's modules and torch.backends' switches; instead: a handler
(ops/handlers) where dyn has one, a check for torch._assert/_check, and otherwise one generic torch_call
node for an op (ops/torch_call.py). The "am I being compiled/scripted/traced" queries and global state
(autocast) are answered in calls.py."""
import inspect
import os
import sys
import types

import torch
import torch.testing._utils
import torch.utils.checkpoint
import torch.utils._contextlib

from ...ops import METHODS, TensorVar
from ...ops.tensor import node_requires_grad
from ...ops.handlers import METHOD_KEYWORDS, TRACED_FUNCS, generic_call, generic_method, rename
from ...ops.norms import SUBSTITUTES
from .. import scan
from ..autocast import cast_arguments
from ..origins import _TORCH_DIR, code_file, is_torch_op_builtin
from ..values import BoundTensorMethod
from .optimizers import optimizer_method

# C functions of torch._C answered while capturing (the queries "am I compiled/scripted/traced" are
# calls.py's _compiler_queries): the API-usage log event (a no-op unless a logging hook is installed)
# is dropped
_CONSTANT_BUILTINS = {"_log_api_usage_once": None}
# torch's namespaces whose public functions are ops (a generic node when they have no handler); private
# helpers there are traced into
_OP_MODULES = (torch, torch.nn.functional, torch.functional, torch.special, torch.linalg, torch.fft)
# torch's Python code that is traced into like users' code: modules' forwards and their helpers, the
# reads of torch.backends' switches (torch.backends.mha.get_fastpath_enabled()), and torch.testing's
# wrappers of ops (the OpInfos' `lambda x, *args: x.contiguous(*args)`: test code, not PyTorch's ops), and
# compositions of ops written in Python: torch.masked's reductions and normalizations (torch.masked._ops)
# and torch.signal.windows' window functions, torch.svd_lowrank and pca_lowrank (randomized linear algebra)
# @torch.autocast(...), @torch.no_grad(), @torch.inference_mode() ... on a function: their wrappers
# (`with autocast_instance: return func(...)`, `with ctx_factory(): return func(...)`) are traced
_CONTEXT_WRAPPERS = frozenset(c for f in (torch.amp.autocast_mode.autocast_decorator,
                                          torch.utils._contextlib.context_decorator)
                              for c in f.__code__.co_consts if isinstance(c, types.CodeType) and
                              c.co_name in ("decorate_autocast", "decorate_context"))
# torch.jit.script_if_tracing's wrapper: it calls the function when not JIT tracing (the answer while
# capturing), so it is traced
_CONTEXT_WRAPPERS |= frozenset(c for c in torch.jit._trace._script_if_tracing.__code__.co_consts
                               if isinstance(c, types.CodeType) and c.co_name == "wrapper")
# plain-Python helpers of torch's traced into like users' code (TorchDynamo inlines them too)
_TRACED_HELPERS = frozenset({torch.nn.init._calculate_correct_fan, torch.nn.init._calculate_fan_in_and_fan_out,
                             torch.jit._unwrap_optional})
_TRACED_FILES = tuple(os.path.join(_TORCH_DIR, f, "") for f in (os.path.join("nn", "modules"), "backends",
                                                                 os.path.join("testing", "_internal"), "masked",
                                                                 os.path.join("signal", "windows"))) + \
    tuple(os.path.join(_TORCH_DIR, f) for f in ("_lowrank.py", "_linalg_utils.py")) + \
    (scan.__file__,)  # svd/pca_lowrank; dyn's associative_scan


# the seed torch.testing._utils.wrapper_set_seed gives torch.manual_seed
WRAPPER_SEED = 42


class TorchFunctionCalls:
    def call_torch_python(self, fn, args, kwargs):
        """A Python function of torch's (not a handler's): a constant query, an assertion, an op, or
        torch.nn code traced into. Anything else is unsupported (a graph break)."""
        if fn is torch._assert or fn is torch._check:
            return self.torch_assert(fn, args, kwargs)
        if fn is torch.utils.checkpoint.checkpoint:
            return self.checkpoint(args, kwargs)
        method = optimizer_method(fn, args)
        if method is not None:  # torch.optim's zero_grad and step (optimizers.py)
            return self.optimizer_call(method, args[0], args[1:], kwargs)
        if fn is torch.testing._utils.wrapper_set_seed:
            return self.seeded_call(args, kwargs)
        if fn in SUBSTITUTES:  # torch code traced as dyn rewrites it (ops/norms.py: BatchNorm, momentum None)
            return self.inline(SUBSTITUTES[fn], args, kwargs)
        if fn is _associative_scan():
            return self.associative_scan(args, kwargs)
        if fn is torch.nn.RNNBase._update_flat_weights and len(args) == 1 and not kwargs and \
                isinstance(args[0], torch.nn.RNNBase):
            # re-reads the module's parameters where they were replaced (functional_call): module state that
            # the weights' own guards cover; run now
            return fn(args[0])
        if fn is torch.utils._contextlib._DecoratorContextManager.__call__ and len(args) == 2 and not kwargs and \
                type(args[0]) in (torch.no_grad, torch.enable_grad, torch.inference_mode) and \
                isinstance(args[1], types.FunctionType):
            # `@torch.no_grad()` on a function: the wrapper is made now; its calls are traced
            # (_CONTEXT_WRAPPERS), entering a clone of the context
            return self._created(fn(*args))
        if fn is torch.is_tensor and len(args) == 1 and not kwargs:
            return isinstance(args[0], (TensorVar, torch.Tensor))
        f = code_file(fn)
        if f.startswith(_TRACED_FILES) or fn.__code__ in _CONTEXT_WRAPPERS or fn in _TRACED_HELPERS:
            return self.inline(fn, args, kwargs)
        if fn.__qualname__.startswith("Tensor.") and args and isinstance(args[0], TensorVar):
            return self.call(BoundTensorMethod(args[0], fn.__name__), list(args[1:]), kwargs)
        name = fn.__name__
        if any(getattr(m, name, None) is fn for m in _OP_MODULES) or \
                getattr(torch.nn.functional, name, None) is fn:
            if name.startswith("_") or fn in TRACED_FUNCS:
                return self.inline(fn, args, kwargs)
            args, kwargs = cast_arguments(self, fn, args, kwargs)
            return generic_call(self.tr.ops, fn, args, kwargs)
        if f.startswith(os.path.join(_TORCH_DIR, "nn", "functional.py")) and name.startswith("_"):
            return self.inline(fn, args, kwargs)  # a private helper of torch.nn.functional's ops
        self.fail(f"call to unsupported torch function {fn.__module__}.{fn.__qualname__}")

    def checkpoint(self, args, kwargs):
        """torch.utils.checkpoint.checkpoint(fn, *args): fn traced into the graph, its ops marked to be
        recomputed in the backward (dyn-graph-partition saves none of their values but the region's
        outputs, as eager keeps only the checkpoint's inputs and outputs). Values and gradients are eager's:
        its recomputation replays the forward's random draws, as dyn's counter-based draws do. The reentrant
        variant (use_reentrant=True, or None: eager warns and takes it) only where an input requires grad:
        otherwise eager's output carries no gradient at all."""
        if not args:
            self.fail("checkpoint without a function")
        kwargs = dict(kwargs)
        reentrant = kwargs.pop("use_reentrant", None)
        context_fn = kwargs.pop("context_fn", torch.utils.checkpoint.noop_context_fn)
        for k in ("determinism_check", "debug", "early_stop", "preserve_rng_state"):
            kwargs.pop(k, None)
        if context_fn is not torch.utils.checkpoint.noop_context_fn:
            self.fail("checkpoint with a context_fn (selective activation checkpointing)")
        if reentrant is not False:
            if kwargs:
                self.fail("reentrant checkpoint with keyword arguments (eager raises)")
            if not any(isinstance(a, TensorVar) and node_requires_grad(self.tr, a.node) for a in args[1:]):
                self.fail("reentrant checkpoint whose inputs do not require grad (eager's output carries none)")
        graph = self.tr.graph
        outer = graph.mode_attrs
        graph.mode_attrs = {**outer, "recompute": True}
        try:
            out = self.call(args[0], list(args[1:]), kwargs)
        finally:
            graph.mode_attrs = outer
        stack = [out]
        while stack:  # the region's outputs are kept (the next region's inputs), not recomputed
            v = stack.pop()
            if isinstance(v, TensorVar):
                v.node.attrs.pop("recompute", None)
            elif isinstance(v, (tuple, list)):
                stack.extend(v)
            elif isinstance(v, dict):
                stack.extend(v.values())
        return out

    def associative_scan(self, args, kwargs):
        """torch's associative_scan traced as capture/scan.py writes it; in its "generic" mode (vmap over
        the scan dim) only for a combine function checked to work elementwise."""
        try:
            b = inspect.signature(scan.associative_scan).bind(*args, **kwargs)
        except TypeError as e:
            self.fail(f"associative_scan: {e}")
        b.apply_defaults()
        xs, dim, mode = b.arguments["xs"], b.arguments["dim"], b.arguments["combine_mode"]
        leaves = [xs] if isinstance(xs, TensorVar) else list(xs) if type(xs) in (tuple, list) else [None]
        if not all(isinstance(x, TensorVar) for x in leaves) or type(dim) is not int or \
                mode not in ("pointwise", "generic") or type(b.arguments["reverse"]) is not bool:
            self.fail("associative_scan of other than a tensor or a tuple or list of tensors")
        if mode == "generic":
            metas = xs.meta if isinstance(xs, TensorVar) else type(xs)(x.meta for x in leaves)
            if not scan.check_elementwise(b.arguments["combine_fn"], metas, dim, self.tr.device):
                self.fail("associative_scan in generic mode with a combine function not shown elementwise")
        return self.inline(scan.associative_scan, list(b.args), dict(b.kwargs))

    def seeded_call(self, args, kwargs):
        """torch.testing's wrapper_set_seed(op, *args, **kwargs) (the OpInfos of random ops and of ops
        with a dropout_p): op runs with torch's generators seeded with 42 and their states restored after
        it. A random op there with a handler is one seeded_random node, which does just that around eager's
        draw (ops/handlers/random.py); one such draw per call, as a second would start from 42 again. Other
        random ops there (eager's generic nodes) are not captured."""
        if not args:
            self.fail("wrapper_set_seed without an op")
        g = self.tr.graph
        prev = g.random_refused, g.eager_seed, g.eager_seed_draws
        g.random_refused = "a random op inside torch.testing's wrapper_set_seed (eager draws it from seed 42 " \
                           "and restores the generator)"
        g.eager_seed, g.eager_seed_draws = WRAPPER_SEED, 0
        try:
            return self.call(args[0], list(args[1:]), kwargs)
        finally:
            g.random_refused, g.eager_seed, g.eager_seed_draws = prev

    def call_torch_builtin(self, fn, args, kwargs):
        """A C function of torch or a dispatcher op with no handler."""
        if getattr(fn, "__module__", None) == "torch._C" and fn.__name__ in _CONSTANT_BUILTINS:
            return _CONSTANT_BUILTINS[fn.__name__]
        if fn in (torch._C._has_torch_function, torch._C._has_torch_function_unary,
                  torch._C._has_torch_function_variadic):
            return False  # plain tensors and Parameters (the only tensors captured) have no override
        objclass = getattr(fn, "__objclass__", None)
        if objclass is not None and args and isinstance(args[0], TensorVar):  # torch.Tensor.add(x, y)
            args, kwargs = cast_arguments(self, None, list(args), kwargs, method=fn.__name__)
            if fn.__name__ in METHODS:
                rest, kwargs = rename(METHOD_KEYWORDS, fn.__name__, args[1:], kwargs)
                return METHODS[fn.__name__](self.tr.ops, args[0], *rest, **kwargs)
            return generic_method(self.tr.ops, args[0], fn.__name__, tuple(args[1:]), kwargs)
        if not is_torch_op_builtin(fn):
            self.fail(f"call to unsupported torch function {_name(fn)}")
        args, kwargs = cast_arguments(self, fn, args, kwargs)
        return generic_call(self.tr.ops, fn, args, kwargs)

    def torch_assert(self, fn, args, kwargs):
        """torch._assert(cond, msg) / torch._check(cond, msg): a Python condition is checked now (eager
        raises where it is false: not captured); a tensor condition depends on data."""
        cond = args[0] if args else kwargs.get("condition", kwargs.get("cond"))
        if isinstance(cond, TensorVar):
            self.fail(f"{fn.__name__} on a tensor (data-dependent)")
        if not isinstance(cond, (bool, int, float)) and cond is not None:
            self.fail(f"{fn.__name__} on a {type(cond).__name__}")
        if not cond:
            self.fail(f"{fn.__name__} fails (eager raises)")
        return None


def _name(fn):
    return f"{getattr(fn, '__module__', None) or 'torch'}.{fn.__name__}"


def _associative_scan():
    """torch's associative_scan where its module is imported already (transformers' Mamba imports it)."""
    m = sys.modules.get("torch._higher_order_ops.associative_scan")
    return getattr(m, "associative_scan", None) if m is not None else None
