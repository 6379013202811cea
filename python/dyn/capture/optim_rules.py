"""The update rules of torch.optim's SGD, Adam and AdamW as dyn captures them: plain tensor code traced
into the graph of the frame that calls `opt.step()` (capture/interpreter/optimizers.py), with each
parameter's and state tensor's update in place. The math is eager's single-tensor path, with the bias
corrections computed from the step counter on the device (in float64, as eager's host floats) instead of
read back with .item(): the whole step is one graph, and its elementwise chain per parameter fuses into one
kernel that reads and writes every tensor once (eager's foreach path makes a pass per op)."""
import torch


def sgd(params, grads, bufs, lr, lr_tensor, weight_decay, momentum, dampening, nesterov, maximize):
    """SGD's step; returns the momentum buffers (new ones where bufs[i] is None: the first step's)."""
    out = []
    for i in range(len(params)):
        p = params[i]
        g = grads[i]
        if maximize:
            g = -g
        if weight_decay != 0:
            g = g.add(p, alpha=weight_decay)
        if momentum != 0:
            buf = bufs[i]
            if buf is None:
                buf = g.detach().clone()
            else:
                buf.mul_(momentum).add_(g, alpha=1 - dampening)
            out.append(buf)
            if nesterov:
                g = g.add(buf, alpha=momentum)
            else:
                g = buf
        if lr_tensor:
            p.sub_(g * lr)
        else:
            p.add_(g, alpha=-lr)
    return out


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, amsgrad, beta1, beta2, lr,
         weight_decay, eps, maximize, decoupled):
    """Adam's step (AdamW's with decoupled weight decay)."""
    for i in range(len(params)):
        p = params[i]
        g = grads[i]
        m = exp_avgs[i]
        v = exp_avg_sqs[i]
        step = steps[i]
        if maximize:
            g = -g
        step.add_(1)
        if weight_decay != 0:
            if decoupled:
                p.mul_(1 - lr * weight_decay)
            else:
                g = g.add(p, alpha=weight_decay)
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        t = step.double()
        bias1 = 1 - beta1 ** t
        bias2_sqrt = (1 - beta2 ** t).sqrt()
        if amsgrad:
            vmax = max_exp_avg_sqs[i]
            vmax.copy_(torch.maximum(vmax, v))
            v = vmax
        denom = (v.sqrt() / bias2_sqrt).add_(eps)
        p.sub_(m / denom * (lr / bias1))
