"""dyn's CPU kernels run on libomp beside ATen's libgomp: dyn makes libomp's idle workers sleep at once
(KMP_BLOCKTIME=0) unless the user chose a wait policy (python/dyn/native.py; docs/performance.md, "CPU: two
OpenMP runtimes in one process"). Each case runs in a fresh interpreter, since libomp reads the setting once."""
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


def run(**env_vars):
    env = {k: v for k, v in os.environ.items() if k not in ("KMP_BLOCKTIME", "OMP_WAIT_POLICY")}
    env.update(env_vars, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return int(r.stdout.strip().splitlines()[-1])


def test_libomp_workers_sleep_after_each_kernel():
    assert run() == 0  # libomp's own default is 200 (ms)


def test_user_block_time_wins():
    assert run(KMP_BLOCKTIME="150") == 150


def test_user_wait_policy_wins():
    assert run(OMP_WAIT_POLICY="active") != 0
