"""Models whose heavy ops are library calls (docs/library_calls.md): eager vs dyn, same process, median of
timed calls after warm-up (CUDA: synchronized around each call). Every dyn result is checked against
eager first and the run must compile (a fallback warns and counts as n/a).

Run: PYTHONPATH=python .venv/bin/python benchmarks/library_calls.py [cpu|cuda] [--small]
"""
import statistics
import sys
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn


class ConvBlock(nn.Module):
    """ResNet's stem and one basic block: conv-BN-ReLU-maxpool, conv-BN-ReLU-conv-BN + residual, ReLU."""

    def __init__(self, c=64):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 7, 2, 3, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        self.a = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                               nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c))
        self.head = nn.Linear(c, 1000)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.a(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class Block(nn.Module):
    """A pre-norm transformer block (GPT-2's): LayerNorm, QKV, causal SDPA, projection, GELU MLP."""

    def __init__(self, d=768, h=12):
        super().__init__()
        self.h = h
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, -1)
        q, k, v = (z.reshape(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


def timed(fn, x, device, reps):
    for _ in range(3):
        fn(x)
    times = []
    for _ in range(reps):
        if device == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        fn(x)
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    small = "--small" in sys.argv
    torch.manual_seed(0)
    cases = [("conv block (ResNet stem + block), 8x3x224x224" if not small else "conv block, 2x3x64x64",
              ConvBlock(), (8, 3, 224, 224) if not small else (2, 3, 64, 64)),
             ("transformer block, 8x256x768" if not small else "transformer block, 2x64x768",
              Block(), (8, 256, 768) if not small else (2, 64, 768))]
    dtypes = [torch.float32] + ([torch.bfloat16] if device == "cuda" else [])
    print(f"# {time.strftime('%Y-%m-%d')}, torch {torch.__version__}, {device}, "
          f"{torch.get_num_threads()} CPU threads")
    print("| case | dtype | eager ms | dyn ms | dyn vs eager | max abs diff | dyn compile s |")
    print("|---|---|---|---|---|---|---|")
    reps = 20 if device == "cuda" else 5
    with torch.no_grad():
        for name, model, shape in cases:
            for dtype in dtypes:
                m = model.to(device=device, dtype=dtype).eval()
                x = torch.randn(shape, device=device, dtype=dtype)
                want = m(x)
                dyn.reset()
                c = dyn.compile(m, fullgraph=True)
                t0 = time.perf_counter()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("error")
                        got = c(x)
                except Exception as e:
                    print(f"| {name} | {dtype} | n/a | n/a | | {type(e).__name__}: {str(e)[:80]} | |")
                    continue
                compile_s = time.perf_counter() - t0
                diff = (got.float() - want.float()).abs().max().item()
                e = timed(m, x, device, reps)
                d = timed(c, x, device, reps)
                print(f"| {name} | {str(dtype).replace('torch.', '')} | {e:.2f} | {d:.2f} | {e / d:.2f}x | "
                      f"{diff:.1e} | {compile_s:.2f} |")


if __name__ == "__main__":
    main()
