"""Source paths: how capture names where a value came from, ('arg', i, step...) or ('obj', object, step...)
with a step an attribute name, an item index or ('item', key); readers made from them for the runners and
guards; their text for messages."""
import keyword
import operator

import torch


def _resolver(path):
    """args -> the value at path: ('arg', i, step...) or ('obj', object, step...); a step is an attribute
    name or an item index."""
    steps = path[2:]
    if path[0] == "obj":
        t = path[1]
        if not steps:
            return lambda args: t
        if all(isinstance(a, str) for a in steps):
            get_attr = operator.attrgetter(".".join(steps))
            return lambda args: get_attr(t)
        base = lambda args: t  # noqa: E731
    else:
        i = path[1]
        if not steps:
            return operator.itemgetter(i)
        if all(isinstance(a, str) for a in steps):
            get = operator.attrgetter(".".join(steps))
            return lambda args: get(args[i])
        base = operator.itemgetter(i)

    def resolve(args):
        v = base(args)
        for a in steps:
            v = v[a] if isinstance(a, int) else v[a[1]] if isinstance(a, tuple) else getattr(v, a)
        return v
    return resolve


def _gatherer(paths):
    """args -> [the value at each path], as one generated function (the runners' hot path)."""
    ns, exprs = {}, []
    for k, path in enumerate(paths):
        if path[0] == "obj":
            ns[f"o{k}"] = path[1]
            e = f"o{k}"
        else:
            e = f"args[{path[1]}]"
        for a in path[2:]:
            if type(a) is str and a.isidentifier() and not keyword.iskeyword(a):
                e += f".{a}"
            elif type(a) is str:
                e = f"getattr({e}, {a!r})"
            elif type(a) is int:
                e += f"[{a}]"
            else:
                ns[f"k{k}_{len(e)}"] = a[1]
                e += f"[k{k}_{len(e)}]"
        exprs.append(e)
    exec(f"def gather(args):\n    return [{', '.join(exprs)}]\n", ns)
    return ns["gather"]



def _in_argument(source):
    """The source is an argument or an item of an argument container (guarded by the argument guards)."""
    return source[0] == "arg" and all(type(a) in (int, tuple) for a in source[2:])


def _same_source(a, b):
    return len(a) == len(b) and all(x is y or (type(x) in (str, int, tuple) and type(x) is type(y) and x == y)
                                    for x, y in zip(a, b))


def _steps_str(steps):
    """Path steps as Python source: .attr, [index], ['key']; a module's _parameters/_buffers/_modules
    item reads as the attribute it is (.weight)."""
    out, k = [], 0
    while k < len(steps):
        a = steps[k]
        if a in _MODULE_DICTS and k + 1 < len(steps) and isinstance(steps[k + 1], tuple):
            out.append("." + str(steps[k + 1][1]))
            k += 2
            continue
        out.append(f"[{a}]" if isinstance(a, int) else f"[{a[1]!r}]" if isinstance(a, tuple) else "." + a)
        k += 1
    return "".join(out)


def _source_str(src):
    if src is None or (src[0] == "obj" and len(src) == 2):
        return "<tensor constant>"
    if src[0] == "obj":
        return f"<{type(src[1]).__name__}>" + _steps_str(src[2:])
    if src[0] == "arg":
        return f"arg{src[1]}" + _steps_str(src[2:])
    return str(src)




_MODULE_DICTS = ("_parameters", "_buffers", "_modules")


def _attr_steps(obj, name):
    """Path steps for obj.name. A module's parameters, buffers and submodules are read from its dicts
    (what Module.__getattr__ does, without its Python call): the guards re-read them fast."""
    if isinstance(obj, torch.nn.Module) and name not in obj.__dict__ and not hasattr(type(obj), name):
        for d in _MODULE_DICTS:
            if name in obj.__dict__.get(d, ()):
                return (d, ("item", name))
    return (name,)
