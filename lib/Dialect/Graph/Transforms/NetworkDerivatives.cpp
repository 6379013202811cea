//===- NetworkDerivatives.cpp - derivatives of norms, attention, convolution -===//
//
// The DerivativeBuilder members for the ops of neural-network layers: norms
// (statistics recomputed, eager's formulas), attention (the math backward),
// convolution and pooling (ATen's backward kernels as library calls).
//
//===----------------------------------------------------------------------===//
#include "DerivativeBuilder.h"
#include "dyn/Dialect/Graph/IR/BatchNormShift.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;

namespace dyn::graph {

static RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

//===----------------------------------------------------------------------===//
// Norms: recomputed statistics, eager's formulas, float32 for halves
//===----------------------------------------------------------------------===//

Value DerivativeBuilder::sumToShape(Value v, ArrayRef<int64_t> shape) {
  RankedTensorType t = tensorType(v);
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (shape[i] == 1 && t.getDimSize(i) != 1)
      dims.push_back(i);
  return reshape(sum(v, dims, false), shape);
}

void DerivativeBuilder::normBack(Value grad, Value x0, Value weight, Value bias, ArrayRef<int64_t> normDims,
                                 ArrayRef<int64_t> paramShape, double eps, bool centered, Value givenMean,
                                 Value givenVar, SmallVectorImpl<Value> &grads, Value forwardXc,
                                 Value forwardRstd) {
  RankedTensorType xt = tensorType(x0);
  Value x = up(x0), g = up(grad);
  // the element count: a constant, or (a `?` batch of batch norm) computed at run time
  bool staticCount = llvm::none_of(normDims, [&](int64_t d) { return xt.isDynamicDim(d); });
  int64_t staticN = 1;
  for (int64_t d : normDims)
    staticN *= staticCount ? xt.getDimSize(d) : 1;
  Value n = staticCount ? Value() : count(x0, normDims, x);
  auto perCount = [&](Value v) { return staticCount ? mulScalar(v, 1.0 / staticN) : div(v, n); };
  auto meanOver = [&](Value v) { return expandLike(perCount(sum(v, normDims, true)), x0); };
  auto param = [&](Value p) { return expandLike(reshape(up(p), paramShape), x0); };
  Value xc = forwardXc, rstd = forwardRstd;
  if (forwardXc) {
    // the forward's own statistics (openBatchNorm)
  } else if (givenMean) {
    xc = sub(x, param(givenMean));
    rstd = unary("rsqrt", add(param(givenVar), constant(x, eps)));
  } else {
    xc = centered ? sub(x, meanOver(x)) : x;
    rstd = unary("rsqrt", add(meanOver(mul(xc, xc)), constant(x, eps)));
  }
  Value xhat = mul(xc, rstd);
  auto paramGrad = [&](Value v, Value p) {
    return convert(reshape(v, tensorType(p).getShape()), tensorType(p).getElementType());
  };
  // Where the weight is constant over the normalized dims (batch norm's per channel), its sums are those of
  // the weight's and bias's gradients times the weight: two reductions serve all three gradients.
  bool perChannel = llvm::all_of(normDims, [&](int64_t d) { return paramShape[d] == 1; });
  Value sgx = perChannel || (weight && needsGrad(weight)) ? sumToShape(mul(g, xhat), paramShape) : Value();
  Value sg = perChannel || (bias && needsGrad(bias)) ? sumToShape(g, paramShape) : Value();
  if (weight && needsGrad(weight))
    grads[1] = paramGrad(sgx, weight);
  if (bias && needsGrad(bias))
    grads[2] = paramGrad(sg, bias);
  if (!needsGrad(x0))
    return;
  Value gw = weight ? mul(g, param(weight)) : g;
  if (givenMean) {  // fixed statistics: the normalization is affine in x
    grads[0] = convert(mul(gw, rstd), xt.getElementType());
    return;
  }
  if (perChannel && centered) {
    // dx = rstd * w * (g - (sum(g) + xhat * sum(g * xhat)) / N)
    Value w = weight ? param(weight) : Value();
    Value corr = perCount(add(expandLike(sg, x0), mul(xhat, expandLike(sgx, x0))));
    Value d = mul(rstd, sub(g, corr));
    grads[0] = convert(w ? mul(d, w) : d, xt.getElementType());
    return;
  }
  Value inner = sub(gw, mul(xhat, meanOver(mul(gw, xhat))));
  if (centered)
    inner = sub(inner, meanOver(gw));
  grads[0] = convert(mul(rstd, inner), xt.getElementType());
}

/// grads of the operands in ODS order from the gradients by role (input, weight, bias), for ops whose
/// weight and bias are optional.
static void byOperand(ArrayRef<Value> roles, ArrayRef<Value> present, SmallVectorImpl<Value> &grads) {
  unsigned i = 0;
  for (size_t r = 0; r < present.size(); ++r)
    if (present[r])
      grads[i++] = roles[r];
}

/// The trailing `k` dims of x (a layer or RMS norm's normalized dims) and the shape its weight broadcasts as.
static void trailingNormDims(RankedTensorType xt, int64_t k, SmallVectorImpl<int64_t> &normDims,
                             SmallVectorImpl<int64_t> &paramShape) {
  for (int64_t i = 0; i < xt.getRank(); ++i) {
    bool normalized = i >= xt.getRank() - k;
    if (normalized)
      normDims.push_back(i);
    paramShape.push_back(normalized ? xt.getDimSize(i) : 1);
  }
}

void DerivativeBuilder::layerNormBack(Operation *op, Value grad, SmallVectorImpl<Value> &grads) {
  auto ln = cast<LayerNormOp>(op);
  SmallVector<int64_t> normDims, paramShape;
  trailingNormDims(tensorType(ln.getInput()), ln.getNormalizedRank(), normDims, paramShape);
  SmallVector<Value> roles(3);
  normBack(grad, ln.getInput(), ln.getWeight(), ln.getBias(), normDims, paramShape, ln.getEps().convertToDouble(),
           true, {}, {}, roles);
  byOperand(roles, {ln.getInput(), ln.getWeight(), ln.getBias()}, grads);
}

void DerivativeBuilder::rmsNormBack(Operation *op, Value grad, SmallVectorImpl<Value> &grads) {
  auto rn = cast<RmsNormOp>(op);
  SmallVector<int64_t> normDims, paramShape;
  trailingNormDims(tensorType(rn.getInput()), rn.getNormalizedRank(), normDims, paramShape);
  SmallVector<Value> roles(3);
  normBack(grad, rn.getInput(), rn.getWeight(), Value(), normDims, paramShape, rn.getEps().convertToDouble(), false,
           {}, {}, roles);
  byOperand(roles, {rn.getInput(), rn.getWeight()}, grads);
}

/// Training batch norm's forward written out in the joint function, as dyn's lowering of graph.batch_norm
/// computes it (one-pass shifted moments where BatchNormShift.h allows, y = x * a + b per channel, the running
/// statistics' momentum update), so that the backward reads the forward's [C] mean and inverse std: a reduction is never recomputed,
/// so the partition saves them, where the backward would otherwise reduce the input twice again (two
/// more passes over every activation of a CNN). Sets x - mean and the inverse std, broadcast to x's shape,
/// in the compute type.
void DerivativeBuilder::openBatchNorm(BatchNormOp bn, ArrayRef<int64_t> normDims, Value &xc, Value &rstd) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(bn);
  RankedTensorType xt = tensorType(bn.getInput());
  ArrayRef<int64_t> shape = xt.getShape();
  SmallVector<int64_t> channelShape(shape.size(), 1);
  channelShape[1] = shape[1];
  auto perChannel = [&](Value v) { return expandLike(reshape(v, channelShape), bn.getInput()); };
  Value x = up(bn.getInput());
  Value mean, squares, n;
  int64_t perSample = 1;
  for (int64_t d : normDims)
    if (d != 0)
      perSample *= xt.isDynamicDim(d) ? 0 : shape[d];
  if (std::optional<int64_t> rows = batchNormShiftRows(shape[0], perSample)) {
    // One pass over x, as the lowering of graph.batch_norm (BatchNormShift.h)
    Value first = slice(x, 0, 0, *rows);
    Value kSum = sum(first, normDims, false);
    Value k = div(kSum, constant(kSum, static_cast<double>(*rows * perSample)));
    Value d = sub(x, perChannel(k));
    Value s1 = sum(d, normDims, false);
    Value s2 = sum(mul(d, d), normDims, false);
    n = count(bn.getInput(), normDims, s1);
    Value shift = div(s1, n);
    mean = add(k, shift);
    Value ss = sub(s2, mul(s1, shift));
    Value zero = constant(ss, 0.0);
    squares = where(compare("lt", ss, zero), zero, ss);  // rounding; NaN propagates
    xc = sub(x, perChannel(mean));
  } else {
    Value total = sum(x, normDims, false);
    n = count(bn.getInput(), normDims, total);
    mean = div(total, n);
    xc = sub(x, perChannel(mean));
    squares = sum(mul(xc, xc), normDims, false);
  }
  Value var = div(squares, n);
  Value inv = unary("rsqrt", add(var, constant(var, bn.getEps().convertToDouble())));
  rstd = perChannel(inv);
  Value a = bn.getWeight() ? mul(inv, up(bn.getWeight())) : inv;
  Value shift = mul(mean, a);
  Value bshift = bn.getBias() ? sub(up(bn.getBias()), shift) : unary("neg", shift);
  Value y = add(mul(x, perChannel(a)), perChannel(bshift));
  bn.getResult().replaceAllUsesWith(convert(y, xt.getElementType()));
  if (!bn.getRunningMean())
    return;
  int64_t known = 1;
  for (int64_t d : normDims)
    known *= xt.isDynamicDim(d) ? 0 : shape[d];
  Value unbiased = known ? div(squares, constant(squares, static_cast<double>(known - 1)))
                         : div(squares, sub(n, constant(n, 1.0)));
  for (auto [old, batch, result] : {std::tuple{bn.getRunningMean(), mean, bn.getRunningStats()[0]},
                                    std::tuple{bn.getRunningVar(), unbiased, bn.getRunningStats()[1]}}) {
    Value m;
    if (bn.getMomentum()) {
      m = constant(old, bn.getMomentum()->convertToDouble());
    } else {
      Value n = convert(bn.getNumBatchesTracked(), tensorType(old).getElementType());
      m = div(constant(n, 1.0), n);
    }
    Value keep = sub(constant(old, 1.0), m);
    result.replaceAllUsesWith(add(mul(m, convert(batch, tensorType(old).getElementType())), mul(keep, old)));
  }
}

void DerivativeBuilder::batchNormBack(Operation *op, Value grad, SmallVectorImpl<Value> &grads) {
  auto bn = cast<BatchNormOp>(op);
  RankedTensorType xt = tensorType(bn.getInput());
  SmallVector<int64_t> normDims, paramShape;
  for (int64_t i = 0; i < xt.getRank(); ++i) {
    if (i != 1)
      normDims.push_back(i);
    paramShape.push_back(i == 1 ? xt.getDimSize(1) : 1);
  }
  for (Value stat : {bn.getRunningMean(), bn.getRunningVar()})
    if (stat && needsGrad(stat)) {
      op->emitError() << "dyn-graph-autodiff: no derivative of 'graph.batch_norm' with respect to its running "
                         "statistics";
      failed = true;
      return;
    }
  SmallVector<Value> roles(3);
  bool batchStats = bn.getTraining() || !bn.getRunningMean();
  Value xc, rstd;
  if (batchStats)
    openBatchNorm(bn, normDims, xc, rstd);
  normBack(grad, bn.getInput(), bn.getWeight(), bn.getBias(), normDims, paramShape, bn.getEps().convertToDouble(),
           true, batchStats ? Value() : bn.getRunningMean(), batchStats ? Value() : bn.getRunningVar(), roles, xc,
           rstd);
  byOperand(roles, {bn.getInput(), bn.getWeight(), bn.getBias()}, grads);
}

//===----------------------------------------------------------------------===//
// Attention: the math backward over recomputed probabilities
//===----------------------------------------------------------------------===//

void DerivativeBuilder::attentionLseBack(Operation *op, Value grad, SmallVectorImpl<Value> &grads) {
  SmallVector<Type> types{op->getOperand(0).getType(), op->getOperand(1).getType(), op->getOperand(2).getType()};
  Operation *back;
  if (auto a = dyn_cast<MaskedAttentionLseOp>(op)) {
    if (needsGrad(a.getMask())) {
      op->emitError() << "dyn-graph-autodiff: no gradient of " << op->getName() << "'s mask";
      failed = true;
      return;
    }
    back = b.create<MaskedAttentionLseBackwardOp>(
        loc, types,
        ValueRange{grad, a.getQuery(), a.getKey(), a.getValue(), a.getMask(), a.getResult(), a.getLse(), a.getRng()},
        op->getAttrDictionary().getValue());
  } else {
    auto u = cast<AttentionLseOp>(op);
    back = b.create<AttentionLseBackwardOp>(
        loc, types, ValueRange{grad, u.getQuery(), u.getKey(), u.getValue(), u.getResult(), u.getLse(), u.getRng()},
        op->getAttrDictionary().getValue());
  }
  for (int k = 0; k < 3; ++k)
    if (needsGrad(op->getOperand(k)))
      grads[k] = back->getResult(k);
}

void DerivativeBuilder::attentionBack(Operation *op, Value grad, SmallVectorImpl<Value> &grads) {
  auto a = cast<ScaledDotProductAttentionOp>(op);
  bool maskGrad = a.getMask() && needsGrad(a.getMask());
  RankedTensorType qt = tensorType(a.getQuery()), kt = tensorType(a.getKey()), vt = tensorType(a.getValue());
  int64_t r = qt.getRank(), L = qt.getDimSize(r - 2), E = qt.getDimSize(r - 1);
  int64_t S = kt.getDimSize(r - 2), Ev = vt.getDimSize(r - 1), batch = 1;
  for (int64_t i = 0; i < r - 2; ++i)
    batch *= qt.getDimSize(i);
  double scale = a.getScale() ? a.getScale()->convertToDouble() : 1.0 / std::sqrt(static_cast<double>(E));
  // Where the mask needs no gradient: eager's attention backward (a library call that runs the flash or
  // memory-efficient kernel again and differentiates it), which saves and builds no [L, S] probabilities.
  if (!maskGrad) {
    SmallVector<NamedAttribute> attrs{b.getNamedAttr("is_causal", b.getBoolAttr(a.getIsCausal())),
                                      b.getNamedAttr("scale", b.getF64FloatAttr(scale))};
    SmallVector<Type> types{qt, kt, vt};
    // Without a mask, on [B, H, L, E] operands: the forward becomes graph.attention_lse, which keeps what
    // eager's backward kernel reads, so the backward does not run the forward again. (Its log-sum-exp
    // [B, H, ceil32(L)] is `?` where L is: sized at run time, prim::libraryResultDim.)
    if (!a.getMask() && r == 4) {
      OpBuilder fb(op);
      Type lseElt = qt.getElementType().isF64() ? qt.getElementType() : Type(b.getF32Type());
      int64_t lseLength = ShapedType::isDynamic(L) ? ShapedType::kDynamic : (L + 31) / 32 * 32;
      auto lseType = RankedTensorType::get({qt.getDimSize(0), qt.getDimSize(1), lseLength}, lseElt);
      auto rngType = RankedTensorType::get({2}, b.getI64Type());
      SmallVector<NamedAttribute> fwdAttrs{b.getNamedAttr("dropout_p", b.getF64FloatAttr(0.0)), attrs[0], attrs[1]};
      auto fwd = fb.create<AttentionLseOp>(op->getLoc(), TypeRange{op->getResult(0).getType(), lseType, rngType},
                                           ValueRange{a.getQuery(), a.getKey(), a.getValue()}, fwdAttrs);
      for (NamedAttribute attr : op->getDiscardableAttrs())
        fwd->setAttr(attr.getName(), attr.getValue());
      op->getResult(0).replaceAllUsesWith(fwd.getResult());
      op->setAttr("dyn.replaced", b.getUnitAttr());  // erased once the reverse sweep is done
      auto back = b.create<AttentionLseBackwardOp>(
          loc, types,
          ValueRange{grad, a.getQuery(), a.getKey(), a.getValue(), fwd.getResult(), fwd.getLse(), fwd.getRng()},
          fwdAttrs);
      for (int k = 0; k < 3; ++k)
        if (needsGrad(op->getOperand(k)))
          grads[k] = back->getResult(k);
      return;
    }
    Operation *back =
        a.getMask()
            ? b.create<MaskedAttentionBackwardOp>(
                   loc, types, ValueRange{grad, a.getQuery(), a.getKey(), a.getValue(), a.getMask()}, attrs)
                  .getOperation()
            : b.create<AttentionBackwardOp>(loc, types, ValueRange{grad, a.getQuery(), a.getKey(), a.getValue()},
                                            attrs)
                  .getOperation();
    for (int k = 0; k < 3; ++k)
      if (needsGrad(op->getOperand(k)))
        grads[k] = back->getResult(k);
    return;
  }
  // Static sizes: [batch, L, E] operands. `?` dims (T5 at any length): the operands as they are, batched GEMMs
  // over the leading dims (rows of runtime products of sizes would need reshapes with computed sizes), with an
  // additive mask of the scores' rank and no causal triangle (a constant of static L, S).
  bool rows = qt.hasStaticShape() && kt.hasStaticShape() && vt.hasStaticShape() &&
              tensorType(a.getMask()).hasStaticShape();
  if (!rows && (a.getIsCausal() || kt.getRank() != r || vt.getRank() != r || tensorType(a.getMask()).getRank() != r)) {
    dynamicUnsupported(op, "where its mask needs a gradient");
    return;
  }
  auto asRows = [&](Value x, ArrayRef<int64_t> shape) { return rows ? reshape(x, shape) : x; };
  // in float32 for halves (eager's math backward's accumulation)
  Value q = up(asRows(a.getQuery(), {batch, L, E})), k = up(asRows(a.getKey(), {batch, S, E}));
  Value v = up(asRows(a.getValue(), {batch, S, Ev})), g = up(asRows(grad, {batch, L, Ev}));
  Value scores = mulScalar(matmul(q, transposeLast2(k)), scale);
  SmallVector<int64_t> full(qt.getShape().drop_back(2));
  full.append({L, S});
  if (Value mask = a.getMask()) {
    Value m = rows ? reshape(expand(mask, full), {batch, L, S}) : mask;
    if (tensorType(mask).getElementType().isInteger(1))
      scores = where(m, scores, constant(scores, -INFINITY));
    else
      scores = add(scores, up(m));
  }
  if (a.getIsCausal()) {
    auto causalType = RankedTensorType::get({L, S}, b.getI1Type());
    SmallVector<bool> keep;
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < S; ++j)
        keep.push_back(j <= i);
    Value tri = b.create<ConstantOp>(loc, causalType, DenseElementsAttr::get(causalType, ArrayRef<bool>(keep)))
                    .getResult();
    scores = where(tri, scores, constant(scores, -INFINITY));
  }
  auto st = tensorType(scores);
  IntegerAttr last = b.getI64IntegerAttr(st.getRank() - 1);
  Value p = b.create<SafeSoftmaxOp>(loc, st, scores, last).getResult();
  auto back = [&](Value x, RankedTensorType like) {
    return convert(asRows(x, like.getShape()), like.getElementType());
  };
  if (needsGrad(a.getValue()))
    grads[2] = back(matmul(transposeLast2(p), g), vt);
  if (!needsGrad(a.getQuery()) && !needsGrad(a.getKey()) && !maskGrad)
    return;
  Value dp = matmul(g, transposeLast2(v));
  Value ds = b.create<SoftmaxBackwardOp>(loc, st, dp, p, last).getResult();
  // An additive float mask (T5's position bias) gets the scores' gradient, summed where it broadcasts.
  if (maskGrad)
    grads[3] = sumTo(op, grad, {a.getMask(), asRows(ds, full)});
  if (needsGrad(a.getQuery()))
    grads[0] = back(mulScalar(matmul(ds, k), scale), qt);
  if (needsGrad(a.getKey()))
    grads[1] = back(mulScalar(matmul(transposeLast2(ds), q), scale), kt);
}

//===----------------------------------------------------------------------===//
// Convolution and pooling: ATen's backward kernels (library calls)
//===----------------------------------------------------------------------===//

/// A 1x1 convolution with strides and no padding (a ResNet's downsampling shortcut) reads every
/// stride-th point of its input.
static bool stridedPointwise(ConvolutionOp c) {
  auto w = tensorType(c.getWeight());
  if (c.getTransposed() || c.getGroups() != 1 || !tensorType(c.getInput()).hasStaticShape())
    return false;
  for (int64_t d = 2; d < w.getRank(); ++d)
    if (w.getDimSize(d) != 1)
      return false;
  return llvm::all_of(c.getPadding(), [](int64_t p) { return p == 0; }) &&
         llvm::any_of(c.getStride(), [](int64_t s) { return s > 1; });
}

void DerivativeBuilder::convolutionBack(Operation *op, Value grad, SmallVectorImpl<Value> &grads) {
  auto c = cast<ConvolutionOp>(op);
  Value input = c.getInput(), weight = c.getWeight();
  bool wi = needsGrad(input), ww = needsGrad(weight);
  if (wi || ww) {
    int64_t spatial = c.getStride().size();
    SmallVector<int64_t> stride(c.getStride()), padding(c.getPadding()), dilation(c.getDilation());
    SmallVector<int64_t> outputPadding(spatial, 0);
    if (auto p = c.getOutputPadding())
      outputPadding.assign(p->begin(), p->end());
    // A strided 1x1 convolution's gradients are those of a stride-1 1x1 convolution of the input's strided
    // slice, the input's that slice's (zeros between, fused into the kernel reading it): ATen's strided
    // backward returns a fresh full-size input gradient, copied into dyn's buffer, where the stride-1 call
    // writes the slice's gradient in place (test/Dialect/Graph/dyn-graph-autodiff-library.mlir).
    SmallVector<Operation *> slices;
    Value operand = input;
    if (stridedPointwise(c)) {
      for (auto [d, s] : llvm::enumerate(stride))
        if (s > 1) {
          operand = slice(operand, 2 + d, 0, tensorType(operand).getDimSize(2 + d), s);
          slices.push_back(operand.getDefiningOp());
        }
      stride.assign(spatial, 1);
      dilation.assign(spatial, 1);
    }
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr("stride", b.getDenseI64ArrayAttr(stride)),
        b.getNamedAttr("padding", b.getDenseI64ArrayAttr(padding)),
        b.getNamedAttr("dilation", b.getDenseI64ArrayAttr(dilation)),
        b.getNamedAttr("groups", c.getGroupsAttr()),
        b.getNamedAttr("transposed", b.getBoolAttr(c.getTransposed())),
        b.getNamedAttr("output_padding", b.getDenseI64ArrayAttr(outputPadding)),
        b.getNamedAttr("output_mask", b.getDenseI64ArrayAttr({wi ? 1 : 0, ww ? 1 : 0}))};
    auto back = b.create<ConvolutionBackwardOp>(loc, TypeRange{operand.getType(), weight.getType()},
                                                ValueRange{grad, operand, weight}, attrs);
    if (wi) {
      Value g = back.getResult(0);
      for (Operation *s : llvm::reverse(slices))
        g = sliceBack(s, g, {});
      grads[0] = g;
    }
    if (ww)
      grads[1] = back.getResult(1);
  }
  if (Value bias = c.getBias(); bias && needsGrad(bias)) {
    SmallVector<int64_t> dims;
    for (int64_t i = 0; i < tensorType(grad).getRank(); ++i)
      if (i != 1)
        dims.push_back(i);
    grads[2] = convert(sum(grad, dims, false), tensorType(bias).getElementType());
  }
}

Value DerivativeBuilder::maxPoolBack(Operation *op, Value grad, Values) {
  auto p = cast<MaxPoolOp>(op);
  RankedTensorType in = tensorType(p.getInput()), out = tensorType(grad);
  if (p.getKernel().size() != 2 || in.getRank() != 4) {
    notDifferentiable(op, 0);
    return {};
  }
  // The positions of the maxima again (eager's choice among ties), then ATen's scatter of the cotangent.
  auto withIndices = b.create<MaxPoolWithIndicesOp>(
      loc, TypeRange{out, out.clone(b.getI64Type())}, ValueRange{p.getInput()},
      ArrayRef<NamedAttribute>{b.getNamedAttr("kernel", p.getKernelAttr()), b.getNamedAttr("stride", p.getStrideAttr()),
                               b.getNamedAttr("padding", p.getPaddingAttr()),
                               b.getNamedAttr("dilation", p.getDilationAttr()),
                               b.getNamedAttr("ceil_mode", b.getBoolAttr(p.getCeilMode()))});
  return maxPoolWithIndicesBack(withIndices, grad, {});
}

Value DerivativeBuilder::maxPoolWithIndicesBack(Operation *op, Value grad, Values) {
  auto p = cast<MaxPoolWithIndicesOp>(op);
  RankedTensorType in = tensorType(p.getInput());
  if (p.getKernel().size() != 2 || in.getRank() != 4 || !isa<FloatType>(in.getElementType())) {
    notDifferentiable(op, 0);
    return {};
  }
  return b
      .create<MaxPool2dBackwardOp>(
          loc, TypeRange{in}, ValueRange{grad, p.getInput(), op->getResult(1)},
          ArrayRef<NamedAttribute>{b.getNamedAttr("kernel_size", p.getKernelAttr()),
                                   b.getNamedAttr("stride", p.getStrideAttr()),
                                   b.getNamedAttr("padding", p.getPaddingAttr()),
                                   b.getNamedAttr("dilation", p.getDilationAttr()),
                                   b.getNamedAttr("ceil_mode", p.getCeilModeAttr())})
      ->getResult(0);
}

/// vecdot(lhs, rhs, dim) = sum(lhs * rhs, dim): each operand's gradient is the cotangent, expanded over
/// `dim`, times the other.
Value DerivativeBuilder::vecdotBack(Operation *op, Value grad, Values args) {
  auto v = cast<VecdotOp>(op);
  RankedTensorType t = tensorType(v.getLhs());
  SmallVector<int64_t> kept(t.getShape());
  kept[v.getDim()] = 1;
  Value g = expandLike(reshape(grad, kept, sizesLike(v.getLhs(), kept)), v.getLhs());
  return mul(g, args[0]);
}

Value DerivativeBuilder::adaptiveAvgPoolBack(Operation *op, Value grad, Values) {
  auto p = cast<AdaptiveAvgPoolOp>(op);
  RankedTensorType in = tensorType(p.getInput());
  if (p.getOutputSize().size() != 2) {
    notDifferentiable(op, 0);
    return {};
  }
  // Global average pooling (every CNN's head): the cotangent spread evenly, a broadcast its consumers fuse,
  // where ATen's backward would write the [N, C, H, W] gradient in NCHW from an NCHW copy of the input.
  int64_t rank = in.getRank();
  if (in.hasStaticShape() && llvm::all_of(p.getOutputSize(), [](int64_t s) { return s == 1; }))
    return div(expandLike(grad, p.getInput()),
               constant(grad, static_cast<double>(in.getDimSize(rank - 1) * in.getDimSize(rank - 2))));
  return b.create<AdaptiveAvgPool2dBackwardOp>(loc, TypeRange{in}, ValueRange{grad, p.getInput()})->getResult(0);
}

Value DerivativeBuilder::hardswishBack(Operation *op, Value grad, Values) {
  // eager: x < -3: 0; x <= 3: grad * (x / 3 + 0.5); else grad
  Value x = op->getOperand(0);
  Value mid = mul(grad, add(mulScalar(x, 1.0 / 3.0), constant(grad, 0.5)));
  Value upper = where(compare("le", x, constant(grad, 3.0)), mid, grad);
  return where(compare("lt", x, constant(grad, -3.0)), constant(grad, 0.0), upper);
}

Value DerivativeBuilder::hardsigmoidBack(Operation *op, Value grad, Values) {
  Value x = op->getOperand(0);
  Value inside = build<LogicalAndOp>("broadcast", "free",
                                     {compare("gt", x, constant(grad, -3.0)), compare("lt", x, constant(grad, 3.0))});
  return where(inside, mulScalar(grad, 1.0 / 6.0), constant(grad, 0.0));
}

} // namespace dyn::graph
