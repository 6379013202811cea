"""A GPT-2-small-shaped forward (12 layers, d=768, 12 heads, vocab 50257, 16 tokens; embedding,
causal attention from matmul/masked_fill/softmax, LayerNorm, GELU MLP, tied-size LM head) on the CPU
under no_grad: eager, torch.compile (inductor) and dyn in one process. Whole model captured as one
graph by dyn (dyn.explain is printed). Median of 10 calls after warm-up; first-call (capture +
compile) seconds too.

Run: PYTHONPATH=python .venv/bin/python benchmarks/cpu_gpt.py
"""
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn


class Attention(nn.Module):
    def __init__(self, d, heads, ctx):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.out(y.transpose(1, 2).contiguous().view(b, t, c))


class Block(nn.Module):
    def __init__(self, d, heads, ctx):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = Attention(d, heads, ctx)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, d=768, heads=12, layers=12, vocab=50257, ctx=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, ctx, d) * 0.02)
        self.blocks = nn.ModuleList([Block(d, heads, ctx) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos[:, :idx.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def timed(fn, x, reps=10):
    t = time.perf_counter()
    fn(x)
    first = time.perf_counter() - t
    fn(x)
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t)
    return first, statistics.median(times) * 1e3


def main():
    torch.manual_seed(0)
    model = GPT().eval()
    idx = torch.randint(0, 50257, (1, 16))
    print(f"# {time.strftime('%Y-%m-%d')}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    with torch.no_grad():
        ref = model(idx)
        e = dyn.explain(model)(idx)
        print(f"dyn.explain: {e.graph_count} graph(s), {e.graph_break_count} break(s)")
        rows = [("eager", timed(model, idx))]
        rows.append(("torch.compile (inductor)", timed(torch.compile(model), idx)))
        cm = dyn.compile(model)
        rows.append(("dyn.compile", timed(cm, idx)))
        err = (cm(idx) - ref).abs().max().item()
    print(f"dyn max abs difference from eager: {err:.2e}")
    print("| run | first call s | ms per call |")
    print("|---|---|---|")
    for name, (first, ms) in rows:
        print(f"| {name} | {first:.2f} | {ms:.2f} |")


if __name__ == "__main__":
    main()
