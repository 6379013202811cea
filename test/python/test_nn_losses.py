"""Losses, distances and small nn functions captured as compositions of graph ops (ops/handlers/class_losses.py,
distances.py): compiled natively (no graph break, no fallback) and equal to eager, on
the CPU and (where there is one) on the GPU; a class index out of range raises as eager does."""
import pytest
import torch
import torch.nn.functional as F

import dyn
from conftest import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="dyn._C built without the compiler core")
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _native(fn, *args):
    compiled = dyn.compile(lambda *a: fn(*a), backend="dyn", fullgraph=True)
    got = compiled(*args)
    stats = dyn.stats()
    assert stats["graph_breaks"] == 0 and not stats["eager_graphs"] and stats["compiled_graphs"] >= 1, stats
    assert stats.get("internal_failures", 0) == 0, stats
    return got


def _compare(fn, *args, grad=None):
    with torch.no_grad():
        want = fn(*args)
        got = _native(fn, *args)
    torch.testing.assert_close(got, want, equal_nan=True)


CE_CASES = {
    "plain": dict(),
    "weight": dict(weight=True),
    "ignore": dict(ignore_index=2),
    "smooth": dict(label_smoothing=0.2),
    "weight_smooth_ignore": dict(weight=True, ignore_index=1, label_smoothing=0.1),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", list(CE_CASES))
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", [(6, 5), (3, 5, 4, 2), (5,)])
def test_cross_entropy_and_nll(device, case, reduction, shape):
    torch.manual_seed(0)
    kw = dict(CE_CASES[case])
    x = torch.randn(shape, device=device, requires_grad=True)
    c = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t = torch.randint(0, c, tshape, device=device)
    if kw.get("weight"):
        kw["weight"] = torch.rand(c, device=device) + 0.5
    if kw.get("ignore_index") is not None and t.dim():
        t.view(-1)[0] = kw["ignore_index"]
    _compare(lambda x, t: F.cross_entropy(x, t, reduction=reduction, **kw), x, t)
    dyn.reset()
    kw.pop("label_smoothing", None)
    _compare(lambda x, t: F.nll_loss(F.log_softmax(x, int(x.dim() > 1)), t, reduction=reduction, **kw), x, t)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probabilities(device, smoothing):
    torch.manual_seed(1)
    x = torch.randn(4, 6, 3, device=device, requires_grad=True)
    p = torch.softmax(torch.randn(4, 6, 3, device=device), 1)
    w = torch.rand(6, device=device)
    for reduction in ("none", "mean", "sum"):
        dyn.reset()
        _compare(lambda x, p: F.cross_entropy(x, p, w, reduction=reduction, label_smoothing=smoothing), x, p)


def test_nll_target_out_of_range_raises():
    x = torch.randn(4, 3)
    f = dyn.compile(lambda x, t: F.nll_loss(x, t), backend="dyn")
    f(x, torch.tensor([0, 1, 2, 1]))
    with pytest.raises(IndexError):
        f(x, torch.tensor([0, 3, 2, 1]))
    # the ignored index is not a class
    torch.testing.assert_close(f(x, torch.tensor([0, -100, 2, 1])), F.nll_loss(x, torch.tensor([0, -100, 2, 1])))


@pytest.mark.parametrize("device", DEVICES)
def test_all_ignored_mean_is_nan(device):
    x = torch.randn(3, 4, device=device)
    t = torch.full((3,), -100, device=device)
    got = _native(lambda x, t: F.cross_entropy(x, t), x, t)
    assert torch.isnan(got) and torch.isnan(F.cross_entropy(x, t))


def _r(*shape, device="cpu", grad=True):
    return torch.randn(*shape, device=device, requires_grad=grad)


@pytest.mark.parametrize("device", DEVICES)
def test_margin_and_embedding_losses(device):
    torch.manual_seed(2)
    a, b = _r(5, 7, device=device), _r(5, 7, device=device)
    sign = torch.randint(0, 2, (5, 7), device=device) * 2.0 - 1
    sign5 = sign[:, 0].contiguous()
    cls = torch.randint(0, 7, (5,), device=device)
    multi = torch.randint(-1, 7, (5, 7), device=device)
    for reduction in ("none", "mean", "sum"):
        for fn, args in (
                (lambda x, y: F.soft_margin_loss(x, y, reduction=reduction), (a, sign)),
                (lambda x, y, t: F.margin_ranking_loss(x, y, t, 0.3, reduction=reduction), (a, b, sign)),
                (lambda x, t: F.hinge_embedding_loss(x, t, 0.5, reduction=reduction), (a, sign)),
                (lambda x, y, t: F.cosine_embedding_loss(x, y, t, 0.2, reduction=reduction), (a, b, sign5)),
                (lambda x, t: F.multilabel_soft_margin_loss(x, t, reduction=reduction), (a, (sign > 0).float())),
                (lambda x, t: F.poisson_nll_loss(x, t.abs(), full=True, reduction=reduction), (a, b.detach())),
                (lambda x, t: F.multi_margin_loss(x, t, p=2, margin=0.7, reduction=reduction), (a, cls)),
                (lambda x, t: F.multilabel_margin_loss(x, t, reduction=reduction), (a, multi)),
                (lambda x, y, z: F.triplet_margin_loss(x, y, z, swap=True, reduction=reduction),
                 (a, b, _r(5, 7, device=device)))):
            dyn.reset()
            _compare(fn, *args)


@pytest.mark.parametrize("device", DEVICES)
def test_distances_and_nn_functions(device):
    torch.manual_seed(3)
    a, b = _r(6, 5, device=device), _r(6, 5, device=device)
    for fn, args in (
            (lambda x, y: F.pairwise_distance(x, y, 3.0), (a, b)),
            (lambda x, y: F.cosine_similarity(x, y, 1), (a, b)),
            (lambda x: F.pdist(x), (a,)),
            (lambda x, y: torch.cdist(x, y), (a, b[:4])),
            (lambda x, y: torch.dist(x, y, 1), (a, b)),
            (lambda x, y, w: F.bilinear(x, y, w), (a, b, _r(3, 5, 5, device=device))),
            (lambda x: F.glu(x, 0), (a,)),
            (lambda x, w: F.prelu(x, w), (a, _r(5, device=device))),
            (lambda x: F.softmin(x, 1), (a,)),
            (lambda x: F.local_response_norm(x, 3), (_r(2, 6, 4, 3, device=device),)),
            (lambda x: F.pixel_shuffle(x, 2), (_r(1, 8, 3, 2, device=device),)),
            (lambda x: F.pixel_unshuffle(x, 2), (_r(1, 2, 4, 6, device=device),)),
            (lambda x: F.channel_shuffle(x, 2), (_r(2, 6, 3, device=device, grad=False),))):
        dyn.reset()
        _compare(fn, *args, grad=any(t.requires_grad for t in args))


@pytest.mark.parametrize("device", DEVICES)
def test_gaussian_nll(device):
    torch.manual_seed(4)
    x, t = torch.randn(4, 3, device=device), torch.randn(4, 3, device=device)
    v = torch.rand(4, 3, device=device)
    v[0, 0] = 0.0  # clamped to eps
    for reduction in ("none", "mean", "sum"):
        for var in (v, v[:, 0].contiguous(), v[:, :1].contiguous()):
            dyn.reset()
            _compare(lambda x, t, var: F.gaussian_nll_loss(x, t, var, full=True, reduction=reduction), x, t, var)
        dyn.reset()
        _compare(lambda x, t: F.gaussian_nll_loss(x, t, 0.5, reduction=reduction), x, t)


def test_gaussian_nll_negative_var_raises():
    f = dyn.compile(lambda x, t, v: F.gaussian_nll_loss(x, t, v), backend="dyn")
    x, t = torch.randn(5), torch.randn(5)
    torch.testing.assert_close(f(x, t, torch.ones(5)), F.gaussian_nll_loss(x, t, torch.ones(5)))
    with pytest.raises(IndexError):  # eager: ValueError (docs/op_families.md)
        f(x, t, -torch.ones(5))


@pytest.mark.parametrize("device", DEVICES)
def test_causal_lm_shifted_labels(device):
    """transformers' ForCausalLMLoss: labels shifted with F.pad(value=-100) and sliced, so the class index
    is computed in the graph; its range is checked from the inputs before each run (no graph break)."""
    def f(logits, labels):
        labels = F.pad(labels, (0, 1), value=-100)
        shift = labels[..., 1:].contiguous().view(-1)
        return F.cross_entropy(logits.view(-1, 10).float(), shift, ignore_index=-100)
    lg = torch.randn(2, 5, 10, device=device)
    lb = torch.randint(0, 10, (2, 5), device=device)
    _compare(f, lg, lb)
    if device == "cpu":  # on CUDA the check is a device-side assert, as eager's (it ends the process's context)
        g = dyn.compile(f, backend="dyn")
        with pytest.raises(IndexError):
            g(lg, lb.masked_fill(lb == lb[0, 2], 10))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_triplet_margin_with_distance_loss_traced(reduction):
    """F.triplet_margin_with_distance_loss is traced into (dyn.ops.handlers.TRACED_FUNCS): its distance
    function (None: pairwise_distance, a module, a lambda) is captured like the user's code."""
    a, p, n = torch.randn(5, 7), torch.randn(5, 7), torch.randn(5, 7)
    for dist in (None, torch.nn.PairwiseDistance(p=1.5), lambda x, y: 1.0 - F.cosine_similarity(x, y)):
        for swap in (False, True):
            _compare(lambda a, p, n: F.triplet_margin_with_distance_loss(
                a, p, n, distance_function=dist, margin=0.7, swap=swap, reduction=reduction), a, p, n)


def test_multilabel_soft_margin_loss_with_integer_targets():
    # eager's composition promotes integer targets (torch's ModuleInfo samples pass int64 targets)
    x, t = torch.randn(3, 5), torch.randint(0, 2, (3, 5))
    for reduction in ("mean", "sum", "none"):
        f = lambda x, t: torch.nn.functional.multilabel_soft_margin_loss(x, t, reduction=reduction)  # noqa: E731
        torch.testing.assert_close(dyn.compile(f, fullgraph=True)(x, t), f(x, t))
