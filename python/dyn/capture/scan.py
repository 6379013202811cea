"""torch._higher_order_ops.associative_scan as capture traces it (transformers' Mamba takes this path while
compiling): torch's own generic_associative_scan written out with slices, cat, stack and pad, with the
combine function called on the batched slices directly, so a scan of n elements is log2(n) levels of
the combine function's ops in the graph (torch's "pointwise" mode; its "generic" mode calls it through
vmap, the same values for a combine function that works elementwise, which `check_elementwise` checks).
Traced by the interpreter, not run: every torch call here is captured."""
import torch
import torch.nn.functional as F


def associative_scan(combine_fn, xs, dim, reverse=False, combine_mode="pointwise"):
    single = isinstance(xs, torch.Tensor)
    leaves = [xs] if single else list(xs)
    kind = type(xs)

    def pack(ls):
        return ls[0] if single else kind(ls)

    def op(left, right):
        r = combine_fn(pack(left), pack(right))
        return [r] if single else list(r)

    d = dim % leaves[0].dim()
    leaves = [torch.movedim(x, d, 0) for x in leaves]
    if reverse:
        leaves = [torch.flip(x, [0]) for x in leaves]
    out = _scan(op, leaves)
    if reverse:
        out = [torch.flip(x, [0]) for x in out]
    return pack([torch.movedim(x, 0, d) for x in out])


def _scan(op, elems):
    """generic_associative_scan along dim 0: neighbours combined, the halves scanned recursively."""
    n = elems[0].shape[0]
    if n < 2:
        return elems
    odd = _scan(op, op([e[0:-1:2] for e in elems], [e[1::2] for e in elems]))
    if n % 2 == 0:
        even = op([e[:-1] for e in odd], [e[2::2] for e in elems])
    else:
        even = op(odd, [e[2::2] for e in elems])
    even = [torch.cat([e[0:1], r], 0) if r.shape[0] > 0 else e[0:1] for e, r in zip(elems, even)]
    return [_interleave(a, b) for a, b in zip(even, odd)]


def _interleave(a, b):
    short = a.shape[0] == b.shape[0] + 1
    if short:
        b = F.pad(b, [0, 0] * (b.dim() - 1) + [0, 1])
    r = torch.flatten(torch.stack([a, b], dim=1), 0, 1)
    return r[:-1] if short else r


def check_elementwise(combine_fn, metas, dim, device):
    """Whether combine_fn gives the same values called on slices batched along the scan dim as through
    torch.vmap over it (what torch's generic mode does): tried now on random float64 stand-ins for the
    operands (3 elements along the scan dim, on the graph's device). torch requires combine_fn to be pure."""
    single = isinstance(metas, torch.Tensor)
    leaves = [metas] if single else list(metas)
    pack = (lambda ls: ls[0]) if single else (lambda ls: type(metas)(ls))  # noqa: E731
    gen = torch.Generator(device="cpu").manual_seed(0)

    def stand_in(m):
        shape = list(m.shape)
        shape.pop(dim % m.dim())
        r = torch.rand([3] + shape, generator=gen, dtype=torch.float64) + 0.5
        return r.to(device) if m.dtype.is_floating_point else r.round().to(m.dtype).to(device)
    left, right = [stand_in(m) for m in leaves], [stand_in(m) for m in leaves]
    try:
        with torch.no_grad():
            direct = combine_fn(pack(left), pack(right))
            mapped = torch.vmap(combine_fn)(pack(left), pack(right))
    except Exception:  # noqa: BLE001 (any failure: not shown to be elementwise)
        return False
    direct = [direct] if isinstance(direct, torch.Tensor) else list(direct)
    mapped = [mapped] if isinstance(mapped, torch.Tensor) else list(mapped)
    return len(direct) == len(mapped) and all(
        isinstance(a, torch.Tensor) and a.shape == b.shape and torch.equal(a, b) for a, b in zip(direct, mapped))
