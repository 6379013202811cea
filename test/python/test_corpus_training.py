"""A train step of every small corpus model (benchmarks/corpus.py) with dyn's compiled backward, against
eager autograd. In float64: in float32 a pre-activation within a few ulps of 0 can round to the other side
of a relu in one of the two runs, which moves a gradient by a whole cotangent element (seen in ResNet-50's
backward at 4e-3 of the largest gradient, with both runs within float32 rounding of float64's); in float64
the same code agrees with eager to ~1e-12. Dropout and stochastic depth are off: dyn draws its own numbers
(docs/random.md), tested with their backward in test_training.py."""
import copy
import importlib.util
import os

import pytest
import torch

import dyn

# over a minute: left out of the quick loop, pytest -m "not slow" (docs/contributing.md)
pytestmark = pytest.mark.slow

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "dyn_corpus_train", os.path.join(_HERE, "..", "..", "benchmarks", "corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)


# models that compute in float32 inside a float64 model: T5LayerNorm's variance (hidden_states.to(float32))
FLOAT32_INSIDE = {"hf_t5_eager", "hf_t5_sdpa"}


_no_dropout, _double = corpus.no_dropout, corpus.double


needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
@pytest.mark.parametrize("name", corpus.NAMES)
def test_train_step_compiled_matches_eager(name, device):
    case = corpus.build(name, "small").to(device)
    case.model.double().train()
    _no_dropout(case.model)
    ref = copy.deepcopy(case.model)
    args, kwargs = case.inputs("train")
    args = [_double(a) for a in args]
    kwargs = {k: _double(v) for k, v in kwargs.items()}
    dyn.reset()
    loss = case.loss(dyn.compile(case.model)(*args, **kwargs), "train")
    loss.backward()
    s = dyn.stats()
    want = case.loss(ref(*args, **kwargs), "train")
    want.backward()
    assert s["backward_graphs"] >= 1 and s["eager_graphs"] == [], s["eager_graphs"]
    # transformers' losses upcast the logits with .float(): float32 there, float32's tolerance (test_corpus.py's)
    tol = 1e-9 if want.dtype == torch.float64 and name not in FLOAT32_INSIDE else 1e-5
    assert abs(loss.item() - want.item()) <= tol * max(1.0, abs(want.item()))
    for (n, p), q in zip(case.model.named_parameters(), ref.parameters()):
        if q.grad is None:
            assert p.grad is None, n
            continue
        scale = max(1.0, q.grad.abs().max().item())
        assert (p.grad - q.grad).abs().max().item() <= tol * scale, n


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
@pytest.mark.parametrize("name", corpus.NAMES)
def test_train_loop_with_adamw_compiled_matches_eager(name, device):
    """The whole step compiled: zero_grad, the model, loss.backward() and AdamW's step (the only graph break
    is the backward, which runs dyn's compiled backward). Three steps, losses and parameters against the
    same loop run eagerly, within float32's tolerance: Adam divides each gradient by its own magnitude, so a
    coordinate whose gradient is near eps moves by up to lr on a last-bit difference of its gradient."""
    case = corpus.build(name, "small").to(device)
    case.model.double().train()
    _no_dropout(case.model)
    args, kwargs = case.inputs("train")
    args = [_double(a) for a in args]
    kwargs = {k: _double(v) for k, v in kwargs.items()}
    runs = []
    dyn.reset()
    for compiled in (False, True):
        model = copy.deepcopy(case.model)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def step():
            opt.zero_grad()
            loss = case.loss(model(*args, **kwargs), "train")
            loss.backward()
            opt.step()
            return loss
        fn = dyn.compile(step) if compiled else step
        runs.append(([fn().item() for _ in range(3)], list(model.parameters())))
    s = dyn.stats()
    assert s["eager_graphs"] == [] and s["eager_entries"] == 0 and s["backward_graphs"] >= 1, s
    (want, ref), (got, params) = runs
    torch.testing.assert_close(got, want, rtol=1.3e-6, atol=1e-5)
    for p, q in zip(params, ref):
        torch.testing.assert_close(p, q, rtol=1.3e-6, atol=1e-5)


@pytest.mark.parametrize("name", ["hf_gpt2_sdpa", "hf_llama_sdpa"])
def test_gradient_checkpointing_of_transformers_compiled(name):
    """transformers' gradient_checkpointing_enable(): each layer under torch.utils.checkpoint (recomputed in
    dyn's backward) and a hook on the input embeddings calling output.requires_grad_(True) on an output
    that requires grad already: one graph, its backward compiled, gradients equal to eager's."""
    case = corpus.build(name, "small")
    case.model.double().train()
    _no_dropout(case.model)
    case.model.gradient_checkpointing_enable()
    ref = copy.deepcopy(case.model)
    args, kwargs = case.inputs("train")
    dyn.reset()
    loss = case.loss(dyn.compile(case.model)(*args, **kwargs), "train")
    loss.backward()
    s = dyn.stats()
    assert s["graphs"] == 1 and s["graph_breaks"] == 0 and s["backward_graphs"] == 1 and s["eager_graphs"] == [], s
    want = case.loss(ref(*args, **kwargs), "train")
    want.backward()
    assert abs(loss.item() - want.item()) <= 1e-5 * max(1.0, abs(want.item()))
    for (n, p), q in zip(case.model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-7, msg=n)
