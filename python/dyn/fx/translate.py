"""An FX graph as TorchDynamo gives it to a backend (torch-level: torch functions, Tensor methods, Python
operators), or as AOTAutograd gives it (ATen ops, aten.py), translated into a dyn Graph through the same op
handlers capture uses (ops/handlers), so the graph dialect, its lowering and the runners are the ones
dyn.compile uses. A node with no handler raises Unsupported naming it; the backend then runs the FX graph
as it was given."""
import operator

import torch

from ..capture.outputs import _flatten_output
from ..capture.runners import _prune
from ..capture.tracer import Tracer
from ..errors import Unsupported
from ..ops import METHODS, TORCH_FUNCS, TensorVar
from ..ops.handlers import getitem, inplace, metas
from .aten import aten_handler, is_aten

# Python operators on tensors, as capture evaluates them (capture/interpreter/operators.py)
_BINARY = {operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "div",
           operator.mod: "remainder", operator.pow: "pow", operator.eq: "eq", operator.ne: "ne", operator.lt: "lt",
           operator.le: "le", operator.gt: "gt", operator.ge: "ge", operator.floordiv: "floor",
           operator.matmul: "matmul", operator.and_: "and", operator.or_: "or"}
_UNARY = {operator.neg: "neg", operator.abs: "abs"}
_INPLACE = {operator.iadd: (operator.add, "__iadd__"), operator.isub: (operator.sub, "__isub__"),
            operator.imul: (operator.mul, "__imul__"), operator.itruediv: (operator.truediv, "__itruediv__"),
            operator.ifloordiv: (operator.floordiv, "__ifloordiv__"), operator.imod: (operator.mod, "__imod__"),
            operator.ipow: (operator.pow, "__ipow__")}


def _binary(o, op, a, b):
    name = _BINARY[op]
    if name == "matmul":
        return o.matmul(a, b)
    if name == "floor":
        return o.div(a, b, "floor")
    if op is operator.truediv:
        return o.truediv_operator(a, b)
    if name in ("and", "or"):
        if any(isinstance(x, TensorVar) and x.meta.dtype != torch.bool for x in (a, b)):
            raise Unsupported(f"bitwise {name} of integer tensors")
        return o.binary("logical_" + name, a, b)
    return o.binary(name, a, b)


def _node_text(node):
    try:
        return node.format_node()
    except Exception:  # a node that cannot print itself
        return f"{node.op} {node.target}"


class Translation:
    """One FX graph translated: the Tracer (graph, inputs in placeholder order, mutations) and the
    template that rebuilds the FX graph's output from the dyn graph's outputs."""

    def __init__(self, gm, example_inputs, session):
        tensors = [t for t in example_inputs if isinstance(t, torch.Tensor)]
        devices = {t.device for t in tensors}
        if len(devices) > 1:
            raise Unsupported("inputs on several devices")
        device = devices.pop() if devices else torch.device("cpu")
        self.tracer = tr = Tracer(device, session)
        # TorchDynamo's dynamic shapes: example inputs with symbolic sizes of its ShapeEnv. The graph's
        # metas are fake tensors of its fake mode (the sizes print as `?`: docs/dynamic_shapes.md); a
        # symbolic size placeholder is that SymInt (compiled code reads sizes from the tensors).
        tr.graph.fake_mode = _symbolic_mode(gm, example_inputs)
        env = {}
        placeholders = 0
        for node in gm.graph.nodes:
            try:
                if node.op == "placeholder":
                    v = example_inputs[placeholders]
                    if isinstance(v, torch.Tensor):
                        fake = node.meta.get("example_value", v)
                        fake = fake if isinstance(fake, torch.Tensor) else v
                        v = tr.tensor_input(_stand_in(v), ("arg", placeholders))
                        if tr.graph.fake_mode is not None and _symbolic(fake):
                            with tr.graph.fake_mode:
                                v.node.meta = torch.empty_strided(tuple(fake.shape), tuple(fake.stride()),
                                                                  dtype=fake.dtype, device="meta")
                    elif isinstance(v, torch.SymInt) and tr.graph.fake_mode is not None:
                        pass
                    elif isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                        raise Unsupported("a symbolic size (dynamic shapes)")
                    placeholders += 1
                    env[node] = v
                elif node.op == "get_attr":
                    v = _get_attr(gm, node.target)
                    env[node] = tr.tensor_input(v, ("obj", v)) if isinstance(v, torch.Tensor) else v
                elif node.op in ("call_function", "call_method"):
                    args = torch.fx.node.map_arg(node.args, lambda n: env[n])
                    kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n])
                    env[node] = self._call(node, args, kwargs)
                elif node.op == "output":
                    out = torch.fx.node.map_arg(node.args[0], lambda n: env[n])

                    def fail(reason):
                        raise Unsupported(reason)
                    self.template, outs = _flatten_output(out, tr.graph, fail, tracer=tr)
                    tr.graph.outputs = outs
                    _prune(tr.graph)
                else:  # call_module: TorchDynamo inlines modules; a graph that still has one is not taken
                    raise Unsupported(f"FX {node.op} node")
            except Unsupported as e:
                raise Unsupported(f"{e.reason}: FX node `{_node_text(node)}`") from None
            except (TypeError, ValueError, RuntimeError, IndexError, KeyError, AttributeError, OverflowError) as e:
                # arguments a handler does not take (it never met them in user code): not translated
                raise Unsupported(f"{type(e).__name__} translating FX node `{_node_text(node)}`: {e}") from None
        self.graph = tr.graph

    def _call(self, node, args, kwargs):
        o = self.tracer.ops
        target = node.target
        if node.op == "call_method":
            if not args or not isinstance(args[0], TensorVar):
                raise Unsupported(f"method {target} of a {type(args[0]).__name__ if args else 'nothing'}")
            h = METHODS.get(target)
            if h is None:
                raise Unsupported(f"Tensor.{target} has no dyn handler")
            return h(o, *args, **kwargs)
        if target is operator.getitem:
            x, idx = args
            return getitem(o, x, idx) if isinstance(x, TensorVar) else x[idx]
        if target in _BINARY or target in _UNARY or target in _INPLACE:
            if not any(isinstance(a, TensorVar) for a in args):
                return target(*args)  # numbers
            if target in _UNARY:
                return o.unary(_UNARY[target], args[0])
            if target in _INPLACE:
                op, dunder = _INPLACE[target]
                a, b = args
                if not isinstance(a, TensorVar):
                    return _binary(o, op, a, b)
                return inplace(o, a, _binary(o, op, a, b), lambda s: getattr(s, dunder)(metas(b)), b)
            return _binary(o, target, *args)
        if target is torch._C._set_grad_enabled:
            # TorchDynamo's form of a `with torch.no_grad()` block: the ops after it carry its mode until the
            # next one (capture's GradModeExit marks a traced block's ops the same way)
            mode = bool(args[0])
            self.tracer.grad_modes[:] = [mode]
            self.tracer.graph.mode_attrs = {**self.tracer.graph.mode_attrs, "grad_enabled": mode}
            return None
        if target is torch._C._log_api_usage_once:  # PyTorch's usage logging: nothing to compute
            return None
        if target is torch._C._nn.pad:  # F.pad's builtin, as TorchDynamo records F.pad
            target = torch.nn.functional.pad
        if is_aten(target):
            h = aten_handler(target)
            if h is None:
                raise Unsupported(f"{target} has no dyn handler")
            return h(o, *args, **kwargs)
        try:
            h = TORCH_FUNCS.get(target)
        except TypeError:  # unhashable target
            h = None
        if h is None:
            raise Unsupported(f"{getattr(target, '__module__', '')}.{getattr(target, '__name__', target)} "
                              "has no dyn handler")
        return h(o, *args, **kwargs)


def _symbolic(t):
    return any(isinstance(d, torch.SymInt) for d in tuple(t.shape) + tuple(t.stride()))


def _symbolic_mode(gm, example_inputs):
    """The fake mode of TorchDynamo's symbolic sizes (its placeholders' example values), or None where every
    size is a constant."""
    if not any(isinstance(v, torch.SymInt) or isinstance(v, torch.Tensor) and _symbolic(v) for v in example_inputs):
        return None
    fakes = [n.meta.get("example_value") for n in gm.graph.nodes if n.op == "placeholder"] + list(example_inputs)
    return next((v.fake_mode for v in fakes if isinstance(v, torch._subclasses.fake_tensor.FakeTensor)), None)


def _hint(d):
    return d if type(d) is int else int(d.node.hint)


def _stand_in(t):
    """A real tensor for an example input: AOTAutograd's are FakeTensors (shape, strides, dtype and device
    are what a graph input needs; values are read at each call); symbolic sizes at their example values."""
    if type(t) in (torch.Tensor, torch.nn.Parameter):
        return t
    if isinstance(t, torch._subclasses.fake_tensor.FakeTensor):
        return torch.empty_strided(tuple(_hint(d) for d in t.shape), tuple(_hint(d) for d in t.stride()),
                                   dtype=t.dtype, device=t.device)
    return t


def _get_attr(gm, target):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj
