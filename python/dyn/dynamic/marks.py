"""Which argument dims a capture makes symbolic: those marked with dyn.mark_dynamic (or TorchDynamo's
torch._dynamo.mark_dynamic), every dim under dyn.compile(..., dynamic=True), and, by default (dynamic=None),
the dims whose sizes alone made a call miss every entry (automatic dynamic: the second size seen of a dim
makes it symbolic, as TorchDynamo does). dynamic=False never makes a dim symbolic."""
import torch

_ATTR = "_dyn_dynamic_dims"  # on a tensor: {dim: (min, max)}


def mark_dynamic(t, dim, min=None, max=None):
    """Marks dim (an int or a list of ints) of tensor t dynamic: a function compiled with dyn.compile that
    takes t as an argument captures that dim as a symbolic size from the first call, valid for every size
    in [min, max] (sizes 0 and 1 stay specialized). A call whose size is outside the bounds does not use
    that graph (it compiles another)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"dyn.mark_dynamic: expected a tensor, got {type(t).__name__}")
    dims = [dim] if isinstance(dim, int) else list(dim)
    marks = dict(getattr(t, _ATTR, None) or {})
    for d in dims:
        if not isinstance(d, int) or not -t.dim() <= d < t.dim():
            raise IndexError(f"dyn.mark_dynamic: dim {d} out of range for a tensor of {t.dim()} dims")
        if min is not None and max is not None and min > max:
            raise ValueError(f"dyn.mark_dynamic: min {min} is above max {max}")
        marks[d % t.dim()] = (min, max)
    setattr(t, _ATTR, marks)


def marked_dims(t):
    """{dim: (min, max)} marked on t by dyn.mark_dynamic or torch._dynamo.mark_dynamic."""
    marks = dict(getattr(t, _ATTR, None) or {})
    for d in getattr(t, "_dynamo_dynamic_indices", ()) or ():
        marks.setdefault(d, (None, None))
    return marks


def _key(t):
    return (type(t), t.dtype, t.device, t.dim(), t.requires_grad)


def input_record(tensors, sources):
    """What automatic dynamic remembers of an entry: (source, key, sizes) per input tensor reached from the
    arguments."""
    return [(src, _key(t), tuple(t.shape)) for t, src in zip(tensors, sources) if src[0] == "arg"]


def changed_dims(records, args, resolver):
    """{source: dims}: the dims of contiguous input tensors whose sizes differ from an earlier entry's
    tensor at the same source where nothing else about it (type, dtype, device, rank, requires_grad)
    differs. records: input_record per entry; resolver(source) -> args -> value."""
    out = {}
    for record in records:
        for src, key, shape in record:
            try:
                t = resolver(src)(args)
            except Exception:  # the path is not there in this call
                continue
            if not isinstance(t, torch.Tensor) or _key(t) != key or not t.is_contiguous():
                continue
            dims = {d for d, (x, y) in enumerate(zip(shape, t.shape)) if x != y}
            if dims:
                out.setdefault(src, set()).update(dims)
    return out


def _top_level_marked(args):
    for a in args:
        items = a if type(a) in (tuple, list) else a.values() if type(a) is dict else (a,)
        if any(isinstance(x, torch.Tensor) and marked_dims(x) for x in items):
            return True
    return False


def dynamic_wanted(dynamic, args, sticky):
    """want(tensor, source) -> {dim: (min, max)} or None for this call's capture (dynamic/symbolic.py), or
    None when no dim is to be symbolic. sticky: {source: dims} found dynamic by earlier recompiles
    (automatic dynamic). dynamic=True makes every dim symbolic of the tensors passed as arguments (or in
    containers passed so), not of parameters or of tensors read as attributes (a module's buffers)."""
    if dynamic is False or (dynamic is None and not sticky and not _top_level_marked(args)):
        return None

    def want(t, source):
        dims = marked_dims(t)
        if dynamic is True and not isinstance(t, torch.nn.Parameter) and source[0] == "arg" and \
                not any(isinstance(step, str) for step in source[2:]):  # not a module's buffer
            for d in range(t.dim()):
                dims.setdefault(d, (None, None))
        for d in sticky.get(source, ()):
            if d < t.dim():
                dims.setdefault(d, (None, None))
        return dims or None
    return want
