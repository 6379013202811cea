//===- PropagateLayouts.cpp - channels-last convolutions -----------------===//
//
// dyn-propagate-layouts: a convolution whose activations outweigh its weight
// runs channels-last ([N, *spatial, C]), and the transpose back to torch's
// order sinks through the ops after it, so that everything between two
// convolutions is computed channels-last and the inverse transposes cancel.
//
// One forward walk over each function (ops are in def-use order). A value
// known to equal transpose(t, fromCL) has `t` recorded as its channels-last
// form; an op reading such a value is rebuilt on `t` and its result recorded
// the same way. Replaced ops are left dead for the canonicalizer.
//
//===----------------------------------------------------------------------===//
#include "dyn/Dialect/Prim/Transforms/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

namespace dyn {
#define GEN_PASS_DEF_PROPAGATELAYOUTSPASS
#include "dyn/Dialect/Prim/Transforms/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// [0, rank-1, 1, ..., rank-2]: from [N, *spatial, C] to [N, C, *spatial].
SmallVector<int64_t> fromChannelsLast(int64_t rank) {
  SmallVector<int64_t> p{0, rank - 1};
  for (int64_t i = 1; i < rank - 1; ++i)
    p.push_back(i);
  return p;
}

SmallVector<int64_t> inverse(ArrayRef<int64_t> p) {
  SmallVector<int64_t> inv(p.size());
  for (auto [i, d] : llvm::enumerate(p))
    inv[d] = i;
  return inv;
}

bool isIdentity(ArrayRef<int64_t> p) {
  for (auto [i, d] : llvm::enumerate(p))
    if ((int64_t)i != d)
      return false;
  return true;
}

/// shape' with shape'[p[i]] = shape[i]: a value's shape in the layout it has
/// under `transpose(., p)`'s operand.
SmallVector<int64_t> scatterDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> p) {
  SmallVector<int64_t> r(shape.size());
  for (auto [i, d] : llvm::enumerate(p))
    r[d] = shape[i];
  return r;
}

/// Elements per dynamic-dim slice: a dynamic (batch) dim counts as 1.
int64_t numElements(Value v) {
  int64_t n = 1;
  for (int64_t s : tensorType(v).getShape())
    n *= ShapedType::isDynamic(s) ? 1 : s;
  return n;
}

struct Propagator {
  OpBuilder b;
  bool depthwiseOnly;
  /// v -> t with v == transpose(t, fromChannelsLast(rank)).
  llvm::DenseMap<Value, Value> channelsLast;

  Propagator(MLIRContext *ctx, bool depthwiseOnly) : b(ctx), depthwiseOnly(depthwiseOnly) {}

  Value transpose(Location loc, Value v, ArrayRef<int64_t> perm) {
    if (isIdentity(perm))
      return v;
    RankedTensorType t = tensorType(v);
    SmallVector<int64_t> shape;
    for (int64_t d : perm)
      shape.push_back(t.getDimSize(d));
    return prim::TransposeOp::create(b, loc, t.clone(shape), v, perm);
  }

  /// The result of an op rebuilt channels-last, in torch's order for the
  /// original op's users, recorded as such.
  Value restore(Location loc, Value cl) {
    Value v = transpose(loc, cl, fromChannelsLast(tensorType(cl).getRank()));
    channelsLast[v] = cl;
    return v;
  }

  /// `v` (in torch's order, rank of perm p = fromChannelsLast) in channels-last order: its recorded
  /// form, a broadcast or splat rebuilt in that order, else a transpose (an index remap where it
  /// is read).
  Value toChannelsLast(Location loc, Value v) {
    if (Value cl = channelsLast.lookup(v))
      return cl;
    RankedTensorType t = tensorType(v);
    SmallVector<int64_t> p = fromChannelsLast(t.getRank());
    auto clType = t.clone(scatterDims(t.getShape(), p));
    if (auto c = v.getDefiningOp<prim::ConstantOp>())
      if (auto splat = dyn_cast<SplatElementsAttr>(c.getValue()))
        return prim::ConstantOp::create(b, loc, clType, splat.resizeSplat(clType));
    if (auto bc = v.getDefiningOp<prim::BroadcastInDimOp>()) {
      // operand dim k lands on result dim dims[k], which is dim p[dims[k]] channels-last
      SmallVector<std::pair<int64_t, int64_t>> order;
      for (auto [k, d] : llvm::enumerate(bc.getDims()))
        order.push_back({p[d], (int64_t)k});
      llvm::sort(order);
      SmallVector<int64_t> perm, dims;
      for (auto [d, k] : order) {
        perm.push_back(k);
        dims.push_back(d);
      }
      Value in = transpose(loc, bc.getInput(), perm);
      // the sizes of the dynamic dims, in channels-last order: torch's dim i is dim p[i] there
      SmallVector<Value> sizes;
      for (int64_t j = 0; j < clType.getRank(); ++j) {
        if (!clType.isDynamicDim(j))
          continue;
        int64_t i = llvm::find(p, j) - p.begin();
        sizes.push_back(bc.getSizes()[llvm::count_if(t.getShape().take_front(i), ShapedType::isDynamic)]);
      }
      return prim::BroadcastInDimOp::create(b, loc, clType, in, dims, sizes);
    }
    return transpose(loc, v, inverse(p));
  }

  bool hasChannelsLast(Value v) { return channelsLast.count(v); }

  void replace(Operation *op, Value v) { op->getResult(0).replaceAllUsesWith(v); }

  void visit(Operation *op);
  void convolution(prim::ConvolutionOp conv);
  void elementwise(Operation *op);
  void transposeOp(prim::TransposeOp op);
  template <typename Op> void padOrSlice(Op op);
  void reduce(Operation *op, ArrayRef<int64_t> dims);
  void concatenate(prim::ConcatenateOp op);
};

/// Worth running channels-last: a 2-d or 3-d convolution whose activations
/// (read and written) outnumber its weight's elements. The library converts
/// the weight on every call (as eager does for a channels-last input); where
/// the weight is larger (late ResNet stages at small batch), that copy costs
/// more than the layout saves.
bool worthChannelsLast(prim::ConvolutionOp conv, bool depthwiseOnly) {
  int64_t rank = tensorType(conv.getInput()).getRank();
  if ((rank != 4 && rank != 5) || conv.getTransposed() || conv.getChannelsLast())
    return false;
  // depthwise as ATen's is_depthwise has it: several groups of one input channel each
  if (depthwiseOnly && (conv.getGroups() < 2 || tensorType(conv.getWeight()).getDimSize(1) != 1))
    return false;
  int64_t activations = numElements(conv.getInput()) + numElements(conv.getResult());
  return numElements(conv.getWeight()) < activations;
}

void Propagator::convolution(prim::ConvolutionOp conv) {
  if (!worthChannelsLast(conv, depthwiseOnly))
    return;
  Location loc = conv.getLoc();
  b.setInsertionPoint(conv);
  Value in = toChannelsLast(loc, conv.getInput());
  RankedTensorType t = conv.getType();
  auto clType = t.clone(scatterDims(t.getShape(), fromChannelsLast(t.getRank())));
  auto cl = prim::ConvolutionOp::create(b, loc, clType, in, conv.getWeight(), conv.getBias(),
                                        conv.getStrideAttr(), conv.getPaddingAttr(),
                                        conv.getDilationAttr(), conv.getGroupsAttr(),
                                        /*transposed=*/UnitAttr(), conv.getOutputPaddingAttr(),
                                        b.getUnitAttr());
  replace(conv, restore(loc, cl));
}

void Propagator::elementwise(Operation *op) {
  if (op->getNumResults() != 1 || !llvm::any_of(op->getOperands(), [&](Value v) {
        return hasChannelsLast(v);
      }))
    return;
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  IRMapping map;
  for (Value v : op->getOperands())
    map.map(v, toChannelsLast(loc, v));
  Operation *cl = b.clone(*op, map);
  RankedTensorType t = tensorType(op->getResult(0));
  cl->getResult(0).setType(t.clone(scatterDims(t.getShape(), fromChannelsLast(t.getRank()))));
  replace(op, restore(loc, cl->getResult(0)));
}

/// transpose(transpose(t, fromCL), q) = transpose(t, fromCL o q); and a transpose to torch's order
/// is itself a recorded channels-last form (convnext permutes its blocks' outputs back).
void Propagator::transposeOp(prim::TransposeOp op) {
  ArrayRef<int64_t> q = op.getPermutation();
  int64_t rank = q.size();
  SmallVector<int64_t> p = fromChannelsLast(rank);
  if (Value cl = channelsLast.lookup(op.getInput())) {
    SmallVector<int64_t> composed;
    for (int64_t d : q)
      composed.push_back(p[d]);
    b.setInsertionPoint(op);
    Value v = transpose(op.getLoc(), cl, composed);
    if (composed == p)
      channelsLast[v] = cl;
    replace(op, v);
    return;
  }
  if ((rank == 4 || rank == 5) && llvm::equal(q, p))
    channelsLast[op.getResult()] = op.getInput();
}

/// Per-dim attributes (pad's low/high, slice's start/stride) move with their dims.
template <typename Op> void Propagator::padOrSlice(Op op) {
  Value cl = channelsLast.lookup(op.getInput());
  if (!cl)
    return;
  SmallVector<int64_t> p = fromChannelsLast(tensorType(cl).getRank());
  b.setInsertionPoint(op);
  Operation *clone = b.clone(*op);
  clone->setOperand(0, cl);
  for (NamedAttribute a : op->getAttrs())
    if (auto dims = dyn_cast<DenseI64ArrayAttr>(a.getValue()))
      clone->setAttr(a.getName(), b.getDenseI64ArrayAttr(scatterDims(dims.asArrayRef(), p)));
  RankedTensorType t = op.getType();
  clone->getResult(0).setType(t.clone(scatterDims(t.getShape(), p)));
  replace(op, restore(op.getLoc(), clone->getResult(0)));
}

/// A reduction reads channels-last in place: its dims map through the layout; the kept dims come
/// out in channels-last order, put back in torch's order by a transpose (none for a global pool).
void Propagator::reduce(Operation *op, ArrayRef<int64_t> dims) {
  Value cl = channelsLast.lookup(op->getOperand(0));
  if (!cl)
    return;
  SmallVector<int64_t> p = fromChannelsLast(tensorType(cl).getRank());
  SmallVector<int64_t> clDims;
  for (int64_t d : dims)
    clDims.push_back(p[d]);
  llvm::sort(clDims);
  // kept dims in torch's order, as channels-last dims; their rank among the kept is the order the
  // reduced value has them in
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < (int64_t)p.size(); ++i)
    if (!llvm::is_contained(dims, i))
      kept.push_back(p[i]);
  SmallVector<int64_t> sorted(kept);
  llvm::sort(sorted);
  SmallVector<int64_t> perm, shape;
  for (int64_t d : kept)
    perm.push_back(llvm::find(sorted, d) - sorted.begin());
  for (int64_t d : sorted)
    shape.push_back(tensorType(cl).getDimSize(d));
  b.setInsertionPoint(op);
  Operation *clone = b.clone(*op);
  clone->setOperand(0, cl);
  clone->setAttr("dims", b.getDenseI64ArrayAttr(clDims));
  clone->getResult(0).setType(tensorType(op->getResult(0)).clone(shape));
  replace(op, transpose(op->getLoc(), clone->getResult(0), perm));
}

void Propagator::concatenate(prim::ConcatenateOp op) {
  if (!llvm::any_of(op.getInputs(), [&](Value v) { return hasChannelsLast(v); }))
    return;
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  SmallVector<Value> ins;
  for (Value v : op.getInputs())
    ins.push_back(toChannelsLast(loc, v));
  RankedTensorType t = op.getType();
  SmallVector<int64_t> p = fromChannelsLast(t.getRank());
  auto cl = prim::ConcatenateOp::create(b, loc, t.clone(scatterDims(t.getShape(), p)), ins,
                                        b.getI64IntegerAttr(p[op.getDim()]));
  replace(op, restore(loc, cl));
}

void Propagator::visit(Operation *op) {
  if (auto conv = dyn_cast<prim::ConvolutionOp>(op))
    return convolution(conv);
  if (auto t = dyn_cast<prim::TransposeOp>(op))
    return transposeOp(t);
  if (auto pad = dyn_cast<prim::PadOp>(op))
    return padOrSlice(pad);
  if (auto slice = dyn_cast<prim::SliceOp>(op))
    return padOrSlice(slice);
  if (auto cat = dyn_cast<prim::ConcatenateOp>(op))
    return concatenate(cat);
  if (isa<prim::ReduceSumOp, prim::ReduceProdOp, prim::ReduceMaxOp, prim::ReduceMinOp>(op))
    return reduce(op, cast<DenseI64ArrayAttr>(op->getAttr("dims")).asArrayRef());
  if (op->hasTrait<mlir::OpTrait::Elementwise>() && op->getDialect() &&
      isa<prim::PrimDialect>(op->getDialect()))
    return elementwise(op);
}

struct PropagateLayoutsPass : dyn::impl::PropagateLayoutsPassBase<PropagateLayoutsPass> {
  using PropagateLayoutsPassBase::PropagateLayoutsPassBase;
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp f) {
      bool any = false;
      f.walk([&](prim::ConvolutionOp conv) { any |= worthChannelsLast(conv, depthwiseOnly); });
      if (!any)
        return;
      Propagator prop(&getContext(), depthwiseOnly);
      SmallVector<Operation *> ops;
      for (Block &block : f.getBody())
        for (Operation &op : block)
          ops.push_back(&op);
      for (Operation *op : ops)
        prop.visit(op);
    });
  }
};

} // namespace
