"""transformers' generate() with the model's forward compiled by dyn. With a static cache
(`cache_implementation="static"`: the key/value cache is allocated at its full length once, so every decode
step has the same shapes) the prompt's forward and the decode step are two graphs, compiled once each, for
any number of new tokens; with the default cache (it grows every step) the decode step is captured with
symbolic lengths once; the tokens are eager's (greedy decoding, small corpus configs, CPU)."""
import importlib.util
import os

import pytest
import torch

import dyn

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("dyn_corpus_gen", os.path.join(_HERE, "..", "..", "benchmarks", "corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)


@pytest.mark.parametrize("name", ["hf_gpt2_sdpa", "hf_llama_sdpa"])
def test_generate_with_a_static_cache_compiles_two_graphs(name):
    case = corpus.build(name, "small")
    model = case.model.eval()
    prompt = case.args[0][:1, :5]
    kw = dict(do_sample=False, cache_implementation="static", pad_token_id=0)
    with torch.no_grad():
        want = model.generate(prompt, max_new_tokens=20, **kw)
        want_longer = model.generate(prompt, max_new_tokens=30, **kw)
        dyn.reset()
        model.forward = dyn.compile(model.forward)
        got = model.generate(prompt, max_new_tokens=20, **kw)
        s = dyn.stats()
        assert torch.equal(got, want)
        # prefill and decode: two graphs, whatever the number of tokens
        assert s["graphs"] == 2 and s["compiled_graphs"] == 2, s
        assert s["graph_breaks"] == 0 and s["eager_graphs"] == [] and s["eager_calls"] == 0, s
        # another generate() makes a new cache object of the same shapes: the same two graphs
        assert torch.equal(model.generate(prompt, max_new_tokens=20, **kw), want)
        assert dyn.stats()["graphs"] == 2 and dyn.stats()["recompiles"] == s["recompiles"]
        got = model.generate(prompt, max_new_tokens=30, **kw)  # a longer generation: a longer cache
        assert torch.equal(got, want_longer)
        assert dyn.stats()["eager_calls"] == 0 and dyn.stats()["eager_graphs"] == []


def test_generate_with_transformers_compile_config_naming_dyn():
    """transformers compiles the decode step itself where the cache is static (on CUDA by default; here
    forced on the CPU): `compile_config=CompileConfig(backend="dyn")` hands it to dyn's torch.compile
    backend. One graph, eager's tokens, reused by the next generate()."""
    from transformers import CompileConfig
    case = corpus.build("hf_llama_sdpa", "small")
    model = case.model.eval()
    prompt = case.args[0][:1, :5]
    kw = dict(max_new_tokens=12, do_sample=False, cache_implementation="static", pad_token_id=0)
    config = CompileConfig(backend="dyn", mode="default")
    config._compile_all_devices = True  # transformers' switch for compiling on the CPU too
    with torch.no_grad():
        want = model.generate(prompt, disable_compile=True, **kw)
        dyn.reset()
        for _ in range(2):
            assert torch.equal(model.generate(prompt, compile_config=config, **kw), want)
    s = dyn.stats()
    assert s["graphs"] == 1 and s["compiled_graphs"] == 1 and s["eager_graphs"] == [], s


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA device"))])
@pytest.mark.parametrize("name", ["hf_gpt2_sdpa", "hf_llama_sdpa"])
def test_generate_with_the_default_dynamic_cache_compiles_once_per_kind_of_step(name, device):
    """The default cache grows by a token per step: the decode step's sizes change at every call. After the
    prompt's graph and the first decode step's, the next step's miss makes the cache and mask lengths
    symbolic (automatic dynamic): one more graph serves every later token. Eager's tokens, nothing eager."""
    case = corpus.build(name, "small")
    model = case.model.eval().to(device)
    prompt, longer = case.args[0][:1, :5].to(device), case.args[0][:1, :9].to(device)
    kw = dict(do_sample=False, pad_token_id=0, max_new_tokens=24, min_new_tokens=24)
    with torch.no_grad():
        want, want_longer = model.generate(prompt, **kw), model.generate(longer, **kw)
        dyn.reset()
        model.forward = dyn.compile(model.forward)
        got = model.generate(prompt, **kw)
        s = dyn.stats()
        assert torch.equal(got, want)
        assert s["dynamic_entries"] == 1 and s["eager_calls"] == 0 and s["eager_graphs"] == [], s
        # prefill, the first decode step, the symbolic decode step (and a capture with symbols that the
        # code specialized, counted too): not one per token
        assert s["captures"] <= 4, s
        # a longer prompt: its prefill is a new length (at most one capture); the decode steps reuse the
        # symbolic graph
        assert torch.equal(model.generate(longer, **kw), want_longer)
        assert dyn.stats()["eager_calls"] == 0 and dyn.stats()["captures"] - s["captures"] <= 1, dyn.stats()
