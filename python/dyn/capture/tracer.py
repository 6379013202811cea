"""The Tracer: the state of one capture. The graph being built, its inputs and the sources they were read
from, what the traced code read (guards), created, mutated, and where earlier tries broke."""
import functools
import types
from collections import OrderedDict

import torch

from ..errors import Unsupported
from .interpreter.signals import DeviceSwitch
from ..graph import Graph
from ..ops import Ops, TensorVar
from .autocast import global_state
from .guards import Is, Structure, TypeIs
from .side_effects import SideEffects
from .paths import _in_argument, _same_source, _source_str
from .values import (Opaque, _contains_real_tensor, is_constant, is_constant_value, is_namedtuple, is_opaque_type,
                     is_plain_instance)


class Tracer:
    """State of one capture: the graph, its inputs and where they come from, and what was read."""

    def __init__(self, device, session):
        self.session = session  # the Session capturing (its caches)
        self.graph = Graph()
        self.ops = Ops(self)
        self.device = device
        self.device_unset = False  # no argument decided the device (capture switches to CUDA on meeting it)
        self.input_vars = {}   # id(real tensor) -> TensorVar
        self.input_tensors = []  # real tensors, in graph input order
        self.input_sources = []  # per graph input: ('arg', i, *attrs) or ('obj', tensor)
        self.sources = {}      # id(obj) -> source path of non-tensor objects reached from arguments
        self.keep = []         # keep objects alive while their ids are keys
        self.attr_guards = []  # (path, value) of constants read off argument objects
        self.created = set()   # ids of containers created during tracing (safe to mutate)
        self.steps = 0
        self.allow_breaks = False
        self.global_guards = []  # (globals dict or closure cell, name or None, value read)
        self.global_keys = set()
        self.break_at = {}  # offset of a top-frame call -> Unsupported: break the graph there
        self.eager_at = {}  # offset of a top-frame instruction -> Unsupported: the rest runs eagerly from it
        self.mutations = {}  # graph input index -> its TensorVar, for inputs updated in place
        self.grad_mutations = set()  # inputs updated by an op autograd records (not running statistics)
        self.input_aliases = []  # (source, input index): an input reached again through another source
        self.traced = set()  # ids of the traced copies wrap() made of real containers
        self.reads_grad_mode = False  # the graph depends on the caller's grad mode (guarded when set)
        self.requires_grad_memo = {}  # caller's grad mode -> {node: requires grad} (ops.tensor.node_requires_grad)
        self.grad_modes = []  # grad mode set by the `with torch.no_grad()/enable_grad()` blocks entered
        self.inference_blocks = []  # per grad-mode block entered: whether it is `torch.inference_mode()`
        self.autocast_modes = []  # (device type, enabled, dtype, cache enabled) of the autocast blocks entered
        self.mutation_spans = None  # (bytes spanned per input, inputs updated in place), set by the frontend
        self.offset_guards = []  # (input index, storage offset): as_strided read the input's real offset
        self.index_bounds = []  # (input index or fn(inputs) -> index, lo, hi): index values must lie in [lo, hi)
        self.index_known = {}  # node -> n: an index computed in the graph whose values lie in [0, n) (pooling's)
        self.created_classes = set()  # user classes instantiated while capturing
        self.effects = None  # the side effects marked for the runner (capture())
        self.side = SideEffects()  # attribute writes and container changes replayed after the graph
        self.copies = {}  # id(real list or dict) -> its traced copy
        self.copy_sources = {}  # id(traced copy) -> the sources the real container was reached through
        self.plain_sources = {}  # id(plain object guarded by type) -> the sources it was reached through
        self.identity_guarded = set()  # ids of those whose identity decided something (then guarded by it)
        self.callees = {}  # user functions the top frame calls (children.frame_target), in call order
        self.compiler_queries = None  # torch.compiler.is_compiling & co -> the answer while capturing
        self.state_reads = {}  # global state the traced code read: description -> (getter, value)
        self.symbolic = None  # dynamic/symbolic.SymbolicSizes of a capture with symbolic dims

    def read_state(self, what, getter):
        """The value of global state (getter() -> bool or None), guarded from now on."""
        if what not in self.state_reads:
            self.state_reads[what] = (getter, getter())
        return self.state_reads[what][1]

    def autocast_state(self, device_type):
        """(enabled, dtype) of autocast for a device type where the traced code runs: its innermost
        autocast block's for that device type, else the caller's (read, and guarded)."""
        for m in reversed(self.autocast_modes):
            if m[0] == device_type:
                return m[1], m[2]
        return self.read_state(f"autocast state ({device_type})", functools.partial(global_state, device_type))

    def autocast_cache(self):
        """Whether autocast's weight cache is on (innermost block's, else the caller's: read, guarded)."""
        if self.autocast_modes:
            return self.autocast_modes[-1][3]
        return self.read_state("autocast cache enabled", torch.is_autocast_cache_enabled)

    def outer_autocast(self):
        """Device types whose autocast the caller had enabled while capturing (guarded): the graph, whose
        casts are explicit, runs with it disabled."""
        return [w.rpartition("(")[2][:-1] for w, (g, v) in self.state_reads.items()
                if w.startswith("autocast state (") and v[0]]

    def grad_enabled(self):
        """The grad mode the traced code runs under: its own with-block's, else the caller's (read)."""
        if self.grad_modes:
            return self.grad_modes[-1]
        self.reads_grad_mode = True
        return torch.is_grad_enabled()

    def guard_global(self, d, name, v):
        key = (id(d), name)
        if key not in self.global_keys:
            self.global_keys.add(key)
            self.global_guards.append((d, name, v))

    def guard_cell(self, cell, v):
        key = (id(cell), None)
        if key not in self.global_keys:
            self.global_keys.add(key)
            self.global_guards.append((cell, None, v))

    def guard_value(self, path, v, owner=None):
        """Guards what was read at `path`: constants by equality, other objects by identity (a method
        bound to the owner by its function: a new method object is made at every attribute read)."""
        if isinstance(v, TensorVar) or id(v) in self.traced:
            return  # already traced from its source (a traced container has its Structure guard)
        bound_here = owner is not None and getattr(v, "__self__", None) is owner
        if is_constant(v):
            self.attr_guards.append((path, v))
        elif is_plain_instance(v) and id(v) not in self.identity_guarded:
            pass  # a plain object: guarded by type where wrap() takes it in (identity where it is used)
        elif type(v) in (list, dict) and owner is not None and is_plain_instance(owner) and \
                id(owner) not in self.identity_guarded:
            pass  # a list or dict of a plain object (a cache's `layers`, made per call): traced as a copy
            # guarded by its structure where wrap() takes it in, like its owner by type
        elif isinstance(v, types.MethodType) and bound_here:
            self.attr_guards.append((path + ("__func__",), Is(v.__func__)))
        elif isinstance(v, types.BuiltinMethodType) and bound_here:
            pass  # a method of the owner's type (the owner's guard covers its type)
        elif not isinstance(v, torch.Tensor):
            self.attr_guards.append((path, Is(v)))

    def mutable_source(self, v, path):
        """A list, dict or set of constants read from a global or closure variable (guarded by value, so
        an equal new object passes): code after a graph break re-reads the variable, so a call it makes
        (LOG.append(...)) mutates the object the variable holds then."""
        if type(v) in (list, dict, set) and id(v) not in self.sources and is_constant_value(v):
            self.sources[id(v)] = path
            self.keep.append(v)

    def uses_identity(self, *vals):
        """The identity of these values decides what runs (`is`, `==`, `in`, a dict or set key, hash, id):
        a plain object guarded by its type is guarded by identity from now on, through each of its paths."""
        if not self.plain_sources:
            return
        for v in vals:
            srcs = self.plain_sources.get(id(v))
            if srcs is not None and id(v) not in self.identity_guarded:
                self.identity_guarded.add(id(v))
                self.attr_guards.extend((src, Is(v)) for src in srcs)

    def external(self, v, path):
        """A global or closure value read through `path` (the globals dict's item, the cell's contents):
        tensors become graph inputs; containers are traced item by item with their items guarded (the
        variable itself is guarded by the caller), re-read through the variable after the graph (a
        change made to a global list reaches the list the variable holds then)."""
        if isinstance(v, torch.Tensor):
            return self.wrap(v)
        if _copied(v) or (type(v) in (list, tuple, dict, OrderedDict) and not is_constant_value(v)):
            return self.wrap(v, path)
        return v

    def tensor_input(self, t, source):
        v = self.input_vars.get(id(t))
        if v is not None:
            if source is not None and not _same_source(source, self.input_sources[v.input_index]):
                self.input_aliases.append((source, v.input_index))
            return v
        if type(t) not in (torch.Tensor, torch.nn.Parameter) or t.layout != torch.strided:
            raise Unsupported(f"unsupported tensor type {type(t).__name__}")
        if self.device_unset and t.device.type == "cuda" and self.device.type == "cpu":
            raise DeviceSwitch(t.device)
        host = t.device.type == "cpu" and self.device.type == "cuda"  # moved to the GPU at each call
        if t.device != self.device and not host:
            raise Unsupported(f"tensor on {t.device} while capturing for {self.device}")
        if t.is_complex() or t.dtype not in (torch.float32, torch.float64, torch.float16, torch.bfloat16,
                                             torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
                                             torch.bool):
            raise Unsupported(f"dtype {t.dtype}")
        if self.symbolic is None:
            meta = torch.empty(t.shape, dtype=t.dtype, device="meta")
        else:  # a fake tensor (dynamic/symbolic.py): ops on it run under the fake mode of the symbolic sizes
            with self.symbolic.mode:
                meta = torch.empty(self.symbolic.input_shape(t, source), dtype=t.dtype, device="meta")
        node = self.graph.add_input(meta, _source_str(source))
        node.host, node.on_device = host, not host
        if host:
            self.graph.device = self.device  # where host inputs are moved (runners._host_inputs)
        v = TensorVar(self, node)
        v.input_index = node.index
        self.input_vars[id(t)] = v
        self.input_tensors.append(t)
        self.input_sources.append(source if source is not None else ("obj", t))
        self.keep.append(t)
        return v

    def wrap_kwargs(self, kwargs, source):
        """The frame's **kwargs: a new dict at every call, so the frame may mutate it; traced as a copy
        (the real one is the runner's argument) with its items read through their keys."""
        d = {k: self.wrap(v, source + (("item", k),)) for k, v in kwargs.items()}
        self.created.add(id(d))
        self.keep.append(d)
        return d

    def wrap(self, value, source=None):
        """A real value entering the trace (argument, attribute, global)."""
        if isinstance(value, torch.Tensor):
            return self.tensor_input(value, source)
        if id(value) in self.traced:
            return value
        copied = source is not None and _copied(value)
        if copied and id(value) in self.copies:
            # the same real list or dict again: the same traced copy (a write through one path is
            # seen through the other); guarded to stay one object (side_effects)
            c = self.copies[id(value)]
            if not any(_same_source(source, s) for s in self.copy_sources[id(c)]):
                self.copy_sources[id(c)].append(source)
            return c
        if source is not None and (type(value) in (tuple, list, dict, OrderedDict, set, frozenset) or
                                   is_namedtuple(value)) and \
                not is_constant(value) and not (_in_argument(source) and (
                    type(value) in (tuple, list) or is_namedtuple(value) or _contains_real_tensor(value))):
            # a container reached through an attribute, item or global: its length, keys and items are
            # guarded (argument containers have guards of their own, frontend._container_guard)
            traced = copied or ((type(value) is tuple or is_namedtuple(value)) and len(value) <= 64)
            self.attr_guards.append((source, Structure(value, traced)))
        if copied:
            # one traced copy per real list or dict, items traced (and guarded) one by one through their
            # source: what the traced code reads and mutates; mutations reach the real container after
            # the graph (side_effects)
            c = type(value)()
            self.sources[id(c)] = source
            self.traced.add(id(c))
            self.copies[id(value)] = c
            self.copy_sources[id(c)] = [source]
            self.keep += [c, value]
            if type(value) is list:
                c.extend(self.wrap(x, source + (k,)) for k, x in enumerate(value))
            else:
                c.update((k, self.wrap(x, source + (("item", k),))) for k, x in value.items())
            return c
        if source is not None and (type(value) is tuple or is_namedtuple(value)) and \
                not is_constant(value) and len(value) <= 64:
            # a tuple: its items are traced (and guarded) one by one
            items = [self.wrap(x, source + (k,)) for k, x in enumerate(value)]
            items = type(value)._make(items) if is_namedtuple(value) else tuple(items)
            self.traced.add(id(items))
            self.keep.append(items)
            return items
        if is_opaque_type(type(value)):
            op = Opaque(value)
            if source is not None:
                self.sources[id(op)] = source
            self.keep.append(op)
            return op
        if source is not None and type(value) in (list, dict):
            self.sources.setdefault(id(value), source)  # the real container, after a graph break
            self.keep.append(value)
        if source is not None and not is_constant(value) and not isinstance(value, TensorVar):
            # a plain object as an argument or a container's item is guarded by type, not identity
            # (guards.TypeIs): what is read of it is guarded through its first source
            plain = is_plain_instance(value) and not (source[0] == "obj" and len(source) == 2)
            if id(value) not in self.sources:
                self.sources[id(value)] = source
                self.keep.append(value)
                if plain:
                    self.plain_sources[id(value)] = [source]
                    if len(source) > 2:  # read through a path: its type there (identity where used)
                        self.attr_guards.append((source, TypeIs(type(value))))
            elif id(value) in self.plain_sources:
                if not any(_same_source(source, s) for s in self.plain_sources[id(value)]):
                    self.plain_sources[id(value)].append(source)  # the same object through another path
                    if id(value) in self.identity_guarded:
                        self.attr_guards.append((source, Is(value)))
            elif plain:
                self.attr_guards.append((source, Is(value)))  # first reached by identity: this path too
        return value


def _copied(value):
    """Real containers captured as a traced copy (that the traced code may mutate): lists and dicts with
    str or int keys, of at most 64 items."""
    t = type(value)
    return (t is list or (t is dict and all(type(k) in (str, int) for k in value))) and len(value) <= 64
