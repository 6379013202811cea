"""The temporaries of compiled CPU functions come from dyn's host allocator (lib/Runtime/HostAllocator.cpp):
buffers of 64 KiB and more are kept when a call frees them and handed out again on the next call, so
steady-state calls touch resident pages instead of page-faulting fresh ones (docs/performance.md,
"Temporaries that stay resident"). dyn._stats()["host_cache"] counts what it did; dyn.reset() returns
the buffers."""
import os
import subprocess
import sys
import textwrap
import threading

import pytest
import torch

import dyn
from conftest import ROOT, has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")


def chain(x, w):
    # matmul -> relu -> matmul: the relu's [256, 256] result (256 KiB) is a temporary of the compiled
    # function, neither an input nor an output
    return torch.relu(x @ w + 1) @ w


def cache():
    return dyn._stats()["host_cache"]


def test_steady_calls_reuse_the_temporaries():
    dyn.reset()
    x, w = torch.randn(256, 256), torch.randn(256, 256)
    f = dyn.compile(chain, fullgraph=True)
    torch.testing.assert_close(f(x, w), chain(x, w))
    first = cache()
    assert first["misses"] >= 1 and first["cached_bytes"] >= 256 * 256 * 4, first
    for _ in range(3):
        torch.testing.assert_close(f(x, w), chain(x, w))
    after = cache()
    assert after["misses"] == first["misses"], (first, after)
    assert after["hits"] >= first["hits"] + 3, (first, after)
    dyn.reset()
    assert cache()["cached_bytes"] == 0


def test_concurrent_calls_get_their_own_buffers():
    """Two threads calling one compiled function at once: each call's temporaries are its own."""
    dyn.reset()
    f = dyn.compile(chain, fullgraph=True)
    inputs = [(torch.randn(256, 256), torch.randn(256, 256) / 16) for _ in range(2)]
    f(*inputs[0])
    errors = []

    def work(k):
        x, w = inputs[k]
        want = chain(x, w)
        for _ in range(20):
            got = f(x, w)
            if not torch.allclose(got, want, rtol=1.3e-6, atol=1e-5):
                errors.append((k, (got - want).abs().max().item()))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_cache_limit_zero_keeps_nothing():
    """DYN_HOST_CACHE_MB=0: every freed buffer goes back to the system, results unchanged."""
    code = textwrap.dedent("""
        import torch, dyn
        def chain(x, w):
            return torch.relu(x @ w + 1) @ w
        x, w = torch.randn(256, 256), torch.randn(256, 256)
        f = dyn.compile(chain, fullgraph=True)
        for _ in range(3):
            torch.testing.assert_close(f(x, w), chain(x, w))
        s = dyn._stats()["host_cache"]
        assert s["cached_bytes"] == 0 and s["hits"] == 0 and s["misses"] >= 3, s
        print("ok")
    """)
    env = dict(os.environ, DYN_HOST_CACHE_MB="0",
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-3000:]


def test_large_outputs_come_from_the_cache_and_stay_plain_tensors():
    """A compiled function's outputs of 64 KiB and more are blocks of the host cache (_C.empty_host): a
    steady call takes its output from the cache, where the last one went when it died; they are ordinary
    tensors (resizable like any other)."""
    dyn.reset()
    x = torch.randn(256, 256)
    f = dyn.compile(lambda x: x.sin() * 2, fullgraph=True)  # one kernel: no temporary, one 256 KiB output
    out = f(x)
    torch.testing.assert_close(out, x.sin() * 2)
    del out
    before = cache()
    out = f(x)
    assert cache()["hits"] == before["hits"] + 1, (before, cache())
    torch.testing.assert_close(out, x.sin() * 2)
    out.resize_(512, 512).fill_(1.0)
    assert out.sum().item() == 512 * 512
    assert not dyn.stats()["eager_graphs"]


def _minor_faults():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def test_steady_training_steps_touch_resident_pages():
    """A compiled backward's outputs are the parameters' gradients: they come from the host cache, where the
    last step's went when the optimizer's zero_grad dropped them, so a steady-state training step page-faults
    on none of them (through glibc each is fresh pages at every step: eager faults about once per 4 KiB of
    its gradients). ATen's allocations inside dyn's library calls (a convolution's gradients, oneDNN's
    buffers) come from the cache the same way."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 1024),
                            torch.nn.GELU(), torch.nn.Linear(1024, 512))
    x = torch.randn(32, 512)
    f = dyn.compile(m)

    def step(model):
        m.zero_grad(set_to_none=True)
        model(x).square().mean().backward()
    for _ in range(3):
        step(f)
    before = _minor_faults()
    for _ in range(5):
        step(f)
    per_step = (_minor_faults() - before) / 5
    gradient_pages = sum(p.numel() * p.element_size() for p in m.parameters()) // 4096  # 2,049
    # (6 a step here; 310 with the outputs from torch's allocator, eager 1,709)
    assert per_step < gradient_pages / 32, (per_step, gradient_pages)
    s = dyn.stats()
    assert s["backward_graphs"] >= 1 and not s["eager_graphs"], s
    grads = [p.grad.clone() for p in m.parameters()]
    step(m)
    for g, p in zip(grads, m.parameters()):
        torch.testing.assert_close(g, p.grad, rtol=1e-4, atol=1e-6)
