"""The corpus models (small configs, CPU and CUDA) called at several sequence lengths (text) or batch sizes (vision):
the second size makes those dims symbolic (automatic dynamic), so every further size runs the same compiled graph.
At most two captures per model, one graph with symbolic sizes, nothing eager, results equal to eager's (on CUDA with
cuDNN's TF32 off: eager and dyn may pick different convolution algorithms)."""
import importlib.util
import os
import warnings

import pytest
import torch

import dyn

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("dyn_corpus_dyn", os.path.join(_HERE, "..", "..", "benchmarks", "corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

pytestmark = pytest.mark.skipif(dyn._C is None or not getattr(dyn._C, "HAS_COMPILER", False),
                                reason="dyn._C without the compiler")

TEXT = ["hf_gpt2_sdpa", "hf_gpt2_eager", "hf_bert_sdpa", "hf_llama_sdpa", "hf_t5_sdpa"]


def _text_inputs(case, n):
    g = torch.Generator().manual_seed(n)
    batch, vocab = case.args[0].shape[0], case.model.config.vocab_size
    kwargs = {}
    if "decoder_input_ids" in case.eval_kwargs:
        kwargs["decoder_input_ids"] = torch.randint(0, vocab, (batch, n // 2 + 1), generator=g)
    if "attention_mask" in case.kwargs:
        mask = torch.ones(batch, n, dtype=torch.long)
        mask[0, n - n // 4:] = 0  # padding in one row
        kwargs["attention_mask"] = mask
    return (torch.randint(0, vocab, (batch, n), generator=g),), kwargs


def _logits(out):
    return out.logits if hasattr(out, "logits") else out.last_hidden_state if hasattr(out, "last_hidden_state") \
        else out


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                 reason="needs a CUDA device"))]


def _compiles_once(name, sizes, inputs, device):
    """The model called at each size (inputs(case, n) -> args, kwargs) compiled and eagerly: equal results,
    at most two captures, one graph with symbolic sizes, nothing eager."""
    case = corpus.build(name, "small")
    model = case.model.eval().to(device)
    dyn.reset()
    cm = dyn.compile(model)
    with torch.no_grad(), warnings.catch_warnings(), torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        warnings.simplefilter("ignore")
        for n in sizes:
            args, kwargs = inputs(case, n)
            args = tuple(a.to(device) for a in args)
            kwargs = {k: v.to(device) for k, v in kwargs.items()}
            torch.testing.assert_close(_logits(cm(*args, **kwargs)), _logits(model(*args, **kwargs)),
                                       rtol=1e-4, atol=1e-4)
    s = dyn.stats()
    assert s["eager_calls"] == 0 and s["eager_graphs"] == [] and s["graph_breaks"] == 0, s
    assert s["captures"] <= 2 and s["dynamic_entries"] == 1, s


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", TEXT)
def test_text_model_compiles_once_for_any_length(name, device):
    _compiles_once(name, (9, 13, 21, 30), _text_inputs, device)  # (T5: two symbols, the encoder's and decoder's lengths)


VISION = ["tv_resnet18", "tv_mobilenet_v3_large", "tv_efficientnet_b0", "tv_convnext_tiny", "tv_vit_b_16",
          "timm_resnet50", "timm_vit_base"]


def _images(case, n):
    return (torch.randn((n,) + tuple(case.args[0].shape[1:]), generator=torch.Generator().manual_seed(n)),), {}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", VISION)
def test_vision_model_compiles_once_for_any_batch(name, device):
    _compiles_once(name, (2, 3, 5), _images, device)
