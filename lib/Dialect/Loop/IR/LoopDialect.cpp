//===- LoopDialect.cpp - loop dialect and verifiers ----------------------===//
#include "dyn/Dialect/Loop/IR/LoopDialect.h"
#include "dyn/Dialect/Common/WindowShapes.h"
#include "dyn/Runtime/LibraryCall.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dyn::loop;

#include "dyn/Dialect/Loop/IR/LoopDialect.cpp.inc"
#include "dyn/Dialect/Loop/IR/LoopEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dyn/Dialect/Loop/IR/LoopAttrs.cpp.inc"
#include "dyn/Dialect/Loop/IR/LoopInterfaces.cpp.inc"

void LoopDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dyn/Dialect/Loop/IR/LoopOps.cpp.inc"
      >();
}

/// Every iteration op's body takes one index per domain dim; each `?` dim has
/// its size operand.
static LogicalResult verifyIteration(Operation *op, ArrayRef<int64_t> domain, ValueRange dynamicSizes,
                                     Block &body) {
  if (body.getNumArguments() != domain.size())
    return op->emitOpError() << "body must take " << domain.size()
                             << " index arguments, one per domain dim";
  for (BlockArgument arg : body.getArguments())
    if (!arg.getType().isIndex())
      return op->emitOpError("body arguments must be of index type");
  size_t dynamicDims = llvm::count_if(domain, ShapedType::isDynamic);
  if (dynamicDims != dynamicSizes.size())
    return op->emitOpError() << "has " << dynamicDims << " dynamic domain dims but "
                             << dynamicSizes.size() << " size operands";
  for (int64_t size : domain)
    if (size < 0 && !ShapedType::isDynamic(size))
      return op->emitOpError("domain sizes must be non-negative");
  return success();
}

LogicalResult KernelOp::verify() {
  if (failed(verifyIteration(*this, getDomain(), getDynamicSizes(), getBodyBlock())))
    return failure();
  if (getBodyBlock().getTerminator()->getNumOperands() != 0)
    return emitOpError("body must yield nothing");
  return success();
}

LogicalResult ForOp::verify() {
  if (failed(verifyIteration(*this, getDomain(), getDynamicSizes(), getBodyBlock())))
    return failure();
  if (getBodyBlock().getTerminator()->getNumOperands() != 0)
    return emitOpError("body must yield nothing");
  return success();
}

LogicalResult ReduceOp::verify() {
  if (failed(verifyIteration(*this, getDomain(), getDynamicSizes(), getBodyBlock())))
    return failure();
  Operation *term = getBodyBlock().getTerminator();
  if (term->getNumOperands() != 1 || term->getOperand(0).getType() != getType())
    return emitOpError("body must yield one value of the result type");
  return success();
}

static LogicalResult verifyAccess(Operation *op, MemRefType type, size_t numIndices) {
  if ((size_t)type.getRank() != numIndices)
    return op->emitOpError() << "expects " << type.getRank() << " indices, got " << numIndices;
  return success();
}

LogicalResult LoadOp::verify() {
  return verifyAccess(*this, getMemref().getType(), getIndices().size());
}

LogicalResult StoreOp::verify() {
  return verifyAccess(*this, getMemref().getType(), getIndices().size());
}

//===----------------------------------------------------------------------===//
// Library calls
//===----------------------------------------------------------------------===//

SmallVector<int32_t> dyn::loop::libraryCallDTypes(LibraryCallOpInterface op) {
  SmallVector<Value> buffers = op.getLibraryCallInputs();
  llvm::append_range(buffers, op.getLibraryCallOutputs());
  SmallVector<int32_t> dtypes;
  for (Value v : buffers)
    dtypes.push_back(libraryCallDType(cast<MemRefType>(v.getType()).getElementType()));
  if (auto listed = op->getAttrOfType<DenseI64ArrayAttr>("unsigned_buffers"))
    for (int64_t i : listed.asArrayRef())
      dtypes[i] = DYN_U8;
  return dtypes;
}

/// `unsigned_buffers` indexes i8 buffers (inputs, then outputs).
static LogicalResult verifyUnsignedBuffers(LibraryCallOpInterface op) {
  auto listed = op->getAttrOfType<DenseI64ArrayAttr>("unsigned_buffers");
  if (!listed)
    return success();
  SmallVector<Value> buffers = op.getLibraryCallInputs();
  llvm::append_range(buffers, op.getLibraryCallOutputs());
  for (int64_t i : listed.asArrayRef())
    if (i < 0 || i >= (int64_t)buffers.size() ||
        !cast<MemRefType>(buffers[i].getType()).getElementType().isInteger(8))
      return op->emitOpError("unsigned_buffers must list i8 buffers, got ") << i;
  return success();
}

/// Whether `t` is a view the library-call ABI describes: static strides and
/// offset (`strided` allows any such layout, else only the identity).
static bool describableLayout(MemRefType t, bool strided) {
  if (t.getLayout().isIdentity())
    return true;
  if (!strided || !isa<StridedLayoutAttr>(t.getLayout()))
    return false;
  // `?` strides: products of runtime sizes (PrimToLoop's views with `?` dims), passed at each call
  auto [strides, offset] = t.getStridesAndOffset();
  return !ShapedType::isDynamic(offset) && offset >= 0 &&
         llvm::all_of(strides, [](int64_t s) { return ShapedType::isDynamic(s) || s >= 0; });
}

/// Library calls take buffers of the float types the libraries handle, all of
/// one element type (but a boolean mask): contiguous ones, or with `strided`
/// views with non-negative strides and a static offset (attention reads q, k,
/// v and the mask in place, as eager's strided tensors).
static LogicalResult verifyLibraryBuffers(LibraryCallOpInterface op, Value mask = {},
                                          bool strided = false, bool integers = false) {
  SmallVector<Value> buffers = op.getLibraryCallInputs();
  llvm::append_range(buffers, op.getLibraryCallOutputs());
  Type et = cast<MemRefType>(buffers.back().getType()).getElementType();
  bool isInteger = et.isInteger(8) || et.isInteger(16) || et.isInteger(32) || et.isInteger(64);
  if (!et.isF32() && !et.isF64() && !et.isF16() && !et.isBF16() && !(integers && isInteger))
    return op->emitOpError(integers ? "supports f16, bf16, f32, f64 and i8-i64"
                                    : "supports f16, bf16, f32 and f64");
  for (Value v : buffers) {
    auto t = cast<MemRefType>(v.getType());
    if (!describableLayout(t, strided))
      return op->emitOpError(strided ? "needs contiguous buffers or views with a static offset"
                                     : "needs contiguous (identity layout) buffers");
    if (t.getElementType() != et && !(v == mask && t.getElementType().isInteger(1)))
      return op->emitOpError("buffers must share one element type");
  }
  return success();
}

static ArrayRef<int64_t> shapeOf(Value v) { return cast<MemRefType>(v.getType()).getShape(); }

LogicalResult MatmulOp::verify() {
  if (failed(verifyLibraryBuffers(*this, /*mask=*/{}, /*strided=*/false, /*integers=*/true)) ||
      failed(verifyUnsignedBuffers(*this)))
    return failure();
  auto a = cast<MemRefType>(getLhs().getType()), b = cast<MemRefType>(getRhs().getType()),
       c = cast<MemRefType>(getOut().getType());
  int64_t r = a.getRank();
  if (r != b.getRank() || r != c.getRank() || (r != 2 && r != 3))
    return emitOpError("expects three 2-D or three 3-D buffers");
  auto s = [](MemRefType t, int64_t i) { return t.getDimSize(t.getRank() - 1 - i); };
  // s(t, 0) is the last dim, s(t, 1) the one before; with transpose_b, rhs is [B,]NxK; with
  // transpose_a, lhs is [B,]KxM.
  int64_t bk = getTransposeB() ? s(b, 0) : s(b, 1), bn = getTransposeB() ? s(b, 1) : s(b, 0);
  int64_t am = getTransposeA() ? s(a, 0) : s(a, 1), ak = getTransposeA() ? s(a, 1) : s(a, 0);
  if (ak != bk || s(c, 1) != am || s(c, 0) != bn ||
      (r == 3 && (a.getDimSize(0) != b.getDimSize(0) || a.getDimSize(0) != c.getDimSize(0))))
    return emitOpError() << "shapes must be " << (getTransposeA() ? "[B,]KxM" : "[B,]MxK") << ", "
                         << (getTransposeB() ? "[B,]NxK" : "[B,]KxN") << ", [B,]MxN";
  if (Value addend = getAddend()) {
    ArrayRef<int64_t> add = shapeOf(addend), out = c.getShape();
    bool ok = add.size() <= out.size();
    for (size_t i = 0; ok && i < add.size(); ++i)
      ok = add[add.size() - 1 - i] == 1 || add[add.size() - 1 - i] == out[out.size() - 1 - i];
    if (!ok)
      return emitOpError("addend must broadcast to the output");
  }
  return success();
}

dyn::loop::MatmulChoice dyn::loop::matmulChoice(MatmulOp op) {
  Type et = cast<MemRefType>(op.getOut().getType()).getElementType();
  if (!(et.isF32() || et.isF64()) || op.getAddend() || op.getTransposeA())
    return MatmulChoice::Library;
  // `dyn.cpu_gemm` = "library" | "runtime" on the module decides for every
  // f32/f64 GEMM (benchmarks/cpu_gemm.py compares the two in one process).
  if (auto module = op->getParentOfType<ModuleOp>())
    if (auto choice = module->getAttrOfType<StringAttr>("dyn.cpu_gemm"))
      return choice.getValue() != "library" ? MatmulChoice::Runtime : MatmulChoice::Library;
  // By default only the 2-d transposed-B product (F.linear's weight read in
  // place, dyn_matmul_nt's 4x2 register tiles) of few rows stays on the
  // runtime matmul: up to 64 rows it measured 2-3x faster than ATen's (MKL
  // packs the whole weight for a few rows); from 256 rows, and for plain and
  // batched GEMMs, it measured slower or even (docs/performance.md, "CPU
  // GEMM"), so they call the library.
  // A `?` row count (a sequence length) chooses at run time.
  auto out = cast<MemRefType>(op.getOut().getType());
  if (!op.getTransposeB() || out.getRank() != 2)
    return MatmulChoice::Library;
  if (out.isDynamicDim(0))
    return MatmulChoice::ByRows;
  return out.getDimSize(0) <= kRuntimeMatmulRows ? MatmulChoice::Runtime : MatmulChoice::Library;
}

bool dyn::loop::hasRuntimeMatmul(MatmulOp op) { return matmulChoice(op) == MatmulChoice::Runtime; }

dyn::loop::StoreOp dyn::loop::soleIdentityStore(Value out, Block &body) {
  StoreOp store;
  for (Operation *user : out.getUsers()) {
    if (auto s = dyn_cast<StoreOp>(user); s && s.getMemref() == out) {
      if (store)
        return {};
      store = s;
    } else if (auto call = dyn_cast<LibraryCallOpInterface>(user);
               call && llvm::is_contained(call.getLibraryCallOutputs(), out)) {
      return {};
    }
  }
  if (!store)
    return {};
  auto kernel = dyn_cast<KernelOp>(store->getParentOp());
  if (!kernel || kernel->getBlock() != &body || !llvm::equal(store.getIndices(), kernel.getBodyBlock().getArguments()))
    return {};
  for (Operation *user : out.getUsers()) {
    if (user == store || (isa<memref::DeallocOp>(user) && user->getBlock() == &body))
      continue;
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!top || !kernel->isBeforeInBlock(top))
      return {};
  }
  return store;
}

bool dyn::loop::readOnlyAtPointBefore(Value in, KernelOp kernel, StoreOp store, Block &body) {
  Block &kb = kernel.getBodyBlock();
  return readOnlyAtPointBefore(in, kernel, store, body,
                               [&](LoadOp load) { return llvm::equal(load.getIndices(), kb.getArguments()); });
}

bool dyn::loop::readOnlyAtPointBefore(Value in, KernelOp kernel, StoreOp store, Block &body,
                                      llvm::function_ref<bool(LoadOp)> atPoint) {
  Block &kb = kernel.getBodyBlock();
  for (OpOperand &use : in.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::DeallocOp>(user) && user->getBlock() == &body)
      continue;
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!top)
      return false;
    if (top != kernel) {
      // before the kernel: a kernel or a library call reading it (a view could be read later)
      if (!top->isBeforeInBlock(kernel) || !isa<KernelOp, LibraryCallOpInterface>(top))
        return false;
      continue;
    }
    auto load = dyn_cast<LoadOp>(user);
    if (!load || load->getBlock() != &kb || !load->isBeforeInBlock(store) || !atPoint(load))
      return false;
  }
  return true;
}

int32_t dyn::loop::libraryCallDType(Type t) {
  if (t.isF32())
    return DYN_F32;
  if (t.isF64())
    return DYN_F64;
  if (t.isF16())
    return DYN_F16;
  if (t.isBF16())
    return DYN_BF16;
  if (t.isInteger(1))
    return DYN_BOOL;
  switch (t.getIntOrFloatBitWidth()) {
  case 64:
    return DYN_I64;
  case 32:
    return DYN_I32;
  case 16:
    return DYN_I16;
  default:
    return DYN_I8;
  }
}

StringRef MatmulOp::getLibraryCallName() { return "matmul"; }
SmallVector<Value> MatmulOp::getLibraryCallInputs() {
  SmallVector<Value> inputs{getLhs(), getRhs()};
  if (getAddend())
    inputs.push_back(getAddend());
  return inputs;
}
SmallVector<Value> MatmulOp::getLibraryCallOutputs() { return {getOut()}; }
/// [transpose_b, has_addend, transpose_a]
SmallVector<int64_t> MatmulOp::getLibraryCallParams() {
  return {getTransposeB() ? 1 : 0, getAddend() ? 1 : 0, getTransposeA() ? 1 : 0};
}

LogicalResult ConvolutionOp::verify() {
  // ATen's CPU convolutions compute integers too (uint8 ones listed in unsigned_buffers)
  if (failed(verifyLibraryBuffers(*this, /*mask=*/{}, /*strided=*/false, /*integers=*/true)) ||
      failed(verifyUnsignedBuffers(*this)))
    return failure();
  dyn::ConvolutionParams p{getStride(), getPadding(), getDilation(),
                           getOutputPadding().value_or(ArrayRef<int64_t>()), (int64_t)getGroups(),
                           getTransposed(), getChannelsLast()};
  std::string error;
  auto shape = dyn::convolutionResultShape(shapeOf(getInput()), shapeOf(getWeight()), p, error);
  if (shape && getBias() &&
      shapeOf(getBias()) != ArrayRef<int64_t>{dyn::resultChannels(*shape, p)})
    return emitOpError("bias must be [C_out]");
  return dyn::checkResultShape(*this, shape, error, shapeOf(getOut()));
}

StringRef ConvolutionOp::getLibraryCallName() { return "convolution"; }
SmallVector<Value> ConvolutionOp::getLibraryCallInputs() {
  SmallVector<Value> inputs{getInput(), getWeight()};
  if (getBias())
    inputs.push_back(getBias());
  return inputs;
}
SmallVector<Value> ConvolutionOp::getLibraryCallOutputs() { return {getOut()}; }
/// [nd, stride x nd, padding x nd, dilation x nd, output_padding x nd, groups, transposed,
/// has_bias, channels_last]
SmallVector<int64_t> ConvolutionOp::getLibraryCallParams() {
  size_t nd = getStride().size();
  SmallVector<int64_t> params{(int64_t)nd};
  llvm::append_range(params, getStride());
  llvm::append_range(params, getPadding());
  llvm::append_range(params, getDilation());
  ArrayRef<int64_t> outputPadding = getOutputPadding().value_or(ArrayRef<int64_t>());
  for (size_t i = 0; i < nd; ++i)
    params.push_back(outputPadding.empty() ? 0 : outputPadding[i]);
  params.push_back(getGroups());
  params.push_back(getTransposed() ? 1 : 0);
  params.push_back(getBias() ? 1 : 0);
  params.push_back(getChannelsLast() ? 1 : 0);
  return params;
}

LogicalResult AttentionOp::verify() {
  if (failed(verifyLibraryBuffers(*this, getMask(), /*strided=*/true)))
    return failure();
  std::optional<ArrayRef<int64_t>> mask;
  if (getMask()) {
    if (getIsCausal())
      return emitOpError("takes a mask or is_causal, not both");
    mask = shapeOf(getMask());
  }
  std::string error;
  auto shape = dyn::attentionResultShape(shapeOf(getQuery()), shapeOf(getKey()),
                                         shapeOf(getValue()), mask, error);
  return dyn::checkResultShape(*this, shape, error, shapeOf(getOut()));
}

StringRef AttentionOp::getLibraryCallName() { return "attention"; }
SmallVector<Value> AttentionOp::getLibraryCallInputs() {
  SmallVector<Value> inputs{getQuery(), getKey(), getValue()};
  if (getMask())
    inputs.push_back(getMask());
  return inputs;
}
SmallVector<Value> AttentionOp::getLibraryCallOutputs() { return {getOut()}; }
/// [is_causal, has_mask, the bits of scale as an f64]
SmallVector<int64_t> AttentionOp::getLibraryCallParams() {
  return {getIsCausal() ? 1 : 0, getMask() ? 1 : 0,
          (int64_t)getScale().bitcastToAPInt().getZExtValue()};
}

StringRef LibraryCallOp::getLibraryCallName() { return getCallee(); }
SmallVector<Value> LibraryCallOp::getLibraryCallInputs() { return llvm::to_vector(getIns()); }
SmallVector<Value> LibraryCallOp::getLibraryCallOutputs() { return llvm::to_vector(getOuts()); }
SmallVector<int64_t> LibraryCallOp::getLibraryCallParams() { return llvm::to_vector(getParams()); }

LogicalResult LibraryCallOp::verify() {
  if (getCallee().empty())
    return emitOpError("needs a callee name");
  if (getOuts().empty())
    return emitOpError("writes at least one buffer");
  for (Value v : llvm::concat<Value>(getIns(), getOuts())) {
    auto t = cast<MemRefType>(v.getType());
    if (!t.getLayout().isIdentity()) {
      if (!getStrided())
        return emitOpError("needs contiguous (identity layout) buffers");
      // a static offset (the GPU launch plan places views at constant offsets); strides static or
      // computed from `?` sizes, passed at each call; the implementations take a unit innermost stride
      int64_t offset;
      SmallVector<int64_t> strides;
      if (failed(t.getStridesAndOffset(strides, offset)) || ShapedType::isDynamic(offset) ||
          (t.getRank() && t.getShape().back() != 1 && strides.back() != 1))
        return emitOpError("needs a static offset and a unit innermost stride");
    }
    Type et = t.getElementType();
    if (!(et.isF16() || et.isBF16() || et.isF32() || et.isF64() || et.isInteger(1) ||
          et.isInteger(8) || et.isInteger(16) || et.isInteger(32) || et.isInteger(64)))
      return emitOpError("has a buffer of an element type the library-call ABI has no code for: ")
             << et;
  }
  return verifyUnsignedBuffers(*this);
}

//===----------------------------------------------------------------------===//
// Reduction helpers shared by the CPU and GPU lowerings
//===----------------------------------------------------------------------===//

TypedAttr dyn::loop::reduceIdentity(OpBuilder &b, ReduceKind kind, Type type) {
  if (auto ft = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    switch (kind) {
    case ReduceKind::add:
      return b.getFloatAttr(ft, 0.0);
    case ReduceKind::mul:
      return b.getFloatAttr(ft, 1.0);
    case ReduceKind::max:
      return b.getFloatAttr(ft, llvm::APFloat::getInf(sem, /*Negative=*/true));
    case ReduceKind::min:
      return b.getFloatAttr(ft, llvm::APFloat::getInf(sem, /*Negative=*/false));
    }
  }
  unsigned w = type.getIntOrFloatBitWidth();
  switch (kind) {
  case ReduceKind::add:
    return b.getIntegerAttr(type, 0);
  case ReduceKind::mul:
    return b.getIntegerAttr(type, 1);
  case ReduceKind::max:
    return b.getIntegerAttr(type, llvm::APInt::getSignedMinValue(w));
  case ReduceKind::min:
    return b.getIntegerAttr(type, llvm::APInt::getSignedMaxValue(w));
  }
  llvm_unreachable("unknown reduce kind");
}

Value dyn::loop::reduceCombine(OpBuilder &b, Location loc, ReduceKind kind, Value acc, Value v) {
  bool isFloat = isa<FloatType>(acc.getType());
  auto fm = arith::FastMathFlagsAttr::get(b.getContext(), arith::FastMathFlags::reassoc |
                                                              arith::FastMathFlags::contract);
  switch (kind) {
  case ReduceKind::add:
    return isFloat ? (Value)arith::AddFOp::create(b, loc, acc, v, fm)
                   : (Value)arith::AddIOp::create(b, loc, acc, v);
  case ReduceKind::mul:
    return isFloat ? (Value)arith::MulFOp::create(b, loc, acc, v, fm)
                   : (Value)arith::MulIOp::create(b, loc, acc, v);
  case ReduceKind::max:
    return isFloat ? (Value)arith::MaximumFOp::create(b, loc, acc, v)
                   : (Value)arith::MaxSIOp::create(b, loc, acc, v);
  case ReduceKind::min:
    return isFloat ? (Value)arith::MinimumFOp::create(b, loc, acc, v)
                   : (Value)arith::MinSIOp::create(b, loc, acc, v);
  }
  llvm_unreachable("unknown reduce kind");
}

#define GET_OP_CLASSES
#include "dyn/Dialect/Loop/IR/LoopOps.cpp.inc"
