"""Causal masks built from aranges with symbolic sizes (transformers' sdpa_mask under a symbolic capture:
`kv_idx <= q_idx` over two aranges of the sequence length, broadcast to [B, 1, L, L]). With concrete sizes
capture computes the mask and compares it with tril (WindowOps._is_causal_mask); with symbolic ones there is
no value to compare, so the mask's graph is read as a formula instead: each integer tensor as an affine form
of the indices of its dims, each comparison as `form <= 0`. A mask whose formula is `j - i <= 0` over its
last two dims (query i, key j) is the causal mask at every size. Anything else (an offset, a window, a
padding mask and-ed in, an op the reader does not know) is not recognized: the mask stays a mask."""
import torch

_LIMIT = 64  # nodes read at most


def same_size(a, b):
    """Whether two sizes are one size at every call, without guarding (equal symbolic expressions)."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, torch.SymInt) and isinstance(b, torch.SymInt):
        return a.node.expr == b.node.expr
    return False


def _is_one(d):
    return isinstance(d, int) and d == 1


class _Form:
    """sum(coef[p] * index along dim p) + const, p counted from the last dim (-1, -2, ...); `relation`: the
    value is the boolean `form <= 0`."""

    def __init__(self, coefs, const, relation=False):
        self.coefs = {p: c for p, c in coefs.items() if c}
        self.const, self.relation = const, relation

    def placed(self, shape):
        """The form on a tensor of `shape`: an index along a size-1 dim is 0."""
        return _Form({p: c for p, c in self.coefs.items() if not _is_one(shape[p])}, self.const, self.relation)


def _reshape_positions(src, dst):
    """For a reshape that only inserts or removes size-1 dims: source position -> result position of each dim
    that is not 1 (both counted from the end); None for any other reshape."""
    a = [p for p in range(-1, -len(src) - 1, -1) if not _is_one(src[p])]
    b = [p for p in range(-1, -len(dst) - 1, -1) if not _is_one(dst[p])]
    if len(a) != len(b) or not all(same_size(src[x], dst[y]) for x, y in zip(a, b)):
        return None
    return dict(zip(a, b))


def _form(node, memo):
    """node's value as a _Form, or None."""
    if node in memo:
        return memo[node]
    if len(memo) >= _LIMIT:
        return None
    memo[node] = None  # (a cycle or an unknown op reads as unknown)
    shape, op = tuple(node.meta.shape), node.op
    ins = [_form(i, memo) for i in node.inputs]
    if any(f is None for f in ins):
        return None
    dtype = node.meta.dtype
    r = None
    if op == "iota" and len(shape) == 1 and not dtype.is_floating_point and dtype != torch.bool:
        r = _Form({-1: 1}, 0)
    elif op == "constant" and isinstance(node.attrs.get("value"), int) and \
            not isinstance(node.attrs.get("value"), bool) and all(_is_one(d) for d in shape):
        r = _Form({}, node.attrs["value"])
    elif op in ("add", "sub") and not node.attrs and not dtype.is_floating_point and dtype != torch.bool and \
            not ins[0].relation and not ins[1].relation:
        sign = 1 if op == "add" else -1
        coefs = dict(ins[0].coefs)
        for p, c in ins[1].coefs.items():
            coefs[p] = coefs.get(p, 0) + sign * c
        r = _Form(coefs, ins[0].const + sign * ins[1].const)
    elif op in ("le", "lt", "ge", "gt") and not node.attrs and not ins[0].relation and not ins[1].relation:
        a, b = (ins[0], ins[1]) if op in ("le", "lt") else (ins[1], ins[0])
        coefs = dict(a.coefs)
        for p, c in b.coefs.items():
            coefs[p] = coefs.get(p, 0) - c
        # integers: a < b is a - b + 1 <= 0
        r = _Form(coefs, a.const - b.const + (1 if op in ("lt", "gt") else 0), relation=True)
    elif op == "reshape":
        moved = _reshape_positions(tuple(node.inputs[0].meta.shape), shape)
        if moved is not None:
            f = ins[0].placed(tuple(node.inputs[0].meta.shape))
            if all(p in moved for p in f.coefs):
                r = _Form({moved[p]: c for p, c in f.coefs.items()}, f.const, f.relation)
    elif op == "expand":
        src = tuple(node.inputs[0].meta.shape)
        # broadcast dims (size 1 in the source) read index 0; the others keep their place from the end
        if len(src) <= len(shape) and all(_is_one(s) or same_size(s, d) for s, d in zip(reversed(src), reversed(shape))):
            r = ins[0].placed(src)
    if r is not None:
        r = r.placed(shape)
    memo[node] = r
    return r


def is_symbolic_causal_mask(mask_node, length):
    """Whether the boolean graph value `mask_node` ([..., L, L], L = `length`) is, at every size, the causal
    mask: key j is seen by query i where j <= i."""
    shape = tuple(mask_node.meta.shape)
    if mask_node.meta.dtype != torch.bool or len(shape) < 2 or not same_size(shape[-1], length) or \
            not same_size(shape[-2], length):
        return False
    f = _form(mask_node, {})
    return f is not None and f.relation and f.coefs == {-1: 1, -2: -1} and f.const == 0
