"""torch.optim captured (Frame mixin): `opt.zero_grad()` as the attribute writes it makes, and `opt.step()`
of SGD, Adam and AdamW as graph ops (capture/optim_rules.py), so that a train step's optimizer update is
compiled instead of breaking the graph. Also `tensor.grad` of a graph input (a gradient is one more input,
read through its parameter's path at every call).

The optimizer's structure is guarded: the optimizer object, its param groups (hyperparameters by value, a
tensor lr by its own path), the parameters by identity, which of them have a gradient, and the keys of each
parameter's state. A float lr is a constant of the graph (a scheduler changing it recompiles; a tensor lr
does not). State is initialized as eager's first step does, by the optimizer's own `_init_group`, when the
step is captured; Adam's `step` counter, which eager keeps on the CPU, is moved to the parameter's device (as
torch.compile does) so that the bias corrections are computed in the graph."""
import torch
from torch.optim import SGD, Adam, AdamW, Optimizer
from torch.optim import optimizer as _optimizer

from ..guards import Is, Structure
from ..values import BoundTensorMethod
from .. import optim_rules
from .control import GradModeExit

_STEP_RULES = {SGD: "sgd", Adam: "adam", AdamW: "adam"}


def optimizer_method(fn, args):
    """'step' or 'zero_grad' when fn(*args) is one dyn captures, else None."""
    if not args or not isinstance(args[0], Optimizer):
        return None
    name = getattr(fn, "__name__", None)
    if name == "zero_grad" and getattr(type(args[0]), "zero_grad", None) is fn is Optimizer.zero_grad:
        return name
    if name == "step" and type(args[0]) in _STEP_RULES and getattr(type(args[0]), "step", None) is fn:
        return name
    return None


class OptimizerCalls:
    def grad_of(self, var):
        """tensor.grad of a graph input: None (guarded) or the gradient as a graph input of its own."""
        tr = self.tr
        j = getattr(var, "input_index", None)
        if j is None:
            self.fail("grad of a tensor computed in the graph")
        return self._grad(tr.input_tensors[j], tr.input_sources[j])

    def _grad(self, real, source):
        """The .grad of the real tensor read through source: None (guarded) or a graph input."""
        tr = self.tr
        written, value = tr.side.attr(real, "grad")
        if written:  # set by a zero_grad captured before
            return value
        path = source + ("grad",)
        g = real.grad
        if g is None:
            tr.attr_guards.append((path, None))
            return None
        if g.requires_grad:
            self.fail("grad that requires grad (a backward with create_graph=True)")
        return tr.tensor_input(g, path)

    def optimizer_call(self, name, opt, args, kwargs):
        if name == "zero_grad":
            return self._zero_grad(opt, *args, **kwargs)
        return self._step(opt, *args, **kwargs)

    def _root(self, opt):
        """The path the optimizer's contents are read through (the optimizer itself, guarded by identity)."""
        tr = self.tr
        if id(opt) in tr.created:
            self.fail("an optimizer made in the captured code")
        tr.uses_identity(opt)
        tr.keep.append(opt)
        return ("obj", opt)

    def _params(self, opt, root, hyper=True):
        """[(group index, group, [(param, path)])], with the groups' structure (their hyperparameters by
        value where hyper) and the params' identity guarded."""
        tr = self.tr
        tr.attr_guards.append((root + ("param_groups",), Structure(opt.param_groups, False)))
        out = []
        for gi, group in enumerate(opt.param_groups):
            gpath = root + ("param_groups", gi)
            if hyper:
                tr.attr_guards.append((gpath, Structure(group, True)))
            tr.attr_guards.append((gpath + (("item", "params"),), Structure(group["params"], True)))
            ps = []
            for j, p in enumerate(group["params"]):
                path = gpath + (("item", "params"), j)
                tr.attr_guards.append((path, Is(p)))
                ps.append((p, path))
            out.append((gi, group, ps))
        return out

    def _zero_grad(self, opt, set_to_none=True):
        tr = self.tr
        if not hasattr(opt, "_zero_grad_profile_name"):
            opt._patch_step_function()  # what eager's first zero_grad does (once per optimizer)
        for _, _, ps in self._params(opt, self._root(opt), hyper=False):
            for p, path in ps:
                if set_to_none:
                    tr.sources.setdefault(id(p), path)
                    tr.keep.append(p)
                    tr.side.store(p, "grad", None)
                    continue
                g = self._grad(p, path)
                if g is not None:
                    self.call_method(g, "zero_")
        return None

    def call_method(self, var, name, *args):
        return self.call(BoundTensorMethod(var, name), list(args), {})

    def _step(self, opt, closure=None):
        tr = self.tr
        if closure is not None:
            self.fail("optimizer step with a closure")
        hooks = tr.read_state(f"step hooks of {type(opt).__name__} optimizer {id(opt):#x}", lambda: bool(
            opt._optimizer_step_pre_hooks or opt._optimizer_step_post_hooks or
            _optimizer._global_optimizer_pre_hooks or _optimizer._global_optimizer_post_hooks or
            getattr(opt, "grad_scale", None) is not None or getattr(opt, "found_inf", None) is not None))
        if hooks:
            self.fail("optimizer step with step hooks or a grad scale")
        root = self._root(opt)
        rule = _STEP_RULES[type(opt)]
        grad_mode = GradModeExit(tr, False)  # eager's step runs under no_grad (non-differentiable)
        try:
            for gi, group, ps in self._params(opt, root):
                if group.get("differentiable"):
                    self.fail("optimizer with differentiable=True")
                lr = group["lr"]
                lr_tensor = isinstance(lr, torch.Tensor)
                if lr_tensor:
                    lr = tr.tensor_input(lr, root + ("param_groups", gi, ("item", "lr")))
                if rule == "sgd":
                    self._sgd(opt, group, ps, root, lr, lr_tensor)
                else:
                    self._adam(opt, group, ps, root, lr)
        finally:
            grad_mode.exit()
        tr.sources.setdefault(id(opt), root)
        tr.side.store(opt, "_opt_called", True)  # profile_hook_step's flag (read by the LR schedulers)
        return None

    def _with_grad(self, ps):
        """The params of a group that have a gradient: [(param, path, param var, grad var)]."""
        out = []
        for p, path in ps:
            var = self.tr.tensor_input(p, path)
            g = self.grad_of(var)
            if g is not None:
                if p.grad.is_sparse or p.is_complex():
                    self.fail("optimizer step with sparse gradients or complex parameters")
                out.append((p, path, var, g))
        return out

    def _state(self, opt, root, p, keys):
        """The state tensors of p named in keys, as graph inputs (the state dict's keys guarded)."""
        tr = self.tr
        st = opt.state[p]
        spath = root + ("state", ("item", p))
        tr.attr_guards.append((spath, Structure(st, True)))
        return [tr.tensor_input(st[k], spath + (("item", k),)) for k in keys]

    def _sgd(self, opt, group, ps, root, lr, lr_tensor):
        tr = self.tr
        params, grads, bufs = [], [], []
        opt._init_group(group, params, grads, bufs)  # eager's: reads (and makes) each param's state dict
        with_grad = self._with_grad(ps)
        momentum = group["momentum"]
        entries = []
        for p, path, var, g in with_grad:
            st = opt.state[p] if momentum != 0 else None
            buf = None
            if st is not None and st.get("momentum_buffer") is not None:
                buf = self._state(opt, root, p, ["momentum_buffer"])[0]
            elif st is not None:
                tr.attr_guards.append((root + ("state", ("item", p)), Structure(st, True)))
            entries.append((p, var, g, buf))
        new = self.inline(optim_rules.sgd, [
            self._list([v for _, v, _, _ in entries]), self._list([g for _, _, g, _ in entries]),
            self._list([b for _, _, _, b in entries]), lr, lr_tensor, group["weight_decay"], momentum,
            group["dampening"], group["nesterov"], group["maximize"]], {})
        for (p, _, _, buf), out in zip(entries, new or ()):
            if buf is None:  # the first step's buffer: stored in the state as eager's step does
                st = tr.wrap(opt.state[p], root + ("state", ("item", p)))
                tr.side.contents(st)
                st["momentum_buffer"] = out

    def _adam(self, opt, group, ps, root, lr):
        tr = self.tr
        lists = [[] for _ in range(6)]
        if opt._init_group(group, *lists):  # eager's first-step state initialization
            self.fail("Adam with complex parameters")
        amsgrad = group["amsgrad"]
        keys = ["exp_avg", "exp_avg_sq", "step"] + (["max_exp_avg_sq"] if amsgrad else [])
        cols = [[] for _ in range(6)]
        for p, path, var, g in self._with_grad(ps):
            st = opt.state[p]
            if st["step"].device != p.device:
                st["step"] = st["step"].to(p.device)  # computed with on the device (module docstring)
            m, v, step, *vmax = self._state(opt, root, p, keys)
            for c, x in zip(cols, (var, g, m, v, vmax[0] if vmax else None, step)):
                c.append(x)
        beta1, beta2 = group["betas"]
        if isinstance(beta1, torch.Tensor) or isinstance(beta2, torch.Tensor):
            self.fail("Adam with tensor betas")
        self.inline(optim_rules.adam, [self._list(c) for c in cols] + [
            amsgrad, beta1, beta2, lr, group["weight_decay"], group["eps"], group["maximize"],
            bool(group.get("decoupled_weight_decay", type(opt) is AdamW))], {})

    def _list(self, items):
        """A list made here (the traced rules index it)."""
        self.tr.created.add(id(items))
        self.tr.keep.append(items)
        return items
