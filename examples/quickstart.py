"""dyn quickstart: compile cos(x) + sin(y) and a hand-written rmsnorm.

For each function: capture it with dyn (PEP 523 frame hook + symbolic bytecode evaluation), print
the IR after every pipeline stage (graph -> prim -> loop -> llvm), check the compiled result
against eager PyTorch, and time eager vs dyn (median of repeated calls in this process).
Run with scripts/demo.sh (which does all set-up first).
"""
import statistics
import sys
import time

import torch

import dyn


def seed(x, y):
    return torch.cos(x) + torch.sin(y)


def rmsnorm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def show_stages(fn, args):
    """Captures fn on small inputs and prints the IR after each stage."""
    captured = []

    def keep_graph(graph, example_inputs):
        captured.append(str(graph))
        return graph  # a dyn.Graph runs with PyTorch ops

    dyn.compile(fn, backend=keep_graph)(*args)
    dyn.reset()
    if len(captured) != 1:
        sys.exit(f"expected one graph for {fn.__name__}, captured {len(captured)}")
    compiled = dyn._C.compile(captured[0], "forward", keep_stages=True)
    for stage, ir in compiled.stages:
        if stage == "llvm":  # the LLVM dialect is long: show its start
            lines = ir.splitlines()
            ir = "\n".join(lines[:25] + [f"  ... ({len(lines) - 25} more lines)"])
        print(f"----- {fn.__name__}: IR after stage '{stage}' -----\n{ir}")


def median_ms(fn, args, repeat=30):
    for _ in range(3):
        fn(*args)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    torch.manual_seed(0)
    show_stages(seed, (torch.randn(8, 16), torch.randn(16)))
    show_stages(rmsnorm, (torch.randn(8, 16), torch.randn(16)))

    cases = [
        ("cos(x)+sin(y) f32 2^24", seed, (torch.randn(1 << 24), torch.randn(1 << 24))),
        ("rmsnorm f32 4096x4096", rmsnorm, (torch.randn(4096, 4096), torch.randn(4096))),
        ("rmsnorm f64 1024x1024", rmsnorm,
         (torch.randn(1024, 1024, dtype=torch.float64), torch.randn(1024, dtype=torch.float64))),
    ]
    print(f"\n{'case':28} {'eager ms':>10} {'dyn ms':>10} {'speed-up':>9}   (torch threads: {torch.get_num_threads()})")
    for name, fn, args in cases:
        compiled = dyn.compile(fn)
        torch.testing.assert_close(compiled(*args), fn(*args))
        eager, mine = median_ms(fn, args), median_ms(compiled, args)
        print(f"{name:28} {eager:10.2f} {mine:10.2f} {eager / mine:8.1f}x")
    print("\nall results match eager")


if __name__ == "__main__":
    main()
