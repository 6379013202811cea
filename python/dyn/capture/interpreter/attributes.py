"""Attribute writes and deletions, hasattr, and changes to containers the traced code did not create
(Frame mixin). Writes to objects made while capturing happen on them; writes to real objects are side
effects (capture/side_effects.py): recorded, seen by later reads, made on the real objects after the
graph. A custom __setattr__, __delattr__ or __getattribute__ written in Python is inlined down to
object's, so what is recorded is the plain write eager makes in the end."""
import types

import torch

from ...ops import TensorVar
from ..guards import HasAttr
from ..origins import is_torch_code
from ..values import MISSING, Opaque, type_attr

_MISSING = MISSING
_type_attr = type_attr


def _is_data_descriptor(d):
    return d is not _MISSING and hasattr(type(d), "__set__")


def _inlinable(f):
    """A special method written in Python outside torch and dyn: inlined like user code."""
    return isinstance(f, types.FunctionType) and not is_torch_code(f)


def _plain_object(obj):
    """An object whose attributes live in an instance __dict__ that object.__setattr__ writes."""
    return not isinstance(obj, (type, types.ModuleType, TensorVar, Opaque)) and \
        isinstance(getattr(obj, "__dict__", None), dict)


class AttrOps:
    # -- writes ------------------------------------------------------------------------------------------
    def store_attr(self, obj, name, value):
        """obj.name = value, as Python makes it: through the type's __setattr__."""
        if isinstance(obj, (TensorVar, Opaque)):
            self.fail("attribute assignment on a tensor")
        t = type(obj)
        setter = _type_attr(t, "__setattr__")
        if setter is object.__setattr__:
            return self.generic_setattr(obj, name, value)
        if setter is torch.nn.Module.__setattr__:
            return self.module_setattr(obj, name, value)
        if _inlinable(setter):
            self.call(setter, [obj, name, value], {})
            return None
        self.fail(f"attribute assignment on a {t.__name__} (its __setattr__)")

    def module_setattr(self, mod, name, value):
        """nn.Module.__setattr__ of a plain value is object's; parameters, buffers and submodules (which
        it registers) are not captured."""
        d = mod.__dict__
        if any(name in d.get(k, ()) for k in ("_parameters", "_buffers", "_modules")) or \
                isinstance(value, (torch.nn.Module, torch.Tensor)) or (
                    isinstance(value, TensorVar) and value.input_index is not None and
                    type(self.tr.input_tensors[value.input_index]) is not torch.Tensor):
            self.fail(f"assignment to the parameter, buffer or submodule {type(mod).__name__}.{name}")
        return self.generic_setattr(mod, name, value)

    def generic_setattr(self, obj, name, value):
        """object.__setattr__(obj, name, value): a data descriptor of the type (a property's setter is
        inlined), else the instance __dict__: directly on an object made here, recorded on a real one."""
        if type(name) is not str:
            self.fail("attribute name that is not a str")
        t = type(obj)
        desc = _type_attr(t, name)
        if _is_data_descriptor(desc):
            if type(desc) is property and _inlinable(desc.fset):
                self.call(desc.fset, [obj, value], {})
                return None
            self.fail(f"assignment to the descriptor {t.__name__}.{name}")
        if id(obj) in self.tr.created:
            if t not in self.tr.created_classes and not getattr(t, "_dyn_scratch", False):
                self.fail(f"attribute assignment on a {t.__name__} made while capturing")
            object.__setattr__(obj, name, value)
            return None
        if not _plain_object(obj):
            self.fail(f"attribute assignment on a {t.__name__}")
        self.tr.side.store(obj, name, value)
        return None

    def delete_attr(self, obj, name):
        """del obj.name, through the type's __delattr__."""
        if isinstance(obj, (TensorVar, Opaque)):
            self.fail("attribute deletion on a tensor")
        t = type(obj)
        deleter = _type_attr(t, "__delattr__")
        if deleter is torch.nn.Module.__delattr__:
            if any(name in obj.__dict__.get(k, ()) for k in ("_parameters", "_buffers", "_modules")):
                self.fail(f"deletion of the parameter, buffer or submodule {t.__name__}.{name}")
            return self.generic_delattr(obj, name)
        if deleter is object.__delattr__:
            return self.generic_delattr(obj, name)
        if _inlinable(deleter):
            self.call(deleter, [obj, name], {})
            return None
        self.fail(f"attribute deletion on a {t.__name__} (its __delattr__)")

    def generic_delattr(self, obj, name):
        t = type(obj)
        desc = _type_attr(t, name)
        if _is_data_descriptor(desc):
            if type(desc) is property and _inlinable(desc.fdel):
                self.call(desc.fdel, [obj], {})
                return None
            self.fail(f"deletion of the descriptor {t.__name__}.{name}")
        if id(obj) in self.tr.created:
            if t not in self.tr.created_classes:
                self.fail(f"attribute deletion on a {t.__name__} made while capturing")
            object.__delattr__(obj, name)
            return None
        if not _plain_object(obj):
            self.fail(f"attribute deletion on a {t.__name__}")
        side = self.tr.side
        try:
            written, _ = side.attr(obj, name)
        except AttributeError:
            self.fail(f"deletion of the attribute {name!r} deleted before (AttributeError)")
        if not written:
            # the deletion works only while the attribute is in the instance dict: guarded
            present = name in obj.__dict__
            src = self.source_of(obj)
            if src is not None:
                self.tr.attr_guards.append((src, HasAttr(name, present, in_dict=True)))
            if not present:
                self.fail(f"deletion of a missing attribute {name!r} (AttributeError)")
        side.delete(obj, name)
        return None

    # -- reads -------------------------------------------------------------------------------------------
    def pending_attr(self, obj, name):
        """obj.name where the traced code wrote or deleted attributes of obj: the written value, or the
        type's own __getattribute__ inlined (it reaches object's, which sees the writes); _MISSING when
        nothing was written (the real object answers)."""
        side = self.tr.side
        if not side.pending or not side.has_attrs(obj):
            return _MISSING
        if name == "__dict__":
            self.fail("reading the __dict__ of an object with attribute writes pending")
        getter = _type_attr(type(obj), "__getattribute__")
        if getter is not object.__getattribute__:
            if not _inlinable(getter):
                self.fail(f"attribute read on a {type(obj).__name__} (its __getattribute__) after a write")
            return self.call(getter, [obj, name], {})
        return self.generic_pending(obj, name)

    def generic_pending(self, obj, name):
        """object.__getattribute__ with the pending writes: a data descriptor of the type wins, then the
        written value; a deleted attribute is an AttributeError there (only a type with a __getattr__
        would answer, which is not modeled)."""
        if not _is_data_descriptor(_type_attr(type(obj), name)):
            try:
                written, v = self.tr.side.attr(obj, name)
            except AttributeError:
                if _type_attr(type(obj), "__getattr__") is not _MISSING:
                    self.fail(f"read of the deleted attribute {name!r} of a {type(obj).__name__} with __getattr__")
                raise
            if written:
                return v
        return _MISSING

    def has_attr(self, obj, name):
        """hasattr(obj, name): a read; an attribute found nowhere is guarded to stay missing."""
        try:
            self.getattr(obj, name)
        except AttributeError:
            return False
        return True

    def absent(self, obj, name):
        """A read of obj.name raised AttributeError: the code that ran depends on it staying missing."""
        if id(obj) in self.tr.created or isinstance(obj, (TensorVar, Opaque)) or \
                self.tr.side.has_attrs(obj) and name in self.tr.side.pending[id(obj)]:
            return
        src = self.source_of(obj)
        if src is not None:
            self.tr.attr_guards.append((src, HasAttr(name, False)))

    # -- containers --------------------------------------------------------------------------------------
    def mutate(self, obj, why):
        """obj (not made while capturing) is about to change: allowed on the traced copy of a real list or
        dict, whose final contents are written back after the graph."""
        tr = self.tr
        src = tr.sources.get(id(obj))
        if id(obj) not in tr.copy_sources or src is None or type(obj) not in (list, dict) or \
                any(step in ("__dict__", "_parameters", "_buffers", "_modules") for step in src[2:]):
            self.fail(why)
        tr.side.contents(obj)

    # -- special methods called directly --------------------------------------------------------------
    def object_method(self, fn, args, kwargs):
        """object.__setattr__/__delattr__/__getattribute__ called directly or through super() (from a
        custom __setattr__ being inlined): the plain write, deletion or read. None when fn is none of them."""
        if kwargs:
            return _MISSING
        if type(fn) is types.MethodWrapperType:
            obj, name = fn.__self__, fn.__name__
            if name not in ("__setattr__", "__delattr__", "__getattribute__") or \
                    fn != getattr(object, name).__get__(obj):
                return _MISSING
        elif type(fn) is types.WrapperDescriptorType and fn in (object.__setattr__, object.__delattr__,
                                                                 object.__getattribute__) and args:
            obj, name, args = args[0], fn.__name__, list(args[1:])
        else:
            return _MISSING
        if name == "__setattr__" and len(args) == 2:
            return self.generic_setattr(obj, *args)
        if name == "__delattr__" and len(args) == 1:
            return self.generic_delattr(obj, *args)
        if name == "__getattribute__" and len(args) == 1:
            v = self.generic_pending(obj, args[0])
            return self.generic_getattr(obj, args[0]) if v is _MISSING else v
        return _MISSING
