"""A float32 GEMM with a bias on the GPU: cuBLAS's addmm (the bias in its epilogue, as eager's F.linear
and GPT-2's Conv1D run it) against mm alone (the bias then added by the dyn kernel that reads the
result, at no extra pass). cuBLAS picks its kernel per call form: the same shape can get a different
tile, or a split-K, in each. The corpus's transformer GEMM shapes, both weight layouts (Linear's
[out, in] read transposed; Conv1D's [in, out]).

Run (GPU machine): python benchmarks/gemm_epilogue.py
"""
import statistics

import torch

SHAPES = {  # (M, K, N): rows of activations, reduction, output features
    "gpt2/bert qkv": (512, 768, 2304), "gpt2/bert proj": (512, 768, 768),
    "gpt2/bert fc1": (512, 768, 3072), "gpt2/bert fc2": (512, 3072, 768),
    "vit qkv": (1576, 768, 2304), "vit proj": (1576, 768, 768),
    "vit fc1": (1576, 768, 3072), "vit fc2": (1576, 3072, 768),
}


def median_us(fn, reps=50):
    for _ in range(5):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def main():
    torch.manual_seed(0)
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, float32 (TF32 off: "
          f"{not torch.backends.cuda.matmul.allow_tf32})")
    print("| GEMM | M x K x N | weight | addmm us | mm us | mm / addmm |")
    print("|---|---|---|---|---|---|")
    for name, (m, k, n) in SHAPES.items():
        a = torch.randn(m, k, device="cuda")
        bias = torch.randn(n, device="cuda")
        out = torch.empty(m, n, device="cuda")
        for layout in ("[out, in]", "[in, out]"):
            w = torch.randn(n, k, device="cuda").t() if layout == "[out, in]" else torch.randn(k, n, device="cuda")
            t_addmm = median_us(lambda: torch.addmm(bias, a, w, out=out))
            t_mm = median_us(lambda: torch.mm(a, w, out=out))
            print(f"| {name} | {m} x {k} x {n} | {layout} | {t_addmm:.1f} | {t_mm:.1f} | {t_mm / t_addmm:.2f} |")


if __name__ == "__main__":
    main()
