"""PyTorch's fused transformer fast paths against eager: nn.MultiheadAttention in eval mode calls
torch._native_multi_head_attention, nn.TransformerEncoderLayer torch._transformer_encoder_layer_fwd.
dyn writes both with graph ops (ops/handlers/attention.py); each case is one graph (fullgraph=True) and,
with the dyn backend, compiled code (a fallback warns, and warnings fail here). Outputs and attention
weights are compared with eager's, NaNs of fully masked rows included."""
import warnings

import pytest
import torch
import torch.nn as nn

import dyn
from conftest import BACKENDS, has_compiler

B, T, D, H = 2, 5, 16, 2


def run(fn, *args, backend):
    with torch.no_grad():
        expected = fn(*args)
        compiled = dyn.compile(fn, backend=backend, fullgraph=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = compiled(*args)
    if backend == "dyn":
        assert dyn.stats()["compiled_graphs"] >= 1 and not dyn.stats()["eager_graphs"]
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if e is None:
            assert g is None
            continue
        assert g.shape == e.shape and g.dtype == e.dtype
        torch.testing.assert_close(g, e, equal_nan=True)
    return got


def mha():
    torch.manual_seed(0)
    return nn.MultiheadAttention(D, H, batch_first=True).eval()


def key_padding():
    m = torch.zeros(B, T, dtype=torch.bool)
    m[1, 2] = m[1, 4] = True
    return m


def native(m, x, k, v, mask, need_weights, average, mask_type):
    return torch._native_multi_head_attention(x, k, v, D, H, m.in_proj_weight, m.in_proj_bias, m.out_proj.weight,
                                              m.out_proj.bias, mask, need_weights, average, mask_type)


MODULE_CASES = {
    "no_weights": lambda m, x, kpm: m(x, x, x, need_weights=False),
    "weights": lambda m, x, kpm: m(x, x, x),
    "weights_per_head": lambda m, x, kpm: m(x, x, x, average_attn_weights=False),
    "key_padding": lambda m, x, kpm: m(x, x, x, key_padding_mask=kpm),
    "key_padding_no_weights": lambda m, x, kpm: m(x, x, x, key_padding_mask=kpm, need_weights=False),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(MODULE_CASES))
def test_multihead_attention_module(case, backend):
    m, x = mha(), torch.randn(B, T, D)
    run(lambda x, kpm: MODULE_CASES[case](m, x, kpm), x, key_padding(), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fully_masked_rows_are_nan_as_in_eager(backend):
    m, x = mha(), torch.randn(B, T, D)
    kpm = key_padding()
    kpm[0, :] = True
    out, w = run(lambda x, kpm: m(x, x, x, key_padding_mask=kpm), x, kpm, backend=backend)
    assert out[0].isnan().all() and not out[1].isnan().any()


NATIVE_CASES = {
    # mask_type 0: a [T, T] attention mask broadcast over batch and heads
    "causal_type0": (lambda: torch.triu(torch.ones(T, T, dtype=torch.bool), 1), 0),
    # a float mask is read as a boolean (nonzero masks), as ATen's masked softmax does: -1.0 masks fully
    "float_type1": (lambda: torch.tensor([[0.0, -1.0, 0, 0, 0], [0, 0, 0, float("-inf"), 0]]), 1),
    # mask_type 2: one mask per batch and head, shaped like the scores
    "full_type2": (lambda: torch.rand(B, H, T, T) > 0.7, 2),
    "none": (lambda: None, None),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("need_weights,average", [(False, True), (True, True), (True, False)])
@pytest.mark.parametrize("case", list(NATIVE_CASES))
def test_native_multi_head_attention(case, need_weights, average, backend):
    m, x = mha(), torch.randn(B, T, D)
    make, mask_type = NATIVE_CASES[case]
    torch.manual_seed(1)
    mask = make()
    run(lambda x, mask: native(m, x, x, x, mask, need_weights, average, mask_type), x, mask, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_native_multi_head_attention_distinct_inputs(backend):
    """Query, key and value distinct tensors: three projections with the slices of the packed weight."""
    m, x, k, v = mha(), torch.randn(B, T, D), torch.randn(B, T, D), torch.randn(B, T, D)
    run(lambda x, k, v: native(m, x, k, v, None, True, True, None), x, k, v, backend=backend)
    run(lambda x, k: native(m, x, k, k, None, False, True, None), x, k, backend=backend)


@pytest.mark.parametrize("case", ["mask_without_type", "mask_shape", "key_length"])
def test_what_eager_rejects_is_not_captured(case):
    """A mask with no mask_type, a mask of a shape ATen rejects, or a key shorter than the query: eager
    raises; dyn breaks the graph (fullgraph raises Unsupported), and without fullgraph eager's error."""
    m, x = mha(), torch.randn(B, T, D)
    kv = torch.randn(B, T - 1, D) if case == "key_length" else x
    mask = {"mask_without_type": torch.zeros(T, T, dtype=torch.bool),
            "mask_shape": torch.zeros(B, 1, T, T, dtype=torch.bool), "key_length": None}[case]
    mask_type = {"mask_without_type": None, "mask_shape": 2, "key_length": None}[case]

    def fn(x, kv):
        return native(m, x, kv, kv, mask, True, True, mask_type)

    with torch.no_grad():
        with pytest.raises(RuntimeError):
            fn(x, kv)
        with pytest.raises(dyn.Unsupported):
            dyn.compile(fn, fullgraph=True)(x, kv)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError):
                dyn.compile(fn)(x, kv)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mask", ["none", "key_padding", "src_mask"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_encoder_layer(activation, norm_first, mask, backend):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(D, H, 32, batch_first=True, norm_first=norm_first,
                                       activation=activation).eval()
    x = torch.randn(B, T, D)
    if mask == "none":
        run(lambda x: layer(x), x, backend=backend)
    elif mask == "key_padding":
        run(lambda x, k: layer(x, src_key_padding_mask=k), x, key_padding(), backend=backend)
    else:
        run(lambda x, k: layer(x, src_mask=k), x, torch.triu(torch.ones(T, T, dtype=torch.bool), 1),
            backend=backend)


def _randomize(model):
    """torchvision's ViT starts with a zero classifier head: random weights everywhere so that the
    comparison sees every layer."""
    torch.manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p) * 0.1)
    return model.eval()


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
def test_torchvision_vit_compiles_natively():
    torchvision = pytest.importorskip("torchvision")
    m = _randomize(torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                                        hidden_dim=32, mlp_dim=64, num_classes=10))
    out = run(m, torch.randn(2, 3, 32, 32), backend="dyn")[0]
    assert out.abs().max() > 0.01  # a real output, not the zero head's


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
def test_timm_vit_compiles_natively():
    timm = pytest.importorskip("timm")
    m = _randomize(timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, patch_size=8,
                                     num_classes=10, depth=2))
    run(m, torch.randn(2, 3, 32, 32), backend="dyn")
