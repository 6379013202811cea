"""Python numbers and 0-d tensors beside float16/bfloat16 tensors, bit-exact against eager. Eager's kernels
read such a scalar either rounded to the tensor's dtype or at float32 precision (TensorIterator's
`original_scalar_value`), by op and device: on the CPU mul and div read a number (or a 0-d tensor as the
second operand) in float32 and add/sub round it; on CUDA add, sub, mul and div read numbers and 0-d CPU
tensors on either side in float32 (a division by one multiplies by its float32 reciprocal), while a 0-d
CUDA tensor is rounded. lerp reads a number weight in
float32 on both. Before, capture rounded every number to the tensor's dtype: `x * 0.1` in bfloat16
differed from eager in a fifth of the elements (by one unit in the last place)."""
import pytest
import torch

import dyn
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])

CASES = {
    "mul": lambda x: x * 0.1, "rmul": lambda x: 3.3 * x, "div": lambda x: x / 0.1, "rdiv": lambda x: 0.1 / x,
    "true_divide": lambda x: torch.true_divide(x, 3.3), "div_trunc": lambda x: torch.div(x, 0.1, rounding_mode="trunc"),
    "floor_divide": lambda x: x // 0.1, "div_trunc_3": lambda x: torch.div(x, 0.3, rounding_mode="trunc"),
    "floor_divide_3": lambda x: x // 0.3, "div_3": lambda x: x / 0.3, "mul_": lambda x: x.clone().mul_(0.3), "div_": lambda x: x.clone().div_(0.3),
    "add": lambda x: x + 0.1, "sub": lambda x: x - 0.3, "rsub": lambda x: 0.1 - x, "add_int": lambda x: x + 1001,
    "mul_int": lambda x: x * 1001, "lerp": lambda x: torch.lerp(x, 2 * x, 0.3),
    "mul_0d_cpu": lambda x: x * torch.tensor(0.1), "mul_0d_first": lambda x: torch.mul(torch.tensor(0.1), x),
    "div_0d_f64": lambda x: x / torch.tensor(0.3, dtype=torch.float64),
    "add_0d_cpu": lambda x: x + torch.tensor(0.1),
    "scale_in_float32": lambda x: (x.float() * 0.125 / 0.7).to(x.dtype),
    "copysign": lambda x: torch.copysign(x, -0.1),
    "add_alpha": lambda x: torch.add(x, 0.1, alpha=0.3), "sub_alpha": lambda x: torch.sub(x, 3.3, alpha=0.7),
    "atan2_0d": lambda x: torch.atan2(x, torch.tensor(0.3)), "hypot_0d": lambda x: torch.hypot(x, torch.tensor(3.3)),
    "maximum_0d": lambda x: torch.maximum(x, torch.tensor(1.1)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_scalar_operand_as_eager(name, dtype, device):
    if name == "lerp" and dtype == torch.float32:
        pytest.skip("eager's lerp is a fused multiply-add, dyn's a multiply and an add (docs/capture.md)")
    if name in ("atan2_0d", "hypot_0d") and dtype == torch.float32:
        pytest.skip("float32 atan2/hypot are eager's libm's, not bit-equal (test_opinfo compares them)")
    torch.manual_seed(0)
    x = ((torch.rand(64, 65) * 4 + 0.25) * (torch.randint(0, 2, (64, 65)) * 2 - 1)).to(device, dtype)
    fn = CASES[name]
    dyn.reset()
    got = dyn.compile(fn, backend="dyn", fullgraph=True)(x)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] >= 1, stats
    want = fn(x)
    assert got.dtype == want.dtype
    assert torch.equal(got, want), (got != want).sum().item()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_cuda_0d_tensor_is_rounded(dtype):
    """A 0-d CUDA tensor is not a CPU scalar: eager rounds it to the common dtype."""
    x = (torch.rand(64, 65, device="cuda") * 4 + 0.25).to(dtype)
    s = torch.tensor(0.1, device="cuda")
    fn = lambda x, s: (x * s, x + s, x / s)  # noqa: E731
    dyn.reset()
    got = dyn.compile(fn, backend="dyn", fullgraph=True)(x, s)
    for g, w in zip(got, fn(x, s)):
        assert torch.equal(g, w)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"mul_", "div_"}))
def test_scalar_operand_through_torch_compile(name):
    """The same through TorchDynamo and dyn's torch.compile backend (fx/translate.py), bfloat16 on the CPU."""
    torch.manual_seed(0)
    x = ((torch.rand(64, 65) * 4 + 0.25) * (torch.randint(0, 2, (64, 65)) * 2 - 1)).to(torch.bfloat16)
    fn = CASES[name]
    torch._dynamo.reset()
    dyn.reset()
    got = torch.compile(fn, backend="dyn", fullgraph=True)(x)
    stats = dyn.stats()
    torch._dynamo.reset()
    assert stats["compiled_graphs"] == 1 and not stats["eager_graphs"], stats
    assert torch.equal(got, fn(x)), name
