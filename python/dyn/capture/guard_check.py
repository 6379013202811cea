"""Guards checked in Python (the cache lookup without the frame hook, dyn.export's check) and guards in
words: DYN_LOGS=guards, dyn.explain's out_guards and why a call missed an entry (recompiles)."""
import torch

from .guards import DictKeys, ModuleGuard, StateEquals, Structure, _arg_guard, _is_container, _py_check_tensor
from .paths import _resolver, _steps_str
from .values import strict_eq


def _read_global(where, name):
    if name is None:
        return where.cell_contents
    if callable(where):
        return where()
    return where[name]


def _check_globals(gg):
    if gg is None:
        return True
    for where, name, want, kind in gg:
        try:
            v = _read_global(where, name)
        except (ValueError, KeyError):
            return False
        if v is not want and (kind != 2 or not strict_eq(v, want)):
            return False
    return True



def _py_lookup(entries, args):
    for e in entries:
        guards = e[0]
        if len(guards) != len(args):
            continue
        ok = True
        for a, g in zip(args, guards):
            if g is None:
                continue
            k = g[0]
            if k == 0:
                ok = _py_check_tensor(a, g)
            elif k == 1:
                ok = a is g[1]
            else:
                ok = type(a) is g[1] and strict_eq(a, g[2])
            if not ok:
                break
        if ok and len(e) > 3:
            ok = _check_globals(e[3])
        if ok and len(e) > 4:
            ok = _check_paths(e[4], args)
        if ok and len(e) > 2 and e[2] is not None:
            try:
                ok = bool(e[2](args))
            except Exception:
                ok = False
        if ok:
            return e
    return None


def _describe_arg(i, a):
    if _is_container(a):
        return f"arg{i}: a {type(a).__name__} checked by its items (below)"
    g = _arg_guard(a)
    if g[0] == 0:
        return (f"arg{i}: tensor dtype={g[2]} device={g[3]} size={g[4]} stride={g[5]} "
                f"requires_grad={g[6]}")
    if g[0] == 1:
        return (f"arg{i}: is {type(a).__name__} object" if a is not None and not isinstance(a, bool)
                else f"arg{i}: is {a!r}")
    return f"arg{i}: == {a!r}"


def _describe_guards(args, gg=None, paths=None):
    out = [_describe_arg(i, a) for i, a in enumerate(args)]
    for cpath, kind, want in paths or ():
        what = {0: lambda: f"tensor dtype={want[2]} device={want[3]} size={want[4]} stride={want[5]} "
                           f"requires_grad={want[6]}",
                1: lambda: f"is {type(want).__name__} object", 2: lambda: f"== {want!r}",
                3: lambda: f"{want[0].__name__} with the same " + ("keys " + repr(list(want[1])) if want[0] is dict
                                                                   else "items") + " and items",
                4: lambda: repr(want) if isinstance(want, (StateEquals, DictKeys)) else "container with the same items",
                5: lambda: f"module without hooks, forward {getattr(want, '__qualname__', want)}"}[kind]()
        out.append(f"{_cpath_str(cpath)}: {what}")
    for where, name, v, kind in gg or ():
        if callable(where):
            out.append(f"{name}: is {v}")
            continue
        what = f"global {name} ({where.get('__name__', '?')})" if name is not None else "closure cell"
        out.append(f"{what}: {'==' if kind == 2 else 'is'} {v!r}" if kind == 2 else
                   f"{what}: is {type(v).__name__} object")
    return out


def _guard_failure(entry, args):
    """Why `args` miss `entry`: the first guard that fails, in words."""
    guards = entry[0]
    if len(guards) != len(args):
        return f"{len(args)} arguments, was {len(guards)}"
    for i, (a, g) in enumerate(zip(args, guards)):
        if g is None:
            continue
        if g[0] == 0:
            if not isinstance(a, torch.Tensor):
                return f"arg{i} is a {type(a).__name__}, was a tensor"
            for what, now, was in (("dtype", a.dtype, g[2]), ("device", a.device, g[3]),
                                   ("size", tuple(a.size()), g[4]), ("stride", tuple(a.stride()), g[5]),
                                   ("requires_grad", a.requires_grad, g[6])):
                if now != was:
                    return f"arg{i}.{what} is {now}, was {was}"
        elif g[0] == 1 and a is not g[1]:
            return f"arg{i} is another object than {g[1]!r}" if not isinstance(a, (bool, type(None))) \
                else f"arg{i} is {a!r}, was {g[1]!r}"
        elif g[0] == 2 and (type(a) is not g[1] or not strict_eq(a, g[2])):
            return f"arg{i} == {a!r}, was {g[2]!r}"
    if len(entry) > 3 and not _check_globals(entry[3]):
        for where, name, want, kind in entry[3]:
            if not _check_globals(((where, name, want, kind),)):
                if callable(where):
                    return f"{name} is {where()}, was {want}"
                return f"global {name} changed" if name is not None else "a closure variable changed"
    for cpath, kind, want in (entry[4] if len(entry) > 4 else None) or ():
        if not _check_path(cpath, kind, want, args):
            if isinstance(want, StateEquals):
                return f"{_cpath_str(cpath)} changed (its state, deep-copied while capturing)"
            if isinstance(want, DictKeys):
                return f"{_cpath_str(cpath)} changed (its attributes, copied while capturing)"
            return f"{_cpath_str(cpath)} {_PATH_CHANGE[kind]}"
    return "several inputs alias differently (the same tensor, or overlapping memory)"


_PATH_CHANGE = {0: "is another kind of tensor (type, dtype, device, size, stride or requires_grad)",
                1: "is another object", 2: "changed value", 3: "changed (length, keys or items)",
                4: "changed (length, keys or items)", 5: "has hooks now, or another forward"}


def _cpath_str(cpath):
    root = f"<{type(cpath[1]).__name__}>" if cpath[0] else f"arg{cpath[1]}"
    return root + _steps_str(cpath[2:])



def _check_path(cpath, kind, want, args):
    """One path guard in Python (the same rules as eval_frame.c check_paths): the lookup without the
    frame hook, and the words of a guard failure."""
    try:
        v = _resolver(("obj" if cpath[0] else "arg",) + cpath[1:])(args)
    except (AttributeError, KeyError, IndexError, TypeError):
        return False
    if kind == 0:
        return isinstance(v, torch.Tensor) and _py_check_tensor(v, want)
    if kind == 1:
        return v is want
    if kind == 2:
        return strict_eq(v, want)
    if kind == 3:
        return Structure.check_tuple(want, v)
    if kind == 5:
        return ModuleGuard(want).check(v)
    return bool(want(v))


def _check_paths(paths, args):
    return paths is None or all(_check_path(p, k, w, args) for p, k, w in paths)
