"""CPU: a 2-layer d=256 transformer (issue 10's CPU target), eager, torch.compile (inductor) and dyn.compile
in one process, timed interleaved.

Two forms of the same pre-norm encoder (d_model 256, 4 heads of 64, feed-forward 1024, GELU, eval under
no_grad), on x of shape [batch, seq, 256]:
  hand  a hand-written pre-norm block: LayerNorm, one QKV linear, attention written as
        softmax(q @ k^T * scale) @ v (batched matmuls), output linear, LayerNorm, Linear-GELU-Linear;
  nn    nn.TransformerEncoder(nn.TransformerEncoderLayer(norm_first=True, batch_first=True)) with
        enable_nested_tensor=False (eager in eval runs its fused fast path).
Every compiled result is checked against eager first. The variants are timed interleaved: in each round
every variant runs `calls` times and its median is kept; the table gives the median over rounds and the
spread (max - min of the round medians, in % of the median).

Run: PYTHONPATH=python .venv/bin/python benchmarks/cpu_transformer.py [--rounds N] [--batch B] [--seq S]
     [--forms hand,nn] [--no-inductor] [--gemm-variants] [--cpu-time (with OMP_NUM_THREADS=1)]
(the development machine has 2 cores shared with others: read the load average and the spread column)
"""
import argparse
import math
import os
import statistics
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

import dyn

D, HEADS, FF, LAYERS = 256, 4, 1024, 2


class Block(nn.Module):
    """A pre-norm encoder block with attention written out as batched matmuls."""

    def __init__(self, d=D, heads=HEADS, ff=FF):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.reshape(b, s, h, d // h).transpose(1, 2) for t in (q, k, v))
        a = torch.softmax(q @ k.transpose(-1, -2) * (1.0 / math.sqrt(d // h)), dim=-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def build(form):
    torch.manual_seed(0)
    if form == "hand":
        return nn.Sequential(*[Block() for _ in range(LAYERS)]).eval()
    layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, activation="gelu", batch_first=True,
                                       norm_first=True)
    return nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False).eval()


CLOCK = time.perf_counter


def round_median(fn, x, calls):
    times = []
    for _ in range(calls):
        t = CLOCK()
        fn(x)
        times.append(CLOCK() - t)
    return statistics.median(times) * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--forms", default="hand,nn")
    p.add_argument("--no-inductor", action="store_true")
    p.add_argument("--gemm-variants", action="store_true",
                   help="also time dyn with options cpu_gemm='runtime' and 'library' (every f32 GEMM on dyn's "
                        "runtime matmul, or every one on the library call)")
    p.add_argument("--cpu-time", action="store_true",
                   help="time the calling thread's CPU time (time.thread_time) instead of wall time: only "
                        "meaningful with OMP_NUM_THREADS=1, where every kernel runs on the calling thread; on a "
                        "loaded machine it leaves out the time the process waits for a core")
    a = p.parse_args()
    if a.cpu_time:
        assert torch.get_num_threads() == 1, "--cpu-time needs OMP_NUM_THREADS=1"
        global CLOCK
        CLOCK = time.thread_time
    warnings.simplefilter("ignore")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, {'thread CPU time' if a.cpu_time else 'wall time'}, "
          f"x [{a.batch}, {a.seq}, {D}], {LAYERS} layers, "
          f"load average {os.getloadavg()[0]:.2f} at start", flush=True)
    names = ["eager"] + ([] if a.no_inductor else ["inductor"]) + ["dyn"]
    if a.gemm_variants:
        names += ["dyn runtime", "dyn library"]
    print("| form | " + " | ".join(f"{n} ms (spread)" for n in names) + " | dyn vs eager | dyn vs inductor "
          "| dyn compile s |")
    print("|---|" + "---|" * (len(names) + 3))
    for form in a.forms.split(","):
        model = build(form)
        x = torch.randn(a.batch, a.seq, D, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            want = model(x)
            variants = {"eager": model}
            if not a.no_inductor:
                variants["inductor"] = torch.compile(model)
            variants["dyn"] = dyn.compile(model, fullgraph=True)
            if a.gemm_variants:
                for g in ("runtime", "library"):
                    variants[f"dyn {g}"] = dyn.compile(model, fullgraph=True, options={"cpu_gemm": g})
            compile_s = {}
            for name, v in variants.items():
                if name.startswith("dyn"):
                    dyn.reset()
                t = time.perf_counter()
                got = v(x)
                compile_s[name] = time.perf_counter() - t
                if name.startswith("dyn"):
                    st = dyn.stats()
                    assert st["compiled_graphs"] >= 1 and not st["eager_graphs"], st
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
                for _ in range(2):
                    v(x)  # warm-up
            calls = max(3, min(20, int(300 / max(1e-3, round_median(model, x, 2)))))
            rounds = {n: [] for n in variants}
            for _ in range(a.rounds):
                for n, v in variants.items():
                    rounds[n].append(round_median(v, x, calls))
        cells, med = [], {}
        for n in names:
            xs = rounds[n]
            med[n] = statistics.median(xs)
            cells.append(f"{med[n]:.2f} ({(max(xs) - min(xs)) / med[n] * 100:.0f}%)")
        vs_ind = f"{med['inductor'] / med['dyn']:.2f}x" if "inductor" in med else "-"
        print(f"| {form} | " + " | ".join(cells) + f" | {med['eager'] / med['dyn']:.2f}x | {vs_ind} "
              f"| {compile_s['dyn']:.2f} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at end (dyn vs X: X ms / dyn ms, above 1 dyn is faster)")


if __name__ == "__main__":
    main()
