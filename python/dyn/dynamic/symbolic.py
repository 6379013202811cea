"""Symbolic sizes while capturing (docs/dynamic_shapes.md). A capture with dynamic dims gives those dims of
its argument tensors symbols of PyTorch's ShapeEnv and traces under a FakeTensorMode over it: meta results
then carry sizes as expressions (`2*s0`, `s0//2`), Python code that reads a size gets a SymInt, and every
decision the code makes on one (`if x.size(1) > 128`, a broadcast that needs two sizes equal, a `range()`
over a size) is recorded by the ShapeEnv as a guard on the relation rather than on the value. After capture
those guards become one Python check over the call's argument sizes, and the graph's `?` dims are sized at
run time from the inputs that carry their symbols."""
import math

import torch

# sizes 0 and 1 stay constants (as in TorchDynamo): broadcasting and empty tensors behave differently there
MIN_DYNAMIC = 2


def _imports():
    from torch._dynamo.source import ConstantSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv
    from torch.utils._sympy.printers import PythonPrinter
    return ConstantSource, FakeTensorMode, DimDynamic, ShapeEnv, PythonPrinter


def is_symbolic(v):
    return isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool))


def holds_symbolic(v, depth=0):
    """Whether v is, or holds in a container, a symbolic number."""
    if is_symbolic(v):
        return True
    if isinstance(v, (tuple, list, set, frozenset)) and depth < 16:
        return any(holds_symbolic(x, depth + 1) for x in v)
    if isinstance(v, dict) and depth < 16:
        return any(holds_symbolic(x, depth + 1) for x in v.values())
    if isinstance(v, slice):
        return any(holds_symbolic(x, depth + 1) for x in (v.start, v.stop, v.step))
    return False


def static_size(d):
    """d as an int where it is one (or its symbol was specialized to a constant), else None."""
    if not isinstance(d, torch.SymInt):
        return int(d)
    node = d.node
    expr = node.shape_env.replace(node.expr) if node.shape_env is not None else node.expr
    return int(expr) if expr.is_number else None


def size_expr(d):
    """The sympy expression of a size (an int gives a sympy Integer)."""
    import sympy
    if not isinstance(d, torch.SymInt):
        return sympy.Integer(int(d))
    node = d.node
    return node.shape_env.replace(node.expr) if node.shape_env is not None else node.expr


def symbol_positions(inputs):
    """sympy Symbol -> (position, dim): where among the graph inputs `inputs` (Nodes) each symbol is a whole
    dim, the first such place (the compiled code reads the symbol's size there)."""
    at = {}
    for k, n in enumerate(inputs):
        for d, size in enumerate(n.meta.shape):
            if isinstance(size, torch.SymInt) and static_size(size) is None:
                e = size_expr(size)
                if e.is_Symbol:
                    at.setdefault(e, (k, d))
    return at


class SymbolicSizes:
    """The ShapeEnv and fake mode of one capture. want(tensor, source) -> {dim: (min, max)} (max None:
    unbounded) or None: the dims to make symbolic of an input tensor reached through source (a path of
    capture/paths.py); a dim of size 0 or 1 in this call stays a constant, and so does every dim of a
    tensor that is not contiguous."""

    def __init__(self, want):
        ConstantSource, FakeTensorMode, DimDynamic, ShapeEnv, _ = _imports()
        self._source, self._dynamic = ConstantSource, DimDynamic.DYNAMIC
        # no duck sizing: two dims of one size get two symbols; an equality the code relies on is a guard
        self.env = ShapeEnv(duck_shape=False)
        self.mode = FakeTensorMode(shape_env=self.env, allow_non_fake_inputs=True)
        self.env.dyn_fake_mode = self.mode  # meta_empty: metas of symbolic sizes made under it
        self.want = want
        self.symbols = {}  # sympy Symbol -> (source, dim)
        self.bounds = {}   # sympy Symbol -> (min, max)
        self.made = {}     # source -> (tensor, the dims given symbols)

    def input_shape(self, t, source):
        """The sizes of the meta tensor standing for input tensor t reached through source."""
        dims = self.want(t, source) if source is not None and source not in self.made else None
        if not dims or not t.is_contiguous():
            return tuple(t.shape)
        shape = []
        for d, size in enumerate(t.shape):
            if d not in dims or size < MIN_DYNAMIC:
                shape.append(size)
                continue
            lo, hi = dims[d]
            lo = max(MIN_DYNAMIC, lo or MIN_DYNAMIC)
            if size < lo or (hi is not None and size > hi):  # outside mark_dynamic's bounds: a constant
                shape.append(size)
                continue
            name = f"s{len(self.symbols)}"
            s = self.env.create_symbol(size, source=self._source(name), dynamic_dim=self._dynamic)
            if hi is not None or lo > MIN_DYNAMIC:
                self.env.constrain_symbol_range(s, compiler_min=lo, compiler_max=hi if hi is not None else 2**62)
            self.symbols[s] = (source, d)
            self.bounds[s] = (lo, hi)
            shape.append(self.env.create_symintnode(s, hint=size, source=self._source(name)))
        made = tuple(d for d, x in enumerate(shape) if isinstance(x, torch.SymInt))
        if made:
            self.made[source] = (t, made)
        return tuple(shape)

    def dynamic_ids(self):
        """ids of the real tensors given symbolic dims (their guards are the symbolic check's)."""
        return {id(t) for t, _ in self.made.values()}

    def live_symbols(self):
        """The symbols not specialized to a constant by a guard."""
        return [s for s in self.symbols if not self.env.replace(s).is_number]

    def conditions(self):
        """What must hold of the call's sizes for the graph to be right: the guards the code's decisions
        on sizes recorded, the equalities the ShapeEnv substituted, each symbol's range."""
        import sympy
        env = self.env
        out = [g.expr for g in env.guards]
        out += [sympy.Eq(s, r) for s, r in env.replacements.items() if s in self.symbols]
        for s in self.symbols:
            lo, hi = self.bounds[s]
            out.append(s >= lo)
            if hi is not None:
                out.append(s <= hi)
        return out

    def specialized_where(self):
        """Where the first guard fixing a symbol to a constant was made (the user's line where known)."""
        for g in self.env.guards:
            e = g.expr
            if getattr(e, "is_Equality", False) and any(a.is_number for a in e.args):
                loc = g.sloc.maybe_user_loc or g.sloc.framework_loc
                return f"{e} at {loc.filename}:{loc.lineno}" if hasattr(loc, "filename") else f"{e} at {loc}"
        return None

    def guard_count(self):
        return len(self.env.guards), len(self.env.replacements)

    def checker(self, resolver):
        """check(args) -> bool: each tensor given symbolic dims, read again through its source
        (resolver(source) -> args -> value), still has the captured type, dtype, device, rank, static sizes,
        contiguity and requires_grad, and the sizes satisfy the conditions. Generated Python."""
        *_, PythonPrinter = _imports()
        printer = PythonPrinter()
        ns = {"math": math, "torch": torch}
        lines = ["def check(args):", "    try:"]
        where = {}
        for k, (source, (t, dims)) in enumerate(self.made.items()):
            ns[f"R{k}"], ns[f"T{k}"], ns[f"D{k}"], ns[f"V{k}"] = resolver(source), type(t), t.dtype, t.device
            lines.append(f"        a{k} = R{k}(args)")
            lines.append(f"        if type(a{k}) is not T{k} or a{k}.dtype is not D{k} or a{k}.device != V{k} or "
                         f"a{k}.dim() != {t.dim()} or a{k}.requires_grad is not {t.requires_grad} or "
                         f"not a{k}.is_contiguous(): return False")
            lines.append(f"        z{k} = a{k}.shape")
            for d, size in enumerate(t.shape):
                if d not in dims:
                    lines.append(f"        if z{k}[{d}] != {int(size)}: return False")
            where[source] = k
        names = {}
        for s, (source, d) in self.symbols.items():
            names[s] = sympy_symbol(f"{s}")
            lines.append(f"        {s} = z{where[source]}[{d}]")
        conds = []
        for c in self.conditions():
            c = c.xreplace(names)
            if c is True or c == True:  # noqa: E712 (sympy's true)
                continue
            conds.append(printer.doprint(c))
        for c in dict.fromkeys(conds):
            lines.append(f"        if not ({c}): return False")
        lines += ["        return True", "    except Exception:", "        return False"]
        code = "\n".join(lines)
        exec(compile(code, "<dyn symbolic guards>", "exec"), ns)
        check = ns["check"]
        check.source = code
        return check

    def describe(self, source_text=str):
        """Lines for DYN_LOGS=guards and explain: which input dims are symbolic, and the relations."""
        *_, PythonPrinter = _imports()
        printer = PythonPrinter()
        out = []
        for s, (source, d) in self.symbols.items():
            r = self.env.replace(s)
            out.append(f"{source_text(source)} dim {d}: " + (f"specialized to {r}" if r.is_number else f"symbolic {s}"))
        out += [f"size relation: {printer.doprint(c)}" for c in self.conditions()]
        return out


def sympy_symbol(name):
    import sympy
    return sympy.Symbol(name, integer=True)


def size_function(exprs_per_output, symbol_at):
    """A generated function of the kernel's inputs giving each output's sizes. exprs_per_output: per
    output, a tuple of sympy expressions (or ints); symbol_at: sympy Symbol -> (input position, dim)."""
    *_, PythonPrinter = _imports()
    printer = PythonPrinter()
    names = {s: sympy_symbol(f"s_{k}_{d}") for s, (k, d) in symbol_at.items()}
    lines = ["def sizes(ins):"]
    for s, (k, d) in symbol_at.items():
        lines.append(f"    {names[s]} = ins[{k}].shape[{d}]")
    outs = []
    for exprs in exprs_per_output:
        items = [printer.doprint(e.xreplace(names)) if hasattr(e, "xreplace") else str(int(e)) for e in exprs]
        outs.append("(" + "".join(f"{x}, " for x in items) + ")")
    lines.append("    return [" + ", ".join(outs) + "]")
    ns = {"math": math}
    exec(compile("\n".join(lines), "<dyn output sizes>", "exec"), ns)
    return ns["sizes"]


def _fake_mode(args):
    """The fake mode of the first symbolic size among a factory's size arguments, or None."""
    for a in args:
        for d in (a if isinstance(a, (tuple, list, torch.Size)) else (a,)):
            if isinstance(d, torch.SymInt):
                return getattr(d.node.shape_env, "dyn_fake_mode", None)
    return None


def meta_empty(*args, **kwargs):
    """torch.empty(..., device="meta"), a fake tensor where a size is symbolic (ops on a plain meta tensor
    of symbolic sizes need the fake mode)."""
    mode = _fake_mode(args[:1] if args and isinstance(args[0], (tuple, list, torch.Size)) else args)
    if mode is None:
        return torch.empty(*args, **kwargs)
    with mode:
        return torch.empty(*args, **kwargs)


def meta_empty_strided(size, stride, **kwargs):
    """torch.empty_strided(..., device="meta"), a fake tensor where a size or stride is symbolic."""
    mode = _fake_mode((size, stride))
    if mode is None:
        return torch.empty_strided(size, stride, **kwargs)
    with mode:
        return torch.empty_strided(size, stride, **kwargs)
