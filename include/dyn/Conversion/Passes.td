//===- Passes.td - dyn passes -------------------------------*- tablegen -*-===//
//
// The conversions between dyn's dialects (graph -> prim -> loop -> SCF/GPU).
// The passes within one dialect are declared beside it:
// Dialect/Graph/Transforms/Passes.td, Dialect/Prim/Transforms/Passes.td.
// Flags are prefixed `dyn-`; each pass has a lit test named after its flag
// under test/.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_CONVERSION_PASSES
#define DYN_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertGraphToPrimPass : Pass<"dyn-convert-graph-to-prim", "mlir::ModuleOp"> {
  let summary = "Decompose graph ops into prim ops";
  let description = [{
    Makes PyTorch semantics explicit: broadcasting becomes
    `prim.broadcast_in_dim`, type promotion `prim.convert_element_type`,
    `mean` a sum and a division, softmax max/exp/sum/div, matmul a
    `prim.dot_general`. Afterwards no graph op is left.
  }];
  let dependentDialects = ["::dyn::prim::PrimDialect"];
}

def FusePrimToLoopPass : Pass<"dyn-fuse-prim-to-loop", "mlir::ModuleOp"> {
  let summary = "Fuse prim ops into loop kernels and assign buffers";
  let description = [{
    Turns each tensor function into a buffer function: inputs, then one
    output buffer per result, no return values. Values that must live in
    memory (results, matmul operands and results, reductions that cannot be
    computed where they are used) get buffers; everything else is computed
    inside the kernels that use it. Chains of elementwise ops become one
    kernel; elementwise producers fuse into reductions, and a reduction over
    the trailing dims fuses into its elementwise consumers as a `loop.reduce`
    inside a kernel over the leading dims, so softmax and rmsnorm are one
    kernel each. A matmul whose rhs is a transpose of the last two dims
    (a linear layer's `matmul(x, w^T)`) reads the transpose's operand in
    place (`loop.matmul ... transpose_b`); the transpose gets no buffer
    unless something else needs one. With `materialize-reused-transcendentals`
    (the CPU pipeline's choice), a value whose inlined expression holds a
    transcendental op (exp, log, logistic, tanh, erf, pow) and that more than
    one kernel would recompute gets a buffer of its own (a squeeze-excitation
    block's SiLU, read by its pool and by its scaling); the GPU, bound by
    memory bandwidth, recomputes it. A half-precision GEMM whose one use is
    an add takes the other operand into the library's epilogue (addmm: one
    rounding, as eager's); with `f32-gemm-addend` float32 and float64 ones
    do too. Neither pipeline sets it: the CPU's runtime matmul has no
    epilogue, and for addmm cuBLAS picks slower kernels than for mm on the
    transformers' shapes (benchmarks/gemm_epilogue.py), while the kernel
    reading the product adds the bias at no extra pass.
  }];
  let options = [
    Option<"materializeReusedTranscendentals", "materialize-reused-transcendentals", "bool",
           /*default=*/"false",
           "Give a buffer to a value with a transcendental op that several kernels would recompute">,
    Option<"f32GemmAddend", "f32-gemm-addend", "bool", /*default=*/"false",
           "Add the addend of a float32/float64 GEMM in the library's epilogue too">,
  ];
  let dependentDialects = ["::dyn::loop::LoopDialect", "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect", "mlir::memref::MemRefDialect",
                           "mlir::func::FuncDialect"];
}

def ConvertLoopToSCFPass : Pass<"dyn-convert-loop-to-scf", "mlir::ModuleOp"> {
  let summary = "Lower loop kernels to scf.parallel / scf.for and memref ops";
  let description = [{
    A kernel becomes one `scf.parallel` (later one OpenMP loop). When the
    kernel's outer dims have fewer than `min-parallel-iterations` points, the
    innermost dim is split into chunks of `chunk-size` so that the chunks run
    in parallel and each chunk is a serial, vectorizable inner loop.
    `loop.reduce` becomes an `scf.for` with an accumulator whose float
    combining ops may be reassociated (so LLVM vectorizes them);
    an f32/f64 `loop.matmul` becomes a call into dyn's runtime matmul, every
    other library-call op a call of `dyn_library_call` with its name, a
    descriptor of its buffers and parameters, and the buffers' addresses.
    With `lower-library-calls=false` (the GPU pipeline) library calls stay
    as they are: the launch plan runs them.

    Dynamic domain dims (`[%n, 8]`) become runtime loop bounds; a kernel
    whose innermost dim is split computes its chunk at run time. GEMM sizes
    and library-call descriptors of buffers with dynamic dims are read from
    the buffers when the call runs.
  }];
  let options = [
    Option<"lowerLibraryCalls", "lower-library-calls", "bool", /*default=*/"true",
           "Lower library-call ops to runtime calls (false: leave them)">,
    Option<"chunkSize", "chunk-size", "int64_t", /*default=*/"4096",
           "Points per serial inner chunk when the innermost dim is split">,
    Option<"minParallelIterations", "min-parallel-iterations", "int64_t", /*default=*/"64",
           "Split the innermost dim when the outer dims have fewer points than this">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect", "mlir::func::FuncDialect"];
}

def BindBufferSizesPass : Pass<"dyn-bind-buffer-sizes", "mlir::ModuleOp"> {
  let summary = "Pass the dynamic dims of buffer arguments as trailing index arguments";
  let description = [{
    The compiled functions take one bare data pointer per buffer (the
    runtime's calling convention), which only a statically shaped memref
    has. Each public function argument of a memref type with dynamic dims
    becomes a `memref<0xT>` (its bare pointer), viewed inside as the
    original type by `memref.reinterpret_cast` with sizes from new trailing
    `index` arguments: one per dynamic dim, arguments in order, dims in
    order. The buffers must have the identity layout. The function gets a
    `dyn.buffer_sizes` attribute listing, per new argument, the buffer
    argument and the dim it sizes (pairs, flattened).
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def ApproximateMathPass : Pass<"dyn-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replace f32 transcendental math with polynomial approximations";
  let description = [{
    Rewrites `math` ops (sin, cos, exp, log, tanh, erf, ...) on f32 into
    arithmetic with upstream's polynomial approximations, so that loops over
    them vectorize instead of calling scalar libm; erf is one rational
    function of x^2 on x clamped to [-4, 4] (Eigen's and XLA's form, cheaper
    than upstream's piecewise one). f64 ops are left for libm.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def ConvertLoopToGPUPass : Pass<"dyn-convert-loop-to-gpu", "mlir::ModuleOp"> {
  let summary = "Map loop kernels onto gpu.launch with per-kernel launch geometry";
  let description = [{
    Each loop.kernel becomes one gpu.launch. Geometry is chosen per kernel:
    - pointwise kernels: one thread per point, 256 threads a block;
    - row kernels whose inner loops walk contiguous memory (softmax, norms,
      sums over the last dim): one block per row; threads stride over the
      row, each loop.reduce is a per-thread partial followed by
      gpu.all_reduce (warp shuffles and shared memory), each loop.for is a
      block-strided loop;
    - other kernels with inner loops (sums over a leading dim): one thread
      per point running the inner loops serially, so that neighbouring
      threads read neighbouring addresses; a long single reduction is split
      across blocks (partials vectorized along the kept contiguous dim,
      combined by a block per point when many);
    - transposes (NCHW <-> NHWC): a block per tile through shared memory.
    Inner loop ops left in the launch bodies are lowered by
    dyn-convert-loop-to-scf. Library-call ops (loop.matmul,
    loop.convolution, loop.attention) stay in the host function between the
    launches; the launch plan calls them on the same stream.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t", /*default=*/"256",
           "Threads per block for pointwise and thread-per-point kernels">,
    // The GPU target description (docs/gpu.md): how many threads fill the GPU.
    Option<"smCount", "sm-count", "int64_t", /*default=*/"132",
           "Streaming multiprocessors of the target GPU">,
    Option<"threadsPerSm", "threads-per-sm", "int64_t", /*default=*/"2048",
           "Threads resident on one multiprocessor">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect",
                           "mlir::vector::VectorDialect", "mlir::LLVM::LLVMDialect"];
}

def DedupeGpuKernelsPass : Pass<"dyn-dedupe-gpu-kernels", "mlir::ModuleOp"> {
  let summary = "Launch one outlined GPU kernel for every identical copy of it";
  let description = [{
    After kernel outlining, a `gpu.func` identical to an earlier one of its
    `gpu.module` (the same signature and body; only the name differs) is
    erased and its `gpu.launch_func` ops launch the earlier one. A model's
    layers repeat their kernels on other buffers, which outlining makes
    arguments: a 12-layer transformer's launches need a twelfth of the
    kernels, and the NVPTX backend and the CUDA driver's PTX compiler (the
    most of a first call's time) see each kernel once.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def SplitGpuKernelModulesPass : Pass<"dyn-split-gpu-kernel-modules", "mlir::ModuleOp"> {
  let summary = "Deal a kernel module's functions into a few modules of equal size";
  let description = [{
    Each `gpu.module` becomes `parts` modules (0, the pipeline's choice:
    the host's hardware threads, at most one per 8 kernels, so that a small
    graph keeps one module), each a copy of the original
    without its kernels, which are dealt largest first to the module with the
    least work (counted in operations); `gpu.launch_func` ops are retargeted.
    dyn-gpu-modules-to-ptx compiles the modules side by side, and the
    runtime gives them to the CUDA driver (whose PTX compiler works one
    module per thread) from several threads at the first call. Fewer modules
    than kernels: each module links and optimizes libdevice once.
  }];
  let options = [
    Option<"parts", "parts", "unsigned", /*default=*/"0",
           "Number of modules (0: the host's hardware threads)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def GpuModulesToPtxPass : Pass<"dyn-gpu-modules-to-ptx", "mlir::ModuleOp"> {
  let summary = "Compile every gpu.module to PTX, the modules in parallel";
  let description = [{
    upstream `gpu-module-to-binary` with `format=isa`, except that the
    modules are serialized on the context's threads (each through its own
    LLVM context and NVPTX target machine), then replaced by `gpu.binary`
    ops in order. Each module needs a target attribute
    (`nvvm-attach-target`). With `cubin`, each module's PTX is also
    compiled to SASS by the toolkit's `ptxas` (on the same threads), so the
    CUDA driver, which compiles PTX single-threaded at load time, has
    nothing left to compile; the PTX is kept as the binary's `dyn.ptx`
    attribute for display. The GPU pipeline sets it where the toolkit has
    `ptxas`.
  }];
  let options = [
    Option<"toolkitPath", "toolkit-path", "std::string", /*default=*/"\"\"",
           "The CUDA toolkit whose libdevice the kernels link">,
    Option<"cubin", "cubin", "bool", /*default=*/"false",
           "Compile the PTX to SASS with the toolkit's ptxas (a cubin the driver loads as it is)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

#endif // DYN_CONVERSION_PASSES
