"""torch.optim's zero_grad and step captured in a dyn-compiled train step (capture/interpreter/optimizers.py):
every configuration of SGD, Adam and AdamW against the same loop run eagerly (losses, parameters and the
optimizer's state), the guards that make a changed optimizer recompile, and what still breaks the graph."""
import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

import dyn

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
DEVICES = ["cpu", pytest.param("cuda", marks=needs_cuda)]

CONFIGS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "sgd_momentum_wd_dampening": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1,
                                                          weight_decay=1e-2),
    "sgd_nesterov_maximize": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, maximize=True),
    "sgd_foreach": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.5, foreach=True),
    "sgd_tensor_lr": lambda p: torch.optim.SGD(p, lr=torch.tensor(0.1), momentum=0.9),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-2),
    "adam_amsgrad_wd": lambda p: torch.optim.Adam(p, lr=1e-2, amsgrad=True, weight_decay=0.1),
    "adam_maximize_foreach": lambda p: torch.optim.Adam(p, lr=1e-2, maximize=True, foreach=True),
    "adam_single_tensor": lambda p: torch.optim.Adam(p, lr=1e-2, foreach=False),
    "adam_fused": lambda p: torch.optim.Adam(p, lr=1e-2, fused=True),
    "adam_capturable": lambda p: torch.optim.Adam(p, lr=1e-2, capturable=True, foreach=False),
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-2),
    "adamw_tensor_lr": lambda p: torch.optim.AdamW(p, lr=torch.tensor(1e-2), weight_decay=0.05, foreach=False),
}


def _model(device):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.GELU(), nn.Linear(16, 4)).to(device)


def _loop(model, opt, step_fn, device, steps=5):
    g = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        x, y = torch.randn(6, 8, generator=g).to(device), torch.randn(6, 4, generator=g).to(device)
        losses.append(step_fn(x, y).item())
    return losses


def _train_step(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _assert_state_equal(a, b):
    sa, sb = a.state_dict()["state"], b.state_dict()["state"]
    assert sa.keys() == sb.keys()
    for k in sa:
        assert sa[k].keys() == sb[k].keys()
        for key in sa[k]:
            x, y = sa[k][key], sb[k][key]
            if isinstance(x, torch.Tensor):
                torch.testing.assert_close(x.to(y.device), y, rtol=1.3e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_train_step_with_optimizer_matches_eager(config, device):
    if config == "adam_capturable" and device == "cpu":
        pytest.skip("capturable needs an accelerator")
    ref = _model(device)
    model = copy.deepcopy(ref)
    ref_opt, opt = CONFIGS[config](ref.parameters()), CONFIGS[config](model.parameters())
    want = _loop(ref, ref_opt, _train_step(ref, ref_opt), device)
    dyn.reset()
    got = _loop(model, opt, dyn.compile(_train_step(model, opt)), device)
    s = dyn.stats()
    assert s["eager_graphs"] == [] and s["eager_entries"] == 0, s
    # one graph for zero_grad and the forward, one for the step (two for SGD's first step with momentum:
    # its buffers are made there); the only break is loss.backward()
    assert s["graph_breaks"] == 1 and s["compiled_graphs"] == s["graphs"] >= 2
    torch.testing.assert_close(got, want, rtol=1.3e-6, atol=1e-6)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1.3e-6, atol=1e-6)
    _assert_state_equal(opt, ref_opt)


def test_the_step_graph_is_captured_without_breaks():
    model = _model("cpu")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    F.mse_loss(model(torch.randn(2, 8)), torch.randn(2, 4)).backward()
    e = dyn.explain(lambda: opt.step())()
    assert e.graph_count == 1 and e.graph_break_count == 0, str(e)
    assert "lerp" in str(e) and "dyn (cpu)" in str(e)


def test_capturing_the_state_formats_no_tensor(monkeypatch):
    """The optimizer's state is keyed by the parameters: naming those inputs must not print the parameters'
    values (Tensor.__repr__ took 0.6 s of the seed loop's first step)."""
    model = _model("cpu")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    F.mse_loss(model(torch.randn(2, 8)), torch.randn(2, 4)).backward()
    want = copy.deepcopy(model)
    want_opt = torch.optim.Adam(want.parameters(), lr=1e-3)
    want_opt.load_state_dict(opt.state_dict())
    for p, q in zip(model.parameters(), want.parameters()):
        q.grad = p.grad.clone()

    def no_repr(self, *args, **kwargs):
        raise AssertionError("a tensor was formatted")
    monkeypatch.setattr(torch.Tensor, "__repr__", no_repr)
    dyn.reset()
    dyn.compile(lambda: opt.step())()
    want_opt.step()
    assert dyn.stats()["graphs"] == 1 and not dyn.stats()["eager_graphs"]
    for p, q in zip(model.parameters(), want.parameters()):
        torch.testing.assert_close(p, q)


def test_params_without_grad_groups_and_frozen_layers():
    """A param group per layer with its own lr, a frozen layer (grad None: skipped, as eager), and a layer
    whose grad appears later (the step recompiles for it)."""
    def make():
        m = _model("cpu")
        m[0].requires_grad_(False)
        return m, torch.optim.Adam([{"params": m[0].parameters()}, {"params": m[1].parameters(), "lr": 1e-3},
                                    {"params": m[3].parameters(), "lr": 3e-2, "weight_decay": 0.1}], lr=1e-2)
    ref, ref_opt = make()
    model, opt = make()
    want = _loop(ref, ref_opt, _train_step(ref, ref_opt), "cpu", 3)
    dyn.reset()
    step = dyn.compile(_train_step(model, opt))
    got = _loop(model, opt, step, "cpu", 3)
    ref[0].requires_grad_(True)
    model[0].requires_grad_(True)
    want += _loop(ref, ref_opt, _train_step(ref, ref_opt), "cpu", 3)
    got += _loop(model, opt, step, "cpu", 3)
    assert dyn.stats()["recompiles"] >= 1 and dyn.stats()["eager_graphs"] == []
    torch.testing.assert_close(got, want, rtol=1.3e-6, atol=1e-6)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1.3e-6, atol=1e-6)
    _assert_state_equal(opt, ref_opt)


def test_zero_grad_keeping_the_tensors_and_grad_reads():
    """zero_grad(set_to_none=False) zeroes the gradients in the graph; a hand-written SGD reading p.grad
    inside the compiled function is one graph."""
    ref, model = _model("cpu"), _model("cpu")
    for m in (ref, model):
        F.mse_loss(m(torch.randn(3, 8)), torch.randn(3, 4)).backward()
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    grads = [p.grad for p in model.parameters()]
    dyn.reset()
    dyn.compile(lambda: opt.zero_grad(set_to_none=False))()
    ref_opt.zero_grad(set_to_none=False)
    assert all(p.grad is g and not g.any() for p, g in zip(model.parameters(), grads))

    def manual_sgd(m, lr):
        with torch.no_grad():
            for p in m.parameters():
                if p.grad is not None:
                    p.sub_(p.grad * lr)
    for m in (ref, model):
        F.mse_loss(m(torch.ones(3, 8)), torch.zeros(3, 4)).backward()
    manual_sgd(ref, 0.5)
    dyn.compile(manual_sgd)(model, 0.5)
    s = dyn.stats()
    assert s["graph_breaks"] == 0 and s["eager_graphs"] == [] and s["backward_graphs"] == 0
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q)


def test_a_changed_float_lr_recompiles_a_tensor_lr_does_not():
    for lr, recompiles in ((0.1, 1), (torch.tensor(0.1), 0)):
        ref, model = _model("cpu"), _model("cpu")
        ref_opt = torch.optim.SGD(ref.parameters(), lr=lr if isinstance(lr, float) else lr.clone())
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        dyn.reset()
        step = dyn.compile(_train_step(model, opt))
        got = _loop(model, opt, step, "cpu", 2)
        want = _loop(ref, ref_opt, _train_step(ref, ref_opt), "cpu", 2)
        for o in (opt, ref_opt):  # what an LR scheduler does
            if isinstance(lr, float):
                o.param_groups[0]["lr"] = 0.01
            else:
                o.param_groups[0]["lr"].fill_(0.01)
        got += _loop(model, opt, step, "cpu", 2)
        want += _loop(ref, ref_opt, _train_step(ref, ref_opt), "cpu", 2)
        assert dyn.stats()["recompiles"] == recompiles
        torch.testing.assert_close(got, want, rtol=1.3e-6, atol=1e-6)


def test_hooks_and_closures_break_the_graph_and_run_eagerly():
    ref, model = _model("cpu"), _model("cpu")
    ref_opt, opt = torch.optim.Adam(ref.parameters()), torch.optim.Adam(model.parameters())
    seen = []
    for o in (ref_opt, opt):
        o.register_step_post_hook(lambda o, a, k: seen.append(1))
    want = _loop(ref, ref_opt, _train_step(ref, ref_opt), "cpu", 2)
    dyn.reset()
    got = _loop(model, opt, dyn.compile(_train_step(model, opt)), "cpu", 2)
    assert len(seen) == 4
    assert any("step hooks" in b["reason"] for b in dyn.explain(_train_step(model, opt))(
        torch.randn(6, 8), torch.randn(6, 4)).break_reasons)
    torch.testing.assert_close(got, want, rtol=1.3e-6, atol=1e-6)


def test_in_place_updates_bump_version_counters():
    """The step writes each parameter in place (no copy): autograd must still see the update, as eager's
    in-place ops show it, so a backward through a graph that saved a parameter before the step raises."""
    model = _model("cpu")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    F.mse_loss(model(torch.randn(2, 8)), torch.randn(2, 4)).backward()
    step = dyn.compile(lambda: opt.step())
    step()
    versions = [p._version for p in model.parameters()]
    loss = F.mse_loss(model(torch.randn(2, 8)), torch.randn(2, 4))  # saves the weights for its backward
    step()
    assert all(p._version > v for p, v in zip(model.parameters(), versions))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_compiled_step_writes_the_parameters_in_place():
    """The update's kernel writes the parameter's own memory: the same storage before and after, and
    results equal to eager's."""
    model = _model("cpu")
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    F.mse_loss(model(torch.randn(2, 8)), torch.randn(2, 4)).backward()
    ref = copy.deepcopy(model)
    ref_opt = torch.optim.Adam(ref.parameters(), lr=1e-2)
    for q, p in zip(ref.parameters(), model.parameters()):
        q.grad = p.grad.clone()
    step = dyn.compile(lambda: opt.step())
    step()
    ref_opt.step()

    class Copies(TorchDispatchMode):
        count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Copies.count += func is torch.ops.aten.copy_.default
            return func(*args, **(kwargs or {}))
    with Copies():
        step()
    ref_opt.step()
    assert Copies.count == 0 and dyn.stats()["eager_graphs"] == []
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1.3e-6, atol=1e-6)
