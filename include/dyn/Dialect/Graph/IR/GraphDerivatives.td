//===- GraphDerivatives.td - reverse-mode rules of graph ops -*- tablegen -*-===//
//
// The derivative of each differentiable graph op, as Enzyme-MLIR's
// *Derivatives.td write theirs: one DAG per operand that builds the operand's
// gradient from the op's operands (by their ODS names), its result
// (`$result`) and the result's cotangent (`$grad`). A DAG node is
//
//   - a registered graph op (GraphOps.td): built with the registry's type and
//     shape rules (operands are converted to the result type as the op
//     itself converts them), e.g. `(Graph_MulOp $grad, $rhs)`;
//   - a Dyn_DerivFn: a C++ builder of DerivativeBuilder
//     (lib/Dialect/Graph/Transforms/DerivativeBuilder.cpp) for what a DAG
//     cannot say by itself (broadcast adjoints, attributes, shapes);
//   - `(NoGrad)`: the operand gets no gradient (an integer, a condition);
//   - `(NotDifferentiable)`: a float operand dyn cannot differentiate yet:
//     dyn-graph-autodiff reports it at the op when it needs that gradient.
//
// dyn-tblgen -gen-graph-derivatives turns each record into a C++ function and
// a dispatch (GraphDerivatives.inc); dyn-graph-autodiff calls it, and only for
// operands whose gradient is needed. Ops whose operand gradients share work or
// whose operands are variadic or optional name one C++ builder for all of
// them (Graph_DerivativeFn).
//
//===----------------------------------------------------------------------===//
#ifndef DYN_GRAPH_DERIVATIVES
#define DYN_GRAPH_DERIVATIVES

include "dyn/Dialect/Graph/IR/GraphOps.td"

class Dyn_DerivFn<string cppName> {
  string fn = cppName;
}

def NoGrad : Dyn_DerivFn<"">;
def NotDifferentiable : Dyn_DerivFn<"">;
// (SumTo $x, v): v, the shape of a broadcast result, summed to x's shape and
// converted to x's element type (the adjoint of broadcasting and promotion).
def SumTo : Dyn_DerivFn<"sumTo">;
// (Const<"c">): a 0-d constant of the cotangent's element type.
class Const<string value> : Dyn_DerivFn<"constant"> {
  string literal = value;
}
// (ZeroGrad $x): zeros shaped as x (piecewise-constant ops: floor, sign, ...).
def ZeroGrad : Dyn_DerivFn<"zeroGrad">;
// (ConvertTo $x, v): v converted to x's element type.
def ConvertTo : Dyn_DerivFn<"convertTo">;
// (ReshapeAs $x, v): v reshaped to x's shape.
def ReshapeAs : Dyn_DerivFn<"reshapeAs">;
// Builders that read the op's attributes.
def PermuteBack : Dyn_DerivFn<"permuteBack">;
def SliceBack : Dyn_DerivFn<"sliceBack">;
def PadBack : Dyn_DerivFn<"padBack">;
def ReducedBack : Dyn_DerivFn<"reducedBack">;     // sum: the cotangent expanded over `dims`
def MeanBack : Dyn_DerivFn<"meanBack">;           // mean: ... divided by the count
def ExtremumBack : Dyn_DerivFn<"extremumBack">;   // amax/amin: split evenly among ties
def SoftmaxBack : Dyn_DerivFn<"softmaxBack">;
def LogSoftmaxBack : Dyn_DerivFn<"logSoftmaxBack">;
def GeluBack : Dyn_DerivFn<"geluBack">;
def LeakyReluBack : Dyn_DerivFn<"leakyReluBack">;
def EluBack : Dyn_DerivFn<"eluBack">;
def SoftplusBack : Dyn_DerivFn<"softplusBack">;
def HardtanhBack : Dyn_DerivFn<"hardtanhBack">;
def ThresholdBack : Dyn_DerivFn<"thresholdBack">;
def MatmulLhsBack : Dyn_DerivFn<"matmulLhsBack">; // grad @ rhs^T, summed over broadcast batch dims
def MatmulRhsBack : Dyn_DerivFn<"matmulRhsBack">; // lhs^T @ grad, likewise
def AddmmInputBack : Dyn_DerivFn<"addmmInputBack">;
def AddmmLhsBack : Dyn_DerivFn<"addmmLhsBack">;
def AddmmRhsBack : Dyn_DerivFn<"addmmRhsBack">;
def GatherBack : Dyn_DerivFn<"gatherBack">;       // rows (an embedding): a one-hot GEMM; else a sum scatter into zeros
def DropoutBack : Dyn_DerivFn<"dropoutBack">;     // the same draws (seed, offset) applied to the cotangent
def NllLossBack : Dyn_DerivFn<"nllLossBack">;
def MaxPoolBack : Dyn_DerivFn<"maxPoolBack">;                 // max_pool2d_backward at recomputed indices
def AdaptiveAvgPoolBack : Dyn_DerivFn<"adaptiveAvgPoolBack">; // _adaptive_avg_pool2d_backward
def MaxPoolWithIndicesBack : Dyn_DerivFn<"maxPoolWithIndicesBack">; // max_pool2d_backward at its own indices
def VecdotBack : Dyn_DerivFn<"vecdotBack">;       // (VecdotBack $other): the cotangent over dim times other
def HardswishBack : Dyn_DerivFn<"hardswishBack">;
def HardsigmoidBack : Dyn_DerivFn<"hardsigmoidBack">;

class Graph_Derivative<Op target, list<dag> adjoints> {
  Op op = target;
  // One DAG per operand, in ODS order.
  list<dag> grads = adjoints;
}

// The gradients of all operands from one builder: fn(op, grad, grads).
class Graph_DerivativeFn<Op target, string cppName> {
  Op op = target;
  string fn = cppName;
}

//===----------------------------------------------------------------------===//
// Unary elementwise
//===----------------------------------------------------------------------===//

def : Graph_Derivative<Graph_ExpOp, [(Graph_MulOp $grad, $result)]>;
def : Graph_Derivative<Graph_Exp2Op, [(Graph_MulOp $grad, (Graph_MulOp $result, (Const<"0.69314718055994530942">)))]>;
def : Graph_Derivative<Graph_Expm1Op, [(Graph_MulOp $grad, (Graph_AddOp $result, (Const<"1">)))]>;
def : Graph_Derivative<Graph_LogOp, [(Graph_DivOp $grad, $input)]>;
def : Graph_Derivative<Graph_Log2Op,
    [(Graph_DivOp $grad, (Graph_MulOp $input, (Const<"0.69314718055994530942">)))]>;
def : Graph_Derivative<Graph_Log10Op,
    [(Graph_DivOp $grad, (Graph_MulOp $input, (Const<"2.30258509299404568402">)))]>;
def : Graph_Derivative<Graph_Log1pOp, [(Graph_DivOp $grad, (Graph_AddOp $input, (Const<"1">)))]>;
def : Graph_Derivative<Graph_SinOp, [(Graph_MulOp $grad, (Graph_CosOp $input))]>;
def : Graph_Derivative<Graph_CosOp, [(Graph_NegOp (Graph_MulOp $grad, (Graph_SinOp $input)))]>;
def : Graph_Derivative<Graph_TanOp,
    [(Graph_MulOp $grad, (Graph_AddOp (Graph_MulOp $result, $result), (Const<"1">)))]>;
def : Graph_Derivative<Graph_TanhOp,
    [(Graph_MulOp $grad, (Graph_SubOp (Const<"1">), (Graph_MulOp $result, $result)))]>;
def : Graph_Derivative<Graph_SinhOp, [(Graph_MulOp $grad, (Graph_CoshOp $input))]>;
def : Graph_Derivative<Graph_CoshOp, [(Graph_MulOp $grad, (Graph_SinhOp $input))]>;
def : Graph_Derivative<Graph_AtanOp,
    [(Graph_DivOp $grad, (Graph_AddOp (Graph_MulOp $input, $input), (Const<"1">)))]>;
def : Graph_Derivative<Graph_AsinOp,
    [(Graph_MulOp $grad, (Graph_RsqrtOp (Graph_SubOp (Const<"1">), (Graph_MulOp $input, $input))))]>;
def : Graph_Derivative<Graph_AcosOp,
    [(Graph_NegOp (Graph_MulOp $grad, (Graph_RsqrtOp (Graph_SubOp (Const<"1">), (Graph_MulOp $input, $input)))))]>;
def : Graph_Derivative<Graph_SigmoidOp,
    [(Graph_MulOp $grad, (Graph_MulOp $result, (Graph_SubOp (Const<"1">), $result)))]>;
def : Graph_Derivative<Graph_SqrtOp, [(Graph_DivOp $grad, (Graph_MulOp $result, (Const<"2">)))]>;
def : Graph_Derivative<Graph_RsqrtOp,
    [(Graph_MulOp $grad, (Graph_MulOp (Graph_MulOp $result, (Graph_MulOp $result, $result)), (Const<"-0.5">)))]>;
def : Graph_Derivative<Graph_ReciprocalOp, [(Graph_NegOp (Graph_MulOp $grad, (Graph_MulOp $result, $result)))]>;
// d/dx erf(x) = 2 / sqrt(pi) * exp(-x^2)
def : Graph_Derivative<Graph_ErfOp,
    [(Graph_MulOp $grad, (Graph_MulOp (Const<"1.12837916709551257390">),
                                      (Graph_ExpOp (Graph_NegOp (Graph_MulOp $input, $input)))))]>;
def : Graph_Derivative<Graph_NegOp, [(Graph_NegOp $grad)]>;
def : Graph_Derivative<Graph_AbsOp, [(Graph_MulOp $grad, (Graph_SignOp $input))]>;
def : Graph_Derivative<Graph_ReluOp,
    [(Graph_WhereOp (Graph_GtOp $result, (Const<"0">)), $grad, (Const<"0">))]>;
def : Graph_Derivative<Graph_SiluOp,
    [(Graph_MulOp $grad, (Graph_MulOp (Graph_SigmoidOp $input),
        (Graph_AddOp (Const<"1">), (Graph_MulOp $input, (Graph_SubOp (Const<"1">), (Graph_SigmoidOp $input))))))]>;
def : Graph_Derivative<Graph_FloorOp, [(ZeroGrad $input)]>;
def : Graph_Derivative<Graph_CeilOp, [(ZeroGrad $input)]>;
def : Graph_Derivative<Graph_TruncOp, [(ZeroGrad $input)]>;
def : Graph_Derivative<Graph_RoundOp, [(ZeroGrad $input)]>;
def : Graph_Derivative<Graph_SignOp, [(ZeroGrad $input)]>;
def : Graph_Derivative<Graph_ConvertOp, [(ConvertTo $input, $grad)]>;

def : Graph_Derivative<Graph_GeluOp, [(GeluBack $grad)]>;
def : Graph_Derivative<Graph_LeakyReluOp, [(LeakyReluBack $grad)]>;
def : Graph_Derivative<Graph_EluOp, [(EluBack $grad)]>;
def : Graph_Derivative<Graph_SoftplusOp, [(SoftplusBack $grad)]>;
def : Graph_Derivative<Graph_HardtanhOp, [(HardtanhBack $grad)]>;
def : Graph_Derivative<Graph_ThresholdOp, [(ThresholdBack $grad)]>;
def : Graph_Derivative<Graph_HardswishOp, [(HardswishBack $grad)]>;
def : Graph_Derivative<Graph_HardsigmoidOp, [(HardsigmoidBack $grad)]>;

//===----------------------------------------------------------------------===//
// Binary and ternary elementwise (broadcasting: SumTo is the adjoint)
//===----------------------------------------------------------------------===//

def : Graph_Derivative<Graph_AddOp, [(SumTo $lhs, $grad), (SumTo $rhs, $grad)]>;
def : Graph_Derivative<Graph_SubOp, [(SumTo $lhs, $grad), (SumTo $rhs, (Graph_NegOp $grad))]>;
def : Graph_Derivative<Graph_MulOp,
    [(SumTo $lhs, (Graph_MulOp $grad, $rhs)), (SumTo $rhs, (Graph_MulOp $grad, $lhs))]>;
def : Graph_Derivative<Graph_DivOp,
    [(SumTo $lhs, (Graph_DivOp $grad, $rhs)),
     (SumTo $rhs, (Graph_NegOp (Graph_DivOp (Graph_MulOp $grad, $result), $rhs)))]>;
// pow: 0 where the exponent is 0 (d/dx x^0); 0 for the exponent where the base
// is 0 and the exponent >= 0 (PyTorch's pow_backward_exponent).
def : Graph_Derivative<Graph_PowOp,
    [(SumTo $lhs, (Graph_WhereOp (Graph_EqOp $rhs, (Const<"0">)), (Const<"0">),
        (Graph_MulOp $grad, (Graph_MulOp $rhs, (Graph_PowOp $lhs, (Graph_SubOp $rhs, (Const<"1">))))))),
     (SumTo $rhs, (Graph_WhereOp (Graph_LogicalAndOp (Graph_EqOp $lhs, (Const<"0">)), (Graph_GeOp $rhs, (Const<"0">))),
        (Const<"0">), (Graph_MulOp $grad, (Graph_MulOp $result, (Graph_LogOp $lhs)))))]>;
// maximum/minimum: the cotangent to the larger (smaller) operand, halved on ties.
def : Graph_Derivative<Graph_MaximumOp,
    [(SumTo $lhs, (Graph_MulOp $grad, (Graph_AddOp (Graph_GtOp $lhs, $rhs),
                                                   (Graph_MulOp (Const<"0.5">), (Graph_EqOp $lhs, $rhs))))),
     (SumTo $rhs, (Graph_MulOp $grad, (Graph_AddOp (Graph_LtOp $lhs, $rhs),
                                                   (Graph_MulOp (Const<"0.5">), (Graph_EqOp $lhs, $rhs)))))]>;
def : Graph_Derivative<Graph_MinimumOp,
    [(SumTo $lhs, (Graph_MulOp $grad, (Graph_AddOp (Graph_LtOp $lhs, $rhs),
                                                   (Graph_MulOp (Const<"0.5">), (Graph_EqOp $lhs, $rhs))))),
     (SumTo $rhs, (Graph_MulOp $grad, (Graph_AddOp (Graph_GtOp $lhs, $rhs),
                                                   (Graph_MulOp (Const<"0.5">), (Graph_EqOp $lhs, $rhs)))))]>;
def : Graph_Derivative<Graph_WhereOp,
    [(NoGrad),
     (SumTo $lhs, (Graph_WhereOp $cond, $grad, (Const<"0">))),
     (SumTo $rhs, (Graph_WhereOp $cond, (Const<"0">), $grad))]>;
// clamp: the input's cotangent where it lies within [min, max]; the bounds
// (constants in nearly every model) are not differentiated yet.
def : Graph_Derivative<Graph_ClampOp,
    [(SumTo $input, (Graph_WhereOp (Graph_LogicalAndOp (Graph_GeOp $input, $min), (Graph_LeOp $input, $max)),
                                   $grad, (Const<"0">))),
     (NotDifferentiable), (NotDifferentiable)]>;
def : Graph_Derivative<Graph_LerpOp,
    [(SumTo $start, (Graph_MulOp $grad, (Graph_SubOp (Const<"1">), $weight))),
     (SumTo $end, (Graph_MulOp $grad, $weight)),
     (SumTo $weight, (Graph_MulOp $grad, (Graph_SubOp $end, $start)))]>;

//===----------------------------------------------------------------------===//
// Reductions, softmax
//===----------------------------------------------------------------------===//

def : Graph_Derivative<Graph_SumOp, [(ReducedBack $grad)]>;
def : Graph_Derivative<Graph_MeanOp, [(MeanBack $grad)]>;
def : Graph_Derivative<Graph_AmaxOp, [(ExtremumBack $grad)]>;
def : Graph_Derivative<Graph_AminOp, [(ExtremumBack $grad)]>;
def : Graph_Derivative<Graph_SoftmaxOp, [(SoftmaxBack $grad)]>;
def : Graph_Derivative<Graph_SafeSoftmaxOp, [(SoftmaxBack $grad)]>;
def : Graph_Derivative<Graph_LogSoftmaxOp, [(LogSoftmaxBack $grad)]>;

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

// reshape and expand: the input's gradient (their sizes, if any, have none).
def : Graph_DerivativeFn<Graph_ReshapeOp, "reshapeBack">;
def : Graph_DerivativeFn<Graph_ExpandOp, "expandBack">;
def : Graph_Derivative<Graph_PermuteOp, [(PermuteBack $grad)]>;
def : Graph_Derivative<Graph_SliceOp, [(SliceBack $grad)]>;
def : Graph_Derivative<Graph_PadOp, [(PadBack $grad)]>;
def : Graph_DerivativeFn<Graph_CatOp, "catBack">;
// dynamic_slice: the cotangent between zeros of runtime lengths (its bounds have none).
def : Graph_DerivativeFn<Graph_DynamicSliceOp, "dynamicSliceBack">;

//===----------------------------------------------------------------------===//
// Contractions (library calls: the backward is GEMMs as well)
//===----------------------------------------------------------------------===//

def : Graph_Derivative<Graph_MatmulOp, [(MatmulLhsBack $grad), (MatmulRhsBack $grad)]>;
def : Graph_Derivative<Graph_VecdotOp, [(VecdotBack $rhs), (VecdotBack $lhs)]>;
def : Graph_Derivative<Graph_AddmmOp, [(AddmmInputBack $grad), (AddmmLhsBack $grad), (AddmmRhsBack $grad)]>;
// Attention: graph.attention_backward (eager's kernel differentiated by ATen) where the mask needs no
// gradient; for an additive float mask that does (T5's position bias), the probabilities recomputed in
// float32 and the GEMMs of the math backward (softmax_backward between them).
def : Graph_DerivativeFn<Graph_ScaledDotProductAttentionOp, "attentionBack">;
// graph.attention_lse (made by attentionBack; a rule of its own for IR that has it already): its backward
// kernel, from the forward's result, log-sum-exp and random state.
def : Graph_DerivativeFn<Graph_AttentionLseOp, "attentionLseBack">;
def : Graph_DerivativeFn<Graph_MaskedAttentionLseOp, "attentionLseBack">;
// Convolution: aten.convolution_backward for the input and weight, a sum for the bias.
def : Graph_DerivativeFn<Graph_ConvolutionOp, "convolutionBack">;
def : Graph_Derivative<Graph_MaxPoolOp, [(MaxPoolBack $grad)]>;
def : Graph_Derivative<Graph_AdaptiveAvgPoolOp, [(AdaptiveAvgPoolBack $grad)]>;
def : Graph_Derivative<Graph_MaxPoolWithIndicesOp, [(MaxPoolWithIndicesBack $grad)]>;

//===----------------------------------------------------------------------===//
// Indexing, normalization, losses, random
//===----------------------------------------------------------------------===//

def : Graph_Derivative<Graph_GatherOp, [(GatherBack $grad), (NoGrad)]>;
def : Graph_DerivativeFn<Graph_LayerNormOp, "layerNormBack">;
def : Graph_DerivativeFn<Graph_RmsNormOp, "rmsNormBack">;
// batch_norm: batch statistics recomputed (training), or the running ones (eval); the running
// statistics it returns carry no gradient (eager updates them outside autograd).
def : Graph_DerivativeFn<Graph_BatchNormOp, "batchNormBack">;
// The pointwise losses: eager's elementwise backward formulas times the (mean-scaled) cotangent.
foreach loss = [Graph_MseLossOp, Graph_L1LossOp, Graph_SmoothL1LossOp, Graph_HuberLossOp, Graph_KlDivOp,
                Graph_BinaryCrossEntropyOp, Graph_BinaryCrossEntropyWithLogitsOp, Graph_SoftMarginLossOp] in
  def : Graph_DerivativeFn<loss, "pointwiseLossBack">;
def : Graph_Derivative<Graph_NllLossOp, [(NllLossBack $grad), (NoGrad), (NotDifferentiable)]>;
def : Graph_Derivative<Graph_DropoutOp, [(DropoutBack $grad), (NoGrad)]>;

#endif // DYN_GRAPH_DERIVATIVES
