"""dyn's CPU kernels and ATen's ops share one OpenMP pool: with torch's libgomp loaded, the kernels' OpenMP
loops run on its threads (lib/Runtime/OpenMPShim.cpp implements the libomp entry points they call on
libgomp). With DYN_OPENMP=libomp they run on libomp beside ATen's libgomp, and dyn makes libomp's idle
workers sleep at once (KMP_BLOCKTIME=0) unless the user chose a wait policy (python/dyn/native.py;
docs/performance.md, "CPU: two OpenMP runtimes in one process"). Each case runs in a fresh interpreter, since
both runtimes read their settings once."""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT, has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")

# a compiled graph with a dyn kernel, an ATen library call (bmm) and another dyn kernel, checked against
# eager; then the block time of the libomp the process loaded (the one dyn's kernels run on)
CODE = textwrap.dedent("""
    import ctypes
    import torch
    import dyn

    def f(a, b):
        return torch.relu(torch.bmm(torch.sin(a), b)) * 2

    a, b = torch.randn(4, 32, 16), torch.randn(4, 16, 32)
    with torch.no_grad():
        got = dyn.compile(f, fullgraph=True)(a, b)
    torch.testing.assert_close(got, f(a, b))
    assert dyn.stats()["compiled_graphs"] == 1 and not dyn.stats()["eager_graphs"], dyn.stats()
    libs = sorted({line.split()[-1] for line in open("/proc/self/maps") if "/libomp.so" in line})
    assert len(libs) == 1, libs
    print(ctypes.CDLL(libs[0]).kmp_get_blocktime())
""")


def run(code=CODE, **env_vars):
    # the runtimes' settings are the case's own (a caller's OMP_NUM_THREADS=1 would start no workers at all)
    env = {k: v for k, v in os.environ.items()
           if k not in ("KMP_BLOCKTIME", "OMP_WAIT_POLICY", "OMP_NUM_THREADS", "DYN_OPENMP")}
    env.update(env_vars, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return int(r.stdout.strip().splitlines()[-1])


def test_libomp_workers_sleep_after_each_kernel():
    assert run(DYN_OPENMP="libomp") == 0  # libomp's own default is 200 (ms)


def test_user_block_time_wins():
    assert run(DYN_OPENMP="libomp", KMP_BLOCKTIME="150") == 150


def test_user_wait_policy_wins():
    assert run(DYN_OPENMP="libomp", OMP_WAIT_POLICY="active") != 0


# kernels whose parallel loop has fewer, as many or more iterations than threads, odd splits included, at
# several team sizes (torch.set_num_threads sets the team size on both runtimes); then the threads the
# process has: libomp's own workers exist only when the kernels ran on it
THREADS = textwrap.dedent("""
    import os
    import torch
    import dyn

    for n in (1, 2, 3, 5):
        torch.set_num_threads(n)
        for rows in (1, 2, 3, 7, 64, 1001):
            x = torch.randn(rows, 37)
            f = dyn.compile(lambda x: (x.sin() * 2 + 1).exp().sum(1), fullgraph=True)
            torch.testing.assert_close(f(x), (x.sin() * 2 + 1).exp().sum(1))
    assert dyn.stats()["compiled_graphs"] and not dyn.stats()["eager_graphs"], dyn.stats()
    print(len(os.listdir("/proc/self/task")))
""")


def test_kernels_run_on_atens_openmp_threads():
    shared, separate = run(THREADS), run(THREADS, DYN_OPENMP="libomp")
    assert shared < separate  # libomp started no workers of its own



@pytest.mark.parametrize("threads", ["1", "2", "5"])
def test_jit_compiles_a_split_module(threads, monkeypatch):
    """A CPU graph's LLVM module is split into DYN_JIT_THREADS parts (at least 8 functions each) optimized
    and compiled at once, then linked (lib/Compiler/HostJit.cpp): kernels in different parts call each other
    and share constants. A graph of some 40 kernels (each reduction ends one) gives eager's values whatever
    the count, including repeated kernel bodies that MergeFunctions folds into one."""
    import torch
    import dyn

    def f(x, w):
        outs = []
        for k in range(10):  # each result from x: no rounding compounds from step to step
            y = torch.softmax(x * (k + 1), -1) + torch.sin(x).mean(0, keepdim=True)
            y = y @ w + torch.tensor([float(k)] * 24)  # a dense constant per step
            outs.append(y - y.amax(1, keepdim=True))
        return tuple(outs) + (torch.sort(outs[-1], 1).values,)  # and an ATen library call
    monkeypatch.setenv("DYN_JIT_THREADS", threads)
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(16, 24, generator=g), torch.randn(24, 24, generator=g) / 5
    dyn.reset()
    with torch.no_grad():
        got, want = dyn.compile(f, fullgraph=True)(x, w), f(x, w)
    for g, e in zip(got, want):
        torch.testing.assert_close(g, e)
    assert dyn.stats()["compiled_graphs"] == 1 and not dyn.stats()["eager_graphs"], dyn.stats()
