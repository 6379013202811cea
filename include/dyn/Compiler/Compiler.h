//===- Compiler.h - graph-dialect text in, a callable host function out ---===//
//
// The narrow entry point that thin clients (the Python extension, tools, other
// languages) use. It includes no MLIR or LLVM header so that such clients build
// in seconds and need nothing but this header and the DynCompiler library.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_COMPILER_COMPILER_H
#define DYN_COMPILER_COMPILER_H

#include "dyn/Runtime/LibraryCall.h"
#include "dyn/Runtime/Runtime.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dyn {

struct CompileOptions {
  /// Record the IR after each named pipeline stage (for printing and dumps).
  bool keepStageIR = false;
  /// LLVM optimization level for the JIT-compiled host code.
  int optLevel = 3;
  /// The GPU to compile for, as the GPU pipeline's options (docs/gpu.md, "Target
  /// description"): "chip=sm_80 sm-count=108 threads-per-sm=2048"; empty: the
  /// default description (an H100/H200).
  std::string gpuTarget;
  /// GPU, static shapes: temporaries of at least this many bytes (0: none) are
  /// not placed in the workspace but are buffers of their own, which the
  /// caller allocates and frees around the steps that use them
  /// (CompiledGpuFunction::scratch), as a caller running the plan in parts
  /// does with its outputs and inputs.
  uint64_t scratchMinBytes = 0;
};

struct StageIR {
  std::string stage;
  std::string ir;
};

/// A JIT-compiled graph. Calls take bare data pointers: every input, then
/// every output, in function order. Inputs are contiguous; outputs are
/// preallocated and contiguous, with the function's result shapes and types.
class CompiledFunction {
public:
  virtual ~CompiledFunction();
  /// `buffers`: each input, then each output, then the size of each dynamic
  /// dim bufferSizes() lists (an int64 in a pointer's slot). Returns false,
  /// with `error` set, when a library call failed (the outputs are then
  /// undefined); kernels themselves cannot fail.
  virtual bool run(void **buffers, std::string *error = nullptr) = 0;
  virtual const std::vector<StageIR> &stages() const = 0;
  /// Wall time spent in the pipeline and the JIT, in seconds.
  virtual double compileSeconds() const = 0;
  /// Per output, the input whose buffer it may be written into (the input it
  /// updates, where that is safe: docs/pipeline.md), else -1; empty if none.
  virtual const std::vector<int64_t> &inPlace() const = 0;
  /// The results written channels-last ([N, *spatial, C], contiguous) because the caller allowed it
  /// (`dyn.layout_free_results` on the function: a forward's saved values).
  virtual const std::vector<int64_t> &channelsLastResults() const = 0;
  /// The arguments run() takes after the buffers: a buffer's dynamic dim
  /// each, as (buffer index, dim) pairs, flattened; empty for static shapes.
  virtual const std::vector<int64_t> &bufferSizes() const = 0;
};

/// Parses graph-dialect MLIR text, lowers function `funcName` through the
/// registered CPU pipeline and JIT-compiles it. Returns null and fills `error`
/// with located diagnostics when the input is malformed or lowering fails.
std::unique_ptr<CompiledFunction> compileGraph(const std::string &graphIR,
                                               const std::string &funcName,
                                               const CompileOptions &options,
                                               std::string *error);

/// A graph compiled for the GPU: PTX and the kernel launches that run it.
/// Building one needs no GPU; running one loads the PTX through the CUDA
/// driver (opened at run time) and launches on the caller's stream without
/// synchronizing.
class CompiledGpuFunction {
public:
  virtual ~CompiledGpuFunction();
  /// Bare device pointers: every input, then every output (contiguous), then
  /// the size of each dynamic dim bufferSizes() lists (an int64 in a
  /// pointer's slot, as CompiledFunction::run), and a device workspace of
  /// workspaceBytes(sizes) (from the caller's allocator) for temporaries.
  /// Returns false and fills `error` when a CUDA call fails.
  /// Copies the dense constants into their workspace slots, then launches.
  bool run(void **buffers, void *workspace, void *stream, std::string *error) {
    return uploadConstants(workspace, stream, error) && launch(buffers, workspace, stream, error);
  }
  /// The two halves of run(), for a caller that records the launches once as a
  /// CUDA graph (mode="reduce-overhead"): the constants' bytes are copied from
  /// host memory, which a graph capture cannot hold, so they go into a
  /// workspace that lives as long as the graph, once, before the capture.
  virtual bool uploadConstants(void *workspace, void *stream, std::string *error) = 0;
  virtual bool launch(void **buffers, void *workspace, void *stream, std::string *error) = 0;
  /// launch() of steps [begin, end) only (the steps in the order numLaunches() counts: kernel launches
  /// and library calls), with the same workspace at every part of one call; a buffer no step of the
  /// range reads or writes may be null. A caller that runs a call in parts can allocate an output
  /// right before the first step that writes it and free an input after the last that reads it
  /// (bufferSteps()), on the same stream.
  virtual bool launchSteps(void **buffers, void *workspace, void *stream, size_t begin, size_t end,
                           std::string *error) = 0;
  /// Per buffer (every input, then every output), the first and the last step that reads or writes
  /// it, flattened; (-1, -1) for one no step uses.
  virtual const std::vector<int64_t> &bufferSteps() const = 0;
  /// The temporaries compiled as buffers of their own (CompileOptions::scratchMinBytes): per scratch
  /// buffer, its bytes, first and last step, flattened. Their pointers follow the sizes in `buffers`;
  /// a caller of a function with scratch buffers runs it with launchSteps.
  virtual const std::vector<int64_t> &scratch() const = 0;
  /// The first and the last step that use the static workspace (first > last: none; -1 and
  /// numLaunches() where it holds constants): a caller running a call in parts may allocate it before
  /// the first and free it after the last, and pass null to the parts outside that range.
  virtual std::pair<int64_t, int64_t> workspaceSteps() const = 0;
  /// The workspace a call needs (for static shapes; with `?` dims, the part
  /// that does not depend on the sizes).
  virtual uint64_t workspaceBytes() const = 0;
  /// How the temporaries are held (for explain): how many there are and the static ones' bytes were
  /// each its own buffer, the workspace that holds them placed by liveness (with the dense constants'
  /// bytes), and how many are placed at each call (`?` dims) or are scratch buffers of their own.
  struct MemoryPlan {
    uint64_t temporaries = 0, temporaryBytes = 0, workspaceBytes = 0, constantBytes = 0;
    uint64_t runtimeSized = 0, scratchBuffers = 0;
    uint64_t liveBytes = 0; // the most bytes of the workspace's temporaries live at one step: its lower bound
    uint64_t hostedBytes = 0; // temporaries placed in output buffers before those outputs' first steps
  };
  virtual MemoryPlan memoryPlan() const = 0;
  /// The workspace a call with these sizes (bufferSizes()'s order) needs;
  /// ~0 with `error` set when the sizes make no valid launch.
  virtual uint64_t workspaceBytes(const int64_t *sizes, std::string *error) const = 0;
  /// As CompiledFunction::bufferSizes: (buffer, dim) pairs, flattened, whose
  /// runtime sizes follow the buffers; empty for static shapes. Launch
  /// geometry, kernel size operands, temporaries and library-call sizes that
  /// depend on them are evaluated from them at each call.
  virtual const std::vector<int64_t> &bufferSizes() const = 0;
  virtual const std::vector<StageIR> &stages() const = 0;
  virtual double compileSeconds() const = 0;
  /// The PTX of all kernels, and how many launches one call makes.
  virtual const std::string &ptx() const = 0;
  virtual size_t numLaunches() const = 0;
  /// As CompiledFunction::inPlace and channelsLastResults.
  virtual const std::vector<int64_t> &inPlace() const = 0;
  virtual const std::vector<int64_t> &channelsLastResults() const = 0;
};

std::unique_ptr<CompiledGpuFunction> compileGraphForGPU(const std::string &graphIR,
                                                        const std::string &funcName,
                                                        const CompileOptions &options,
                                                        std::string *error);

/// Registers the implementation of library call `name` ("matmul",
/// "convolution", "attention"; docs/library_calls.md), replacing any before;
/// null removes it. Graphs compiled afterwards may use it. Thread-safe.
void registerLibraryCall(const std::string &name, DynLibraryCallFn fn);

/// Runs the named pipeline on graph-dialect text and returns the final IR
/// (no JIT). For inspection from Python and tests.
bool lowerGraph(const std::string &graphIR, const std::string &pipeline,
                std::string *result, std::string *error);

/// What the host allocator of compiled CPU functions' temporaries did
/// (lib/Runtime/HostAllocator.cpp), exported from this library (the static
/// build hides the runtime's own symbols).
HostCacheStats hostCacheCounters();
/// Returns every buffer the host allocator holds to the system.
void emptyHostCache();
/// Starts a new peak of the host allocator's live bytes.
void resetHostPeak();
/// A block of the host allocator (64-byte aligned; 64 KiB and more cached when freed), counted in its
/// live bytes or not (`counted`: a compiled call's temporaries are, the tensors it returns are not);
/// freed with hostFree.
void *hostAllocate(size_t bytes, bool counted);
void hostFree(void *ptr);

} // namespace dyn

#endif // DYN_COMPILER_COMPILER_H
