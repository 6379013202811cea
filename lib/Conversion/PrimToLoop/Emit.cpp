//===- Emit.cpp - the kernel emitter ------------------------------------===//
#include "Fusion.h"

#include "llvm/ADT/TypeSwitch.h"

namespace dyn::prim_to_loop {

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

/// 16-bit floats are stored as such but computed in f32 (as eager PyTorch
/// does per op); a fused kernel rounds once, when it stores. uint8 (ui8) is
/// stored as i8 and computed in i32, each op's result masked back into
/// [0, 255]: there, signed compares, divisions and conversions are exact.
Type computeType(Type t) {
  if (t.isF16() || t.isBF16())
    return Float32Type::get(t.getContext());
  if (t.isUnsignedInteger())
    return IntegerType::get(t.getContext(), 32);
  return t;
}

/// The element type a buffer holds: arith and memref take signless integers.
Type storedType(Type t) {
  if (t.isUnsignedInteger())
    return IntegerType::get(t.getContext(), t.getIntOrFloatBitWidth());
  return t;
}

/// Wraps a ui8 result computed in i32 as eager's uint8 arithmetic does.
Value wrapUnsigned(OpBuilder &b, Location loc, Value v, Type elementType) {
  if (!elementType.isUnsignedInteger())
    return v;
  uint64_t mask = (uint64_t(1) << elementType.getIntOrFloatBitWidth()) - 1;
  return arith::AndIOp::create(b, loc, v,
                               arith::ConstantOp::create(b, loc, IntegerAttr::get(v.getType(), mask)));
}

Value castForStore(OpBuilder &b, Location loc, Value scalar, Value buffer) {
  Type stored = cast<MemRefType>(buffer.getType()).getElementType();
  if (scalar.getType() == stored)
    return scalar;
  if (isa<IntegerType>(stored))
    return arith::TruncIOp::create(b, loc, stored, scalar);
  return arith::TruncFOp::create(b, loc, stored, scalar);
}

SmallVector<Value> KernelEmitter::dynamicSizes(Value value, ArrayRef<int64_t> dims) {
  SmallVector<Value> sizes;
  RankedTensorType t = tensorType(value);
  for (int64_t d : dims)
    if (t.isDynamicDim(d)) {
      OpBuilder fb(kernelOp);
      sizes.push_back(dimOf(fb, value, d));
    }
  return sizes;
}

void KernelEmitter::emitKernel(Value value, Value buffer, unsigned parallelDims, StringRef name) {
  target = buffer;
  ArrayRef<int64_t> shape = tensorType(value).getShape();
  auto kernel = loop::KernelOp::create(b, loc, b.getStringAttr(name),
                                       b.getDenseI64ArrayAttr(shape.take_front(parallelDims)));
  kernelOp = kernel;
  kernel.getDynamicSizesMutable().assign(
      dynamicSizes(value, llvm::to_vector(llvm::seq<int64_t>(0, parallelDims))));
  OpBuilder::InsertionGuard guard(b);
  Block *body = newBody(kernel.getBody(), parallelDims);
  scopes.clear();
  levels.clear();
  scopes.push_back(Scope{body, nullptr, {}});
  SmallVector<Value> idx(body->getArguments());
  for (Value v : idx)
    levels[v] = 0;
  if (parallelDims == shape.size()) {
    store(value, buffer, idx);
  } else {
    setInsertion(0);
    auto inner = loop::ForOp::create(
        b, loc, b.getDenseI64ArrayAttr(shape.drop_front(parallelDims)),
        dynamicSizes(value, llvm::to_vector(llvm::seq<int64_t>(parallelDims, shape.size()))));
    Block *innerBody = newBody(inner.getBody(), shape.size() - parallelDims);
    scopes.push_back(Scope{innerBody, inner, {}});
    for (Value v : innerBody->getArguments()) {
      levels[v] = 1;
      idx.push_back(v);
    }
    store(value, buffer, idx);
    closeScope();
  }
  closeScope();
}

SmallVector<Value> KernelEmitter::openPointKernel(Value shaped, StringRef name) {
  ArrayRef<int64_t> shape = tensorType(shaped).getShape();
  auto kernel = loop::KernelOp::create(b, loc, b.getStringAttr(name), b.getDenseI64ArrayAttr(shape));
  kernelOp = kernel;
  kernel.getDynamicSizesMutable().assign(dynamicSizes(shaped, llvm::to_vector(llvm::seq<int64_t>(0, shape.size()))));
  Block *body = newBody(kernel.getBody(), shape.size());
  scopes.clear();
  levels.clear();
  scopes.push_back(Scope{body, nullptr, {}});
  SmallVector<Value> idx(body->getArguments());
  for (Value v : idx)
    levels[v] = 0;
  return idx;
}

void KernelEmitter::emitSiblingKernel(ArrayRef<Value> values, ArrayRef<Value> targets, StringRef name) {
  emitFusedKernel(values, targets, values.size(), name);
}

void KernelEmitter::emitFusedKernel(ArrayRef<Value> values, ArrayRef<Value> targets, unsigned reductions,
                                    StringRef name) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Value> idx = openPointKernel(values.front(), name);
  // What a later value reads of `value` at this point: the scalar as its buffer holds it (a 16-bit float
  // rounded), so that the kernel computes what the kernels apart did (a reduction's epilogue; an optimizer's
  // parameter update reading its new moments).
  auto asStored = [&](Value value, Value scalar) {
    if (values.size() == reductions)
      return;
    Type stored = tensorType(value).getElementType();
    if ((stored.isF16() || stored.isBF16()) && scalar.getType() != stored) {
      setInsertion(0);
      scalar = arith::ExtFOp::create(b, loc, scalar.getType(), (Value)arith::TruncFOp::create(b, loc, stored, scalar));
      levels[scalar] = 0;
    }
    scopes.front().memo[key(value, idx)] = scalar;
  };
  SmallVector<Value> scalars;
  for (auto [value, buffer] : llvm::zip(values.take_front(reductions), targets)) {
    target = buffer;
    scalars.push_back(emit(value, idx));
  }
  setInsertion(0);
  for (auto [scalar, buffer] : llvm::zip(scalars, targets))
    loop::StoreOp::create(b, loc, castForStore(b, loc, scalar, buffer), buffer, idx);
  for (auto [value, scalar] : llvm::zip(values, scalars))
    asStored(value, scalar);
  for (auto [value, buffer] : llvm::zip(values.drop_front(reductions), targets.drop_front(reductions))) {
    target = buffer;
    Value scalar = emit(value, idx);
    setInsertion(0);
    loop::StoreOp::create(b, loc, castForStore(b, loc, scalar, buffer), buffer, idx);
    asStored(value, scalar);
  }
  closeScope();
}

void KernelEmitter::emitCopyKernel(Value value, Value buffer, int64_t dim, int64_t offset, Value dynamicOffset,
                                   StringRef name) {
  target = buffer;
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Value> idx = openPointKernel(value, name);
  Value scalar = emit(value, idx);
  setInsertion(0);
  SmallVector<Value> outIdx(idx);
  outIdx[dim] = affine(idx[dim], 1, offset);
  if (dynamicOffset) {
    setInsertion(0);
    outIdx[dim] = arith::AddIOp::create(b, loc, outIdx[dim], dynamicOffset);
  }
  loop::StoreOp::create(b, loc, castForStore(b, loc, scalar, buffer), buffer, outIdx);
  closeScope();
}

Value KernelEmitter::affine(Value i, int64_t mul, int64_t add) {
  if (mul == 1 && add == 0)
    return i;
  setInsertion(levelOf(i));
  Value r = i;
  if (mul != 1)
    r = arith::MulIOp::create(b, loc, r, constantIndexHere(mul));
  if (add != 0)
    r = arith::AddIOp::create(b, loc, r, constantIndexHere(add));
  levels[r] = levelOf(i);
  return r;
}

SmallVector<Value> KernelEmitter::reshape(ArrayRef<Value> idx, ArrayRef<int64_t> out, ArrayRef<int64_t> in,
                                          Value outV, Value inV, int64_t first) {
  // dynamic sizes, read in the buffer function before the kernel
  auto sizeOf = [&](Value v, int64_t d, int64_t size) -> Value {
    if (!ShapedType::isDynamic(size))
      return constantIndexHere(size);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(kernelOp);
    return dimOf(b, v, d);
  };
  unsigned level = levelOf(idx);
  setInsertion(level);
  Value linear = constantIndexHere(0);
  for (auto [i, size] : llvm::enumerate(out)) {
    linear = arith::MulIOp::create(b, loc, linear, sizeOf(outV, first + i, size));
    linear = arith::AddIOp::create(b, loc, linear, idx[i]);
  }
  SmallVector<Value> result(in.size());
  for (int64_t i = in.size() - 1; i >= 0; --i) {
    // (the outermost dim takes what is left: below its size for every point of the result, so no
    // remainder, which a runtime size would make a division per element)
    if (i == 0) {
      result[0] = linear;
      levels.try_emplace(linear, level);
      break;
    }
    Value size = sizeOf(inV, first + i, in[i]);
    result[i] = arith::RemUIOp::create(b, loc, linear, size);
    linear = arith::DivUIOp::create(b, loc, linear, size);
    levels[result[i]] = level;
  }
  return result;
}

Block *KernelEmitter::newBody(Region &region, unsigned numIndices) {
  SmallVector<Type> types(numIndices, b.getIndexType());
  SmallVector<Location> locs(numIndices, loc);
  return b.createBlock(&region, {}, types, locs);
}

void KernelEmitter::closeScope() {
  b.setInsertionPointToEnd(scopes.back().body);
  loop::YieldOp::create(b, loc);
  scopes.pop_back();
}

unsigned KernelEmitter::levelOf(Value v) {
  auto it = levels.find(v);
  return it == levels.end() ? 0 : it->second;
}

unsigned KernelEmitter::levelOf(ArrayRef<Value> idx) {
  unsigned level = 0;
  for (Value v : idx)
    level = std::max(level, levelOf(v));
  return level;
}

void KernelEmitter::setInsertion(unsigned t) {
  if (t + 1 == scopes.size())
    b.setInsertionPointToEnd(scopes[t].body);
  else
    b.setInsertionPoint(scopes[t + 1].opener);
}

Value KernelEmitter::constantIndex(int64_t v) {
  OpBuilder::InsertionGuard guard(b);
  setInsertion(0);
  return constantIndexHere(v);
}

void KernelEmitter::store(Value value, Value buffer, ArrayRef<Value> idx) {
  Value scalar = emit(value, idx);
  setInsertion(scopes.size() - 1);
  loop::StoreOp::create(b, loc, castForStore(b, loc, scalar, buffer), buffer, idx);
}

std::vector<void *> KernelEmitter::key(Value v, ArrayRef<Value> idx) {
  std::vector<void *> k{v.getAsOpaquePointer()};
  for (Value i : idx)
    k.push_back(i.getAsOpaquePointer());
  return k;
}

Value KernelEmitter::emit(Value value, ArrayRef<Value> idx) {
  std::vector<void *> k = key(value, idx);
  for (Scope &scope : scopes)
    if (auto it = scope.memo.find(k); it != scope.memo.end())
      return it->second;
  unsigned level = levelOf(idx);
  Value result = emitUncached(value, idx, level);
  // A value lives at the level where it was created: an index remap
  // (a broadcast) returns its operand's value unchanged, and must not move a
  // reduction computed outside a loop into it (that level can close before
  // the value's next use).
  unsigned at = levels.try_emplace(result, level).first->second;
  scopes[std::min<unsigned>(at, scopes.size() - 1)].memo[k] = result;
  return result;
}

Value KernelEmitter::emitUncached(Value value, ArrayRef<Value> idx, unsigned level) {
  // The value's own buffer is what the kernel writes, not a source.
  if (auto it = buffers.find(value); it != buffers.end() && it->second != target) {
    OpBuilder::InsertionGuard guard(b);
    setInsertion(level);
    Value loaded = loop::LoadOp::create(b, loc, it->second, idx);
    Type compute = computeType(tensorType(value).getElementType());
    if (compute != loaded.getType())
      loaded = isa<FloatType>(compute) ? (Value)arith::ExtFOp::create(b, loc, compute, loaded)
                                       : (Value)arith::ExtUIOp::create(b, loc, compute, loaded);
    return loaded;
  }
  Operation *op = value.getDefiningOp();
  if (Value r = writtenReshape(
          value, [&](Value r) { return written.contains(r) && buffers.lookup(r) != target; }))
    return emit(r, reshapeIndex<Value>(idx, value, r,
                                       *this));
  if (isReduction(op))
    return emitReduction(op, idx, level);
  if (auto pad = dyn_cast<prim::PadOp>(op))
    return emitPad(pad, idx, level);
  if (auto cat = dyn_cast<prim::ConcatenateOp>(op))
    return emitConcatenate(cat, idx, level);
  if (isIndexRemap(op))
    return emit(op->getOperand(0), remapIndex<Value>(op, idx, *this));
  if (auto g = dyn_cast<prim::GatherOp>(op))
    return emitGather(g, idx, level);
  if (auto ds = dyn_cast<prim::DynamicSliceOp>(op))
    return emitDynamicSlice(ds, idx, level);
  if (auto philox = dyn_cast<prim::PhiloxOp>(op))
    return emitPhilox(philox, idx, level);
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    if (isa<RankedTensorType>(operand.getType())) // not an iota's sizes
      operands.push_back(emit(operand, idx));
  unsigned opLevel = level;
  for (Value v : operands)
    opLevel = std::max(opLevel, levelOf(v));
  OpBuilder::InsertionGuard guard(b);
  setInsertion(opLevel);
  Value r = emitScalar(op, operands, idx);
  r = wrapUnsigned(b, loc, r, tensorType(value).getElementType());
  levels[r] = opLevel;
  return r;
}

Value KernelEmitter::emitReduction(Operation *op, ArrayRef<Value> idx, unsigned level) {
  OpBuilder::InsertionGuard guard(b);
  Value input = op->getOperand(0);
  ArrayRef<int64_t> inShape = tensorType(input).getShape();
  ArrayRef<int64_t> dims = reductionDims(op);
  SmallVector<int64_t> domain;
  for (int64_t d : dims)
    domain.push_back(inShape[d]);
  Type elementType = computeType(tensorType(op->getResult(0)).getElementType());
  SmallVector<Value> sizes = dynamicSizes(input, dims);
  setInsertion(level);
  auto reduce = loop::ReduceOp::create(b, loc, elementType, reductionKind(op), domain, sizes);
  Block *body = newBody(reduce.getBody(), domain.size());
  // The body is a new level directly under `level`; deeper levels of the
  // current path are set aside while it is built.
  SmallVector<Scope> setAside(std::make_move_iterator(scopes.begin() + level + 1),
                              std::make_move_iterator(scopes.end()));
  scopes.truncate(level + 1);
  scopes.push_back(Scope{body, reduce, {}});
  SmallVector<Value> inIdx;
  unsigned kept = 0, reduced = 0;
  for (int64_t i = 0, e = inShape.size(); i < e; ++i) {
    if (llvm::is_contained(dims, i)) {
      Value arg = body->getArgument(reduced++);
      levels[arg] = level + 1;
      inIdx.push_back(arg);
    } else {
      inIdx.push_back(idx[kept++]);
    }
  }
  Value element = emit(input, inIdx);
  b.setInsertionPointToEnd(body);
  loop::YieldOp::create(b, loc, element);
  scopes.pop_back();
  for (Scope &s : setAside)
    scopes.push_back(std::move(s));
  b.setInsertionPointAfter(reduce);
  Value r = wrapUnsigned(b, loc, reduce.getResult(), tensorType(op->getResult(0)).getElementType());
  levels[r] = level;
  return r;
}

Value KernelEmitter::emitPhilox(prim::PhiloxOp op, ArrayRef<Value> idx, unsigned level) {
  Value seed = emit(op.getSeed(), {});
  unsigned at = std::max(level, levelOf(seed));
  OpBuilder::InsertionGuard guard(b);
  setInsertion(at);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto c32 = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr((int32_t)v));
  };
  auto c64 = [&](uint64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr((int64_t)v));
  };
  auto low = [&](Value v) -> Value { return arith::TruncIOp::create(b, loc, i32, v); };
  auto high = [&](Value v) -> Value {
    return arith::TruncIOp::create(b, loc, i32, arith::ShRUIOp::create(b, loc, v, c64(32)));
  };
  ArrayRef<int64_t> shape = tensorType(op.getResult()).getShape();
  Value linear = c64(0);
  int64_t stride = 1;
  Value dynamicStride; // the product of the `?` dims passed so far (sized before the kernel)
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    if (shape[i] != 1) {
      Value term = arith::IndexCastOp::create(b, loc, i64, idx[i]);
      if (stride != 1)
        term = arith::MulIOp::create(b, loc, term, c64(stride));
      if (dynamicStride)
        term = arith::MulIOp::create(b, loc, term, dynamicStride);
      linear = arith::AddIOp::create(b, loc, linear, term);
    }
    if (!ShapedType::isDynamic(shape[i])) {
      stride *= shape[i];
      continue;
    }
    OpBuilder fb(kernelOp);
    Value size = arith::IndexCastOp::create(fb, loc, i64, dimOf(fb, op.getResult(), i));
    dynamicStride = dynamicStride ? arith::MulIOp::create(fb, loc, dynamicStride, size).getResult() : size;
  }
  uint64_t offset = op.getOffset();
  Value ctr[4] = {low(linear), high(linear), c32((uint32_t)offset), c32((uint32_t)(offset >> 32))};
  Value key[2] = {low(seed), high(seed)};
  auto mulhilo = [&](uint32_t m, Value x, Value &hi, Value &lo) {
    Value p = arith::MulIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, x), c64(m));
    lo = low(p);
    hi = high(p);
  };
  for (int round = 0; round < 10; ++round) {
    if (round) {
      key[0] = arith::AddIOp::create(b, loc, key[0], c32(0x9E3779B9u));
      key[1] = arith::AddIOp::create(b, loc, key[1], c32(0xBB67AE85u));
    }
    Value hi0, lo0, hi1, lo1;
    mulhilo(0xD2511F53u, ctr[0], hi0, lo0);
    mulhilo(0xCD9E8D57u, ctr[2], hi1, lo1);
    Value x0 = arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, hi1, ctr[1]), key[0]);
    Value x2 = arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, hi0, ctr[3]), key[1]);
    ctr[0] = x0;
    ctr[1] = lo1;
    ctr[2] = x2;
    ctr[3] = lo0;
  }
  Value r = ctr[op.getWord()];
  levels[r] = at;
  return r;
}

Value KernelEmitter::sizeBeforeKernel(Value v, int64_t d) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(kernelOp);
  return dimOf(b, v, d);
}

Value KernelEmitter::indexBeforeKernel(Value v) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(kernelOp);
  return indexOf(b, v);
}

Value KernelEmitter::emitGather(prim::GatherOp g, ArrayRef<Value> idx, unsigned level) {
  Value raw = emit(g.getIndex(), idx);
  int64_t dim = g.getDim();
  RankedTensorType in = tensorType(g.getInput());
  Value dynamicSize = in.isDynamicDim(dim) ? sizeBeforeKernel(g.getInput(), dim) : Value();
  unsigned at = std::max(level, levelOf(raw));
  Value i;
  {
    OpBuilder::InsertionGuard guard(b);
    setInsertion(at);
    Value size = dynamicSize ? dynamicSize : constantIndexHere(in.getDimSize(dim));
    i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
    Value zero = constantIndexHere(0);
    Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
    Value wrapped = arith::AddIOp::create(b, loc, i, size);
    i = arith::SelectOp::create(b, loc, negative, wrapped, i);
    i = arith::MaxSIOp::create(b, loc, i, zero);
    i = arith::MinSIOp::create(b, loc, i,
                               dynamicSize ? (Value)arith::SubIOp::create(b, loc, size, constantIndexHere(1))
                                           : constantIndexHere(in.getDimSize(dim) - 1));
  }
  levels[i] = at;
  SmallVector<Value> inIdx(idx);
  inIdx[dim] = i;
  return emit(g.getInput(), inIdx);
}

Value KernelEmitter::emitDynamicSlice(prim::DynamicSliceOp s, ArrayRef<Value> idx, unsigned level) {
  int64_t dim = s.getDim();
  Value start = indexBeforeKernel(s.getStart());
  SmallVector<Value> inIdx(idx);
  {
    OpBuilder::InsertionGuard guard(b);
    unsigned at = levelOf(idx[dim]);
    setInsertion(at);
    inIdx[dim] = arith::AddIOp::create(b, loc, idx[dim], start);
    levels[inIdx[dim]] = at;
  }
  return emit(s.getInput(), inIdx);
}

Value KernelEmitter::emitPad(prim::PadOp pad, ArrayRef<Value> idx, unsigned level) {
  ArrayRef<int64_t> in = tensorType(pad.getInput()).getShape();
  unsigned at = std::max(level, levelOf(idx));
  SmallVector<Value> inIdx(idx);
  Value inside;
  {
    OpBuilder::InsertionGuard guard(b);
    setInsertion(at);
    for (size_t i = 0; i < in.size(); ++i) {
      int64_t lo = pad.getLow()[i], hi = pad.getHigh()[i];
      if (!lo && !hi)
        continue;
      Value j = arith::SubIOp::create(b, loc, idx[i], constantIndexHere(lo));
      Value zero = constantIndexHere(0), last = constantIndexHere(in[i] - 1);
      Value ok = arith::AndIOp::create(
          b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, j, zero),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, j, last));
      inside = inside ? (Value)arith::AndIOp::create(b, loc, inside, ok) : ok;
      inIdx[i] = arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, j, last), zero);
      levels[inIdx[i]] = at;
    }
  }
  Value value = emit(pad.getInput(), inIdx);
  if (!inside)
    return value;
  OpBuilder::InsertionGuard guard(b);
  unsigned selectLevel = std::max(at, levelOf(value));
  setInsertion(selectLevel);
  Type et = value.getType();
  Value fill = arith::ConstantOp::create(
      b, loc, isa<FloatType>(et) ? (TypedAttr)FloatAttr::get(et, pad.getValue().convertToDouble())
                                 : (TypedAttr)IntegerAttr::get(et, (int64_t)pad.getValue().convertToDouble()));
  Value r = arith::SelectOp::create(b, loc, inside, value, fill);
  levels[r] = selectLevel;
  return r;
}


/// A concatenation along a static dim read in a kernel (a `?` graph's cotangent of slices, where a
/// static one has pads): each input at the index shifted by its offset, clamped into it, and the one
/// whose range holds the index selected (bit-exact: no sum of zeros).
Value KernelEmitter::emitConcatenate(prim::ConcatenateOp cat, ArrayRef<Value> idx, unsigned level) {
  int64_t dim = cat.getDim();
  unsigned at = std::max(level, levelOf(idx));
  SmallVector<std::pair<Value, Value>> pieces; // (the input's value, whether the index is in it)
  int64_t offset = 0;
  for (Value in : cat.getInputs()) {
    int64_t n = tensorType(in).getDimSize(dim);
    SmallVector<Value> inIdx(idx);
    Value inside;
    {
      OpBuilder::InsertionGuard guard(b);
      setInsertion(at);
      Value j = arith::SubIOp::create(b, loc, idx[dim], constantIndexHere(offset));
      Value zero = constantIndexHere(0), last = constantIndexHere(n - 1);
      inside = arith::AndIOp::create(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, j, zero),
                                     arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, j, last));
      inIdx[dim] = arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, j, last), zero);
      levels[inIdx[dim]] = at;
    }
    pieces.push_back({emit(in, inIdx), inside});
    offset += n;
  }
  Value r = pieces.back().first;
  unsigned selectLevel = at;
  for (auto &[v, inside] : pieces)
    selectLevel = std::max(selectLevel, levelOf(v));
  OpBuilder::InsertionGuard guard(b);
  setInsertion(selectLevel);
  for (int64_t k = (int64_t)pieces.size() - 2; k >= 0; --k)
    r = arith::SelectOp::create(b, loc, pieces[k].second, pieces[k].first, r);
  levels[r] = selectLevel;
  return r;
}

TypedAttr scalarAttr(Type type, double value) {
  if (auto ft = dyn_cast<FloatType>(type))
    return FloatAttr::get(ft, value);
  return IntegerAttr::get(type, (int64_t)value);
}

/// Converts a scalar between element types with PyTorch's rules.
Value convertScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto ff = dyn_cast<FloatType>(from), ft = dyn_cast<FloatType>(to);
  if (ff && ft)
    return ff.getWidth() < ft.getWidth() ? (Value)arith::ExtFOp::create(b, loc, to, v)
                                         : (Value)arith::TruncFOp::create(b, loc, to, v);
  if (to.isInteger(1)) {
    if (ff)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   arith::ConstantOp::create(b, loc, scalarAttr(from, 0)));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                 arith::ConstantOp::create(b, loc, scalarAttr(from, 0)));
  }
  if (ft)
    return from.isInteger(1) ? (Value)arith::UIToFPOp::create(b, loc, to, v)
                             : (Value)arith::SIToFPOp::create(b, loc, to, v);
  if (ff)
    return arith::FPToSIOp::create(b, loc, to, v);
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return from.isInteger(1) ? (Value)arith::ExtUIOp::create(b, loc, to, v)
                             : (Value)arith::ExtSIOp::create(b, loc, to, v);
  return arith::TruncIOp::create(b, loc, to, v);
}

Value KernelEmitter::emitScalar(Operation *op, ArrayRef<Value> x, ArrayRef<Value> idx) {
  Type et = computeType(tensorType(op->getResult(0)).getElementType());
  bool isFloat = isa<FloatType>(et);
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, scalarAttr(et, v));
  };
  return TypeSwitch<Operation *, Value>(op)
      .Case<prim::ConstantOp>([&](prim::ConstantOp c) -> Value {
        auto dense = cast<DenseElementsAttr>(c.getValue());
        Attribute value = dense.getSplatValue<Attribute>();
        if (auto f = dyn_cast<FloatAttr>(value))
          value = FloatAttr::get(et, f.getValueAsDouble());
        else if (auto i = dyn_cast<IntegerAttr>(value); i && i.getType() != et)
          value = IntegerAttr::get(et, i.getValue().zext(et.getIntOrFloatBitWidth()));
        return arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
      })
      .Case<prim::IotaOp>([&](prim::IotaOp iota) -> Value {
        Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), idx[iota.getDim()]);
        return convertScalar(b, loc, i, et);
      })
      .Case<prim::ConvertElementTypeOp>([&](auto) -> Value {
        // An explicit conversion to a 16-bit float rounds, as eager does; so
        // does one from a 16-bit value that a fused kernel holds in f32 (the
        // value eager converts is rounded to its type).
        Value v = x[0];
        Type source = tensorType(op->getOperand(0)).getElementType();
        if ((source.isF16() || source.isBF16()) && isa<FloatType>(v.getType()) && v.getType() != source)
          v = arith::ExtFOp::create(b, loc, v.getType(), (Value)arith::TruncFOp::create(b, loc, source, v));
        Type stored = tensorType(op->getResult(0)).getElementType();
        if (stored == et || isa<IntegerType>(et))
          return convertScalar(b, loc, v, et);
        return arith::ExtFOp::create(b, loc, et, convertScalar(b, loc, v, stored));
      })
      .Case<prim::AddOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::AddFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::AddIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::SubOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::SubFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::SubIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::MulOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::MulFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::MulIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::DivOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::DivFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::DivSIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::RemOp>([&](auto) -> Value {
        // Python's %: the result takes the sign of the divisor.
        Value r = isFloat ? (Value)arith::RemFOp::create(b, loc, x[0], x[1])
                          : (Value)arith::RemSIOp::create(b, loc, x[0], x[1]);
        Value zero = constant(0);
        Value rNeg, bNeg, rNonZero;
        if (isFloat) {
          rNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, r, zero);
          bNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x[1], zero);
          rNonZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, r, zero);
        } else {
          rNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero);
          bNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x[1], zero);
          rNonZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
        }
        Value fix = arith::AndIOp::create(b, loc, rNonZero,
                                          arith::XOrIOp::create(b, loc, rNeg, bNeg));
        Value adjusted = isFloat ? (Value)arith::AddFOp::create(b, loc, r, x[1])
                                 : (Value)arith::AddIOp::create(b, loc, r, x[1]);
        return arith::SelectOp::create(b, loc, fix, adjusted, r);
      })
      .Case<prim::MaxOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::MaximumFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::MaxSIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::MinOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::MinimumFOp::create(b, loc, x[0], x[1])
                       : (Value)arith::MinSIOp::create(b, loc, x[0], x[1]);
      })
      .Case<prim::AndOp>([&](auto) { return arith::AndIOp::create(b, loc, x[0], x[1]); })
      .Case<prim::OrOp>([&](auto) { return arith::OrIOp::create(b, loc, x[0], x[1]); })
      .Case<prim::XorOp>([&](auto) { return arith::XOrIOp::create(b, loc, x[0], x[1]); })
      .Case<prim::ShlOp, prim::ShrOp>([&](Operation *shift) -> Value {
        // arith's shifts are poison from the compute width on; eager's give 0 (left) or the
        // sign fill (right) from the tensor type's width on, and for negative amounts
        // (unsigned >= catches both).
        unsigned width = tensorType(op->getResult(0)).getElementType().getIntOrFloatBitWidth();
        Value out = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, x[1],
                                          arith::ConstantOp::create(b, loc, scalarAttr(et, width)));
        if (isa<prim::ShlOp>(shift))
          return arith::SelectOp::create(b, loc, out, constant(0),
                                         arith::ShLIOp::create(b, loc, x[0], x[1]));
        Value fill = constant(et.getIntOrFloatBitWidth() - 1);
        Value amount = arith::SelectOp::create(b, loc, out, fill, x[1]);
        return arith::ShRSIOp::create(b, loc, x[0], amount);
      })
      .Case<prim::NegOp>([&](auto) -> Value {
        return isFloat ? (Value)arith::NegFOp::create(b, loc, x[0])
                       : (Value)arith::SubIOp::create(b, loc, constant(0), x[0]);
      })
      .Case<prim::AbsOp>([&](auto) -> Value {
        return isFloat ? (Value)math::AbsFOp::create(b, loc, x[0])
                       : (Value)math::AbsIOp::create(b, loc, x[0]);
      })
      .Case<prim::NotOp>([&](auto) -> Value {
        return arith::XOrIOp::create(
            b, loc, x[0], arith::ConstantOp::create(b, loc, IntegerAttr::get(et, -1)));
      })
      // The prim ops with one scalar op of their own (PrimOps.td `mathOp`, dyn-tblgen).
#define PRIM_MATH(PrimOp, ScalarOp)                                                            \
  .Case<prim::PrimOp>([&](auto) -> Value {                                                     \
    return ScalarOp::create(b, loc, TypeRange{x[0].getType()}, ValueRange(x))->getResult(0); \
  })
#include "dyn/Dialect/Prim/IR/PrimMath.inc"
      .Case<prim::LogisticOp>([&](auto) -> Value {
        Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x[0]));
        Value one = constant(1);
        return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
      })
      .Case<prim::SelectOp>(
          [&](auto) { return arith::SelectOp::create(b, loc, x[0], x[1], x[2]); })
      .Case<prim::EqOp, prim::NeOp, prim::LtOp, prim::LeOp, prim::GtOp, prim::GeOp>(
          [&](Operation *cmp) -> Value {
            Type operandType = x[0].getType();
            if (isa<FloatType>(operandType)) {
              auto pred = TypeSwitch<Operation *, arith::CmpFPredicate>(cmp)
                              .Case<prim::EqOp>([](auto) { return arith::CmpFPredicate::OEQ; })
                              .Case<prim::NeOp>([](auto) { return arith::CmpFPredicate::UNE; })
                              .Case<prim::LtOp>([](auto) { return arith::CmpFPredicate::OLT; })
                              .Case<prim::LeOp>([](auto) { return arith::CmpFPredicate::OLE; })
                              .Case<prim::GtOp>([](auto) { return arith::CmpFPredicate::OGT; })
                              .Default([](auto) { return arith::CmpFPredicate::OGE; });
              return arith::CmpFOp::create(b, loc, pred, x[0], x[1]);
            }
            bool u = operandType.isInteger(1); // booleans compare unsigned
            auto pred =
                TypeSwitch<Operation *, arith::CmpIPredicate>(cmp)
                    .Case<prim::EqOp>([](auto) { return arith::CmpIPredicate::eq; })
                    .Case<prim::NeOp>([](auto) { return arith::CmpIPredicate::ne; })
                    .Case<prim::LtOp>([&](auto) { return u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt; })
                    .Case<prim::LeOp>([&](auto) { return u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle; })
                    .Case<prim::GtOp>([&](auto) { return u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt; })
                    .Default([&](auto) { return u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge; });
            return arith::CmpIOp::create(b, loc, pred, x[0], x[1]);
          })
      .Default([&](Operation *other) -> Value {
        // Reported by the pass after emission; a placeholder keeps the IR valid.
        if (!unsupported)
          unsupported = other;
        return arith::ConstantOp::create(b, loc, scalarAttr(et, 0));
      });
}

} // namespace dyn::prim_to_loop
