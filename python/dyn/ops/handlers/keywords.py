"""Torch's keyword names for the handlers' parameters. A handler takes torch's arguments in torch's order,
but its parameters may be named otherwise (`x` for torch's `input`, `split_size` for
`split_size_or_sections`): a call that names them as torch does (`F.dropout(input=h, p=0.1)`) has them
renamed here. The names come from torch itself: a Python function's signature, else the dispatcher's
schemas (`self` is `input` for torch.* functions and the bound tensor for methods). A name is renamed only
where the handler's parameter at torch's position for it is not a name torch gives another parameter, and
only for handlers whose names torch also uses sit at torch's positions for them (else nothing is renamed:
test_keywords lists what stays unmapped)."""
import inspect
from types import MappingProxyType

import torch

_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def torch_parameters(fn=None, method=None):
    """Per signature of torch's function fn (or Tensor.<method>, without self): [(name, positional)],
    positional False for keyword-only parameters; [] when torch has no signature to read."""
    python = fn if fn is not None else getattr(torch.Tensor, method, None)
    if inspect.isfunction(python):  # torch.nn.functional's, torch/_tensor.py's methods
        ps = [p for p in inspect.signature(python).parameters.values() if p.kind in _KEYWORD]
        return [[(p.name, p.kind is not inspect.Parameter.KEYWORD_ONLY) for p in ps[fn is None:]]]
    if fn is not None:
        try:
            sig = inspect.signature(fn)
            return [[(p.name, p.kind is not inspect.Parameter.KEYWORD_ONLY)
                     for p in sig.parameters.values() if p.kind in _KEYWORD]]
        except (TypeError, ValueError):
            pass
        name = getattr(fn, "__name__", None)
    else:
        name = method
    if not name:
        return []
    try:
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + name)
    except RuntimeError:
        return []
    out = []
    for s in schemas:
        if not any("Tensor" in str(a.type) for a in s.arguments[:1 if method is not None else None]):
            continue  # TorchScript's overloads on numbers and strings (aten::exp.float, aten::split.str)
        args = [(a.name, not a.kwarg_only) for a in s.arguments]
        if method is not None:
            if not args or args[0][0] != "self":
                continue
            args = args[1:]
        else:
            args = [("input" if n == "self" else n, p) for n, p in args]
        out.append(args)
    return out


def handler_parameters(h, bound):
    """The handler's parameter names after `o` (and after the tensor a method is bound to); None where it
    takes **kwargs or has no signature."""
    try:
        ps = list(inspect.signature(h).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ps):
        return None
    return [p.name for p in ps if p.kind in _KEYWORD][1 + bound:]


def _positional(h, bound):
    ps = inspect.signature(h).parameters.values()
    return [p.name for p in ps if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD][1 + bound:]


def _varargs(h):
    try:
        return any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in inspect.signature(h).parameters.values())
    except (TypeError, ValueError):
        return False


def renames(h, fn=None, method=None):
    """{torch's name: the handler's} for the parameters the handler names otherwise; None for the one
    torch parameter a handler's *args stands for (x.view(size=s) is x.view(s), x.permute(dims=d))."""
    hp = handler_parameters(h, method is not None)
    if hp is None:
        return {}
    accepted = set(hp)
    if _varargs(h):
        # the *args slot follows the positional parameters; keyword-only ones come after it (torch.zeros's
        # size= is the handler's *size, not its dtype)
        hp = _positional(h, method is not None) + [None]
    out, dropped = {}, set()
    for params in torch_parameters(fn, method):
        positional = [n for n, p in params if p]
        names = {n for n, _ in params}
        if any(j < len(positional) and n in names and positional[j] != n for j, n in enumerate(hp)):
            continue  # the handler's order is not torch's
        for j, n in enumerate(positional):
            if n in accepted or j >= len(hp) or hp[j] in names or (hp[j] is None and j + 1 < len(positional)):
                continue
            if out.get(n, hp[j]) != hp[j]:
                dropped.add(n)  # two signatures disagree
            out[n] = hp[j]
    # NumPy's names, which torch's argument parser takes for these (torch.cat(xs, axis=0), x.sum(axis=1,
    # keepdims=True)) where the signature has no parameter of that name
    torch_names = {n for params in torch_parameters(fn, method) for n, _ in params}
    for alias, name in _NUMPY_ALIASES.items():
        if name in torch_names and alias not in torch_names and out.get(name, name) in accepted | {None}:
            out[alias] = out.get(name, name)
    return {k: v for k, v in out.items() if k not in dropped}


_NUMPY_ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def table(funcs, methods):
    """The renames of every handler that has some: torch function -> {...} and method name -> {...}."""
    f = {fn: r for fn, h in funcs.items() if (r := renames(h, fn=fn))}
    m = {name: r for name, h in methods.items() if (r := renames(h, method=name))}
    return MappingProxyType(f), MappingProxyType(m)


def rename(table_, key, args, kwargs):
    """(args, kwargs) with torch's names turned into the handler's, the one its *args stands for last in
    args."""
    r = table_.get(key) if kwargs else None
    if not r:
        return args, kwargs
    out = {}
    for k, v in kwargs.items():
        n = r.get(k, k)
        if n is None:
            args = [*args, v]
        else:
            out[n] = v
    return args, out
