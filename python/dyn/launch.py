"""Running what the core compiled: a CPU function on tensors' memory, a GPU launch plan on torch's current
stream with a workspace from its caching allocator; and the DYN_COMPILE_DEBUG dumps of the stages."""
import os

import torch

from .native import C as _C
from .session import current

# torch's allocations without Python argument parsing (what inductor's generated code calls; the CUDA one on
# the current device); torch.empty where a torch build lacks them. On the CPU dyn's own (_C.empty_host):
# outputs of 64 KiB and more come from dyn's caching host allocator, whose pages stay resident from one call
# to the next (glibc maps fresh pages for each, and every call page-faults them again)
_GUARDS = getattr(getattr(torch._C, "_dynamo", None), "guards", None)
EMPTY_STRIDED_CPU = getattr(_C, "empty_host", None) or getattr(_GUARDS, "_empty_strided_cpu", None)
EMPTY_STRIDED_CUDA = getattr(_GUARDS, "_empty_strided_cuda", None)


_GPU_TARGETS = {}  # CUDA device index -> the GPU pipeline's target description


def gpu_target(device=None):
    """The target description the GPU pipeline compiles for (docs/gpu.md): the device's compute capability
    as the PTX chip, its multiprocessors and the threads each holds at once, as the pipeline's options."""
    index = None if device is None else torch.device(device).index
    if index is None:
        index = torch.cuda.current_device()
    t = _GPU_TARGETS.get(index)
    if t is None:
        p = torch.cuda.get_device_properties(index)
        t = _GPU_TARGETS[index] = (f"chip=sm_{p.major}{p.minor} sm-count={p.multi_processor_count} "
                                   f"threads-per-sm={p.max_threads_per_multi_processor}")
    return t


def raw_stream(device):
    """The CUstream the compiled code runs on: torch's current stream of `device`, as a handle (what
    inductor's launchers read; `torch.cuda.current_stream().cuda_stream` is not there while a library
    holds a generic torch.Stream current, as transformers' generate() can)."""
    index = device.index  # a torch.device: every launch passes one (this runs once a call)
    return torch._C._cuda_getCurrentRawStream(torch.cuda.current_device() if index is None else index)


def contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _ready(inputs, device):
    """Inputs the compiled code takes: contiguous, and on the GPU 16-byte aligned (its kernels move
    contiguous neighbours with 16-byte accesses)."""
    ready = [t.contiguous() for t in inputs]
    return ready if device.type == "cpu" else [t if t.data_ptr() % 16 == 0 else t.clone() for t in ready]


def run_compiled(compiled, device, inputs, outputs, prepare=None, extra=(), as_is=True, sizes=()):
    """One call of a compiled function (_C.Compiled or _C.CompiledGpu) writing `outputs`, `extra` (a seed)
    after the inputs, `sizes` (the dims its `buffer_sizes` lists, for `?` dims) after the outputs. With
    `as_is`, inputs that are contiguous (16-byte aligned on the GPU; checked in C++) run as they are; the
    others go through `prepare` (default: made so). On the GPU the temporaries live in a workspace from
    torch's caching allocator (stream-ordered reuse), sized for these sizes, and the kernels and library
    calls run on torch's current stream."""
    prepare = prepare or (lambda ts: _ready(ts, device))
    extra = list(extra)
    if sizes:
        outputs = list(outputs) + list(sizes)
    if device.type == "cpu":
        if not as_is or not compiled.run(list(inputs) + extra, outputs, inputs_as_is=True):
            compiled.run(prepare(inputs) + extra, outputs)
        return
    size = compiled.workspace_bytes_for(list(sizes)) if sizes else compiled.workspace_bytes
    workspace = torch.empty(size, dtype=torch.uint8, device=device) if size else None
    with torch.cuda.device(device):
        stream, ws = raw_stream(device), workspace.data_ptr() if size else 0
        if not as_is or not compiled.run(list(inputs) + extra, outputs, stream, ws, inputs_as_is=True):
            compiled.run(prepare(inputs) + extra, outputs, stream, ws)


def _dump_folder():
    root = os.environ.get("DYN_COMPILE_DEBUG_DIR", "dyn_debug")
    session = current()
    folder = os.path.join(root, f"graph_{session.dumped_graphs}")
    session.dumped_graphs += 1
    os.makedirs(folder, exist_ok=True)
    return folder


def compile_native(compile_fn, ir, *args):
    """compile_fn(ir, *args) (_C.compile or _C.compile_gpu). With DYN_COMPILE_DEBUG=1 a failure leaves the IR
    it was given and the compiler's diagnostics in the dump folder (graph_<n>/failed.mlir: `dyn-opt
    failed.mlir --dyn-cpu` or `--dyn-gpu` reproduces it) before it raises."""
    try:
        return compile_fn(ir, *args)
    except RuntimeError as e:
        if os.environ.get("DYN_COMPILE_DEBUG") == "1":
            with open(os.path.join(_dump_folder(), "failed.mlir"), "w") as f:
                f.write(ir + "\n// " + "\n// ".join(str(e).splitlines()) + "\n")
        raise


def dump_stages(stages):
    """DYN_COMPILE_DEBUG=1: every stage's IR of each compiled graph, as
    $DYN_COMPILE_DEBUG_DIR (default ./dyn_debug)/graph_<n>/<k>_<stage>.mlir (a graph that fails to compile:
    graph_<n>/failed.mlir, compile_native)."""
    folder = _dump_folder()
    for k, (stage, ir) in enumerate(stages):
        with open(os.path.join(folder, f"{k}_{stage}.mlir"), "w") as f:
            f.write(ir)
