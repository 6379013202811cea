"""Greedy generation with a static key/value cache: eager, torch.compile and dyn, one process.

For each model (benchmarks/corpus.py, --size) and each compiler, a fresh copy of the model (same weights)
generates --new-tokens tokens after a --prompt-token prompt, with a static cache (`cache_implementation="static"`)
and with the default dynamic cache (--caches); the
model's forward is compiled (`torch.compile(model.forward, mode=...)`, `dyn.compile(model.forward, mode=...)`,
--mode reduce-overhead by default: CUDA graphs for both). Reported: the first generate() in seconds
(compilation included), then the median of --reps more, as tokens per second; and whether the tokens equal
eager's.

Run:  PYTHONPATH=python python benchmarks/generate.py --device cuda --models hf_gpt2_sdpa,hf_llama_sdpa
"""
import argparse
import copy
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

import dyn  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="hf_gpt2_sdpa,hf_llama_sdpa")
    p.add_argument("--size", default="full")
    p.add_argument("--device", default="cuda")
    p.add_argument("--prompt-tokens", type=int, default=32)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--mode", default="reduce-overhead")
    p.add_argument("--inductor-mode", help="torch.compile's mode, when not --mode (with torch 2.11 inductor's "
                   "reduce-overhead crashes in transformers' static-cache generate)")
    p.add_argument("--compilers", default="eager,dyn,inductor")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--caches", default="static,dynamic", help="static: a fixed-size cache; dynamic: one that grows")
    p.add_argument("--json")
    args = p.parse_args()
    rows = []
    for name in args.models.split(","):
        case = corpus.build(name, args.size)
        base = case.model.eval()
        vocab = base.config.vocab_size
        prompt = torch.randint(0, vocab, (1, args.prompt_tokens), generator=torch.Generator().manual_seed(0))
        prompt = prompt.to(args.device)
        for cache in args.caches.split(","):
            kw = dict(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False, pad_token_id=0,
                      disable_compile=True)  # transformers would otherwise torch.compile the forward itself on CUDA
            if cache == "static":
                kw["cache_implementation"] = "static"
            rows += run_compilers(args, name, base, prompt, cache, kw)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(argv=sys.argv, torch=torch.__version__, results=rows), f, indent=1)


def marked_steps(compiled):
    """reduce-overhead's documented recipe when a graph's outputs outlive the next call."""
    def forward(*args, **kwargs):
        torch.compiler.cudagraph_mark_step_begin()
        return compiled(*args, **kwargs)
    return forward


def run_compilers(args, name, base, prompt, cache, kw):
    rows = []
    ref = None
    for compiler in args.compilers.split(","):
        model = copy.deepcopy(base).to(args.device)
        if compiler == "dyn":
            dyn.reset()
            model.forward = dyn.compile(model.forward, mode=args.mode)
        elif compiler == "inductor":
            torch._dynamo.reset()
            model.forward = marked_steps(torch.compile(model.forward, mode=args.inductor_mode or args.mode))

        def run():
            if args.device == "cuda":
                torch.cuda.synchronize()
            t = time.perf_counter()
            with torch.no_grad():
                out = model.generate(prompt, **kw)
            if args.device == "cuda":
                torch.cuda.synchronize()
            return out, time.perf_counter() - t
        out, first = run()
        times = [run()[1] for _ in range(args.reps)]
        if ref is None:
            ref = out
        s = dyn.stats() if compiler == "dyn" else {}
        mode = {"inductor": args.inductor_mode or args.mode, "dyn": args.mode}.get(compiler)
        row = dict(model=name, cache=cache, compiler=compiler, mode=mode, first_s=first, tokens_per_s=args.new_tokens / statistics.median(times),
                   same_tokens=bool(torch.equal(out, ref)), graphs=s.get("graphs"),
                   eager_graphs=len(s.get("eager_graphs", [])), eager_calls=s.get("eager_calls"))
        rows.append(row)
        print(json.dumps(row), flush=True)
        del model
    return rows


if __name__ == "__main__":
    main()
