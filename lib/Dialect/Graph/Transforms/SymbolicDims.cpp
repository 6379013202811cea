//===- SymbolicDims.cpp - where a `?` dim's runtime size comes from -------===//
#include "SymbolicDims.h"

#include "dyn/Dialect/Graph/IR/GraphDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace dyn::graph {

static RankedTensorType tensorTypeOf(Value v) { return dyn_cast<RankedTensorType>(v.getType()); }

/// The position of result dim `d` among the `?` result dims (the index of its `sizes` operand).
static int64_t dynamicPosition(RankedTensorType t, int64_t d) {
  int64_t k = 0;
  for (int64_t i = 0; i < d; ++i)
    k += t.isDynamicDim(i);
  return k;
}

/// One step back: the operand whose dim has the same runtime size as dim `d` of `v` (an op result), or
/// a `sizes` operand holding it; {} where no rule applies.
static DimSource step(Value v, int64_t d) {
  Operation *op = v.getDefiningOp();
  auto rt = tensorTypeOf(v);
  if (!op || !rt || !rt.isDynamicDim(d))
    return {};
  int64_t r = rt.getRank();
  auto same = [&](Value operand, int64_t i) -> DimSource {
    auto t = tensorTypeOf(operand);
    if (t && i >= 0 && i < t.getRank() && t.isDynamicDim(i))
      return {Value(), operand, i};
    return {};
  };
  if (auto s = dyn_cast<ReshapeOp>(op)) {
    if (!s.getSizes().empty())
      return {s.getSizes()[dynamicPosition(rt, d)], Value(), 0};
    auto sources = reshapeSizeSources(tensorTypeOf(s.getInput()), rt);
    if (failed(sources))
      return {};
    int64_t src = (*sources)[dynamicPosition(rt, d)];
    return src < 0 ? DimSource{} : same(s.getInput(), src);
  }
  if (auto e = dyn_cast<ExpandOp>(op)) {
    if (!e.getSizes().empty())
      return {e.getSizes()[dynamicPosition(rt, d)], Value(), 0};
    return same(e.getInput(), tensorTypeOf(e.getInput()).getRank() - (r - d));
  }
  if (auto i = dyn_cast<IotaOp>(op))
    return i.getSizes().empty() ? DimSource{} : DimSource{i.getSizes()[0], Value(), 0};
  if (auto rnd = dyn_cast<RandomOp>(op))
    return DimSource{rnd.getSizes()[dynamicPosition(rt, d)], Value(), 0};
  if (auto p = dyn_cast<PermuteOp>(op))
    return same(p.getInput(), p.getDims()[d]);
  if (auto s = dyn_cast<SliceOp>(op))
    return d == static_cast<int64_t>(s.getDim()) ? DimSource{} : same(s.getInput(), d);
  if (auto s = dyn_cast<DynamicSliceOp>(op))
    return d == static_cast<int64_t>(s.getDim()) ? DimSource{} : same(s.getInput(), d);
  if (auto c = dyn_cast<CatOp>(op))
    return d == static_cast<int64_t>(c.getDim()) ? DimSource{} : same(c.getInputs()[0], d);
  if (auto m = dyn_cast<MatmulOp>(op)) {
    auto lt = tensorTypeOf(m.getLhs()), rht = tensorTypeOf(m.getRhs());
    if (d == r - 1)
      return same(m.getRhs(), rht.getRank() - 1);
    if (d == r - 2 && lt.getRank() >= 2)
      return same(m.getLhs(), lt.getRank() - 2);
    DimSource s = same(m.getLhs(), lt.getRank() - (r - d));
    return s.tensor ? s : same(m.getRhs(), rht.getRank() - (r - d));
  }
  if (auto a = dyn_cast<AddmmOp>(op))
    return d == 0 ? same(a.getLhs(), 0) : same(a.getRhs(), 1);
  if (auto g = dyn_cast<GatherOp>(op))
    return same(g.getIndex(), d);
  if (auto a = dyn_cast<ScaledDotProductAttentionOp>(op))
    return d == r - 1 ? same(a.getValue(), tensorTypeOf(a.getValue()).getRank() - 1) : same(a.getQuery(), d);
  // attention with its log-sum-exp: the result as attention's, the log-sum-exp [B, H, ceil32(L)] the query's
  // B and H (its length is a size of its own: lseLength)
  if (auto a = dyn_cast<AttentionLseOp>(op)) {
    if (v == a.getResult())
      return d == r - 1 ? same(a.getValue(), tensorTypeOf(a.getValue()).getRank() - 1) : same(a.getQuery(), d);
    return v == a.getLse() && d < 2 ? same(a.getQuery(), d) : DimSource{};
  }
  // the query, key and value gradients: the query's, key's and value's sizes
  if (auto a = dyn_cast<AttentionLseBackwardOp>(op))
    return same(op->getOperand(cast<OpResult>(v).getResultNumber() + 1), d);
  if (isa<ConvolutionOp, MaxPoolOp, AdaptiveAvgPoolOp>(op))
    return d == 0 ? same(op->getOperand(0), 0) : DimSource{};
  if (isa<SumOp, MeanOp, AmaxOp, AminOp, ProdOp>(op)) {
    auto dims = op->getAttrOfType<DenseI64ArrayAttr>("dims").asArrayRef();
    if (op->hasAttr("keepdim"))
      return same(op->getOperand(0), d);
    int64_t in = 0, k = -1;
    for (int64_t i = 0, n = tensorTypeOf(op->getOperand(0)).getRank(); i < n; ++i) {
      if (llvm::is_contained(dims, i))
        continue;
      if (++k == d) {
        in = i;
        break;
      }
    }
    return k == d ? same(op->getOperand(0), in) : DimSource{};
  }
  // Ops whose result has operand 0's shape.
  if (isa<ConvertOp, DetachOp, SoftmaxOp, SafeSoftmaxOp, LogSoftmaxOp, SoftmaxBackwardOp, LayerNormOp, RmsNormOp,
          DropoutOp, BernoulliOp, BatchNormOp>(op) ||
      op->hasTrait<mlir::OpTrait::SameOperandsAndResultShape>())
    return v == op->getResult(0) ? same(op->getOperand(0), d) : DimSource{};
  // Broadcasting ops: a `?` dim is never broadcast, so an operand's `?` dim at the same position from
  // the back is the result's.
  if (op->hasTrait<mlir::OpTrait::ResultsBroadcastableShape>())
    for (Value o : op->getOperands())
      if (auto t = tensorTypeOf(o); t && t.getRank() >= r - d)
        if (DimSource s = same(o, t.getRank() - (r - d)); s.tensor)
          return s;
  return {};
}

/// The query of an attention whose log-sum-exp's length `s` is (ceil32 of the query's length), or null.
static Value lseQuery(const DimSource &s) {
  if (auto a = s.tensor ? s.tensor.getDefiningOp<AttentionLseOp>() : AttentionLseOp(); a && s.tensor == a.getLse() &&
                                                                                      s.dim == 2)
    return a.getQuery();
  return {};
}

DimSource traceDim(Value v, int64_t dim) {
  DimSource at{Value(), v, dim};
  for (int guard = 0; guard < 10000; ++guard) {
    DimSource next = step(at.tensor, at.dim);
    if (next.index)
      return next;
    if (!next.tensor)
      return at;
    at = next;
  }
  return at;
}

Value materializeDim(OpBuilder &b, Value v, int64_t dim) {
  DimSource s = traceDim(v, dim);
  if (s.index)
    return s.index;
  Block *block = b.getInsertionBlock();
  for (Operation *user : s.tensor.getUsers())
    if (auto d = dyn_cast<DimOp>(user))
      if (d.getDim() == static_cast<uint64_t>(s.dim) && user->getBlock() == block &&
          (b.getInsertionPoint() == block->end() || user->isBeforeInBlock(&*b.getInsertionPoint())))
        return d.getResult();
  OpBuilder::InsertionGuard guard(b);
  if (Operation *def = s.tensor.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(s.tensor).getOwner());
  // a log-sum-exp's length: the query's length rounded up to a multiple of 32
  if (Value query = lseQuery(s)) {
    Value n = materializeDim(b, query, 2);
    Value m = b.create<arith::ConstantIndexOp>(query.getLoc(), 32);
    return b.create<arith::MulIOp>(query.getLoc(), b.create<arith::CeilDivUIOp>(query.getLoc(), n, m), m).getResult();
  }
  // a dynamic slice's length along its dim: end - start
  if (auto ds = s.tensor.getDefiningOp<DynamicSliceOp>(); ds && static_cast<int64_t>(ds.getDim()) == s.dim)
    return b.create<arith::SubIOp>(ds.getLoc(), ds.getEnd(), ds.getStart()).getResult();
  // a concatenation's length along its dim: the sum of its inputs' (each traced to the arguments)
  if (auto c = s.tensor.getDefiningOp<CatOp>(); c && static_cast<int64_t>(c.getDim()) == s.dim) {
    Value total;
    for (Value in : c.getInputs()) {
      auto t = tensorTypeOf(in);
      Value n = t.isDynamicDim(s.dim) ? materializeDim(b, in, s.dim)
                                      : b.create<arith::ConstantIndexOp>(c.getLoc(), t.getDimSize(s.dim)).getResult();
      total = total ? b.create<arith::AddIOp>(c.getLoc(), total, n).getResult() : n;
    }
    return total;
  }
  return b.create<DimOp>(s.tensor.getLoc(), b.getIndexType(), s.tensor, static_cast<uint64_t>(s.dim)).getResult();
}

static std::optional<std::string> indexExpression(Value v, int depth);

static std::optional<std::string> sourceExpression(DimSource s, int depth) {
  if (s.index)
    return indexExpression(s.index, depth + 1);
  auto t = tensorTypeOf(s.tensor);
  if (!t.isDynamicDim(s.dim))
    return std::to_string(t.getDimSize(s.dim));
  if (auto a = dyn_cast<BlockArgument>(s.tensor))
    return "s[" + std::to_string(a.getArgNumber()) + "][" + std::to_string(s.dim) + "]";
  if (Value query = lseQuery(s)) {
    auto n = dimExpression(query, 2);
    return n ? std::optional<std::string>("(-(-" + *n + " // 32) * 32)") : std::nullopt;
  }
  if (auto ds = s.tensor.getDefiningOp<DynamicSliceOp>(); ds && static_cast<int64_t>(ds.getDim()) == s.dim) {
    auto end = indexExpression(ds.getEnd(), depth + 1), start = indexExpression(ds.getStart(), depth + 1);
    if (end && start)
      return "(" + *end + " - " + *start + ")";
  }
  if (auto c = s.tensor.getDefiningOp<CatOp>(); c && static_cast<int64_t>(c.getDim()) == s.dim) {
    std::string sum;
    for (Value in : c.getInputs()) {
      auto n = dimExpression(in, s.dim);
      if (!n)
        return std::nullopt;
      sum += (sum.empty() ? "(" : " + ") + *n;
    }
    return sum + ")";
  }
  return std::nullopt;
}

static std::optional<std::string> indexExpression(Value v, int depth) {
  if (depth > 64)
    return std::nullopt;
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto d = dyn_cast<DimOp>(op))
    return sourceExpression(traceDim(d.getInput(), d.getDim()), depth);
  if (auto c = dyn_cast<arith::ConstantIndexOp>(op))
    return std::to_string(c.value());
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return std::to_string(i.getInt());
  if (op->getNumOperands() != 2)
    return std::nullopt;
  auto l = indexExpression(op->getOperand(0), depth + 1), r = indexExpression(op->getOperand(1), depth + 1);
  if (!l || !r)
    return std::nullopt;
  // sizes are never negative: truncating and flooring division agree
  if (isa<arith::MulIOp>(op))
    return "(" + *l + " * " + *r + ")";
  if (isa<arith::AddIOp>(op))
    return "(" + *l + " + " + *r + ")";
  if (isa<arith::SubIOp>(op))
    return "(" + *l + " - " + *r + ")";
  if (isa<arith::DivSIOp, arith::FloorDivSIOp, arith::DivUIOp>(op))
    return "(" + *l + " // " + *r + ")";
  if (isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(op))
    return "(-(-" + *l + " // " + *r + "))";
  if (isa<arith::MaxSIOp>(op))
    return "max(" + *l + ", " + *r + ")";
  if (isa<arith::MinSIOp>(op))
    return "min(" + *l + ", " + *r + ")";
  return std::nullopt;
}

std::optional<std::string> dimExpression(Value v, int64_t dim) {
  auto t = tensorTypeOf(v);
  if (!t.isDynamicDim(dim))
    return std::to_string(t.getDimSize(dim));
  return sourceExpression(traceDim(v, dim), 0);
}

} // namespace dyn::graph
