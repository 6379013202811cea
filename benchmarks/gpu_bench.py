"""GPU benchmark (issue: GPU path): eager vs torch.compile (inductor) vs dyn, in one process.

Run on the GPU machine: PYTHONPATH=python python3 benchmarks/gpu_bench.py
First measures device-to-device copy bandwidth, then for each kernel: median time (CUDA events,
triton.testing.do_bench), effective GB/s (each input read once, each output written once), % of
copy bandwidth, and compile time of inductor and dyn (first call, wall clock). Inputs are random
(never zeros). A compiler that fails on a case is reported as n/a with its error.
"""
import math
import sys
import time

import torch
import torch.nn.functional as F
from triton.testing import do_bench

try:
    import dyn
except Exception as e:  # the table still shows eager and inductor
    dyn = None
    print(f"dyn unavailable: {e}", file=sys.stderr)


def cos_sin(x, y):
    return torch.cos(x) + torch.sin(y)


def relu_silu(x):
    return torch.relu(x * torch.sigmoid(x) * 2 + 1)


def softmax(x):
    return torch.softmax(x, dim=-1)


def softmax_hand(x):
    m = x.amax(-1, keepdim=True)
    e = torch.exp(x - m)
    return e / e.sum(-1, keepdim=True)


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def rmsnorm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def sum0(x):
    return x.sum(0)


def channel_sum(x):
    return x.sum((0, 1, 2))


def channel_dot(x, y):
    return (x * y).sum((0, 1, 2))


def to_nhwc(x):
    return x.permute(0, 2, 3, 1).contiguous()


def to_nchw(x):
    return x.permute(0, 3, 1, 2).contiguous()


def nbytes(*ts):
    return sum(t.numel() * t.element_size() for t in ts)


def time_ms(fn, args):
    return do_bench(lambda: fn(*args), warmup=25, rep=200, return_mode="median")


def first_call(fn, args):
    torch.cuda.synchronize()
    t = time.perf_counter()
    out = fn(*args)
    torch.cuda.synchronize()
    return out, time.perf_counter() - t


def main():
    dev = "cuda"
    torch.manual_seed(0)
    n27 = 1 << 27
    src = torch.randn(n27 * 2, device=dev)
    dst = torch.empty_like(src)
    copy_ms = time_ms(lambda a, b: b.copy_(a), (src, dst))
    copy_gbs = 2 * src.numel() * 4 / copy_ms / 1e6
    del src, dst
    print(f"# {time.strftime('%Y-%m-%d')} {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"device-to-device copy: {copy_gbs:.0f} GB/s (read + write)")
    R = C = 8192
    cases = []
    # Each pointwise and row kernel in float32 and in bfloat16 (what inference deploys and autocast trains).
    for dt, tag in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        rn = lambda *s, dt=dt: torch.randn(*s, device=dev, dtype=dt)
        cases += [
            (f"cos(x)+sin(y) {tag} 2^27", cos_sin, lambda rn=rn: (rn(n27), rn(n27))),
            (f"relu(x*sigmoid(x)*2+1) {tag} 2^27", relu_silu, lambda rn=rn: (rn(n27),)),
            (f"softmax {tag} 8192^2", softmax, lambda rn=rn: (rn(R, C),)),
            (f"hand softmax {tag} 8192^2", softmax_hand, lambda rn=rn: (rn(R, C),)),
            (f"F.layer_norm {tag} 8192^2", layer_norm, lambda rn=rn: (rn(R, C), rn(C), rn(C))),
            (f"hand rmsnorm {tag} 8192^2", rmsnorm, lambda rn=rn: (rn(R, C), rn(C))),
            (f"sum dim 0 {tag} 8192^2", sum0, lambda rn=rn: (rn(R, C),)),
        ]
    cases += [
        # Channels-last training (batch norm's per-channel sums over N, H, W; layout changes).
        ("x.sum((0,1,2)) fp32 [256,56,56,64]", channel_sum, lambda: (torch.randn(256, 56, 56, 64, device=dev),)),
        ("x.sum((0,1,2)) fp32 [64,112,112,64]", channel_sum, lambda: (torch.randn(64, 112, 112, 64, device=dev),)),
        ("(x*y).sum((0,1,2)) fp32 [256,56,56,64]", channel_dot,
         lambda: (torch.randn(256, 56, 56, 64, device=dev), torch.randn(256, 56, 56, 64, device=dev))),
        ("NCHW->NHWC fp32 [256,3,224,224]", to_nhwc, lambda: (torch.randn(256, 3, 224, 224, device=dev),)),
        ("NCHW->NHWC fp32 [64,64,112,112]", to_nhwc, lambda: (torch.randn(64, 64, 112, 112, device=dev),)),
        ("NHWC->NCHW fp32 [256,224,224,3]", to_nchw, lambda: (torch.randn(256, 224, 224, 3, device=dev),)),
        ("NHWC->NCHW fp32 [64,112,112,64]", to_nchw, lambda: (torch.randn(64, 112, 112, 64, device=dev),)),
    ]
    only = sys.argv[1:]  # substrings of case names: run only those
    if only:
        cases = [c for c in cases if any(o in c[0] for o in only)]
    print("| kernel | eager ms | eager % | inductor ms | inductor % | dyn ms | dyn GB/s | dyn % | inductor compile s | dyn compile s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, fn, make in cases:
        args = make()
        ref = fn(*args)
        moved = nbytes(*args) + nbytes(ref)
        pct = lambda ms: 100 * moved / ms / 1e6 / copy_gbs
        eager = time_ms(fn, args)
        row = [name, f"{eager:.3f}", f"{pct(eager):.0f}"]
        torch._dynamo.reset()
        ind = torch.compile(fn)
        out, ind_c = first_call(ind, args)
        ind_ms = time_ms(ind, args)
        row += [f"{ind_ms:.3f}", f"{pct(ind_ms):.0f}"]
        dyn_cell = ["n/a", "n/a", "n/a", f"{ind_c:.2f}", "n/a"]
        if dyn is not None:
            try:
                comp = dyn.compile(fn)
                out, dyn_c = first_call(comp, args)
                # Accuracy against float64 (METHOD.md): within the dtype's bound or 2x eager's error.
                ref64 = fn(*[a.double() for a in args])
                rel = lambda t: ((t.double() - ref64).norm() / ref64.norm()).item()
                bound = 8e-3 if ref.dtype == torch.bfloat16 else 1e-5
                if not (torch.isfinite(out).all() and rel(out) <= max(bound, 2 * rel(ref))):
                    raise AssertionError(f"relative error {rel(out):.2e}, eager {rel(ref):.2e}")
                d = time_ms(comp, args)
                dyn_cell = [f"{d:.3f}", f"{moved / d / 1e6:.0f}", f"{pct(d):.0f}", f"{ind_c:.2f}", f"{dyn_c:.3f}"]
            except Exception as e:
                print(f"dyn failed on {name}: {type(e).__name__}: {e}", file=sys.stderr)
        print("| " + " | ".join(row + dyn_cell) + " |", flush=True)
        del args, ref


if __name__ == "__main__":
    main()
