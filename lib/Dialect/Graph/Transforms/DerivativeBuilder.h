//===- DerivativeBuilder.h - what derivative rules build with ---*- C++ -*-===//
//
// Private to lib/Dialect/Graph/Transforms. The generated rules of
// GraphDerivatives.td (GraphDerivatives.inc) call `build<Op>` for registered
// graph ops (result types from the registry's type and shape rules) and the
// named builders below for what needs shapes or attributes.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_LIB_DIALECT_GRAPH_TRANSFORMS_DERIVATIVEBUILDER_H
#define DYN_LIB_DIALECT_GRAPH_TRANSFORMS_DERIVATIVEBUILDER_H

#include "dyn/Dialect/Graph/IR/GraphDialect.h"
#include "mlir/IR/Builders.h"

#include <functional>

namespace dyn::graph {

class DerivativeBuilder {
public:
  using Values = llvm::ArrayRef<mlir::Value>;

  DerivativeBuilder(mlir::OpBuilder &b, std::function<bool(mlir::Value)> needsGrad)
      : b(b), loc(b.getUnknownLoc()), needsGrad(std::move(needsGrad)) {}

  mlir::OpBuilder &b;
  mlir::Location loc;
  /// Set when a rule met an operand it cannot differentiate (reported).
  bool failed = false;

  bool wants(mlir::Operation *op, unsigned operand) { return needsGrad(op->getOperand(operand)); }
  void notDifferentiable(mlir::Operation *op, unsigned operand);

  /// A registered op whose result type follows its type and shape rules.
  template <typename OpT>
  mlir::Value build(llvm::StringRef shapeRule, llvm::StringRef typeRule, Values operands) {
    mlir::Type t = inferType(OpT::getOperationName(), shapeRule, typeRule, operands);
    if (!t)
      return {};
    return b.create<OpT>(loc, mlir::TypeRange{t}, mlir::ValueRange(operands)).getResult();
  }
  mlir::Type inferType(llvm::StringRef opName, llvm::StringRef shapeRule, llvm::StringRef typeRule,
                       Values operands);

  // Leaves and conversions.
  mlir::Value constant(mlir::Value like, double value);
  /// Zeros of `type`; where it has `?` dims, a 0-d zero expanded to the runtime sizes of `like` (of that
  /// shape).
  mlir::Value zeros(mlir::RankedTensorType type, mlir::Value like = {});
  /// a + g, two gradient contributions of one value (concatenations of zeros and values added piecewise).
  mlir::Value accumulate(mlir::Value a, mlir::Value g);
  mlir::Value convert(mlir::Value v, mlir::Type elementType);
  /// Reshape and expand to `shape`; `sizes` has one `index` per `?` dim of `shape` (sizesLike).
  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape, mlir::ValueRange sizes = {});
  mlir::Value expand(mlir::Value v, llvm::ArrayRef<int64_t> shape, mlir::ValueRange sizes = {});
  /// To the shape of `like` (its runtime sizes where it has `?` dims).
  mlir::Value reshapeLike(mlir::Value v, mlir::Value like);
  mlir::Value expandLike(mlir::Value v, mlir::Value like);
  /// The runtime size of dim i of `like` for each `?` dim i of `shape` (of like's rank).
  llvm::SmallVector<mlir::Value> sizesLike(mlir::Value like, llvm::ArrayRef<int64_t> shape);
  /// The runtime size of dim `dim` of v (SymbolicDims.h: traced back to an argument where possible).
  mlir::Value dimOf(mlir::Value v, int64_t dim);
  /// The number of elements of x over `dims`, as a 0-d tensor of the float type of `like` (a constant where
  /// those dims are static; else a sum of ones over the runtime sizes, times the static ones).
  mlir::Value count(mlir::Value x, llvm::ArrayRef<int64_t> dims, mlir::Value like);
  /// Reports that the rule of `op` does not take `?` dims (`what`) yet.
  void dynamicUnsupported(mlir::Operation *op, llvm::StringRef what);
  mlir::Value permute(mlir::Value v, llvm::ArrayRef<int64_t> dims);
  mlir::Value slice(mlir::Value v, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
  mlir::Value padZeros(mlir::Value v, llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high);
  mlir::Value sum(mlir::Value v, llvm::ArrayRef<int64_t> dims, bool keepdim);
  mlir::Value matmul(mlir::Value lhs, mlir::Value rhs);
  mlir::Value transposeLast2(mlir::Value v);
  /// Pointwise arithmetic with broadcasting and promotion (registry rules).
  mlir::Value add(mlir::Value a, mlir::Value c);
  mlir::Value sub(mlir::Value a, mlir::Value c);
  mlir::Value mul(mlir::Value a, mlir::Value c);
  mlir::Value div(mlir::Value a, mlir::Value c);
  mlir::Value mulScalar(mlir::Value a, double c) { return c == 1.0 ? a : mul(a, constant(a, c)); }
  mlir::Value where(mlir::Value cond, mlir::Value a, mlir::Value c);
  mlir::Value compare(llvm::StringRef predicate, mlir::Value a, mlir::Value c);
  mlir::Value unary(llvm::StringRef name, mlir::Value v);
  /// float32 for float16/bfloat16 values (eager's backward kernels compute in it).
  mlir::Value up(mlir::Value v);

  // The named builders of GraphDerivatives.td: (op, cotangent, DAG arguments).
  mlir::Value sumTo(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value zeroGrad(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value convertTo(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value reshapeAs(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value permuteBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value sliceBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value padBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value reducedBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value meanBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value extremumBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value softmaxBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value logSoftmaxBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value geluBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value leakyReluBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value eluBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value softplusBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value hardtanhBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value thresholdBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value matmulLhsBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value matmulRhsBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value addmmInputBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value addmmLhsBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value addmmRhsBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value gatherBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value dropoutBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value nllLossBack(mlir::Operation *op, mlir::Value grad, Values args);
  // Builders of every operand's gradient (Graph_DerivativeFn).
  void catBack(mlir::Operation *op, mlir::Value grad, llvm::SmallVectorImpl<mlir::Value> &grads);
  void dynamicSliceBack(mlir::Operation *op, mlir::Value grad, llvm::SmallVectorImpl<mlir::Value> &grads);
  void reshapeBack(mlir::Operation *op, mlir::Value grad, llvm::SmallVectorImpl<mlir::Value> &grads);
  void expandBack(mlir::Operation *op, mlir::Value grad, llvm::SmallVectorImpl<mlir::Value> &grads);
  void layerNormBack(mlir::Operation *op, mlir::Value grad, llvm::SmallVectorImpl<mlir::Value> &grads);
  void rmsNormBack(mlir::Operation *op, mlir::Value grad, llvm::SmallVectorImpl<mlir::Value> &grads);
  void attentionBack(mlir::Operation *op, mlir::Value grad, llvm::SmallVectorImpl<mlir::Value> &grads);
  void attentionLseBack(mlir::Operation *op, mlir::Value grad, llvm::SmallVectorImpl<mlir::Value> &grads);
  void pointwiseLossBack(mlir::Operation *op, mlir::Value grad, llvm::SmallVectorImpl<mlir::Value> &grads);
  void convolutionBack(mlir::Operation *op, mlir::Value grad, llvm::SmallVectorImpl<mlir::Value> &grads);
  void batchNormBack(mlir::Operation *op, mlir::Value grad, llvm::SmallVectorImpl<mlir::Value> &grads);
  mlir::Value maxPoolBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value maxPoolWithIndicesBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value vecdotBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value adaptiveAvgPoolBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value hardswishBack(mlir::Operation *op, mlir::Value grad, Values args);
  mlir::Value hardsigmoidBack(mlir::Operation *op, mlir::Value grad, Values args);

private:
  std::function<bool(mlir::Value)> needsGrad;
  /// Expands the cotangent of a reduction over `dims` back to the input's shape.
  mlir::Value unreduce(mlir::Value grad, mlir::Value input, llvm::ArrayRef<int64_t> dims, bool keepdim);
  /// A norm's backward over `normDims` of x, weight and bias broadcast as `paramShape` (rank of x);
  /// statistics recomputed from x (batch statistics), given (eval-mode batch norm), or the forward's own
  /// (forwardXc = x - mean and forwardRstd, of x's shape: training batch norm, openBatchNorm).
  void normBack(mlir::Value grad, mlir::Value x, mlir::Value weight, mlir::Value bias,
                llvm::ArrayRef<int64_t> normDims, llvm::ArrayRef<int64_t> paramShape, double eps, bool centered,
                mlir::Value givenMean, mlir::Value givenVar, llvm::SmallVectorImpl<mlir::Value> &grads,
                mlir::Value forwardXc = {}, mlir::Value forwardRstd = {});
  void openBatchNorm(BatchNormOp bn, llvm::ArrayRef<int64_t> normDims, mlir::Value &xc, mlir::Value &rstd);
  /// v (of x's shape) summed over the dims where `shape` is 1.
  mlir::Value sumToShape(mlir::Value v, llvm::ArrayRef<int64_t> shape);
};

} // namespace dyn::graph

#endif // DYN_LIB_DIALECT_GRAPH_TRANSFORMS_DERIVATIVEBUILDER_H
