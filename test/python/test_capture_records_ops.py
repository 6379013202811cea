"""Capture records ops; it does not decompose them (issue 10, Deliver 2). The rule: capture's graph is no
finer than PyTorch's own dispatch. Each OpInfo sample (float32, CPU) is traced twice: by dyn's capture and
by make_fx, which records the ATen ops PyTorch's dispatcher runs (CompositeImplicitAutograd ops already
decomposed, as every backend sees them). Leaving out data movement and bookkeeping on both sides (views,
reshapes, copies, conversions, cat, factories), dyn's graph must hold no more ops than PyTorch's trace (or
than the op has results: max(dim) is graph.amax and graph.argmax). Each graph op is then decomposed by
dyn-convert-graph-to-prim, where dyn-opt shows and lit tests it.

DECOMPOSED lists the ops capture still decomposes further. Strict: an op that newly decomposes fails until
it is recorded as one op or listed; a listed op no longer decomposed fails until its entry is removed."""
import warnings

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.testing._internal.common_methods_invocations import op_db

import dyn
import opinfo_check as oc
from conftest import has_compiler

# over a minute: left out of the quick loop, pytest -m "not slow" (docs/contributing.md)
pytestmark = pytest.mark.slow

# graph ops that are not computation: data movement and the graph's own bookkeeping
FREE = {"input", "constant", "reshape", "permute", "expand", "slice", "convert", "cat", "torch_result",
        "detach"}
# their ATen counterparts (views are told by their schema)
ATEN_FREE = {"_to_copy", "clone", "copy", "copy_", "cat", "expand", "lift_fresh_copy", "detach", "alias",
             "contiguous", "_unsafe_view", "empty", "empty_like", "empty_strided", "empty_permuted", "zeros",
             "zeros_like", "ones", "ones_like", "full", "full_like", "new_empty", "new_zeros", "new_ones",
             "new_full", "scalar_tensor", "arange"}

# OpInfo -> why it is still composed at capture (what the graph holds)
DECOMPOSED = {}


def _ops():
    for op in op_db:
        if torch.float32 in op.supported_dtypes("cpu"):
            yield pytest.param(op, id=oc.full_name(op))


def _aten_ops(fn, sample):
    """The ATen ops PyTorch's dispatcher runs for the sample (make_fx), data movement left out."""
    args = (sample.input,) + tuple(sample.args)
    g = make_fx(lambda *a: fn(*a, **sample.kwargs))(*args)
    return [n.target.overloadpacket.__name__ for n in g.graph.nodes
            if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)
            and not n.target.is_view and n.target.overloadpacket.__name__ not in ATEN_FREE]


def _excess(op):
    """Over the first samples captured in one graph: the most compute ops dyn's graph holds beyond
    PyTorch's trace (or the number of results), with both lists; None when no sample was compared."""
    worst = None
    for sample in list(op.sample_inputs("cpu", torch.float32, requires_grad=False))[:3]:
        fn = lambda *a, **k: op.op(*a, **k)  # noqa: E731
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ex = dyn.explain(fn)(sample.input, *sample.args, **sample.kwargs)
                if ex.break_reasons or len(ex.graphs) != 1:
                    continue
                ref = _aten_ops(fn, sample)
        except Exception:  # eager raises for the sample, or make_fx cannot trace it: nothing to compare
            continue
        g = ex.graphs[0]
        ops = [n.op for n in g.nodes if n.op not in FREE]
        excess = len(ops) - max(len(ref), len(g.outputs), 1)
        if worst is None or excess > worst[0]:
            worst = (excess, ops, ref)
    return worst


def test_listed_ops_are_checked():
    assert set(DECOMPOSED) <= {p.id for p in _ops()}


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
@pytest.mark.parametrize("op", list(_ops()))
def test_capture_records_ops(op):
    name = oc.full_name(op)
    worst = _excess(op)
    decomposed = worst is not None and worst[0] > 0
    if name in DECOMPOSED:
        if not decomposed:
            pytest.fail(f"no finer than PyTorch's dispatch now ({worst}): remove its DECOMPOSED entry")
        pytest.xfail(f"{DECOMPOSED[name]}: {sorted(set(worst[1]))} against PyTorch's {worst[2]}")
    assert not decomposed, (f"{name}: capture records {worst[1]} where PyTorch's dispatch runs {worst[2]}: "
                            "record the op as one graph op, decomposed in GraphToPrim")
