"""Capture records ops; it does not decompose them (issue 10, Deliver 2). The rule: an ATen op with a kernel
of its own (not CompositeImplicitAutograd, which PyTorch's dispatcher itself decomposes before any backend
sees it) is one graph op per result, decomposed by dyn-convert-graph-to-prim where dyn-opt shows and lit
tests it. Checked on every OpInfo whose function variant is captured in one graph (float32 CPU samples):
the graph may hold data movement (reshape, permute, expand, slice, cat, convert) around the op, and no
more compute ops than the op has results.

DECOMPOSED lists the ops capture still decomposes, with their graphs' compute ops. Strict: a new op that
decomposes fails until it is recorded as one op or listed; a listed op recorded as one op fails until its
entry is removed."""
import warnings

import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import dyn
import opinfo_check as oc
from conftest import has_compiler

# ops that are not computation: data movement and the graph's own bookkeeping
FREE = {"input", "constant", "reshape", "permute", "expand", "slice", "convert", "cat", "torch_result",
        "detach"}

# OpInfo -> why it is still composed at capture (what the graph holds)
DECOMPOSED = {
    # ATen internals AOTAutograd's graphs name (the fx backend): statistics as mean/rstd graph ops
    "_native_batch_norm_legit": "batch_norm plus the saved mean/rstd as reductions",
    "native_batch_norm": "batch_norm plus the saved mean/rstd as reductions",
    "native_layer_norm": "layer_norm plus the saved mean/rstd as reductions",
    "_softmax_backward_data": "grad * (y - sum(grad * y)) as graph ops",
    "native_dropout_backward": "grad * mask * scale",
    # products
    "dot": "mul and sum", "vdot": "mul and sum", "trace": "gather of the diagonal and sum",
    "linalg.cross": "products of narrowed components",
    # rounding
    "div.floor_rounding": "eager's floor division steps (fmod, sign fix-ups)",
    "floor_divide": "eager's floor division steps (fmod, sign fix-ups)",
    "div.trunc_rounding": "div and trunc",
    "round.decimals_3": "mul, round, div", "round.decimals_neg_3": "div, round, mul",
    # indexing: negative indices wrapped, bounds as where, then the scatter
    "index_add": "mul by alpha and scatter", "index_fill": "index wrap and scatter",
    "index_put": "index wrap and scatter", "put": "index wrap and scatter",
    "_unsafe_masked_index": "index clamps and a masked gather",
    "_unsafe_masked_index_put_accumulate": "index clamps and a masked scatter",
    "as_strided_scatter": "gather and where", "diag_embed": "gather and where",
    "diagonal_scatter": "gather and where", "select_scatter": "gather and where",
    "slice_scatter": "gather and where", "masked_scatter": "cumulative count, gather and where",
    # search, counting, statistics
    "bucketize": "comparisons and a sum", "isin": "eq and any", "histc": "bin arithmetic and scatter",
    "nansum": "where and sum", "dist": "norm as pow/abs/sum", "renorm": "vector_norm, factor and where",
    # float bits and sampling
    "frexp": "exponent search as comparisons", "nextafter": "bit arithmetic as comparisons",
    "grid_sampler_2d": "the sampling arithmetic", "grid_sampler_3d": "the sampling arithmetic",
    "nn.functional.glu": "sigmoid and mul of the halves",
}


def _has_own_kernel(name):
    """Whether torch.ops.aten.<name> has an overload (other than out=) that is not CompositeImplicitAutograd."""
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        return False
    for overload in packet.overloads():
        if overload == "out" or overload.endswith("_out"):
            continue
        qualified = f"aten::{name}" + ("" if overload == "default" else f".{overload}")
        try:
            if not torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "CompositeImplicitAutograd"):
                return True
        except RuntimeError:  # an overload the dispatcher does not know (TorchScript's)
            continue
    return False


def _several_calls(fn):
    """A torch.testing wrapper that calls more than the op (linalg.pinv.singular's `pinv(a @ a.mT)`)."""
    code = getattr(fn, "__code__", None)
    return code is not None and "_internal" in code.co_filename and oc._wrapped(fn) is None


def _ops():
    for op in op_db:
        if torch.float32 in op.supported_dtypes("cpu") and _has_own_kernel(op.aten_name or op.name) and \
                not _several_calls(op.op):
            yield pytest.param(op, id=oc.full_name(op))


def _compute_ops(op):
    """The most compute ops any of the first samples' one graph holds (None: none captured in one graph),
    and that sample's number of results."""
    worst, results = None, 1
    for sample in list(op.sample_inputs("cpu", torch.float32, requires_grad=False))[:3]:
        fn = lambda *a, **k: op.op(*a, **k)  # noqa: E731
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ex = dyn.explain(fn)(sample.input, *sample.args, **sample.kwargs)
        except Exception:  # eager raises for the sample: nothing to check
            continue
        if ex.break_reasons or len(ex.graphs) != 1:
            continue
        g = ex.graphs[0]
        ops = [n.op for n in g.nodes if n.op not in FREE]
        if worst is None or len(ops) > len(worst):
            worst, results = ops, max(1, len(g.outputs))
    return worst, results


def test_listed_ops_are_checked():
    assert set(DECOMPOSED) <= {p.id for p in _ops()}


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
@pytest.mark.parametrize("op", list(_ops()))
def test_capture_records_one_op(op):
    name = oc.full_name(op)
    ops, results = _compute_ops(op)
    decomposed = ops is not None and len(ops) > results
    if name in DECOMPOSED:
        if not decomposed:
            pytest.fail(f"recorded as one op now ({ops}): remove its DECOMPOSED entry")
        pytest.xfail(f"{DECOMPOSED[name]}: {sorted(set(ops))}")
    assert not decomposed, f"{name} is decomposed at capture into {ops}: record it as one graph op"
