"""Soak and concurrency, bounded in time: many calls without memory growth, threads that compile and
recompile at once, recompile churn past the limit, and a KeyboardInterrupt in the middle of a compile.
Memory is the process's resident set (Linux /proc), measured after a warm-up; the bounds are far above
what the steady state allocates (nothing) and far below what a per-call leak would add."""
import _thread
import gc
import os
import signal
import threading
import time
import warnings

import pytest
import torch

import dyn
from dyn.capture.compiled import ENTRY_LIMIT

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc/self/statm")


def _rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class _Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.b(torch.nn.functional.gelu(self.a(x))).softmax(-1)


def test_100k_calls_do_not_grow_memory():
    """100,000 calls of a compiled small model (inputs made once: the loop allocates only the outputs) keep
    the resident set within 32 MiB of where it was after 1,000 calls; a leak of one output (512 bytes)
    per call alone would add 48 MiB."""
    torch.manual_seed(0)
    dyn.reset()
    model = dyn.compile(_Small().eval())
    x = torch.randn(32, 16)
    want = model._dyn_orig_mod(x)
    with torch.no_grad():
        for _ in range(1000):
            out = model(x)
        torch.testing.assert_close(out, want.detach())
        gc.collect()
        before = _rss_mib()
        for _ in range(100_000):
            out = model(x)
        gc.collect()
        grown = _rss_mib() - before
    torch.testing.assert_close(out, want.detach())
    s = dyn.stats()
    assert s["graphs"] == 1 and s["eager_calls"] == 0 and s["internal_failures"] == 0, s
    assert grown < 32, f"resident memory grew by {grown:.1f} MiB over 100,000 calls"


def test_threads_compiling_and_recompiling_at_once():
    """8 threads call one compiled function with 12 shapes between them (past the recompile limit of 8):
    every result equals eager's and nothing raises. How many shapes get an entry depends on how the
    threads' first calls interleave (misses captured at once may all pass the limit's check): at most one
    per shape and thread, never past the entry limit."""
    dyn.reset()

    def f(x, y):
        return torch.sin(x) * y + x.sum(0)
    cf = dyn.compile(f)
    errors, wrong, calls = [], [], [0]
    lock = threading.Lock()

    def worker(k):
        try:
            g = torch.Generator().manual_seed(k)
            for i in range(24):
                n = 1 + (k + i) % 12
                x, y = torch.randn(n, 4, generator=g), torch.randn(n, 4, generator=g)
                if not torch.allclose(cf(x, y), f(x, y), atol=1e-6):
                    wrong.append((k, i))
                with lock:
                    calls[0] += 1
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(repr(e))
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the recompile limit's warning, when it is reached
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors and not wrong, (errors[:3], wrong[:3])
    assert calls[0] == 8 * 24
    s = dyn.stats()
    assert s["internal_failures"] == 0, s
    assert len(cf._entries) <= min(12 * 8, ENTRY_LIMIT)


def test_recompile_churn_past_the_limit_stays_bounded():
    """Thousands of new shapes past the recompile limit: they run eagerly (counted) and keep no entry,
    so memory stays where it was after the limit was reached."""
    dyn.reset()

    def f(x):
        return (x * 2).relu()
    cf = dyn.compile(f, dynamic=False)  # sizes as constants: the limit is reached
    with pytest.warns(UserWarning, match="recompile limit"):
        for n in range(1, 20):
            cf(torch.randn(n))
        gc.collect()
        before = _rss_mib()
        for n in range(20, 3020):
            x = torch.randn(n)
            torch.testing.assert_close(cf(x), f(x))
    gc.collect()
    assert _rss_mib() - before < 32
    s = dyn.stats()
    assert s["graphs"] <= 8 and s["eager_calls"] >= 3000, s
    assert len(cf._entries) <= 8


def test_keyboard_interrupt_during_compile_leaves_dyn_usable():
    """A KeyboardInterrupt raised while a model is being captured and compiled propagates to the caller;
    the next call compiles again and gives eager's result, and so does a function compiled afterwards."""
    torch.manual_seed(0)
    dyn.reset()
    model = _Small().eval()
    x = torch.randn(8, 16)
    # Ctrl-C must raise KeyboardInterrupt here whatever earlier code in this process did to SIGINT's
    # handler (interrupt_main does nothing while the signal is ignored or at its default)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        interrupted = _interrupt_compiles(model, x)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert interrupted >= 1


def _interrupt_compiles(model, x):
    """How many of four calls of a freshly compiled model an interrupt from another thread stopped; each
    compiled model, and a function compiled afterwards, still give eager's results."""
    interrupted = 0
    for delay in (0.0, 0.01, 0.05, 0.2):
        cm = dyn.compile(model)
        timer = threading.Timer(delay, _thread.interrupt_main)
        try:
            timer.start()
            try:
                cm(x)
                time.sleep(0.5)  # an interrupt arriving after the compile lands here
            finally:
                timer.cancel()
        except KeyboardInterrupt:
            interrupted += 1
        with torch.no_grad():
            torch.testing.assert_close(cm(x), model(x))
    cf = dyn.compile(lambda a: a.exp() + 1)
    torch.testing.assert_close(cf(x), x.exp() + 1)
    return interrupted
