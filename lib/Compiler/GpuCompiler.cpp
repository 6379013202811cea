//===- GpuCompiler.cpp - graph text -> PTX and a launch plan --------------===//
#include "dyn/Compiler/Compiler.h"
#include "dyn/Compiler/LibraryCalls.h"
#include "HostJit.h"
#include "dyn/Dialect/Loop/IR/LoopDialect.h"

#include "dyn/InitAll.h"
#include "dyn/Pipelines/Pipelines.h"
#include "dyn/Runtime/CudaRuntime.h"
#include "dyn/Runtime/Runtime.h"
#include "dyn/Support/ParserGuard.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <map>
#include <dlfcn.h>
#include <mutex>
#include <thread>

#include "Stages.h"

using namespace mlir;

namespace dyn {

using namespace detail;

//===----------------------------------------------------------------------===//
// GPU: the host function after the GPU stage is a straight list of
// allocations and gpu.launch_func ops with constant geometry. It is read into
// a launch plan here, so a call needs no host JIT: just driver launches.
//===----------------------------------------------------------------------===//

namespace {

/// The GPU stage: loop kernels -> gpu kernels -> NVVM -> PTX for the target,
/// leaving the host function at the level of gpu.launch_func.
const char *kGpuStage = "dyn-loop-to-ptx";

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

  uint64_t workspaceBytes() const override { return workspace; }
  const std::vector<int64_t> &bufferSizes() const override { return sizeArgs; }

  uint64_t workspaceBytes(const int64_t *sizes, std::string *error) const override {
    if (dynamicTemps.empty())
      return workspace;
    std::vector<int64_t> values;
    std::vector<uint64_t> offsets;
    uint64_t total = 0;
    if (!evaluate(sizes, values, error) || !placeDynamic(values, offsets, &total, error))
      return ~uint64_t(0);
    return total;
  }

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
    if (!checkWorkspace(workspacePtr, error))
      return false;
    for (const ConstantUpload &u : uploads)
      if (!cuda::copyToDevice(static_cast<char *>(workspacePtr) + u.offset, u.bytes.data(), u.bytes.size(),
                              stream, error))
        return false;
    return true;
  }

  bool launch(void **buffers, void *workspacePtr, void *stream, std::string *error) override {
    if (!checkWorkspace(workspacePtr, error))
      return false;
    // `?` dims: the sizes follow the buffers (an int64 in a pointer's slot).
    std::vector<int64_t> values;
    std::vector<uint64_t> dynamicOffsets;
    if (!sizeNodes.empty()) {
      std::vector<int64_t> sizes(sizeArgs.size() / 2);
      for (size_t k = 0; k < sizes.size(); ++k)
        sizes[k] = (int64_t) reinterpret_cast<intptr_t>(buffers[numBuffers + k]);
      uint64_t total = 0;
      if (!evaluate(sizes.data(), values, error) ||
          (!dynamicTemps.empty() && !placeDynamic(values, dynamicOffsets, &total, error)))
        return false;
      if (total > workspace && !workspacePtr) {
        if (error)
          *error = "this call needs a device workspace of " + std::to_string(total) + " bytes";
        return false;
      }
    }
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
             : ref.kind == ArgRef::Temp
                 ? base + ref.byteOffset +
                       (temps[ref.value].elementsNode >= 0 ? dynamicOffsets[ref.value] : temps[ref.value].offset)
             : ref.kind == ArgRef::Size ? static_cast<uint64_t>(values[ref.value])
                                        : static_cast<uint64_t>(ref.value);
    };
    for (Launch &l : launches) {
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

std::optional<int64_t> constantInt(Value v) {
  if (!v)
    return std::nullopt;
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return i.getInt();
  return std::nullopt;
}

/// A scalar kernel argument as the bytes the driver copies (little-endian:
/// a 4-byte parameter is read from the low half).
std::optional<int64_t> constantBits(Value v) {
  auto c = v.getDefiningOp<arith::ConstantOp>();
  if (!c)
    return std::nullopt;
  if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
    return i.getValue().getZExtValue();
  if (auto f = dyn_cast<FloatAttr>(c.getValue()))
    return (int64_t)f.getValue().bitcastToAPInt().getZExtValue();
  return std::nullopt;
}

/// The elements of a dense constant in memory order, little-endian, each in
/// the bytes of its type (i1 in one byte, as LLVM stores it); false for other
/// element types that are no whole number of bytes.
bool denseBytes(DenseElementsAttr value, std::vector<char> &bytes) {
  Type et = value.getElementType();
  if (!et.isIntOrFloat() || (et.getIntOrFloatBitWidth() % 8 && !et.isInteger(1)))
    return false;
  unsigned width = (et.getIntOrFloatBitWidth() + 7) / 8;
  auto append = [&](const APInt &v) {
    APInt whole = v.zext(8 * width);
    for (unsigned i = 0; i < width; ++i)
      bytes.push_back((char)whole.extractBitsAsZExtValue(8, 8 * i));
  };
  bytes.reserve(value.getNumElements() * width);
  if (isa<FloatType>(et))
    for (const APFloat &v : value.getValues<APFloat>())
      append(v.bitcastToAPInt());
  else
    for (const APInt &v : value.getValues<APInt>())
      append(v);
  return true;
}

/// Places the temporaries in the workspace by liveness: a temporary occupies
/// its bytes from the first step that reads or writes it to the last, and
/// temporaries whose lifetimes do not overlap share memory (the launches run
/// in order on one stream, library calls too). Constants keep slots of their
/// own for the whole call (uploaded before the launches, or once before a CUDA
/// graph's capture). First fit, in order of first use.
void placeTemporaries(GpuFunction &fn) {
  size_t n = fn.temps.size(), steps = fn.launches.size();
  std::vector<int64_t> first(n, (int64_t)steps), last(n, -1);
  auto use = [&](const ArgRef &ref, int64_t step) {
    if (ref.kind != ArgRef::Temp)
      return;
    first[ref.value] = std::min(first[ref.value], step);
    last[ref.value] = std::max(last[ref.value], step);
  };
  for (size_t k = 0; k < steps; ++k) {
    const Launch &l = fn.launches[k];
    for (const ArgRef &ref : l.args)
      use(ref, (int64_t)k);
    if (l.library)
      for (const ArgRef &ref : l.library->buffers)
        use(ref, (int64_t)k);
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) {
    order[i] = i;
    if (fn.temps[i].constant || last[i] < first[i]) { // constants and unused slots: the whole call
      first[i] = -1;
      last[i] = (int64_t)steps;
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
  std::vector<size_t> placed;
  fn.workspace = 0;
  fn.dynamicTemps.clear();
  for (size_t i : order) {
    fn.temps[i].first = first[i];
    fn.temps[i].last = last[i];
    if (fn.temps[i].elementsNode >= 0) { // `?` dims: placed at each call, after the static ones
      fn.dynamicTemps.push_back(i);
      continue;
    }
    // the live intervals of the placed temporaries that overlap i's lifetime, by offset
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t j : placed)
      if (first[j] <= last[i] && first[i] <= last[j])
        busy.push_back({fn.temps[j].offset, fn.temps[j].offset + fn.temps[j].bytes});
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (auto [lo, hi] : busy) {
      if (offset + fn.temps[i].bytes <= lo)
        break;
      offset = std::max(offset, hi);
    }
    fn.temps[i].offset = offset;
    fn.workspace = std::max(fn.workspace, offset + fn.temps[i].bytes);
    placed.push_back(i);
  }
  for (ConstantUpload &u : fn.uploads)
    u.offset = fn.temps[u.offset].offset;
}

/// The size program of a host function with `?` dims: each size value of the
/// host function (index arithmetic over its buffers' dims) as a node of
/// fn.sizeNodes, built on first use. Anything but simple index arithmetic on
/// buffer sizes fails with a located diagnostic (the caller then specializes
/// the sizes).
struct SizeProgram {
  func::FuncOp func;
  GpuFunction &fn;
  DenseMap<Value, int64_t> memo;
  std::map<std::pair<unsigned, int64_t>, int64_t> argPosition; // (buffer, dim) -> its size's position
  std::map<std::pair<unsigned, int64_t>, int64_t> argNode;

  SizeProgram(func::FuncOp func, GpuFunction &fn) : func(func), fn(fn) {
    // Every `?` dim of every buffer, as the CPU function lists them (dyn-bind-buffer-sizes).
    fn.numBuffers = func.getNumArguments();
    for (auto [i, arg] : llvm::enumerate(func.getArguments()))
      if (auto t = dyn_cast<MemRefType>(arg.getType()))
        for (int64_t d = 0; d < t.getRank(); ++d)
          if (t.isDynamicDim(d)) {
            argPosition[{(unsigned)i, d}] = (int64_t)fn.sizeArgs.size() / 2;
            fn.sizeArgs.push_back((int64_t)i);
            fn.sizeArgs.push_back(d);
          }
  }

  int64_t add(SizeNode n) {
    fn.sizeNodes.push_back(n);
    return (int64_t)fn.sizeNodes.size() - 1;
  }
  int64_t constant(int64_t v) { return add({SizeNode::Const, v}); }

  FailureOr<int64_t> of(OpFoldResult r) {
    if (auto v = dyn_cast<Value>(r))
      return node(v);
    return constant(cast<IntegerAttr>(cast<Attribute>(r)).getInt());
  }

  FailureOr<int64_t> node(Value v) {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    FailureOr<int64_t> result = build(v);
    if (succeeded(result))
      memo[v] = *result;
    return result;
  }

  FailureOr<int64_t> build(Value v) {
    if (auto c = constantInt(v))
      return constant(*c);
    Operation *def = v.getDefiningOp();
    if (!def)
      return func.emitOpError("has a size argument the GPU launch plan cannot evaluate");
    auto binary = [&](SizeNode::Kind kind) -> FailureOr<int64_t> {
      FailureOr<int64_t> a = node(def->getOperand(0)), b = node(def->getOperand(1));
      if (failed(a) || failed(b))
        return failure();
      return add({kind, *a, *b});
    };
    if (isa<arith::AddIOp>(def)) return binary(SizeNode::Add);
    if (isa<arith::SubIOp>(def)) return binary(SizeNode::Sub);
    if (isa<arith::MulIOp>(def)) return binary(SizeNode::Mul);
    if (isa<arith::DivSIOp>(def)) return binary(SizeNode::DivS);
    if (isa<arith::DivUIOp>(def)) return binary(SizeNode::DivU);
    if (isa<arith::CeilDivSIOp>(def)) return binary(SizeNode::CeilDivS);
    if (isa<arith::CeilDivUIOp>(def)) return binary(SizeNode::CeilDivU);
    if (isa<arith::FloorDivSIOp>(def)) return binary(SizeNode::FloorDivS);
    if (isa<arith::RemSIOp>(def)) return binary(SizeNode::RemS);
    if (isa<arith::RemUIOp>(def)) return binary(SizeNode::RemU);
    if (isa<arith::MinSIOp>(def)) return binary(SizeNode::MinS);
    if (isa<arith::MaxSIOp>(def)) return binary(SizeNode::MaxS);
    if (isa<arith::MinUIOp>(def)) return binary(SizeNode::MinU);
    if (isa<arith::MaxUIOp>(def)) return binary(SizeNode::MaxU);
    if (auto cmp = dyn_cast<arith::CmpIOp>(def)) {
      FailureOr<int64_t> n = binary(SizeNode::Cmp);
      if (succeeded(n))
        fn.sizeNodes[*n].c = (int64_t)cmp.getPredicate();
      return n;
    }
    if (auto select = dyn_cast<arith::SelectOp>(def)) {
      FailureOr<int64_t> c = node(select.getCondition()), t = node(select.getTrueValue()),
                         f = node(select.getFalseValue());
      if (failed(c) || failed(t) || failed(f))
        return failure();
      return add({SizeNode::Select, *c, *t, *f});
    }
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def) && def->getResult(0).getType().isIndex() ==
                                                                  def->getOperand(0).getType().isIndex())
      return node(def->getOperand(0));
    if (isa<arith::IndexCastOp>(def) && (def->getResult(0).getType().isInteger(64) ||
                                         def->getOperand(0).getType().isInteger(64)))
      return node(def->getOperand(0)); // index <-> i64: the same value
    if (auto dimOp = dyn_cast<memref::DimOp>(def)) {
      std::optional<int64_t> d = constantInt(dimOp.getIndex());
      if (!d)
        return def->emitOpError("reads a dim the GPU launch plan cannot tell at compile time");
      return dim(dimOp.getSource(), *d, def);
    }
    return def->emitOpError("computes a size the GPU launch plan cannot evaluate at run time (it "
                            "evaluates index arithmetic on buffer sizes)");
  }

  /// Dim `d` of buffer `m` at run time.
  FailureOr<int64_t> dim(Value m, int64_t d, Operation *user) {
    auto type = cast<MemRefType>(m.getType());
    if (!type.isDynamicDim(d))
      return constant(type.getDimSize(d));
    if (auto arg = dyn_cast<BlockArgument>(m); arg && arg.getOwner()->getParentOp() == func) {
      std::pair<unsigned, int64_t> key{arg.getArgNumber(), d};
      auto it = argNode.find(key);
      if (it == argNode.end())
        it = argNode.insert({key, add({SizeNode::Arg, argPosition.at(key)})}).first;
      return it->second;
    }
    if (auto alloc = m.getDefiningOp<memref::AllocOp>())
      return node(alloc.getDynamicSizes()[type.getDynamicDimIndex(d)]);
    if (auto view = m.getDefiningOp<memref::ReinterpretCastOp>())
      return of(view.getMixedSizes()[d]);
    return user->emitOpError("reads a dim of a buffer the GPU launch plan cannot size at run time");
  }

  /// Stride `d` (in elements) of buffer `m` at run time.
  FailureOr<int64_t> stride(Value m, int64_t d, Operation *user) {
    auto type = cast<MemRefType>(m.getType());
    auto [strides, offset] = type.getStridesAndOffset();
    if (!ShapedType::isDynamic(strides[d]))
      return constant(strides[d]);
    if (auto view = m.getDefiningOp<memref::ReinterpretCastOp>())
      return of(view.getMixedStrides()[d]);
    if (!type.getLayout().isIdentity())
      return user->emitOpError("has a strided buffer the GPU launch plan cannot size at run time");
    return elements(m, d + 1, user);
  }

  /// The elements of dims [from, rank) of buffer `m` at run time.
  FailureOr<int64_t> elements(Value m, int64_t from, Operation *user) {
    auto type = cast<MemRefType>(m.getType());
    int64_t constantPart = 1;
    std::optional<int64_t> product;
    for (int64_t d = from; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        constantPart *= type.getDimSize(d);
        continue;
      }
      FailureOr<int64_t> n = dim(m, d, user);
      if (failed(n))
        return failure();
      product = product ? add({SizeNode::Mul, *product, *n}) : *n;
    }
    if (!product)
      return constant(constantPart);
    return constantPart == 1 ? *product : add({SizeNode::Mul, *product, constant(constantPart)});
  }
};

/// Reads the host function into `fn`; fails with a diagnostic on anything
/// that is not an allocation, a constant, size arithmetic, a library call or a
/// launch (sizes known at run time become the size program).
LogicalResult buildLaunchPlan(ModuleOp module, func::FuncOp func, GpuFunction &fn) {
  DenseMap<Value, ArgRef> refs;
  for (auto [i, arg] : llvm::enumerate(func.getArguments()))
    refs[arg] = {ArgRef::Buffer, (int64_t)i};
  SizeProgram sizes(func, fn);
  for (Operation &op : func.getBody().front()) {
    if (isa<arith::ConstantOp, memref::DeallocOp, func::ReturnOp>(op))
      continue;
    // Size arithmetic: evaluated where a launch, a temporary or a library call needs it.
    if (isa<memref::DimOp>(op) || (isa<arith::ArithDialect>(op.getDialect()) &&
                                   llvm::all_of(op.getResultTypes(), [](Type t) { return t.isIntOrIndex(); })))
      continue;
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      MemRefType t = alloc.getType();
      if (!t.hasStaticShape()) {
        if (!t.getLayout().isIdentity())
          return alloc.emitOpError("needs an identity layout for dynamic dims on the GPU path");
        FailureOr<int64_t> n = sizes.elements(alloc, 0, alloc);
        if (failed(n))
          return failure();
        refs[alloc] = {ArgRef::Temp, (int64_t)fn.temps.size()};
        fn.temps.push_back({0, 0, false, *n, (t.getElementTypeBitWidth() + 7) / 8});
        continue;
      }
      uint64_t bytes = t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
      refs[alloc] = {ArgRef::Temp, (int64_t)fn.temps.size()};
      fn.temps.push_back({0, (std::max<uint64_t>(bytes, 1) + 255) / 256 * 256, false});
      continue;
    }
    if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
      // A dense constant: it gets a workspace slot, filled before each call's launches.
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(get, get.getNameAttr());
      auto value = global && global.getConstant()
                       ? dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr())
                       : DenseElementsAttr();
      ConstantUpload upload{(uint64_t)fn.temps.size(), {}}; // its temp until the plan places it
      if (!value || !get.getType().hasStaticShape() || !denseBytes(value, upload.bytes))
        return get.emitOpError("needs a constant global of integers or floats on the GPU path");
      refs[get] = {ArgRef::Temp, (int64_t)fn.temps.size()};
      fn.temps.push_back({0, (std::max<uint64_t>(upload.bytes.size(), 1) + 255) / 256 * 256, true});
      fn.uploads.push_back(std::move(upload));
      continue;
    }
    if (auto view = dyn_cast<memref::ReinterpretCastOp>(op)) {
      // A library call's operand read (or written) in place in another buffer.
      auto it = refs.find(view.getSource());
      auto [strides, offset] = view.getType().getStridesAndOffset();
      if (it == refs.end() || it->second.kind == ArgRef::Scalar || ShapedType::isDynamic(offset))
        return view.emitOpError("needs a static view of a buffer on the GPU path");
      ArgRef ref = it->second;
      ref.byteOffset += offset * ((view.getType().getElementTypeBitWidth() + 7) / 8);
      refs[view] = ref;
      continue;
    }
    if (auto call = dyn_cast<loop::LibraryCallOpInterface>(op)) {
      LibraryStep step;
      step.name = call.getLibraryCallName().str();
      SmallVector<Value> operands = call.getLibraryCallInputs();
      step.numInputs = (int32_t)operands.size();
      llvm::append_range(operands, call.getLibraryCallOutputs());
      SmallVector<int32_t> dtypes = loop::libraryCallDTypes(call);
      step.dtypes.assign(dtypes.begin(), dtypes.end());
      for (Value v : operands) {
        auto it = refs.find(v);
        if (it == refs.end())
          return op.emitOpError("has a buffer the launch plan cannot provide");
        auto type = cast<MemRefType>(v.getType());
        step.buffers.push_back(it->second);
        step.sizes.emplace_back(type.getShape().begin(), type.getShape().end());
        auto [strides, offset] = type.getStridesAndOffset();
        step.strides.emplace_back(strides.begin(), strides.end());
        int32_t operand = (int32_t)step.sizes.size() - 1;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          if (type.isDynamicDim(d)) {
            FailureOr<int64_t> n = sizes.dim(v, d, &op);
            if (failed(n))
              return failure();
            step.sizePatches.push_back({operand, (int32_t)d, *n});
          }
          if (ShapedType::isDynamic(strides[d])) {
            FailureOr<int64_t> n = sizes.stride(v, d, &op);
            if (failed(n))
              return failure();
            step.stridePatches.push_back({operand, (int32_t)d, *n});
          }
        }
      }
      SmallVector<int64_t> params = call.getLibraryCallParams();
      step.params.assign(params.begin(), params.end());
      Launch l;
      l.library = std::move(step);
      fn.launches.push_back(std::move(l));
      continue;
    }
    auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
    if (!launch)
      return op.emitOpError("is not supported in a GPU host function");
    Launch l;
    l.module = launch.getKernelModuleName().str();
    l.kernel = launch.getKernelName().str();
    Value dims[6] = {launch.getGridSizeX(),  launch.getGridSizeY(),  launch.getGridSizeZ(),
                     launch.getBlockSizeX(), launch.getBlockSizeY(), launch.getBlockSizeZ()};
    for (int d = 0; d < 6; ++d) {
      auto v = constantInt(dims[d]);
      if (!v) { // computed from the runtime sizes at each call
        FailureOr<int64_t> n = sizes.node(dims[d]);
        if (failed(n))
          return launch.emitOpError("has launch geometry the launch plan cannot evaluate");
        l.geometryNodes[d] = *n;
        continue;
      }
      (d < 3 ? l.geometry.grid[d] : l.geometry.block[d - 3]) = (uint32_t)*v;
    }
    if (Value smem = launch.getDynamicSharedMemorySize()) {
      auto v = constantInt(smem);
      if (!v)
        return launch.emitOpError("needs a constant shared memory size");
      l.geometry.sharedBytes = (uint32_t)*v;
    }
    for (Value operand : launch.getKernelOperands()) {
      if (auto it = refs.find(operand); it != refs.end()) {
        l.args.push_back(it->second);
      } else if (auto v = constantBits(operand)) {
        l.args.push_back({ArgRef::Scalar, *v});
      } else if (operand.getType().isIntOrIndex()) { // a size known at run time
        FailureOr<int64_t> n = sizes.node(operand);
        if (failed(n))
          return launch.emitOpError("has a kernel operand the launch plan cannot provide");
        l.args.push_back({ArgRef::Size, *n});
      } else {
        return launch.emitOpError("has a kernel operand the launch plan cannot provide");
      }
    }
    fn.launches.push_back(std::move(l));
  }
  // Each kernel module's code for the driver: a cubin, or PTX text (read up
  // to the NUL that std::string::c_str() provides).
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute a : binary.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(a)) {
        std::string code = object.getObject().getValue().str();
        if (object.getFormat() == gpu::CompilationTarget::Binary) { // a cubin, its PTX beside it
          if (auto ptx = binary->getAttrOfType<StringAttr>("dyn.ptx")) {
            fn.ptxText += ptx.getValue().str();
            fn.ptxOf[binary.getSymName().str()] = ptx.getValue().str();
          }
        } else {
          while (!code.empty() && code.back() == '\0')
            code.pop_back();
          fn.ptxText += code;
        }
        fn.modules[binary.getSymName().str()] = std::move(code);
      }
  for (const Launch &l : fn.launches)
    if (!l.library && fn.modules[l.module].empty())
      return func.emitOpError() << "GPU stage produced no PTX for module " << l.module;
  placeTemporaries(fn);
  return success();
}

} // namespace

std::unique_ptr<CompiledGpuFunction> compileGraphForGPU(const std::string &graphIR,
                                                        const std::string &funcName,
                                                        const CompileOptions &options,
                                                        std::string *error) {
  auto start = std::chrono::steady_clock::now();
  ensurePassesRegistered();
  MLIRContext ctx(registry(), MLIRContext::Threading::DISABLED);
  // Kernel modules are compiled side by side (dyn-gpu-modules-to-ptx), on
  // one pool of the host's threads shared by every compile.
  static llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
  ctx.setThreadPool(pool);
  DiagnosticCollector diags(ctx);
  auto fail = [&](const std::string &what) -> std::unique_ptr<CompiledGpuFunction> {
    diags.report(what, error);
    return nullptr;
  };
  OwningOpRef<ModuleOp> module = parseGraph(graphIR, ctx);
  if (!module)
    return fail("could not parse the graph");
  auto result = std::make_unique<GpuFunction>();
  // The GPU stage replaces the host lowering ("llvm").
  if (auto failedStage = runStages(*module, "llvm", options.keepStageIR, result->stageIR,
                                   result->facts, /*gpu=*/true))
    return fail("stage '" + *failedStage + "' failed");
  // Anchored on the module; pipeline text names the passes to run on it.
  auto pm = PassManager::on<ModuleOp>(&ctx);
  std::string pipelineError;
  llvm::raw_string_ostream errs(pipelineError);
  std::string stage = kGpuStage;
  if (!options.gpuTarget.empty())
    stage += "{" + options.gpuTarget + "}";
  if (failed(parsePassPipeline(stage, pm, errs)))
    return fail("GPU pipeline unavailable: " + pipelineError);
  if (failed(pm.run(*module)))
    return fail("stage 'gpu' failed");
  if (options.keepStageIR)
    result->stageIR.push_back({"gpu", print(*module)});
  auto func = module->lookupSymbol<func::FuncOp>(funcName);
  if (!func)
    return fail("no function @" + funcName + " in the graph");
  if (failed(buildLaunchPlan(*module, func, *result)))
    return fail("unsupported GPU host code");
  result->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace dyn
