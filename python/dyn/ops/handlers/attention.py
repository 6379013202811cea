"""Handlers of PyTorch's fused transformer fast paths, which nn.MultiheadAttention and
nn.TransformerEncoderLayer take in eval mode: torch._native_multi_head_attention and
torch._transformer_encoder_layer_fwd. Both are written with graph ops (GEMM library calls for the
projections, graph.scaled_dot_product_attention, layer norms), following ATen's
native/transformers/attention.cpp and transformer.cpp; what ATen rejects is a graph break, so eager
raises its own error."""
import math

import torch

from ...errors import Unsupported
from ..tensor import TensorVar
from .registry import torch_function

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _shape(t):
    return tuple(t.meta.shape)


def _check_mha(query, key, value, embed_dim, num_head, tensors, mask, mask_type, flags):
    if not all(isinstance(t, TensorVar) for t in (query, key, value) + tensors):
        raise Unsupported("_native_multi_head_attention with a missing or non-tensor weight")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (embed_dim, num_head)):
        raise Unsupported("_native_multi_head_attention with non-int embed_dim or num_head")
    if not all(isinstance(f, bool) for f in flags):
        raise Unsupported("_native_multi_head_attention with non-bool need_weights/average_attn_weights")
    D, nh = embed_dim, num_head
    if query.meta.dim() != 3 or _shape(query)[2] != D or nh <= 0 or D % nh:
        raise Unsupported("_native_multi_head_attention: query must be [B, T, embed_dim] with embed_dim a "
                          "multiple of num_head (eager raises)")
    if _shape(key) != _shape(query) or _shape(value) != _shape(query):
        # ATen concatenates the three projections along the features: they need one shape
        raise Unsupported("_native_multi_head_attention with key/value shaped unlike the query (eager raises)")
    qkv_w, qkv_b, proj_w, proj_b = tensors
    if (_shape(qkv_w), _shape(qkv_b), _shape(proj_w), _shape(proj_b)) != ((3 * D, D), (3 * D,), (D, D), (D,)):
        raise Unsupported("_native_multi_head_attention weights of unexpected shapes")
    dts = {t.meta.dtype for t in (query, key, value) + tensors}
    if len(dts) != 1 or query.meta.dtype not in _FLOATS:
        raise Unsupported("_native_multi_head_attention of mixed or non-float dtypes")
    if query.meta.numel() == 0:
        raise Unsupported("_native_multi_head_attention of an empty query")
    if mask is None:
        return
    if not isinstance(mask, TensorVar):
        raise Unsupported("_native_multi_head_attention mask that is not a tensor")
    if mask_type is None:
        raise Unsupported("_native_multi_head_attention with a mask and no mask_type (eager raises)")
    B, T, _ = _shape(query)
    # ATen's masked softmax takes a mask shaped like the scores, a [B, T] key-padding mask (type 1) or a
    # [T, T] attention mask (type 0); anything else raises
    if not (_shape(mask) == (B, nh, T, T) or (mask_type == 1 and _shape(mask) == (B, T))
            or (mask_type == 0 and _shape(mask) == (T, T))):
        raise Unsupported(f"_native_multi_head_attention mask of shape {list(_shape(mask))} with mask_type "
                          f"{mask_type} (eager raises)")


def _heads(o, t, nh):
    """[B, T, D] -> [B, nh, T, D / nh]."""
    B, T, D = _shape(t)
    return o.transpose(o.reshape(t, (B, T, nh, D // nh)), 1, 2)


def native_multi_head_attention(o, query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight,
                                proj_bias, mask=None, need_weights=True, average_attn_weights=True,
                                mask_type=None):
    """(attention output, weights or None) as ATen's native_multi_head_attention: q, k, v projected by
    the packed in-projection, the scores masked where the mask is nonzero (a float mask is read as a
    boolean, as ATen's masked softmax does), weights averaged over heads when asked."""
    o.check(query, key, value)
    tensors = (qkv_weight, qkv_bias, proj_weight, proj_bias)
    _check_mha(query, key, value, embed_dim, num_head, tensors, mask, mask_type,
               (need_weights, average_attn_weights))
    D, nh = embed_dim, num_head
    B, T, _ = _shape(query)
    if query is key and key is value:
        qkv = o.linear(query, qkv_weight, qkv_bias)
        q, k, v = (o.slice(qkv, 2, i * D, (i + 1) * D, 1) for i in range(3))
    else:
        q, k, v = (o.linear(x, o.slice(qkv_weight, 0, i * D, (i + 1) * D, 1),
                            o.slice(qkv_bias, 0, i * D, (i + 1) * D, 1))
                   for i, x in enumerate((query, key, value)))
    q, k, v = (_heads(o, t, nh) for t in (q, k, v))
    weights = None
    if mask is None and not need_weights:
        ctx = o.attention(q, k, v)  # ATen's own fast path: one SDPA
    else:
        # ATen's math path: q scaled first, then softmax(q k^T) v with the mask applied to the scores
        q = o.binary("div", q, math.sqrt(D // nh))
        scores = o.matmul(q, o.transpose(k, 2, 3))
        if mask is not None:
            m = mask if mask.meta.dtype == torch.bool else o.binary("ne", mask, 0)
            if m.meta.dim() == 2 and mask_type == 1:  # key padding: [B, T] masks keys of each batch
                m = o.reshape(m, (B, 1, 1, T))
            scores = o.where(m, float("-inf"), scores)
        p = o.softmax("softmax", scores, -1)
        ctx = o.matmul(p, v)
        if need_weights:
            weights = o.binary("div", o.reduce("sum", p, 1), nh) if average_attn_weights else p
    ctx = o.reshape(o.transpose(ctx, 1, 2), (B, T, D))
    return o.linear(ctx, proj_weight, proj_bias), weights


def transformer_encoder_layer_fwd(o, src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                  use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
                                  ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None, mask_type=None):
    """ATen's transformer_encoder_layer_forward: self-attention (the handler above, no weights) and a
    ReLU or exact-GELU feed-forward, each with its residual, layer norms before or after."""
    o.check(src)
    extra = (norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2,
             ffn_bias_2)
    if not all(isinstance(t, TensorVar) for t in extra) or not isinstance(use_gelu, bool) or \
            not isinstance(norm_first, bool) or not isinstance(eps, (int, float)) or isinstance(eps, bool):
        raise Unsupported("_transformer_encoder_layer_fwd with unexpected arguments")
    if src.meta.numel() == 0:
        raise Unsupported("_transformer_encoder_layer_fwd of an empty input")
    D = embed_dim
    if any(_shape(t) != (D,) for t in extra[:4]) or any(t.meta.dtype != src.meta.dtype for t in extra):
        raise Unsupported("_transformer_encoder_layer_fwd norm weights of unexpected shapes or dtypes")

    def norm(x, w, b):
        return o.layer_norm(x, (D,), w, b, float(eps))

    x = norm(src, norm_weight_1, norm_bias_1) if norm_first else src
    x, _ = native_multi_head_attention(o, x, x, x, D, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                       mask, False, True, mask_type)
    x = o.binary("add", x, src)
    if not norm_first:
        x = norm(x, norm_weight_1, norm_bias_1)
    res = x
    if norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    h = o.linear(x, ffn_weight_1, ffn_bias_1)
    h = o.gelu(h) if use_gelu else o.unary("relu", h)
    x = o.binary("add", o.linear(h, ffn_weight_2, ffn_bias_2), res)
    if not norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    return x


torch_function.all({torch._native_multi_head_attention: native_multi_head_attention,
                    torch._transformer_encoder_layer_fwd: transformer_encoder_layer_fwd})
