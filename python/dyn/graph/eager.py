"""The eager interpreter: a captured Graph run with PyTorch ops. run_node gives each op's meaning;
python_function makes the whole graph one generated Python function (the "eager" backend's hot path):
constants are made once, dtype conversions that cannot change anything are left out, and outputs that
can only be fresh tensors skip the aliasing checks. Ops without a short form there call run_node."""
import torch

from .. import _ops_generated
from .opset import EAGER, EXPR, OPS, Operand, operand_slots

# the names the registry's expressions use (torch, F, _rt), as the generated module has them
_EXPR_GLOBALS = {k: getattr(_ops_generated, k) for k in ("torch", "F", "_rt")}

# ops whose result is always a new tensor (never a view of an operand, never a constant): the registry's
# ops whose eager expression cannot return a view (reshape, permute, convert, ... can), and capture's
# attention with dropout
_FRESH = {op for op, d in OPS.items() if not d.view} | {"attention_dropout"}


def _attr_values(n):
    """A registered op's attribute values, in the registry's order (an absent unit attribute is False)."""
    return [n.attrs.get(name, False if kind == "unit" else None) for name, kind in OPS[n.op].attrs]


def _operands(n, xs, none="None"):
    """The node's operand values by the registry's operands (operand_slots): xs[k], a list for a variadic
    operand, `none` for an absent or external one."""
    return [none if k is None else [xs[i] for i in k] if isinstance(k, list) else xs[k] for k in operand_slots(n)]


def _extras(n):
    """The result's shape and device and the node's capture-time attributes (the registry's {shape},
    {device} and {capture})."""
    return dict(shape=tuple(n.meta.shape), device=n.attrs.get("device", "cpu"), capture=n.attrs)


def _registered_expr(n, args, ns, k):
    """The registry's expression of node n (EXPR), over operand names; attributes, the result's dtype,
    shape and device and the node's capture attributes are names in ns."""
    d = OPS[n.op]
    operands = _operands(n, args)
    names = {name: f"[{', '.join(v)}]" if isinstance(v, list) else v for name, v in zip(d.operands, operands)}
    for (name, _), v in zip(d.attrs, _attr_values(n)):
        ns[f"a{k}_{name}"] = list(v) if isinstance(v, tuple) else v
        names[name] = f"a{k}_{name}"
    ns[f"dt{k}"] = n.meta.dtype
    names["dtype"] = f"dt{k}"
    for key, v in _extras(n).items():
        ns[f"{key}{k}"] = v
        names[key] = f"{key}{k}"
    template = EXPR[n.op]
    for name, operand in zip(d.operands, operands):
        if operand in args and n.inputs[args.index(operand)].meta.dtype == n.meta.dtype:
            # x.to(x.dtype) is x itself: the call only costs time
            template = template.replace(f"{{{name}}}.to({{dtype}})", f"{{{name}}}")
    return template.format(**names)


def _number_operand(n):
    """The Python number that node n (div or pow) divides by or raises to, when capture made its second
    operand from one: eager hands PyTorch the number, and PyTorch computes differently with a number than
    with a 0-d tensor (CUDA divides by one as a * (1 / b), the reciprocal rounded from double; pow by 0.5, 2,
    -2 ... takes sqrt and multiplies), so the eager backend passes the number too. None otherwise."""
    if n.op not in ("div", "pow") or not n.meta.dtype.is_floating_point or len(n.inputs) != 2:
        return None
    lhs, rhs = n.inputs
    v = rhs.attrs.get("value") if rhs.op == "constant" else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or tuple(rhs.meta.shape) != () or \
            lhs.meta.dtype != n.meta.dtype:
        return None
    return v


def _expr(n, args, ns, k):
    """A Python expression for node n over operand names, or None (then run_node runs it)."""
    op = n.op
    number = _number_operand(n)
    if number is not None:
        return f"torch.{op}({args[0]}, {number!r})"
    if op in OPS:
        return _registered_expr(n, args, ns, k)
    a = n.attrs
    if op == "torch_call":
        ns[f"a{k}"] = a
        return f"call(a{k}, [{', '.join(args)}])"
    if op == "torch_result":
        return f"{args[0]}[{a['index']}]"
    return None


def _linear_patterns(graph):
    """nn.Linear as capture decomposes it, matmul(x, permute(w, [1, 0])) (+ b), N-d inputs flattened to 2-d
    and the product reshaped back, to be run as eager runs it: F.linear (one addmm, eager's rounding too). Returns ({node: (x, w, b or None)}, nodes folded in)."""
    users, outputs = {}, set(graph.outputs)
    for n in graph.nodes:
        for i in n.inputs:
            users.setdefault(i, []).append(n)

    def single(n):  # one use, and not returned (then it can be folded into its user)
        return len(users.get(n, ())) == 1 and n not in outputs

    def same_mode(*ns):
        return len({(n.attrs.get("grad_enabled"), n.attrs.get("inference_mode")) for n in ns}) == 1

    found, folded = {}, set()
    for m in graph.nodes:
        if m.op != "matmul" or m in folded:
            continue
        x, p = m.inputs
        if not (p.op == "permute" and list(p.attrs["dims"]) == [1, 0] and single(p) and x.meta.dim() == 2
                and x.meta.dtype == p.meta.dtype == m.meta.dtype and same_mode(m, p)):
            continue
        w = p.inputs[0]
        found[m], folded_here = (x, w, None), {p}
        out = m
        # an N-d input, flattened to 2-d and the product reshaped back: F.linear of the N-d input
        x0 = x.inputs[0] if x.op == "reshape" and single(x) else None
        r = users[m][0] if single(m) else None
        if x0 is not None and r is not None and r.op == "reshape" and x0.meta.dim() > 2 and \
                tuple(r.meta.shape) == tuple(x0.meta.shape[:-1]) + (m.meta.shape[1],) and \
                tuple(x.meta.shape) == (r.meta.shape[:-1].numel(), x0.meta.shape[-1]) and same_mode(x, m, r):
            del found[m]
            found[r] = (x0, w, None)
            folded_here |= {x, m}
            out = r
        m = out
        a = users[m][0] if single(m) else None
        if a is not None and a.op == "add":
            b = a.inputs[1] if a.inputs[0] is m else a.inputs[0]
            if b is not m and b.meta.dim() == 1 and b.meta.shape[0] == m.meta.shape[-1] and \
                    b.meta.dtype == a.meta.dtype == m.meta.dtype and same_mode(a, m):
                found[a] = (found.pop(m)[0], w, b)
                folded_here.add(m)
        folded |= folded_here
    return found, folded


def python_function(graph):
    """fn(*inputs) -> list of outputs, equivalent to running every node with run_node."""
    ns = {**_EXPR_GLOBALS, "run_node": run_node, "finish": _finish, "linear": torch.nn.functional.linear,
          "call": _call_attrs}
    names = {n: f"i{n.index}" for n in graph.inputs}
    linears, folded = _linear_patterns(graph)
    lines = [f"def run({', '.join(names[n] for n in graph.inputs)}):"]
    mode, indent = None, "    "
    for k, n in enumerate(graph.nodes):
        grad = n.attrs.get("grad_enabled")  # ops traced inside `with torch.no_grad()/enable_grad()`
        if n.attrs.get("inference_mode"):  # ... or `with torch.inference_mode()`
            grad = "inference"
        if grad != mode:
            mode = grad
            indent = "    " if grad is None else "        "
            if grad is not None:
                block = "inference_mode" if grad == "inference" else "enable_grad" if grad else "no_grad"
                lines.append(f"    with torch.{block}():")
        names[n] = f"v{k}"
        args = [names[i] for i in n.inputs]
        if n in folded:
            continue
        if n in linears:
            lines.append(f"{indent}v{k} = linear({', '.join(names[v] for v in linears[n] if v is not None)})")
            continue
        if n.op == "constant":
            ns[f"c{k}"] = run_node(n, [])  # made once; outputs never hand it out (finish copies)
            expr = f"c{k}"
        else:
            expr = _expr(n, args, ns, k)
            if expr is None:
                ns[f"n{k}"] = n
                expr = f"run_node(n{k}, [{', '.join(args)}])"
        lines.append(f"{indent}v{k} = {expr}")
    outs = [names[o] for o in graph.outputs]
    fresh = all(o.op in _FRESH for o in graph.outputs) and len(set(graph.outputs)) == len(graph.outputs)
    if fresh:  # new tensors, pairwise distinct: only their layout is fixed up
        lines.append(f"    return [{', '.join(o + '.contiguous()' for o in outs)}]")
    else:
        ins = ", ".join(names[n] for n in graph.inputs)
        ns["consts"] = frozenset(ns[f"c{k}"].untyped_storage().data_ptr() for k, n in enumerate(graph.nodes)
                                 if n.op == "constant" and ns[f"c{k}"].numel())
        lines.append(f"    return finish([{', '.join(outs)}], ({ins}{',' if graph.inputs else ''}), consts)")
    exec(compile("\n".join(lines) + "\n", f"<dyn graph {id(graph):x}>", "exec"), ns)
    return ns["run"]


def _finish(outs, inputs, consts):
    """Outputs are new contiguous tensors, as the compiled backends' (PyTorch's reshape, permute, expand
    and slice may give views of inputs, of the graph's constants or of each other)."""
    taken = set(consts)
    taken.update(t.untyped_storage().data_ptr() for t in inputs if isinstance(t, torch.Tensor) and t.numel())
    result = []
    for t in outs:
        if t.numel():
            p = t.untyped_storage().data_ptr()
            if p in taken or not t.is_contiguous():
                t = t.clone(memory_format=torch.contiguous_format)
                p = t.untyped_storage().data_ptr()
            taken.add(p)
        result.append(t)
    return result


def _fill(t, xs):
    """A torch_call's argument template with its operands in place (ops/torch_call.py Operand)."""
    if type(t) is Operand:
        return xs[t.index]
    if type(t) in (tuple, list):
        return type(t)(_fill(x, xs) for x in t)
    return t


def _call_attrs(a, xs):
    """A generic torch_call node (its attrs a): the op itself, with its non-tensor arguments as captured.
    An in-place op writes a copy of its operand (the node's value; capture wrote it back)."""
    k = a.get("inplace")
    if k is not None:
        xs = list(xs)
        xs[k] = xs[k].clone()
        a["target"](*_fill(a["args"], xs), **{n: _fill(v, xs) for n, v in a["kwargs"].items()})
        return xs[k]
    return a["target"](*_fill(a["args"], xs), **{n: _fill(v, xs) for n, v in a["kwargs"].items()})


def run_node(n, xs):
    op, a = n.op, n.attrs
    number = _number_operand(n)
    if number is not None:
        return getattr(torch, op)(xs[0], number)
    if op in OPS:  # the registry's semantics (dyn/_ops_generated.py); absent optional operands are None
        return EAGER[op](*_operands(n, xs, None), *_attr_values(n), dtype=n.meta.dtype, **_extras(n))
    if op == "torch_call":
        return _call_attrs(a, xs)
    if op == "torch_result":
        return xs[0][a["index"]]
    if op == "attention_dropout":  # eager's fused attention, its draws
        mask = xs[3] if len(xs) > 3 else None
        return torch.nn.functional.scaled_dot_product_attention(
            xs[0], xs[1], xs[2], attn_mask=mask, dropout_p=a["p"], is_causal=a["is_causal"], scale=a["scale"])
    raise NotImplementedError(op)
