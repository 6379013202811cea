"""Runtime sizes in graph-dialect text (docs/dynamic_shapes.md): a graph captured with symbolic sizes gives
an op whose result has `?` dims that its operands do not determine (a reshape, an expand) the size of each
such dim as an `index` operand, `sizes(%a, %b)`. A symbol is read from the graph input that carries it
(`graph.dim %arg0, 1`); an expression over symbols (`2*s0`, `s0//4`) becomes `arith` ops on `index` values."""
from ..dynamic.symbolic import size_expr, static_size, symbol_positions


class SizeValues:
    """The size values of one function's text: each symbol and expression printed once, where first used."""

    def __init__(self, graph, type_of):
        self.type_of = type_of
        self.names = {}  # sympy expression -> SSA name
        # sympy Symbol -> (input node, dim)
        self.at = {e: (graph.inputs[k], d) for e, (k, d) in symbol_positions(graph.inputs).items()}
        self.count = 0

    def _new(self):
        self.count += 1
        return f"%size{self.count}"

    def value(self, expr, lines):
        """The SSA name of an index value equal to expr, appending the ops computing it to lines."""
        import sympy
        from torch.utils._sympy.functions import CeilDiv, FloorDiv, Mod, PythonMod
        if expr in self.names:
            return self.names[expr]
        if expr.is_Integer:
            name = self._new()
            lines.append(f"    {name} = arith.constant {int(expr)} : index")
        elif expr.is_Symbol:
            if expr not in self.at:
                raise NotImplementedError(f"the size {expr} is not a dim of any graph input")
            n, d = self.at[expr]
            name = self._new()
            lines.append(f"    {name} = graph.dim {n.name}, {d} : {self.type_of(n.meta)} -> index")
        elif isinstance(expr, (sympy.Add, sympy.Mul)):
            op = "arith.addi" if isinstance(expr, sympy.Add) else "arith.muli"
            args = [self.value(a, lines) for a in expr.args]
            name = args[0]
            for a in args[1:]:
                nxt = self._new()
                lines.append(f"    {nxt} = {op} {name}, {a} : index")
                name = nxt
        elif isinstance(expr, (FloorDiv, CeilDiv, Mod, PythonMod, sympy.Max, sympy.Min)) and len(expr.args) == 2:
            op = {FloorDiv: "arith.floordivsi", CeilDiv: "arith.ceildivsi", Mod: "arith.remsi",
                  PythonMod: "arith.remsi", sympy.Max: "arith.maxsi", sympy.Min: "arith.minsi"}[type(expr)]
            a, b = (self.value(x, lines) for x in expr.args)
            name = self._new()
            lines.append(f"    {name} = {op} {a}, {b} : index")
        elif isinstance(expr, sympy.Pow) and expr.exp.is_Integer and 1 <= int(expr.exp) <= 8:
            base = self.value(expr.base, lines)
            name = base
            for _ in range(int(expr.exp) - 1):
                nxt = self._new()
                lines.append(f"    {nxt} = arith.muli {name}, {base} : index")
                name = nxt
        else:
            raise NotImplementedError(f"a size computed as {expr} ({type(expr).__name__})")
        self.names[expr] = name
        return name

    def operands(self, meta, lines):
        """The SSA names of the sizes of meta's `?` dims, in order (the op's `sizes` operand)."""
        return [self.value(size_expr(d), lines) for d in meta.shape if static_size(d) is None]
