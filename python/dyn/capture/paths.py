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
    """args -> [the value at each path], as one generated function (the runners' hot path). A prefix
    that several paths share (a layer's module, for each of its parameters) is read once into a local."""
    ns, uses = {}, {}
    keys = []
    for k, path in enumerate(paths):
        root = ("o", id(path[1])) if path[0] == "obj" else ("a", path[1])
        steps = [root] + [(type(a), a[1], type(a[1])) if type(a) is tuple else (type(a), a) for a in path[2:]]
        keys.append(steps)
        for n in range(1, len(steps)):
            uses[tuple(steps[:n])] = uses.get(tuple(steps[:n]), 0) + 1
    lines, exprs, local = [], [], {}
    for k, path in enumerate(paths):
        if path[0] == "obj":
            ns[f"o{k}"] = path[1]
            e = f"o{k}"
        else:
            e = f"args[{path[1]}]"
        steps = keys[k]
        start = 0
        for n in range(len(steps) - 1, 0, -1):  # the longest prefix already read
            if tuple(steps[:n]) in local:
                e, start = local[tuple(steps[:n])], n - 1
                break
        for j, a in enumerate(path[2 + start:], start=start + 1):
            if type(a) is str and a.isidentifier() and not keyword.iskeyword(a):
                e += f".{a}"
            elif type(a) is str:
                e = f"getattr({e}, {a!r})"
            elif type(a) is int:
                e += f"[{a}]"
            else:
                ns[f"k{k}_{j}"] = a[1]
                e += f"[k{k}_{j}]"
            prefix = tuple(steps[:j + 1])
            if j + 1 < len(steps) and uses.get(prefix, 0) > 1 and prefix not in local:
                local[prefix] = f"v{len(local)}"
                lines.append(f"    {local[prefix]} = {e}")
                e = local[prefix]
        exprs.append(e)
    body = "\n".join(lines + [f"    return [{', '.join(exprs)}]"])
    exec(f"def gather(args):\n{body}\n", ns)
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
        out.append(f"[{a}]" if isinstance(a, int) else f"[{_key_str(a[1])}]" if isinstance(a, tuple) else "." + a)
        k += 1
    return "".join(out)


def _key_str(key):
    """A dict key in a source string: its repr where short; a tensor key (an optimizer's state is keyed by the
    parameters) by its type and shape: its repr formats its values (0.6 s for ResNet-50's Adam state)."""
    if isinstance(key, (str, int, float, bool)) or key is None:
        return repr(key)
    if isinstance(key, torch.Tensor):
        return f"<{type(key).__name__} {'x'.join(map(str, key.shape))}>"
    return f"<{type(key).__name__}>"


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


def _guard_tree(cpaths):
    """The path guards ((path, kind, value), ...) of an entry as a tree that reads each object once:
    ((root flag, root, checks, children), ...) with a child (step, checks, children) and checks
    ((kind, value), ...) in the guards' order. Guards sharing a prefix (every parameter of a layer
    below the layer's module) share its reads: a ViT-B's 966 path guards walk 5,100 steps flat and
    about 1,000 as a tree. None when a step cannot be a key (the flat guards are checked then)."""
    roots = {}
    try:
        for path, kind, want in cpaths:
            key = (path[0], path[1] if path[0] is False else id(path[1]))
            node = roots.setdefault(key, (path[0], path[1], [], {}))
            for step in path[2:]:
                k = (type(step), step[1] if type(step) is tuple else step,
                     type(step[1]) if type(step) is tuple else None)
                children = node[-1]
                node = children.get(k) or children.setdefault(k, (step, [], {}))
            node[-2].append((kind, want))
    except TypeError:  # an unhashable item key
        return None

    def freeze(node):
        return node[:-2] + (tuple(node[-2]), tuple(freeze(c) for c in node[-1].values()))
    return tuple(freeze(r) for r in roots.values())
