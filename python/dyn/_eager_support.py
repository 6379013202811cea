"""What the registry's eager expressions (python/dyn/_ops_generated.py) share: reductions with the graph
dialect's meaning of `dims` (empty: nothing reduced), ops whose attributes stand for PyTorch's arguments
in another form (pad's low/high, a slice, pooling by rank, the scans' kinds, the norms' running statistics),
the library ops whose attributes stand for PyTorch's optional arguments (fft_real, segment_reduce), and
eager's random draws: from a seed (seeded_random), or from torch's generator as the captured call drew them
(random, bernoulli, dropout: `capture` holds how the call was made)."""
import builtins
import contextlib

import torch


def reduce(fn, x, dims, keepdim):
    dims = list(dims)
    if not dims:
        return x.clone()
    return fn(x, dims, keepdim=bool(keepdim))


def prod(x, dims, keepdim):
    """torch.prod takes one dim at a time."""
    for d in sorted(dims, reverse=True):
        x = torch.prod(x, d, keepdim=bool(keepdim))
    return x


def fft_real(x, kind, has_s, s, has_dim, dim, norm):
    """torch.fft.<kind> with the graph op's attributes: a 1-d kind's n and dim are one-element s and dim."""
    fn = getattr(torch.fft, kind)
    s = list(s) if has_s else None
    dim = list(dim) if has_dim else None
    norm = norm or None
    if kind in ("irfft", "hfft"):
        return fn(x, s[0] if s else None, dim[0] if dim else -1, norm)
    if dim is None and kind.endswith("2"):
        return fn(x, s, norm=norm)
    return fn(x, s, dim, norm)


def div_rounded(a, b, mode):
    """torch.div with a rounding mode, a 0-d operand of another dtype beside a tensor taken as the Python number
    it stands for (graph.div_rounded)."""
    if b.dim() == 0 and a.dim() and b.dtype != a.dtype:
        b = b.item()
    elif a.dim() == 0 and b.dim() and a.dtype != b.dtype:
        a = a.item()
    return torch.div(a, b, rounding_mode=mode)


def norm_stats(x, dims, eps):
    """The mean and 1 / sqrt(biased variance + eps) over dims, in the accumulate type (graph.norm_stats)."""
    if x.dtype in (torch.float16, torch.bfloat16):
        x = x.float()
    dims = list(dims)
    mean = x.mean(dims, keepdim=True)
    var = ((x - mean) * (x - mean)).mean(dims, keepdim=True)
    rstd = 1 / torch.sqrt(var + eps)
    kept = [s for d, s in enumerate(x.shape) if d not in dims]
    return mean.reshape(kept), rstd.reshape(kept)


def upsample(x, mode, output_size, align_corners, scales):
    """aten.upsample_{linear1d,bilinear2d,trilinear3d,bicubic2d} with the graph op's attributes: scales one
    per resampled dim, 0 where none was given."""
    nd = len(output_size)
    name = {1: "linear1d", 2: "bilinear2d", 3: "trilinear3d"}[nd] if mode == "linear" else "bicubic2d"
    given = [s if s > 0 else None for s in scales] if scales else [None] * nd
    return getattr(torch.ops.aten, f"upsample_{name}").default(x, list(output_size), bool(align_corners), *given)


def grouped_mm(input, weight, offs):
    """Rows offs[g-1]:offs[g] of input times weight[g] (Python's slices of the offsets), the other rows
    zero: transformers' grouped_mm_fallback, and torch._grouped_mm's 2-d x 3-d form where it is defined."""
    out = torch.zeros(input.shape[0], weight.shape[2], dtype=input.dtype, device=input.device)
    start = 0
    for g, end in enumerate(offs.tolist()):
        if start != end:
            torch.mm(input[start:end], weight[g], out=out[start:end])
        start = end
    return out


def segment_reduce(data, segments, reduce, use_offsets, axis, unsafe, has_initial, initial):
    where = {"offsets" if use_offsets else "lengths": segments}
    return torch.segment_reduce(data, reduce, **where, axis=axis, unsafe=bool(unsafe),
                                initial=initial if has_initial else None)


_SEEDED = {
    "uniform": lambda x, a, b, n: torch.empty_like(x).uniform_(a, b),
    "normal": lambda x, a, b, n: torch.empty_like(x).normal_(a, b),
    "exponential": lambda x, a, b, n: torch.empty_like(x).exponential_(a),
    "integers": lambda x, a, b, n: torch.empty_like(x).random_(int(a), int(b)),
    "cauchy": lambda x, a, b, n: torch.empty_like(x).cauchy_(a, b),
    "geometric": lambda x, a, b, n: torch.empty_like(x).geometric_(a),
    "log_normal": lambda x, a, b, n: torch.empty_like(x).log_normal_(a, b),
    "bernoulli": lambda x, a, b, n: torch.bernoulli(x),
    "dropout": lambda x, a, b, n: torch.dropout(x, a, True),
    "dropout_": lambda x, a, b, n: torch.dropout_(x.clone(), a, True),
    "feature_dropout": lambda x, a, b, n: _feature(torch.feature_dropout, x, a, n),
    "feature_dropout_": lambda x, a, b, n: _feature(torch.feature_dropout_, x.clone(), a, n),
    "alpha_dropout": lambda x, a, b, n: torch.alpha_dropout(x, a, True),
    "feature_alpha_dropout": lambda x, a, b, n: torch.feature_alpha_dropout(x, a, True),
    "rrelu": lambda x, a, b, n: torch.rrelu(x, a, b, True),
    "multinomial": lambda x, a, b, n: torch.multinomial(x, n, bool(b)),
    "normal_tensors": lambda mean, std, a, b, n: torch.normal(mean, std),
    "normal_tensor_mean": lambda x, a, b, n: torch.normal(x, a),
    "normal_tensor_std": lambda x, a, b, n: torch.normal(a, x),
}


def _feature(fn, x, p, n):
    if n == 1:  # an unbatched (C, ...) input: eager unsqueezes it
        return fn(x.unsqueeze(0), p, True).squeeze(0)
    return fn(x, p, True)


@contextlib.contextmanager
def _seeded(device, seed):
    """torch's generators seeded with `seed` inside, restored after (torch.testing's wrapper_set_seed)."""
    with torch.random.fork_rng(devices=[device] if device.type != "cpu" else [], device_type=device.type):
        torch.manual_seed(seed)
        yield


def seeded_random(kind, seed, a, b, n, *xs):
    """Eager's draw `kind` from `seed` (the generator restored after)."""
    with _seeded(xs[0].device, seed):
        return _SEEDED[kind](*xs, a, b, n)


def seeded_attention(q, k, v, p, is_causal, has_scale, scale, enable_gqa, seed):
    with _seeded(q.device, seed):
        return torch.nn.functional.scaled_dot_product_attention(
            q, k, v, dropout_p=p, is_causal=bool(is_causal), scale=scale if has_scale else None,
            enable_gqa=bool(enable_gqa))


def attention_backward(grad, q, k, v, mask, is_causal, scale):
    """graph.attention_backward: eager's attention run again and differentiated."""
    with torch.enable_grad():
        q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=bool(is_causal),
                                                               scale=scale)
        return torch.autograd.grad(out, (q, k, v), grad)


def _fused_attention(q, k, v, is_causal, scale):
    """The fused kernel SDPA's dispatch picks (1 flash, 2 memory-efficient; python/src/aten_calls.cpp's
    fusedAttentionKernel), or None."""
    if q.dim() != 4:
        return None
    backend = torch._fused_sdp_choice(q, k, v, None, 0.0, bool(is_causal), scale=scale)
    if q.is_cuda:
        return {1: "cuda_flash", 2: "cuda_efficient"}.get(backend)
    return "cpu_flash" if backend == 1 else None


def attention_lse(q, k, v, p, is_causal, scale):
    """graph.attention_lse: eager's fused kernel, its log-sum-exp in the first columns of [B, H, ceil32(L)]."""
    if p != 0:
        raise NotImplementedError("attention_lse: dropout is not supported")
    aten, causal = torch.ops.aten, bool(is_causal)
    lse = torch.zeros(q.shape[0], q.shape[1], (q.shape[2] + 31) // 32 * 32, device=q.device,
                      dtype=torch.float64 if q.dtype == torch.float64 else torch.float32)
    kind, rows = _fused_attention(q, k, v, causal, scale), None
    if kind == "cuda_flash":
        out, rows = aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False, scale=scale)[:2]
    elif kind == "cuda_efficient":
        out, rows = aten._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, causal, scale=scale)[:2]
    elif kind == "cpu_flash":
        out, rows = aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, scale=scale)
    else:
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    if rows is not None:
        lse[..., :rows.shape[-1]] = rows
    return out, lse, torch.zeros(2, dtype=torch.int64, device=q.device)


def attention_lse_backward(grad, q, k, v, out, lse, rng, p, is_causal, scale):
    """graph.attention_lse_backward: the backward kernel of the forward's fused kernel."""
    if p != 0:
        raise NotImplementedError("attention_lse_backward: dropout is not supported")
    aten, causal, L, S = torch.ops.aten, bool(is_causal), q.shape[2], k.shape[2]
    kind = _fused_attention(q, k, v, causal, scale)
    if kind == "cuda_flash":
        seed, offset = torch.zeros(2, dtype=torch.uint64), torch.zeros((), dtype=torch.uint64)
        return aten._scaled_dot_product_flash_attention_backward(
            grad, q, k, v, out, lse[..., :L].contiguous(), None, None, L, S, 0.0, causal, seed, offset, scale=scale)
    if kind == "cuda_efficient":
        seed, offset = torch.zeros((), dtype=torch.int64), torch.zeros((), dtype=torch.int64)
        return aten._scaled_dot_product_efficient_attention_backward(
            grad, q, k, v, None, out, lse, seed, offset, 0.0, [True, True, True, False], causal, scale=scale)[:3]
    if kind == "cpu_flash":
        rows = torch.empty(q.shape[0], L, q.shape[1], dtype=lse.dtype).transpose(1, 2)
        rows.copy_(lse[..., :L])
        return aten._scaled_dot_product_flash_attention_for_cpu_backward(grad, q, k, v, out, rows, 0.0, causal,
                                                                          scale=scale)
    return attention_backward(grad, q, k, v, None, is_causal, scale)


def _attention_bias(mask, q, k):
    """A mask as the memory-efficient kernel's bias (aten_calls.cpp attentionBias)."""
    bias = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill_(~mask, float("-inf")) \
        if mask.dtype == torch.bool else mask.to(q.dtype)
    S, padded = k.shape[2], (k.shape[2] + 15) // 16 * 16
    aligned = torch.empty(*bias.shape[:-1], padded, dtype=bias.dtype, device=bias.device)[..., :S]
    aligned.copy_(bias)
    return aligned.reshape((1,) * (4 - aligned.dim()) + tuple(aligned.shape)).expand(*q.shape[:3], S)


def masked_attention_lse(q, k, v, mask, p, is_causal, scale):
    """graph.masked_attention_lse without dropout: the memory-efficient kernel with the mask as its bias."""
    if p != 0:
        raise NotImplementedError("masked_attention_lse: dropout is not supported")
    lse = torch.zeros(q.shape[0], q.shape[1], (q.shape[2] + 31) // 32 * 32, device=q.device, dtype=torch.float32)
    out, rows = torch.ops.aten._scaled_dot_product_efficient_attention(
        q, k, v, _attention_bias(mask, q, k), True, 0.0, bool(is_causal), scale=scale)[:2]
    lse[..., :rows.shape[-1]] = rows
    return out, lse, torch.zeros(2, dtype=torch.int64, device=q.device)


def masked_attention_lse_backward(grad, q, k, v, mask, out, lse, rng, p, is_causal, scale):
    """graph.masked_attention_lse_backward without dropout: the memory-efficient backward kernel."""
    if p != 0:
        raise NotImplementedError("masked_attention_lse_backward: dropout is not supported")
    seed, offset = torch.zeros((), dtype=torch.int64), torch.zeros((), dtype=torch.int64)
    return torch.ops.aten._scaled_dot_product_efficient_attention_backward(
        grad, q, k, v, _attention_bias(mask, q, k), out, lse, seed, offset, 0.0, [True, True, True, False],
        bool(is_causal), scale=scale)[:3]


def embedding_bag(weight, input, offsets, per_sample_weights, mode, padding_idx, include_last_offset):
    """graph.embedding_bag: padding_idx -1 is none."""
    return torch.nn.functional.embedding_bag(input, weight, offsets, mode=mode, per_sample_weights=per_sample_weights,
                                             include_last_offset=bool(include_last_offset),
                                             padding_idx=None if padding_idx < 0 else padding_idx)


def _unstacked(indices, dim):
    return [None] * dim + list(indices.unbind(0))


def masked_index(x, mask, indices, dim, fill):
    """graph.masked_index: the stacked indices at dims dim.. (fill, an f64 attribute, in x's kind)."""
    if x.dtype == torch.bool:
        fill = bool(fill)
    elif not x.dtype.is_floating_point:
        fill = int(fill)
    return torch.ops.aten._unsafe_masked_index(x, mask, _unstacked(indices, dim), fill)


def masked_index_put(x, mask, indices, values, dim):
    return torch.ops.aten._unsafe_masked_index_put_accumulate(x, mask, _unstacked(indices, dim), values)


def constant(value, dtype, device):
    """A new tensor of the constant (the caller may update a returned constant in place)."""
    if isinstance(value, torch.Tensor):
        return value.to(device=device or "cpu", copy=True)
    return torch.tensor(value, dtype=dtype, device=device or "cpu")


def slice(x, dim, start, end, step):
    return x[(builtins.slice(None),) * dim + (builtins.slice(start, end, step),)]


def gather(x, dim, index):
    """A negative index counts from the end, as the compiled gather's does."""
    index = index.long()
    return torch.gather(x, dim, torch.where(index < 0, index + x.shape[dim], index))


def convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    return torch.convolution(x, w, b, stride, padding, dilation, bool(transposed),
                             output_padding if output_padding is not None else [0] * len(stride), groups)


def pad(x, mode, low, high, value):
    """F.pad from (low, high) per dim: pairs from the last dim back to the first padded one; the
    non-constant modes take pads of the last 1 (2-d, 3-d inputs), 2 (3-d, 4-d) or 3 dims (4-d, 5-d) only."""
    pads, pairs = [], list(zip(low, high))
    rank = len(pairs)
    while pairs and pairs[0] == (0, 0) and (mode == "constant" or len(pairs) > max(rank - 2, 1)):
        pairs.pop(0)
    for lo, hi in reversed(pairs):
        pads += [lo, hi]
    return torch.nn.functional.pad(x, pads, mode, value if mode == "constant" else None)


def _by_rank(name, n):
    return getattr(torch.nn.functional, f"{name}{n}d")


def max_pool(x, kernel, stride, padding, dilation, ceil_mode):
    return _by_rank("max_pool", len(kernel))(x, kernel, stride, padding, dilation, ceil_mode=bool(ceil_mode))


def avg_pool(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    kw = dict(ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad))
    if len(kernel) > 1:  # avg_pool1d has no divisor_override
        kw["divisor_override"] = divisor_override
    return _by_rank("avg_pool", len(kernel))(x, kernel, stride, padding, **kw)


def adaptive_pool(kind, x, output_size):
    return _by_rank(kind, len(output_size))(x, output_size)


_SCANS = {"sum": torch.cumsum, "prod": torch.cumprod, "logsumexp": torch.logcumsumexp,
          "max": lambda x, d: torch.cummax(x, d).values, "min": lambda x, d: torch.cummin(x, d).values}


def cumulative(x, kind, dim):
    return _SCANS[kind](x, dim)


def cumulative_index(x, kind, dim):
    return (torch.cummax if kind == "max" else torch.cummin)(x, dim).indices


def scatter(x, dim, index, src, reduce, include_self, wraps):
    if wraps:
        index = torch.where(index < 0, index + x.shape[dim], index)
    if reduce == "none":
        return torch.scatter(x, dim, index, src)
    return torch.scatter_reduce(x, dim, index, src, reduce, include_self=bool(include_self))


def batch_norm(x, w, b, running_mean, running_var, count, training, momentum, eps):
    """F.batch_norm; with running statistics in training, also their updated values, computed on copies
    (eager's kernel writes them in place; capture writes the returned ones back). count (the batches
    tracked after this one) stands for momentum 1 / count, nn.BatchNorm's cumulative average."""
    updates = bool(training) and running_mean is not None
    if updates:
        running_mean, running_var = running_mean.clone(), running_var.clone()
    if count is not None:
        momentum = 1.0 / float(count)
    y = torch.nn.functional.batch_norm(x, running_mean, running_var, w, b, bool(training),
                                       momentum if momentum is not None else 0.0, eps)
    return (y, running_mean, running_var) if updates else y


def instance_norm(x, w, b, running_mean, running_var, use_input_stats, momentum, eps):
    """F.instance_norm; updated running statistics as batch_norm's."""
    updates = bool(use_input_stats) and running_mean is not None
    if updates:
        running_mean, running_var = running_mean.clone(), running_var.clone()
    y = torch.nn.functional.instance_norm(x, running_mean, running_var, w, b, bool(use_input_stats), momentum, eps)
    return (y, running_mean, running_var) if updates else y


_DRAWS = {"uniform": "uniform_", "normal": "normal_", "exponential": "exponential_", "integers": "random_",
          "cauchy": "cauchy_", "log_normal": "log_normal_", "geometric": "geometric_"}


def random(distribution, a, b, shape, dtype, device):
    """graph.random with eager's numbers: torch's in-place draw of the distribution on a new tensor."""
    t = torch.empty(tuple(shape), dtype=dtype, device=device or "cpu")
    if distribution in ("exponential", "geometric"):
        return getattr(t, _DRAWS[distribution])(a)
    if distribution == "integers":
        a, b = int(a), int(b)
    return getattr(t, _DRAWS[distribution])(a, b)


def bernoulli(p, capture):
    """Tensor.bernoulli_(p) of a number draws with its in-place kernel (capture recorded fill_p)."""
    if "fill_p" in capture:
        return torch.empty_like(p).bernoulli_(capture["fill_p"])
    return torch.bernoulli(p)


_FEATURE_DROPOUT = {"dropout1d": torch.nn.functional.dropout1d, "dropout2d": torch.nn.functional.dropout2d,
                    "dropout3d": torch.nn.functional.dropout3d}


def dropout(x, p, feature_dims, capture):
    """The captured call's own kernel and draws: F.dropout or F.dropout<n>d (capture's `fn`), in place on a
    copy where eager's call was in place."""
    inplace = capture.get("eager_inplace", False)
    if inplace:
        x = x.clone()
    if feature_dims is None or feature_dims < 0:
        return torch.nn.functional.dropout(x, p, True, inplace)
    return _FEATURE_DROPOUT[capture["fn"]](x, p, True, inplace)
