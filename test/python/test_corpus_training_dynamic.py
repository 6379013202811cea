"""Train steps of the small corpus transformers (benchmarks/corpus.py) at several sequence lengths, as a fine-tuning
loop over batches padded to their longest sentence runs them: the second length makes the sequence dim symbolic and
the forward and backward are compiled once with `?` dims, nothing runs eagerly, and the loss and every parameter's
gradient are eager's. In float64 with test_corpus_training.py's tolerances (float32's where transformers' loss
upcasts the logits)."""
import copy
import importlib.util
import os
import warnings

import pytest
import torch

import dyn

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "dyn_corpus_train_dyn", os.path.join(_HERE, "..", "..", "benchmarks", "corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

pytestmark = pytest.mark.skipif(dyn._C is None or not getattr(dyn._C, "HAS_COMPILER", False),
                                reason="dyn._C without the compiler")


def _inputs(name, vocab, n):
    g = torch.Generator().manual_seed(n)
    ids = torch.randint(0, vocab, (2, n), generator=g)
    if name.startswith("hf_bert"):
        mask = torch.ones(2, n, dtype=torch.long)
        mask[0, n - n // 4:] = 0  # padding in one row
        labels = torch.full_like(ids, -100)
        labels[:, ::4] = ids[:, ::4]
        return ids, dict(attention_mask=mask, labels=labels)
    return ids, dict(labels=ids)


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                 reason="needs a CUDA device"))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["hf_gpt2_sdpa", "hf_gpt2_eager", "hf_bert_sdpa", "hf_llama_sdpa", "hf_t5_sdpa"])
def test_transformer_trains_at_any_sequence_length(name, device):
    case = corpus.build(name, "small")
    case.model.double().train().to(device)
    corpus.no_dropout(case.model)
    ref = copy.deepcopy(case.model)
    vocab = case.model.config.vocab_size
    dyn.reset()
    cm = dyn.compile(case.model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in (9, 13, 21):
            ids, kwargs = _inputs(name, vocab, n)
            ids, kwargs = ids.to(device), {k: v.to(device) for k, v in kwargs.items()}
            loss = cm(ids, **kwargs).loss
            loss.backward()
            want = ref(ids, **kwargs).loss
            want.backward()
            # T5's norms compute their variance in float32 whatever the model's dtype
            tol = 1e-9 if want.dtype == torch.float64 and not name.startswith("hf_t5") else 1e-5
            assert abs(loss.item() - want.item()) <= tol * max(1.0, abs(want.item())), n
            for (pn, p), q in zip(case.model.named_parameters(), ref.parameters()):
                if q.grad is None:
                    assert p.grad is None, pn
                    continue
                scale = max(1.0, q.grad.abs().max().item())
                assert (p.grad - q.grad).abs().max().item() <= tol * scale, (n, pn)
                p.grad = q.grad = None
    s = dyn.stats()
    assert s["eager_graphs"] == [] and s["eager_calls"] == 0 and s["graph_breaks"] == 0, s
    assert s["dynamic_entries"] == 1 and s["dynamic_fallbacks"] == 0, s["dynamic_fallback_reasons"]
    assert s["captures"] <= 2, s
