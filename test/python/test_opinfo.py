"""PyTorch's OpInfos as the oracle: every OpInfo variant dyn claims (dyn.ops.claims: the capture handler
tables) runs through dyn.compile(backend="dyn", fullgraph=True) with its sample inputs and must compile
natively (no graph break, no eager fallback, no warning) and give eager's results: values (default
torch.testing tolerances), dtypes, shapes, strides where eager defines them, aliasing and in-place updates
(opinfo_check.py says exactly what is compared).

The list of ops that must compile natively is generated from the handler tables, so it cannot drift from
what capture claims. Claimed variants that fail today are in KNOWN_FAILURES with the start of today's first
failure message: such a test must fail with that message (then it xfails); when it passes, or fails
differently, the test fails, so a fix must remove or update its entry.

Cost (CI runs this on 2 cores): each sample is one capture and one JIT compile (~70 ms), so samples are
limited per variant and dtype (SAMPLES: the first n sample inputs, seeded); about 1,300 samples in all.
benchmarks/opinfo_coverage.py runs every op of op_db with more samples. On a machine with CUDA the same
tests run on the GPU too.
"""
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import opinfo_check as oc
from opinfo_integer_gaps import INTEGER_GAPS
from conftest import has_compiler

# over a minute: left out of the quick loop, pytest -m "not slow" (docs/contributing.md)
pytestmark = pytest.mark.slow

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
# variant -> ((dtype, number of samples), ...)
SAMPLES = {
    # integers and bools where the OpInfo supports them (their gaps: opinfo_integer_gaps.py)
    "function": ((torch.float32, 4), (torch.float64, 2), (torch.bfloat16, 2), (torch.int64, 2), (torch.uint8, 2),
                 (torch.bool, 1)),
    "method": ((torch.float32, 2),),
    "inplace": ((torch.float32, 3), (torch.bfloat16, 1)),
}

# (OpInfo name, variant, dtype or "*", device or "*") -> the start of today's first failure
KNOWN_FAILURES = {
    # data-dependent: eager reads the 0-d start tensor's value (a CPU tensor on CUDA too: a host input)
    # (its one bool sample has an int start: that one passes)
    **{("narrow", "function", d, "*"): "not native: Unsupported: narrow with a tensor start"
       for d in ("float32", "float64", "bfloat16", "int64", "uint8")},
    ("narrow", "method", "*", "*"): "not native: Unsupported: narrow with a tensor start",
    # a view into a larger buffer whose as_strided reads memory before the view's first element (dyn
    # captures the view's elements, not its whole storage)
    **{("as_strided.partial_views", "function", d, "*"):
       "not native: Unsupported: as_strided reaching memory before the input's first element"
       for d in ("float32", "float64", "bfloat16", "int64", "uint8")},  # the bool sample passes
    ("as_strided.partial_views", "method", "*", "*"):
        "not native: Unsupported: as_strided reaching memory before the input's first element",
    # data-dependent: eager reads the split indices from a tensor (which OpInfo makes on the CPU)
    ("tensor_split", "function", "*", "*"): "not native: Unsupported: tensor_split at indices held in a tensor",
    ("tensor_split", "method", "*", "*"): "not native: Unsupported: tensor_split at indices held in a tensor",
    # CUDA's kernels take what the CPU's refuse: capture probes both (ops.core.eager_accepts)
    ("nn.functional.softsign", "function", "bool", "cuda"):
        "not native: Unsupported: softsign: eager raises NotImplementedError: \"abs_cpu\" not implemented for 'Bool'",
    ("abs", "function", "bool", "cuda"):
        "not native: Unsupported: abs: eager raises NotImplementedError: \"abs_cpu\" not implemented for 'Bool'",
    # OpInfo claims CUDA's trace takes bfloat16 and bool; eager's kernel raises (capture probes it: not captured)
    **{("trace", "function", d, "cuda"): "not native: Unsupported: trace: eager raises NotImplementedError: "
       "\"trace\" not implemented for" for d in ("bfloat16", "bool")},
    # repeat counts in a tensor give a data-dependent shape
    ("repeat_interleave", "function", "float32", "*"):
        "not native: Unsupported: repeat_interleave with a tensor of counts",
    # tolerances held in tensors (eager reads their values); numbers are compiled (a library call)
    ("linalg.pinv", "function", "float32", "*"):
        "not native: Unsupported: linalg.pinv with a tolerance of type TensorVar",
    # eager's addbmm_ resizes a [1] destination to the [n, p] product: dyn does not resize inputs
    ("addbmm", "inplace", "float32", "*"):
        "not native: Unsupported: in-place op: output with shape [1] doesn't match the broadcast shape [5, 10]",
    # special functions: eager's bfloat16 kernels round intermediate steps where dyn computes in float64 and
    # rounds once (docs/special-functions.md): not captured in bfloat16
    **{(f"polygamma.polygamma_n_{n}", "function", "bfloat16", "*"):
       "not native: Unsupported: polygamma of order" for n in range(5)},
    ("special.polygamma.special_polygamma_n_0", "function", "bfloat16", "*"):
        "not native: Unsupported: polygamma of order",
    ("special.ndtr", "function", "bfloat16", "*"): "not native: Unsupported: ndtr of torch.bfloat16",
}


def _cases():
    for op in op_db:
        for kind in oc.claimed_variants(op):
            for dtype, n in SAMPLES[kind]:
                for device in DEVICES:
                    if dtype in op.supported_dtypes(device):
                        yield pytest.param(op, kind, dtype, n, device,
                                           id=f"{oc.full_name(op)}-{kind}-{str(dtype)[6:]}-{device}")


def _known(op, kind, dtype, device):
    name = oc.full_name(op)
    if (name, kind, str(dtype)[6:]) in INTEGER_GAPS:
        return INTEGER_GAPS[(name, kind, str(dtype)[6:])]
    for d in (str(dtype)[6:], "*"):
        for dev in (device, "*"):
            why = KNOWN_FAILURES.get((name, kind, d, dev))
            if why is not None:
                return why
    return None


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
@pytest.mark.parametrize("op,kind,dtype,n,device", list(_cases()))
def test_opinfo(op, kind, dtype, n, device):
    failure, checked = None, 0
    for sample in oc.samples(op, dtype, n, device):
        try:
            checked += oc.check_sample(op, kind, sample, device)
        except oc.Mismatch as e:
            failure = f"{e} (sample {oc.describe(sample)[:200]})"
            break
    known = _known(op, kind, dtype, device)
    if known is None:
        if failure is not None:
            pytest.fail(failure)
        return
    if failure is None:
        pytest.fail(f"passes now: remove its KNOWN_FAILURES entry ({known!r})")
    if not failure.startswith(known):
        pytest.fail(f"fails differently from its KNOWN_FAILURES entry {known!r}: {failure}")
    pytest.xfail(failure)


def test_claims_come_from_the_handler_tables():
    """The claim is the handler tables' content: a torch function with a handler is claimed, one without
    is not, and every claimed OpInfo variant has a test above."""
    from dyn.ops import METHODS, TORCH_FUNCS
    from dyn.ops.claims import claims
    assert claims(function=torch.add) and torch.add in TORCH_FUNCS
    assert not claims(function=torch.fft.fft) and torch.fft.fft not in TORCH_FUNCS
    assert claims(method="add_") and "add_" in METHODS
    assert not claims(method="no_such_method")
    ids = {p.id.rsplit("-", 2)[0] for p in _cases()}
    for op in op_db:
        for kind in oc.claimed_variants(op):
            if any(dtype in op.supported_dtypes("cpu") for dtype, _ in SAMPLES[kind]):  # not complex-only
                assert f"{oc.full_name(op)}-{kind}" in ids


@pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
def test_to_copy_positionally_and_memory_formats():
    """Regressions the OpInfos found (float64 samples, which the method variants above do not run):
    x.to(dtype, non_blocking, copy) with copy=True given positionally is a new tensor; a channels_last
    request gives eager's strides (a new tensor, or x itself where x is laid out so and no copy is asked)."""
    import dyn
    x = torch.randn(2, 3, 4, 5, dtype=torch.float64)
    for fn in (lambda t: t.to(torch.float64, False, True), lambda t: t.to("cpu", torch.float64, False, True),
               lambda t: t.to(t, False, True)):
        got = dyn.compile(fn, fullgraph=True)(x)
        assert got is not x and got.data_ptr() != x.data_ptr() and torch.equal(got, x)
    assert dyn.compile(lambda t: t.to(torch.float64), fullgraph=True)(x) is x  # no copy asked: x itself
    xl = x.contiguous(memory_format=torch.channels_last)
    for fn in (lambda t: t.float(memory_format=torch.channels_last),
               lambda t: t.to(torch.float32, memory_format=torch.channels_last),
               lambda t: t.to(torch.float64, memory_format=torch.channels_last),
               lambda t: t.to("cpu", torch.float64, False, True, memory_format=torch.channels_last),
               lambda t: t.contiguous(memory_format=torch.channels_last),
               lambda t: t.clone(memory_format=torch.channels_last),
               lambda t: t.contiguous(memory_format=torch.channels_last).mul_(3)):
        for t in (x, xl):
            a, b = t.clone(memory_format=torch.preserve_format), t.clone(memory_format=torch.preserve_format)
            got, want = dyn.compile(fn, fullgraph=True)(a), fn(b)
            assert got.stride() == want.stride() and torch.equal(got, want) and torch.equal(a, b)
            assert (got.data_ptr() == a.data_ptr()) == (want.data_ptr() == b.data_ptr())
    with pytest.raises(dyn.Unsupported, match="rank 3"):
        dyn.compile(lambda t: t.float(memory_format=torch.channels_last), fullgraph=True)(x[0])
