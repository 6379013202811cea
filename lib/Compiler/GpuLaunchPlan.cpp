//===- GpuLaunchPlan.cpp - the host function after the GPU stage -> a plan ===//
//
// The host function after the GPU stage is a straight list of allocations,
// constants, size arithmetic, library calls and gpu.launch_func ops. It is
// read into a launch plan here, so a call needs no host JIT: just driver
// launches (GpuFunction.h).
//
//===----------------------------------------------------------------------===//
#include "GpuFunction.h"

#include "dyn/Dialect/Loop/IR/LoopDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Diagnostics.h"

namespace dyn::gpuplan {

namespace {

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

/// An output buffer that temporaries may live in before its first step: the
/// caller allocates it fresh for the call (no dyn.in_place entry makes it an
/// input's), and nothing reads it before the step that first writes it.
struct Host {
  int64_t buffer;
  uint64_t capacity; // its bytes, rounded down to the temporaries' 256-byte slots
  int64_t firstStep;
};

/// Places the temporaries in the workspace by liveness: a temporary occupies
/// its bytes from the first step that reads or writes it to the last, and
/// temporaries whose lifetimes do not overlap share memory (the launches run
/// in order on one stream, library calls too). Constants keep slots of their
/// own for the whole call (uploaded before the launches, or once before a CUDA
/// graph's capture). First fit, in order of first use. A temporary that dies
/// before an output's first step lives in that output's buffer where it fits
/// (the layers before an LM head's logits in the logits' bytes): the
/// workspace then holds only what is live beside the outputs, as eager's
/// allocator reuses the freed activations for its last results.
void placeTemporaries(GpuFunction &fn, uint64_t scratchMinBytes, const std::vector<Host> &hosts) {
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
  // Largest first (then by first use), each at the lowest offset free over its lifetime: in order of first
  // use, small long-lived temporaries placed early fragment the block, and a large one that comes later
  // (a backward's [vocab, hidden] GEMM result) lands above them all (TinyLlama's backward took 554 MiB for
  // 365 MiB live at most).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    bool ca = fn.temps[a].constant || fn.temps[a].elementsNode >= 0,
         cb = fn.temps[b].constant || fn.temps[b].elementsNode >= 0;
    if (ca != cb)
      return ca; // constants (live throughout) and `?` temporaries (listed in first-use order) first
    if (!ca && fn.temps[a].bytes != fn.temps[b].bytes)
      return fn.temps[a].bytes > fn.temps[b].bytes;
    return first[a] < first[b];
  });
  std::vector<size_t> placed;
  fn.workspace = 0;
  fn.dynamicTemps.clear();
  fn.scratchList.clear();
  for (size_t i : order) {
    fn.temps[i].first = first[i];
    fn.temps[i].last = last[i];
    // a large temporary of a static plan: a buffer of its own, allocated around its steps by the caller
    // (a backward's layer gradients: in one workspace they would all be held from its start)
    if (scratchMinBytes && fn.sizeNodes.empty() && !fn.temps[i].constant && fn.temps[i].elementsNode < 0 &&
        fn.temps[i].bytes >= scratchMinBytes && first[i] >= 0 && last[i] < (int64_t)steps) {
      fn.temps[i].scratch = (int64_t)fn.scratchList.size() / 3;
      fn.scratchList.insert(fn.scratchList.end(), {(int64_t)fn.temps[i].bytes, first[i], last[i]});
      continue;
    }
    if (fn.temps[i].elementsNode >= 0) { // `?` dims: placed at each call, after the static ones
      fn.dynamicTemps.push_back(i);
      continue;
    }
    // the lowest offset where i fits beside the temporaries placed in the same memory (the workspace, or
    // an output: host) whose lives overlap its own
    auto lowestFree = [&](int64_t host) {
      std::vector<std::pair<uint64_t, uint64_t>> busy;
      for (size_t j : placed)
        if (fn.temps[j].host == host && first[j] <= last[i] && first[i] <= last[j])
          busy.push_back({fn.temps[j].offset, fn.temps[j].offset + fn.temps[j].bytes});
      std::sort(busy.begin(), busy.end());
      uint64_t offset = 0;
      for (auto [lo, hi] : busy) {
        if (offset + fn.temps[i].bytes <= lo)
          break;
        offset = std::max(offset, hi);
      }
      return offset;
    };
    fn.temps[i].host = -1;
    if (!fn.temps[i].constant && first[i] >= 0)
      for (const Host &h : hosts) {
        if (last[i] >= h.firstStep)
          continue;
        fn.temps[i].host = h.buffer;
        uint64_t offset = lowestFree(h.buffer);
        if (offset + fn.temps[i].bytes <= h.capacity) {
          fn.temps[i].offset = offset;
          break;
        }
        fn.temps[i].host = -1;
      }
    if (fn.temps[i].host < 0) {
      fn.temps[i].offset = lowestFree(-1);
      fn.workspace = std::max(fn.workspace, fn.temps[i].offset + fn.temps[i].bytes);
    }
    placed.push_back(i);
  }
  for (ConstantUpload &u : fn.uploads)
    u.offset = fn.temps[u.offset].offset;
  fn.workspaceFirst = (int64_t)steps;
  fn.workspaceLast = -1;
  for (size_t i : placed)
    if (fn.temps[i].host < 0) {
      fn.workspaceFirst = std::min(fn.workspaceFirst, first[i]);
      fn.workspaceLast = std::max(fn.workspaceLast, last[i]);
    }
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

} // namespace

LogicalResult buildLaunchPlan(ModuleOp module, func::FuncOp func, GpuFunction &fn, uint64_t scratchMinBytes) {
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
  fn.bufferStepRange.assign(2 * fn.numBuffers, -1);
  auto use = [&](const ArgRef &ref, int64_t step) {
    if (ref.kind != ArgRef::Buffer || ref.value < 0 || (size_t)ref.value >= fn.numBuffers)
      return;
    int64_t &first = fn.bufferStepRange[2 * ref.value], &last = fn.bufferStepRange[2 * ref.value + 1];
    if (first < 0)
      first = step;
    last = step;
  };
  for (auto [k, l] : llvm::enumerate(fn.launches)) {
    for (const ArgRef &ref : l.args)
      use(ref, (int64_t)k);
    if (l.library)
      for (const ArgRef &ref : l.library->buffers)
        use(ref, (int64_t)k);
  }
  // Outputs that temporaries may live in: a static plan run whole (a plan run in parts allocates each output
  // at its first step: CompileOptions::scratchMinBytes), fresh outputs only, largest first.
  std::vector<Host> hosts;
  auto numInputs = func->getAttrOfType<IntegerAttr>("dyn.num_inputs");
  auto inPlace = func->getAttrOfType<DenseI64ArrayAttr>("dyn.in_place");
  if (!scratchMinBytes && fn.sizeNodes.empty() && numInputs)
    for (int64_t b = numInputs.getInt(); b < (int64_t)fn.numBuffers; ++b) {
      int64_t k = b - numInputs.getInt();
      auto type = dyn_cast<MemRefType>(func.getArgument(b).getType());
      if ((inPlace && k < (int64_t)inPlace.size() && inPlace[k] >= 0) || !type || !type.hasStaticShape() ||
          fn.bufferStepRange[2 * b] <= 0)
        continue;
      uint64_t bytes = type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
      if (bytes >= 256)
        hosts.push_back({b, bytes / 256 * 256, fn.bufferStepRange[2 * b]});
    }
  std::stable_sort(hosts.begin(), hosts.end(), [](const Host &a, const Host &b) { return a.capacity > b.capacity; });
  placeTemporaries(fn, scratchMinBytes, hosts);
  for (const TempBuffer &t : fn.temps) // an output holding temporaries is in use from their first step
    if (t.host >= 0)
      fn.bufferStepRange[2 * t.host] = std::min(fn.bufferStepRange[2 * t.host], t.first);
  return success();
}

} // namespace dyn::gpuplan
