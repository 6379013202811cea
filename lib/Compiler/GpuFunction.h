//===- GpuFunction.h - a compiled GPU function: its launch plan and runner ===//
//
// What compileGraphForGPU returns: the PTX modules, and the plan read from the
// host function after the GPU stage (kernel launches and library calls with
// their arguments, temporaries placed in one workspace, the size program of
// `?` dims). The plan is built by buildLaunchPlan (GpuLaunchPlan.cpp); a call
// runs it with driver launches, no host JIT.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_LIB_COMPILER_GPUFUNCTION_H
#define DYN_LIB_COMPILER_GPUFUNCTION_H

#include "dyn/Compiler/Compiler.h"
#include "dyn/Compiler/LibraryCalls.h"
#include "dyn/Runtime/CudaRuntime.h"
#include "dyn/Runtime/Runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "Stages.h"

namespace dyn::gpuplan {

using namespace mlir;
using namespace dyn::detail;

struct ArgRef {
  enum Kind { Buffer, Temp, Scalar, Size } kind;
  int64_t value;          // buffer index, temp slot, the scalar itself, or a size node
  int64_t byteOffset = 0; // a view's start in its buffer (library-call operands)
};

/// A size known only at run time (a graph with `?` dims): a node of the
/// function's size program, index arithmetic over the buffer sizes the caller
/// passes after the buffers (bufferSizes()), evaluated once at each call.
struct SizeNode {
  enum Kind : uint8_t {
    Const, Arg, Add, Sub, Mul, DivS, DivU, CeilDivS, CeilDivU, FloorDivS, RemS, RemU,
    MinS, MaxS, MinU, MaxU, Cmp, Select
  } kind;
  int64_t a = 0, b = 0, c = 0; // Const: a; Arg: a = position; Cmp: a, b, c = predicate; Select: a ? b : c
};

/// A dynamic entry of a library call's sizes or strides: operand, dim, node.
struct SizePatch {
  int32_t operand, dim;
  int64_t node;
};

/// A library call between launches (loop.matmul, loop.convolution, ...).
struct LibraryStep {
  std::string name;
  std::vector<ArgRef> buffers; // inputs, then the outputs
  int32_t numInputs = 0;
  std::vector<int32_t> dtypes;
  std::vector<std::vector<int64_t>> sizes;
  std::vector<std::vector<int64_t>> strides; // in elements
  std::vector<int64_t> params;
  std::vector<SizePatch> sizePatches, stridePatches; // entries known at run time
};

/// One step of the plan: a kernel launch, or a library call.
struct Launch {
  cuda::LaunchGeometry geometry;
  int64_t geometryNodes[6] = {-1, -1, -1, -1, -1, -1}; // grid x, y, z, block x, y, z at run time
  std::string module; // the gpu.binary (one PTX module) holding the kernel
  std::string kernel;
  std::vector<ArgRef> args;
  cuda::Kernel loaded;
  std::optional<LibraryStep> library;
};

struct TempBuffer {
  uint64_t offset; // into the workspace, 256-byte aligned
  uint64_t bytes;  // rounded up to 256
  bool constant;   // a dense constant's slot: uploaded before the launches, never shared
  int64_t elementsNode = -1; // `?` dims: its elements at run time (placed at each call)
  uint64_t elementBytes = 0;
  int64_t first = 0, last = -1; // the steps that use it
  int64_t scratch = -1;         // a buffer of its own (CompileOptions::scratchMinBytes): its index
  int64_t host = -1;            // the output buffer it lives in (it dies before that output's first step)
};

/// A dense constant (a read-only global of the host function): its bytes are
/// copied into its workspace slot before the launches of each call.
struct ConstantUpload {
  uint64_t offset;
  std::vector<char> bytes;
};

class GpuFunction final : public CompiledGpuFunction {
public:
  std::string ptxText;                       // every module, for display
  std::map<std::string, std::string> modules; // gpu.binary name -> its cubin or PTX
  std::map<std::string, std::string> ptxOf;   // a cubin module's PTX, should the driver refuse the cubin
  std::vector<Launch> launches;
  std::vector<TempBuffer> temps;
  std::vector<ConstantUpload> uploads;
  std::vector<StageIR> stageIR;
  BufferFacts facts;
  double seconds = 0;
  bool modulesLoaded = false;

  uint64_t workspace = 0; // the static temporaries' (and constants') bytes

  // `?` dims: the size program, the (buffer, dim) pairs whose sizes the caller
  // passes after the buffers, and how many buffers there are.
  std::vector<SizeNode> sizeNodes;
  std::vector<int64_t> sizeArgs;
  size_t numBuffers = 0;
  std::vector<size_t> dynamicTemps; // temporaries whose bytes are known at run time
  // per buffer (inputs, then outputs): the first and the last step that reads or writes it (-1, -1: none)
  std::vector<int64_t> bufferStepRange;
  std::vector<int64_t> scratchList; // (bytes, first, last) per scratch buffer
  // the steps that use the static workspace (-1..steps with constants in it; empty: first > last)
  int64_t workspaceFirst = 0, workspaceLast = -1;

  uint64_t workspaceBytes() const override { return workspace; }
  MemoryPlan memoryPlan() const override {
    MemoryPlan m;
    m.workspaceBytes = workspace;
    for (const TempBuffer &t : temps) {
      if (t.constant) {
        m.constantBytes += t.bytes;
        continue;
      }
      m.temporaries++;
      m.temporaryBytes += t.bytes; // 0 for a `?` temporary: its bytes are known at a call
      m.runtimeSized += t.elementsNode >= 0;
      m.scratchBuffers += t.scratch >= 0;
      m.hostedBytes += t.host >= 0 ? t.bytes : 0;
    }
    std::vector<int64_t> delta(launches.size() + 3, 0); // bytes coming live at step k - 1 (constants: -1)
    for (const TempBuffer &t : temps) {
      if (t.scratch >= 0 || t.elementsNode >= 0 || t.host >= 0)
        continue;
      delta[t.first + 1] += (int64_t)t.bytes;
      delta[t.last + 2] -= (int64_t)t.bytes;
    }
    int64_t live = 0;
    for (int64_t d : delta)
      m.liveBytes = std::max<uint64_t>(m.liveBytes, live += d);
    return m;
  }
  const std::vector<int64_t> &bufferSizes() const override { return sizeArgs; }

  uint64_t workspaceBytes(const int64_t *sizes, std::string *error) const override {
    if (dynamicTemps.empty())
      return workspace;
    std::shared_ptr<const Placement> p = place(sizes, error);
    return p ? p->total : ~uint64_t(0);
  }

  /// The size program's values and the runtime temporaries' offsets at some sizes.
  struct Placement {
    std::vector<int64_t> sizes, values;
    std::vector<uint64_t> offsets;
    uint64_t total = 0;
  };
  /// The placement at `sizes` (sizeArgs.size() / 2 of them): the last one computed where the sizes are
  /// its own (the workspace query before a call, and the call; a loop at one size), else evaluated and
  /// placed afresh (placeDynamic is quadratic in the temporaries).
  std::shared_ptr<const Placement> place(const int64_t *sizes, std::string *error) const {
    size_t n = sizeArgs.size() / 2;
    {
      std::lock_guard<std::mutex> lock(placementMutex);
      if (lastPlacement && std::equal(sizes, sizes + n, lastPlacement->sizes.begin()))
        return lastPlacement;
    }
    auto p = std::make_shared<Placement>();
    p->sizes.assign(sizes, sizes + n);
    p->total = workspace;
    if (!evaluate(sizes, p->values, error) ||
        (!dynamicTemps.empty() && !placeDynamic(p->values, p->offsets, &p->total, error)))
      return nullptr;
    std::lock_guard<std::mutex> lock(placementMutex);
    lastPlacement = p;
    return p;
  }
  mutable std::mutex placementMutex;
  mutable std::shared_ptr<const Placement> lastPlacement;

  /// Every node of the size program, from the sizes the caller passed.
  bool evaluate(const int64_t *sizes, std::vector<int64_t> &v, std::string *error) const {
    v.resize(sizeNodes.size());
    for (size_t i = 0; i < sizeNodes.size(); ++i) {
      const SizeNode &n = sizeNodes[i];
      int64_t a = n.kind == SizeNode::Const || n.kind == SizeNode::Arg ? 0 : v[n.a];
      int64_t b = n.kind == SizeNode::Const || n.kind == SizeNode::Arg ? 0 : v[n.b];
      bool divides = n.kind == SizeNode::DivS || n.kind == SizeNode::DivU || n.kind == SizeNode::CeilDivS ||
                     n.kind == SizeNode::CeilDivU || n.kind == SizeNode::FloorDivS || n.kind == SizeNode::RemS ||
                     n.kind == SizeNode::RemU;
      if (divides && b == 0) {
        if (error)
          *error = "a launch size divides by zero at these sizes";
        return false;
      }
      uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
      switch (n.kind) {
      case SizeNode::Const: v[i] = n.a; break;
      case SizeNode::Arg: v[i] = sizes[n.a]; break;
      case SizeNode::Add: v[i] = (int64_t)(ua + ub); break;
      case SizeNode::Sub: v[i] = (int64_t)(ua - ub); break;
      case SizeNode::Mul: v[i] = (int64_t)(ua * ub); break;
      case SizeNode::DivS: v[i] = (a == INT64_MIN && b == -1) ? a : a / b; break;
      case SizeNode::DivU: v[i] = (int64_t)(ua / ub); break;
      case SizeNode::CeilDivS: {
        int64_t q = (a == INT64_MIN && b == -1) ? a : a / b;
        v[i] = (q * b != a && ((a < 0) == (b < 0))) ? q + 1 : q;
        break;
      }
      case SizeNode::CeilDivU: v[i] = (int64_t)(ua / ub + (ua % ub != 0)); break;
      case SizeNode::FloorDivS: {
        int64_t q = (a == INT64_MIN && b == -1) ? a : a / b;
        v[i] = (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
        break;
      }
      case SizeNode::RemS: v[i] = b == -1 ? 0 : a % b; break;
      case SizeNode::RemU: v[i] = (int64_t)(ua % ub); break;
      case SizeNode::MinS: v[i] = std::min(a, b); break;
      case SizeNode::MaxS: v[i] = std::max(a, b); break;
      case SizeNode::MinU: v[i] = (int64_t)std::min(ua, ub); break;
      case SizeNode::MaxU: v[i] = (int64_t)std::max(ua, ub); break;
      case SizeNode::Cmp: {
        bool r = false;
        switch ((arith::CmpIPredicate)n.c) {
        case arith::CmpIPredicate::eq: r = a == b; break;
        case arith::CmpIPredicate::ne: r = a != b; break;
        case arith::CmpIPredicate::slt: r = a < b; break;
        case arith::CmpIPredicate::sle: r = a <= b; break;
        case arith::CmpIPredicate::sgt: r = a > b; break;
        case arith::CmpIPredicate::sge: r = a >= b; break;
        case arith::CmpIPredicate::ult: r = ua < ub; break;
        case arith::CmpIPredicate::ule: r = ua <= ub; break;
        case arith::CmpIPredicate::ugt: r = ua > ub; break;
        case arith::CmpIPredicate::uge: r = ua >= ub; break;
        }
        v[i] = r;
        break;
      }
      case SizeNode::Select: v[i] = (a & 1) ? v[n.b] : v[n.c]; break;
      }
    }
    return true;
  }

  /// Places the temporaries of runtime sizes after the static workspace, by
  /// liveness as placeTemporaries does the static ones; `*total`: the
  /// workspace this call needs.
  bool placeDynamic(const std::vector<int64_t> &values, std::vector<uint64_t> &offsets, uint64_t *total,
                    std::string *error) const {
    offsets.assign(temps.size(), 0);
    *total = workspace;
    std::vector<uint64_t> bytes(temps.size(), 0);
    for (size_t i : dynamicTemps) {
      int64_t n = values[temps[i].elementsNode];
      if (n < 0 || (uint64_t)n > (uint64_t(1) << 50)) {
        if (error)
          *error = "a temporary of " + std::to_string(n) + " elements at these sizes";
        return false;
      }
      bytes[i] = (std::max<uint64_t>((uint64_t)n * temps[i].elementBytes, 1) + 255) / 256 * 256;
    }
    std::vector<size_t> placed;
    for (size_t i : dynamicTemps) { // in order of first use (dynamicTemps is sorted so)
      std::vector<std::pair<uint64_t, uint64_t>> busy;
      for (size_t j : placed)
        if (temps[j].first <= temps[i].last && temps[i].first <= temps[j].last)
          busy.push_back({offsets[j], offsets[j] + bytes[j]});
      std::sort(busy.begin(), busy.end());
      uint64_t offset = workspace;
      for (auto [lo, hi] : busy) {
        if (offset + bytes[i] <= lo)
          break;
        offset = std::max(offset, hi);
      }
      offsets[i] = offset;
      *total = std::max(*total, offset + bytes[i]);
      placed.push_back(i);
    }
    return true;
  }

  bool uploadConstants(void *workspacePtr, void *stream, std::string *error) override {
    if (!uploads.empty() && !checkWorkspace(workspacePtr, error))
      return false;
    for (const ConstantUpload &u : uploads)
      if (!cuda::copyToDevice(static_cast<char *>(workspacePtr) + u.offset, u.bytes.data(), u.bytes.size(),
                              stream, error))
        return false;
    return true;
  }

  bool launch(void **buffers, void *workspacePtr, void *stream, std::string *error) override {
    return launchSteps(buffers, workspacePtr, stream, 0, launches.size(), error);
  }

  const std::vector<int64_t> &bufferSteps() const override { return bufferStepRange; }
  const std::vector<int64_t> &scratch() const override { return scratchList; }
  std::pair<int64_t, int64_t> workspaceSteps() const override { return {workspaceFirst, workspaceLast}; }

  bool launchSteps(void **buffers, void *workspacePtr, void *stream, size_t begin, size_t end,
                   std::string *error) override {
    end = std::min(end, launches.size());
    // a static plan's parts that use no workspace slot run without one (it is dropped after its last use)
    bool usesWorkspace = !sizeNodes.empty() ||
                         ((int64_t)begin <= workspaceLast && workspaceFirst < (int64_t)end);
    if (usesWorkspace && !checkWorkspace(workspacePtr, error))
      return false;
    // `?` dims: the sizes follow the buffers (an int64 in a pointer's slot).
    std::shared_ptr<const Placement> placement;
    static const std::vector<int64_t> noValues;
    static const std::vector<uint64_t> noOffsets;
    if (!sizeNodes.empty()) {
      std::vector<int64_t> sizes(sizeArgs.size() / 2);
      for (size_t k = 0; k < sizes.size(); ++k)
        sizes[k] = (int64_t) reinterpret_cast<intptr_t>(buffers[numBuffers + k]);
      placement = place(sizes.data(), error);
      if (!placement)
        return false;
      if (placement->total > workspace && !workspacePtr) {
        if (error)
          *error = "this call needs a device workspace of " + std::to_string(placement->total) + " bytes";
        return false;
      }
    }
    const std::vector<int64_t> &values = placement ? placement->values : noValues;
    const std::vector<uint64_t> &dynamicOffsets = placement ? placement->offsets : noOffsets;
    uint64_t base = reinterpret_cast<uint64_t>(workspacePtr);
    if (!modulesLoaded) { // the first call loads every kernel module
      std::vector<const std::string *> codes;
      for (const auto &[name, code] : modules)
        codes.push_back(&code);
      if (!cuda::loadModules(codes, error)) {
        // A driver older than the toolkit's ptxas refuses its cubins: it
        // compiles the PTX instead.
        if (ptxOf.empty())
          return false;
        for (auto &[name, ptx] : ptxOf)
          modules[name] = std::move(ptx);
        ptxOf.clear();
        codes.clear();
        for (const auto &[name, code] : modules)
          codes.push_back(&code);
        if (!cuda::loadModules(codes, error))
          return false;
      }
      modulesLoaded = true;
    }
    bool ok = true;
    auto address = [&](const ArgRef &ref) {
      return ref.kind == ArgRef::Buffer ? reinterpret_cast<uint64_t>(buffers[ref.value]) + ref.byteOffset
             : ref.kind == ArgRef::Temp && temps[ref.value].scratch >= 0
                 ? reinterpret_cast<uint64_t>(buffers[numBuffers + temps[ref.value].scratch]) + ref.byteOffset
             : ref.kind == ArgRef::Temp && temps[ref.value].host >= 0
                 ? reinterpret_cast<uint64_t>(buffers[temps[ref.value].host]) + temps[ref.value].offset +
                       ref.byteOffset
             : ref.kind == ArgRef::Temp
                 ? base + ref.byteOffset +
                       (temps[ref.value].elementsNode >= 0 ? dynamicOffsets[ref.value] : temps[ref.value].offset)
             : ref.kind == ArgRef::Size ? static_cast<uint64_t>(values[ref.value])
                                        : static_cast<uint64_t>(ref.value);
    };
    for (size_t step = begin; step < end; ++step) {
      Launch &l = launches[step];
      if (!ok)
        break;
      if (l.library) {
        if (l.library->sizePatches.empty() && l.library->stridePatches.empty()) {
          ok = runLibraryStep(*l.library, address, stream, error);
          continue;
        }
        LibraryStep step = *l.library; // this call's sizes and strides
        for (const SizePatch &p : step.sizePatches)
          step.sizes[p.operand][p.dim] = values[p.node];
        for (const SizePatch &p : step.stridePatches)
          step.strides[p.operand][p.dim] = values[p.node];
        ok = runLibraryStep(step, address, stream, error);
        continue;
      }
      cuda::LaunchGeometry geometry = l.geometry;
      bool empty = false;
      for (int d = 0; d < 6; ++d) {
        if (l.geometryNodes[d] < 0)
          continue;
        int64_t v = values[l.geometryNodes[d]];
        if (v < 0 || v > (d == 0 ? 0x7fffffff : d < 3 ? 65535 : 1024)) {
          if (error)
            *error = "kernel " + l.kernel + ": a launch dim of " + std::to_string(v) + " at these sizes";
          return false;
        }
        empty |= v == 0;
        (d < 3 ? geometry.grid[d] : geometry.block[d - 3]) = (uint32_t)v;
      }
      if (empty) // no points at these sizes
        continue;
      if (!l.loaded.function && !cuda::getKernel(modules[l.module], l.kernel, &l.loaded, error)) {
        ok = false;
        break;
      }
      std::vector<uint64_t> values(l.args.size());
      std::vector<void *> params(l.args.size());
      for (size_t a = 0; a < l.args.size(); ++a) {
        const ArgRef &ref = l.args[a];
        values[a] = address(ref);
        params[a] = &values[a];
      }
      ok = cuda::launch(l.loaded, geometry, stream, params.data(), error);
    }
    return ok;
  }
  bool checkWorkspace(void *workspacePtr, std::string *error) const {
    if (workspace && !workspacePtr) {
      if (error)
        *error = "this function needs a device workspace of " + std::to_string(workspace) + " bytes";
      return false;
    }
    return true;
  }

  /// The library call on the plan's stream (it runs between the launches
  /// before and after it, in order).
  template <typename Address>
  static bool runLibraryStep(const LibraryStep &step, Address address, void *stream,
                             std::string *error) {
    std::vector<DynBuffer> bufs(step.buffers.size());
    for (size_t i = 0; i < bufs.size(); ++i) {
      bufs[i].data = reinterpret_cast<void *>(address(step.buffers[i]));
      bufs[i].dtype = step.dtypes[i];
      bufs[i].rank = (int32_t)step.sizes[i].size();
      bufs[i].sizes = step.sizes[i].data();
      bufs[i].strides = step.strides[i].data();
    }
    DynLibraryCall call{};
    call.name = step.name.c_str();
    call.device = DYN_DEVICE_CUDA;
    call.stream = stream;
    call.num_inputs = step.numInputs;
    call.inputs = bufs.data();
    call.num_outputs = (int32_t)bufs.size() - step.numInputs;
    call.outputs = bufs.data() + step.numInputs;
    call.num_params = (int32_t)step.params.size();
    call.params = step.params.data();
    return callLibrary(call, error);
  }
  const std::vector<StageIR> &stages() const override { return stageIR; }
  double compileSeconds() const override { return seconds; }
  const std::vector<int64_t> &inPlace() const override { return facts.inPlace; }
  const std::vector<int64_t> &channelsLastResults() const override { return facts.channelsLastResults; }
  const std::string &ptx() const override { return ptxText; }
  size_t numLaunches() const override { return launches.size(); }
};

/// Reads the host function into `fn`; fails with a diagnostic on anything
/// that is not an allocation, a constant, size arithmetic, a library call or a
/// launch (sizes known at run time become the size program).
LogicalResult buildLaunchPlan(ModuleOp module, func::FuncOp func, GpuFunction &fn, uint64_t scratchMinBytes = 0);

} // namespace dyn::gpuplan

#endif // DYN_LIB_COMPILER_GPUFUNCTION_H
