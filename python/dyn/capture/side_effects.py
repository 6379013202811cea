"""Side effects on objects the traced code did not create, as TorchDynamo's side_effects.py: attribute
stores and deletions (`self.cache = h`, `config.flag = x`, `del config.flag`), changes to the contents
of lists and dicts reached from the arguments, globals, closures or attributes (`kwargs_dict["k"] = v`,
`self.seen.append(x)`), and logging calls (`logger.warning_once(...)`), made after the graph.

While capturing nothing real changes. An attribute write goes to the object's pending attributes (reads
of it in the same capture see the write); a list or dict is captured as one traced copy per real
container (`Tracer.wrap`), and the copy is what the traced code mutates and reads. After the graph has
run, `replay` makes the recorded changes to the real objects, in program order: first every target and
value is resolved (from the state before any change), then the changes are made. A capture that fails
or restarts leaves no trace; at a graph break the changes made before it are replayed before the call
Python makes there, so a break or a fallback never leaves a change half made."""
from .marks import unmark


class _Deleted:
    def __repr__(self):
        return "<deleted>"


DELETED = _Deleted()


class SideEffects:
    """The side effects of one capture."""

    def __init__(self):
        self.pending = {}     # id(obj) -> {attribute name: value or DELETED}, as the traced code left them
        self.log = []         # (kind, obj, name, value) in program order; kind setattr, delattr or contents
        self.changed = set()  # ids of traced copies of real containers whose contents changed
        self.keep = []        # the objects, alive while their ids are keys
        self.version = 0      # counts every write: an instruction that wrote and then failed restarts the capture

    def __bool__(self):
        return bool(self.log)

    def has_attrs(self, obj):
        return id(obj) in self.pending

    def attr(self, obj, name):
        """(True, value) for an attribute the traced code wrote, (False, None) for one it did not;
        AttributeError for one it deleted."""
        p = self.pending.get(id(obj))
        if p is None or name not in p:
            return False, None
        v = p[name]
        if v is DELETED:
            raise AttributeError(f"'{type(obj).__name__}' object has no attribute '{name}'")
        return True, v

    def store(self, obj, name, value):
        self.version += 1
        self.pending.setdefault(id(obj), {})[name] = value
        self.keep.append(obj)
        self.log.append(("setattr", obj, name, value))

    def delete(self, obj, name):
        self.version += 1
        self.pending.setdefault(id(obj), {})[name] = DELETED
        self.keep.append(obj)
        self.log.append(("delattr", obj, name, None))

    def call(self, fn, args, kwargs):
        """fn(*args, **kwargs) made after the graph, in program order with the other changes (a logging
        call: capture/interpreter/library_calls.py)."""
        self.version += 1
        self.keep += [fn, args, kwargs]
        self.log.append(("call", fn, None, (tuple(args), dict(kwargs))))

    def contents(self, copy):
        """The traced copy of a real list or dict is about to change: its final contents are written
        back to the real container (at the position of its first change)."""
        self.version += 1
        if id(copy) not in self.changed:
            self.changed.add(id(copy))
            self.keep.append(copy)
            self.log.append(("contents", copy, None, None))

    def marks(self, marker):
        """The log with targets and values as markers (marks.Marker), for `replay`. The contents of a
        container are its contents when the graph ends."""
        out = []
        for kind, obj, name, value in self.log:
            target = marker.mark(obj)
            if kind == "call":
                args, kwargs = value
                out.append((kind, target, None, (tuple(marker.mark(a) for a in args),
                                                 {k: marker.mark(v) for k, v in kwargs.items()})))
            elif kind == "contents":
                items = [(k, marker.mark(x)) for k, x in obj.items()] if isinstance(obj, dict) \
                    else [marker.mark(x) for x in obj]
                out.append((kind, target, type(obj), items))
            else:
                out.append((kind, target, name, marker.mark(value) if kind == "setattr" else None))
        return out


def replay(effects, state, args, memo):
    """Makes the side effects marked by SideEffects.marks, after the graph ran: targets and values are
    all resolved first, then the changes are made in program order. Attributes are written as the
    traced code wrote them, with object.__setattr__ (a custom __setattr__ was inlined while capturing)."""
    resolved = []
    for kind, target, name, value in effects:
        obj = unmark(target, state, args, memo)
        if kind == "call":
            cargs, ckwargs = value
            value = (tuple(unmark(a, state, args, memo) for a in cargs),
                     {k: unmark(v, state, args, memo) for k, v in ckwargs.items()})
        elif kind == "contents":
            if name is dict:
                value = [(k, unmark(x, state, args, memo)) for k, x in value]
            else:
                value = [unmark(x, state, args, memo) for x in value]
        elif kind == "setattr":
            value = unmark(value, state, args, memo)
        resolved.append((kind, obj, name, value))
    for kind, obj, name, value in resolved:
        if kind == "call":
            obj(*value[0], **value[1])
        elif kind == "setattr":
            object.__setattr__(obj, name, value)
        elif kind == "delattr":
            object.__delattr__(obj, name)
        elif name is dict:
            obj.clear()
            obj.update(value)
        else:
            obj[:] = value
