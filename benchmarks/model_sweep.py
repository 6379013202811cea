"""Models beyond the corpus (torchvision, transformers, timm; random weights, small inputs or tiny
configs), eval under no_grad on the CPU (or --device cuda): per model, the graphs and breaks dyn.explain finds, whether
every graph ran dyn's compiled code, the largest difference from eager relative to eager's largest
value, the seconds the model took (capture, compile and the calls), and the first break's reason.

Run from the project root: PYTHONPATH=python .venv/bin/python benchmarks/model_sweep.py [--device cuda] [names...]
The models are random-weight instances (no downloads); test/python/test_model_zoo.py checks a few."""
import argparse
import signal
import sys
import time
import warnings

import torch
import torch.nn as nn


def tv(name, size=64, **kw):
    def f():
        import torchvision
        return getattr(torchvision.models, name)(**kw), (torch.randn(2, 3, size, size),)
    return f


def seg(name):
    def f():
        import torchvision
        m = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, num_classes=5)
        return Wrap(m), (torch.randn(2, 3, 64, 64),)
    return f


class Wrap(nn.Module):
    """The model's main tensor output (logits, last hidden state, a segmentation's "out")."""
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, *a, **k):
        o = self.m(*a, **k)
        if isinstance(o, torch.Tensor):
            return o
        if isinstance(o, dict) and "out" in o:
            return o["out"]
        for key in ("logits", "last_hidden_state", "pooler_output"):
            if getattr(o, key, None) is not None:
                return getattr(o, key)
        return o[0]


def hf(cfgname, modelname, ids=True, extra=None, **cfg):
    def f():
        import transformers as T
        m = getattr(T, modelname)(getattr(T, cfgname)(**cfg))
        return Wrap(m), ((torch.randint(100, (2, 16)),) if ids else extra())
    return f


def timm_(name, size=64):
    def f():
        import timm
        return timm.create_model(name, pretrained=False, num_classes=10), (torch.randn(2, 3, size, size),)
    return f


_SMALL = dict(hidden_size=64, num_attention_heads=4, intermediate_size=128, vocab_size=100, num_hidden_layers=2)
_DEC = dict(_SMALL, num_key_value_heads=2)
MODELS = {
 "tv_alexnet": tv("alexnet", 96), "tv_vgg11": tv("vgg11", 32), "tv_squeezenet": tv("squeezenet1_1"),
 "tv_densenet121": tv("densenet121"), "tv_googlenet": tv("googlenet", init_weights=True, aux_logits=False),
 "tv_inception_v3": tv("inception_v3", 96, init_weights=True, aux_logits=False),
 "tv_shufflenet": tv("shufflenet_v2_x0_5"), "tv_mnasnet": tv("mnasnet0_5"), "tv_regnet": tv("regnet_y_400mf"),
 "tv_resnext": tv("resnext50_32x4d"), "tv_effv2": tv("efficientnet_v2_s"), "tv_mobilenet_v2": tv("mobilenet_v2"),
 "tv_swin_t": tv("swin_t"), "tv_swin_v2_t": tv("swin_v2_t"), "tv_maxvit": tv("maxvit_t", 224),
 "tv_fcn": seg("fcn_resnet50"), "tv_deeplab_mbv3": seg("deeplabv3_mobilenet_v3_large"),
 "tv_lraspp": seg("lraspp_mobilenet_v3_large"),
 "hf_distilbert": hf("DistilBertConfig", "DistilBertModel", dim=64, n_heads=4, hidden_dim=128, n_layers=2, vocab_size=100),
 "hf_roberta": hf("RobertaConfig", "RobertaModel", **_SMALL),
 "hf_albert": hf("AlbertConfig", "AlbertModel", embedding_size=32, **_SMALL),
 "hf_electra": hf("ElectraConfig", "ElectraModel", embedding_size=32, **_SMALL),
 "hf_deberta_v2": hf("DebertaV2Config", "DebertaV2Model", **_SMALL),
 "hf_mistral": hf("MistralConfig", "MistralForCausalLM", **_DEC),
 "hf_qwen2": hf("Qwen2Config", "Qwen2ForCausalLM", **_DEC),
 "hf_phi": hf("PhiConfig", "PhiForCausalLM", **_DEC),
 "hf_gemma": hf("GemmaConfig", "GemmaForCausalLM", head_dim=16, **_DEC),
 "hf_gpt_neox": hf("GPTNeoXConfig", "GPTNeoXForCausalLM", **_SMALL),
 "hf_opt": hf("OPTConfig", "OPTForCausalLM", hidden_size=64, num_attention_heads=4, ffn_dim=128, vocab_size=100, num_hidden_layers=2, word_embed_proj_dim=64),
 "hf_bloom": hf("BloomConfig", "BloomForCausalLM", hidden_size=64, n_head=4, vocab_size=100, n_layer=2),
 "hf_falcon": hf("FalconConfig", "FalconForCausalLM", hidden_size=64, num_attention_heads=4, vocab_size=100, num_hidden_layers=2),
 "hf_bart": hf("BartConfig", "BartModel", d_model=64, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, encoder_layers=2, decoder_layers=2, vocab_size=100),
 "hf_mpnet": hf("MPNetConfig", "MPNetModel", **_SMALL),
 "hf_vit": hf("ViTConfig", "ViTModel", False, lambda: (torch.randn(2, 3, 32, 32),), image_size=32, patch_size=8, hidden_size=64, num_attention_heads=4, intermediate_size=128, num_hidden_layers=2),
 "hf_swin": hf("SwinConfig", "SwinModel", False, lambda: (torch.randn(2, 3, 64, 64),), image_size=64, patch_size=4, embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=4),
 "hf_convnext": hf("ConvNextConfig", "ConvNextModel", False, lambda: (torch.randn(2, 3, 64, 64),), hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1]),
 "hf_segformer": hf("SegformerConfig", "SegformerForSemanticSegmentation", False, lambda: (torch.randn(2, 3, 64, 64),), hidden_sizes=[16, 32, 64, 128], num_attention_heads=[1, 2, 2, 4], depths=[1, 1, 1, 1], decoder_hidden_size=32),
 "hf_clip_vision": hf("CLIPVisionConfig", "CLIPVisionModel", False, lambda: (torch.randn(2, 3, 32, 32),), image_size=32, patch_size=8, hidden_size=64, num_attention_heads=4, intermediate_size=128, num_hidden_layers=2),
 "hf_wav2vec2": hf("Wav2Vec2Config", "Wav2Vec2Model", False, lambda: (torch.randn(2, 4000),), hidden_size=64, num_attention_heads=4, intermediate_size=128, num_hidden_layers=2, conv_dim=(32,32,32), conv_stride=(5,2,2), conv_kernel=(10,3,3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4),
 "hf_mobilevit": hf("MobileViTConfig", "MobileViTModel", False, lambda: (torch.randn(2, 3, 64, 64),), image_size=64, hidden_sizes=[32, 48, 64], neck_hidden_sizes=[8, 16, 24, 24, 32, 40, 160]),
 "timm_efficientnet_b0": timm_("efficientnet_b0"), "timm_mobilenetv3": timm_("mobilenetv3_small_100"),
 "timm_vit_small": timm_("vit_small_patch16_224", 224), "timm_deit_tiny": timm_("deit_tiny_patch16_224", 224),
 "timm_convnext_atto": timm_("convnext_atto"), "timm_regnetx": timm_("regnetx_002"), "timm_rexnet": timm_("rexnet_100"),
 "timm_ghostnet": timm_("ghostnet_100"), "timm_levit": timm_("levit_128s", 224), "timm_poolformer": timm_("poolformer_s12"),
 "timm_mixer": timm_("mixer_s16_224", 224), "timm_resnet18d": timm_("resnet18d"), "timm_dla": timm_("dla34"),
 "timm_cspresnet": timm_("cspresnet50"), "timm_coatnet": timm_("coatnet_nano_rw_224", 224), "timm_efficientformer": timm_("efficientformer_l1", 224),
 "timm_swin": timm_("swin_tiny_patch4_window7_224", 224), "timm_beit": timm_("beit_base_patch16_224", 224), "timm_eva": timm_("eva02_tiny_patch14_224", 224),
 # added in the fifteenth session (each broke the graph or ran eagerly before it)
 "hf_mixtral": hf("MixtralConfig", "MixtralForCausalLM", num_local_experts=4, num_experts_per_tok=2, **_DEC),
 "hf_phi3": hf("Phi3Config", "Phi3ForCausalLM", pad_token_id=0, **_DEC),
 "hf_gptj": hf("GPTJConfig", "GPTJForCausalLM", n_embd=64, n_head=4, n_layer=2, vocab_size=100, rotary_dim=8),
 "hf_clip_text": hf("CLIPTextConfig", "CLIPTextModel", **_SMALL),
 "hf_funnel": hf("FunnelConfig", "FunnelModel", d_model=64, n_head=4, d_inner=128, vocab_size=100, block_sizes=[1, 1], d_head=16),
 "hf_beit": hf("BeitConfig", "BeitModel", False, lambda: (torch.randn(2, 3, 32, 32),), image_size=32, patch_size=8, hidden_size=64, num_attention_heads=4, intermediate_size=128, num_hidden_layers=2, use_relative_position_bias=True),
 "timm_tnt": timm_("tnt_s_patch16_224", 224), "timm_volo": timm_("volo_d1_224", 224),
 "timm_crossvit": timm_("crossvit_tiny_240", 240), "timm_halonet": timm_("halonet26t", 256),
 "timm_mobilevitv2": timm_("mobilevitv2_050", 224),
 "timm_sequencer": timm_("sequencer2d_s", 224),
 "hf_mamba": hf("MambaConfig", "MambaModel", hidden_size=64, state_size=8, num_hidden_layers=2, vocab_size=100),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="models (default: all): " + " ".join(MODELS))
    ap.add_argument("--timeout", type=int, default=600, help="seconds a model may take")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (model and inputs moved there)")
    ap.add_argument("--dtype", default="float32", help="the model's parameters and floating inputs in this "
                    "dtype (bfloat16, float16): inference in reduced precision")
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    import dyn
    warnings.simplefilter("ignore")

    def alarm(*a):
        raise TimeoutError("timeout")
    signal.signal(signal.SIGALRM, alarm)
    for n in args.names or list(MODELS):
        torch.manual_seed(0)
        t0 = time.time()
        try:
            m, inputs = MODELS[n]()
        except Exception as e:  # a library without this model
            print(f"{n:22s} not built: {type(e).__name__}: {str(e)[:100]}", flush=True)
            continue
        m = m.eval().to(args.device, dtype)
        inputs = tuple(i if i is None else i.to(args.device, dtype if i.is_floating_point() else i.dtype)
                       for i in inputs)
        signal.alarm(args.timeout)
        try:
            with torch.no_grad():
                ref = m(*inputs)
                dyn.reset()
                ex = dyn.explain(m)(*inputs)
                dyn.reset()
                out = dyn.compile(m)(*inputs)
            st = dyn.stats()
            diff = (out.float() - ref.float()).abs().max().item() / max(1e-6, ref.float().abs().max().item())
            why = f" | {str(ex.break_reasons[0].get('reason'))[:120]}" if ex.graph_break_count else ""
            print(f"{n:22s} graphs {ex.graph_count} breaks {ex.graph_break_count} eager graphs "
                  f"{len(st['eager_graphs'])} rel diff {diff:.1e} {time.time() - t0:.0f} s{why}", flush=True)
        except Exception as e:
            print(f"{n:22s} ERROR {type(e).__name__}: {str(e)[:200]}", flush=True)
        finally:
            signal.alarm(0)


if __name__ == "__main__":
    sys.exit(main())
