//===- GraphFamilyOps.td - reductions, scans, data movement, losses -*- tablegen -*-===//
//
// The non-elementwise op families of issue 10 item 3, included by GraphOps.td:
// composite reductions (all/any, argmax/argmin, logsumexp, vector norms),
// scans (cumsum, cumprod, cummax, cummin, logcumsumexp), data movement
// (flip, roll, repeat) and losses. Each is decomposed into prim ops by its
// own file in lib/Conversion/GraphToPrim/ (CompositeReductions.cpp, Scans.cpp,
// Rearrange.cpp, Losses.cpp); verifiers are in GraphFamilies.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_GRAPH_FAMILY_OPS
#define DYN_GRAPH_FAMILY_OPS

//===----------------------------------------------------------------------===//
// Composite reductions
//===----------------------------------------------------------------------===//

// all/any: is every (some) element non-zero; the result is boolean.
def Graph_AllOp : Graph_ReductionOp<"all", "logical and of `input != 0`",
                                    "LogicalReductionToPrim<graph::AllOp, prim::ReduceMinOp>", Graph_BoolTensor>;
def Graph_AnyOp : Graph_ReductionOp<"any", "logical or of `input != 0`",
                                    "LogicalReductionToPrim<graph::AnyOp, prim::ReduceMaxOp>", Graph_BoolTensor>;

// log(sum(exp(x))), computed as max + log(sum(exp(x - max))) (a max of
// +-inf counts as 0 there, as eager's); f16/bf16 compute in f32.
def Graph_LogsumexpOp : Graph_ReductionOp<"logsumexp", "log of the sum of exponentials", "LogsumexpToPrim",
                                          Graph_FloatTensor,
                                          [AllElementTypesMatch<["input", "result"]>]>;

class Graph_ArgReductionOp<string mnemonic, string desc, string cls>
    : Graph_RegisteredOp<mnemonic, "arg_reduce", Dyn_MetaRule, Dyn_MetaShape,
                         Dyn_Composite<cls, "CompositeReductions">> {
  let summary = "index of the " # desc # " along `dim`";
  let description = [{
    The index (i64) of the first }] # desc # [{ along `dim`, or of the first
    NaN where there is one (eager's). `keepdim` keeps `dim` as size 1. The
    dim must not be empty (eager raises).
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim, UnitAttr:$keepdim);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $input `dim` $dim (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let eager = "torch." # mnemonic # "({input}, {dim}, keepdim={keepdim})";
}

def Graph_ArgmaxOp : Graph_ArgReductionOp<"argmax", "maximum",
                                          "ArgReductionToPrim<graph::ArgmaxOp, prim::ReduceMaxOp>">;
def Graph_ArgminOp : Graph_ArgReductionOp<"argmin", "minimum",
                                          "ArgReductionToPrim<graph::ArgminOp, prim::ReduceMinOp>">;

def Graph_VectorNormOp : Graph_RegisteredOp<"vector_norm", "vector_norm", Dyn_MetaRule, Dyn_Reduce,
                                            Dyn_Composite<"VectorNormToPrim", "CompositeReductions">,
                                            [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "vector `ord`-norm over `dims` (torch.linalg.vector_norm)";
  let description = [{
    `ord` = inf: max |x|; -inf: min |x|; 0: the number of non-zeros; 1: sum |x|;
    2: sqrt(sum x^2); otherwise (sum |x|^ord)^(1/ord). f16/bf16 accumulate in
    f32. An infinite `ord` needs a non-empty reduction (eager raises).
  }];
  let arguments = (ins Graph_FloatTensor:$input, F64Attr:$ord, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keepdim);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `ord` $ord `dims` $dims (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let eager = "torch.linalg.vector_norm({input}, {ord}, tuple({dims}), keepdim={keepdim})";
}

// Distances: p-norms of differences, computed as graph.vector_norm is
// (f16/bf16 accumulate in f32). The differences are taken in the operands'
// type, which is the result's (capture converts and broadcasts them).
class Graph_DistanceOp<string mnemonic, string cls>
    : Graph_RegisteredOp<mnemonic, "distances", Dyn_KeepsElementRule, Dyn_MetaShape,
                         Dyn_Composite<cls, "CompositeReductions">> {
  let results = (outs Graph_FloatTensor:$result);
  let hasVerifier = 1;
}
def Graph_DistOp : Graph_DistanceOp<"dist", "DistToPrim"> {
  let summary = "the p-norm of input - other over all elements (torch.dist)";
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$other, F64Attr:$p);
  let assemblyFormat = "$input `,` $other attr-dict `:` type($input) `,` type($other) `->` type($result)";
  let eager = "torch.dist({input}, {other}, {p})";
}
def Graph_CdistOp : Graph_DistanceOp<"cdist", "CdistToPrim"> {
  let summary = "p-norm distances between the rows of [*, P, M] and [*, R, M] (torch.cdist)";
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$other, F64Attr:$p);
  let assemblyFormat = "$input `,` $other attr-dict `:` type($input) `,` type($other) `->` type($result)";
  let eager = "torch.cdist({input}, {other}, {p}, compute_mode=\"donot_use_mm_for_euclid_dist\")";
}
def Graph_PdistOp : Graph_DistanceOp<"pdist", "PdistToPrim"> {
  let summary = "p-norm distances between rows i < j of [N, M], row-major in (i, j) (F.pdist)";
  let arguments = (ins Graph_FloatTensor:$input, F64Attr:$p);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let eager = "F.pdist({input}, {p})";
}

// renorm: each slice along `dim` scaled by maxnorm / (norm + 1e-7) where its
// p-norm (over the other dims) exceeds maxnorm (eager's); f16/bf16 in f32.
def Graph_RenormOp : Graph_RegisteredOp<"renorm", "distances", Dyn_KeepsFloatRule, Dyn_SameShape,
                                        Dyn_Composite<"RenormToPrim", "CompositeReductions">> {
  let summary = "slices along `dim` rescaled to a p-norm of at most maxnorm (torch.renorm)";
  let arguments = (ins Graph_FloatTensor:$input, F64Attr:$p, I64Attr:$dim, F64Attr:$maxnorm);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      int64_t rank = getType().getRank(), dim = getDim();
      if (dim < 0 || dim >= rank)
        return emitOpError() << "dim " << dim << " is out of range for rank " << rank;
      double p = getP().convertToDouble();
      if (std::isnan(p) || p < 0 || (p == 0 && rank == 1))
        return emitOpError("p must be a positive number (0 only over other dims)");
      return ::mlir::success();
    }
  }];
  let torchNames = ["torch.renorm", "Tensor.renorm", "aten.renorm"];
  let eager = "torch.renorm({input}, {p}, {dim}, {maxnorm})";
}

// isin: whether each element equals one of the (1-d) test elements, compared
// in their promoted type; bucketize: the number of boundaries below each
// element (right: at or below; NaN after all), int64 or int32 (out_int32).
def Graph_IsinOp : Graph_RegisteredOp<"isin", "search", Dyn_BoolRule, Dyn_MetaShape,
                                      Dyn_Composite<"IsinToPrim", "CompositeReductions">> {
  let summary = "elements equal to one of test_elements (torch.isin)";
  let arguments = (ins Graph_Tensor:$elements, Graph_Tensor:$test_elements, BoolAttr:$invert);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = [{
    $elements `,` $test_elements attr-dict `:` type($elements) `,` type($test_elements) `->` type($result)
  }];
  let hasVerifier = 1;
  let eager = "torch.isin({elements}, {test_elements}, invert={invert})";
}
def Graph_BucketizeOp : Graph_RegisteredOp<"bucketize", "search", Dyn_MetaRule, Dyn_MetaShape,
                                           Dyn_Composite<"BucketizeToPrim", "CompositeReductions">> {
  let summary = "the bucket of each element among sorted boundaries (torch.bucketize)";
  let arguments = (ins Graph_NumericTensor:$input, Graph_NumericTensor:$boundaries, BoolAttr:$right,
                       BoolAttr:$out_int32);
  let results = (outs RankedTensorOf<[I32, I64]>:$result);
  let assemblyFormat = [{
    $input `,` $boundaries attr-dict `:` type($input) `,` type($boundaries) `->` type($result)
  }];
  let hasVerifier = 1;
  let eager = "torch.bucketize({input}, {boundaries}, right={right}, out_int32={out_int32})";
}

//===----------------------------------------------------------------------===//
// Scans
//===----------------------------------------------------------------------===//

def Graph_ScanKind : I32EnumAttr<"ScanKind", "how graph.cumulative combines", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"prod", 1>, I32EnumAttrCase<"max", 2>,
    I32EnumAttrCase<"min", 3>, I32EnumAttrCase<"logsumexp", 4>]> {
  let cppNamespace = "::dyn::graph";
}

def Graph_CumulativeOp : Graph_RegisteredOp<"cumulative", "scan", Dyn_MetaRule, Dyn_MetaShape,
                                            Dyn_Composite<"CumulativeToPrim", "Scans">,
                                            [AllTypesMatch<["input", "result"]>]> {
  let summary = "inclusive scan along `dim` (cumsum, cumprod, cummax, cummin, logcumsumexp)";
  let description = [{
    `result[..., i, ...]` combines `input[..., j, ...]` for `j <= i` with
    `kind`. Booleans only take max and min; logsumexp takes floats; f16/bf16
    accumulate in f32 as eager's kernels do. Decomposed into a reduction over
    a triangular mask (`j <= i`): one fused kernel, O(n^2) work in the scanned
    dim (see docs/ops.md).
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_ScanKind:$kind, I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$kind $input `dim` $dim attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let eager = "_rt.cumulative({input}, {kind}, {dim})";
}

def Graph_CumulativeIndexOp : Graph_RegisteredOp<"cumulative_index", "scan", Dyn_MetaRule, Dyn_MetaShape,
                                                 Dyn_Composite<"CumulativeIndexToPrim", "Scans">> {
  let summary = "the indices of cummax/cummin along `dim`";
  let description = [{
    `result[..., i, ...]` is the last `j <= i` where `input[..., j, ...]`
    equals the running maximum (minimum) at `i`, or the last NaN where the
    running value is NaN (eager's cummax/cummin indices). `kind` is max or min.
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_ScanKind:$kind, I64Attr:$dim);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$kind $input `dim` $dim attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let eager = "_rt.cumulative_index({input}, {kind}, {dim})";
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Graph_FlipOp : Graph_RegisteredOp<"flip", "rearrange", Dyn_MetaRule, Dyn_MetaShape,
                                      Dyn_Composite<"FlipToPrim", "Rearrange">,
                                      [AllTypesMatch<["input", "result"]>]> {
  let summary = "reverse the order of elements along `dims` (torch.flip)";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `dims` $dims attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let eager = "torch.flip({input}, {dims})";
}

// tril/triu: the elements on and below (above) the `diagonal`-th diagonal of
// the last two dims kept, the others zero (false for booleans).
class Graph_TriangleOp<string mnemonic, string desc, string cls>
    : Graph_RegisteredOp<mnemonic, "triangle", Dyn_KeepsElementRule, Dyn_SameShape,
                         Dyn_Composite<cls, "Rearrange">> {
  let summary = desc # " triangle of the last two dims, the rest zero";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$diagonal);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      if (getInput().getType().getRank() < 2)
        return emitOpError("needs at least two dims");
      return ::mlir::success();
    }
  }];
  let torchNames = ["torch." # mnemonic, "Tensor." # mnemonic, "aten." # mnemonic];
  let signature = "input, diagonal=0, *, out=None";
  let eager = "torch." # mnemonic # "({input}, {diagonal})";
}
def Graph_TrilOp : Graph_TriangleOp<"tril", "lower", "TrilToPrim">;
def Graph_TriuOp : Graph_TriangleOp<"triu", "upper", "TriuToPrim">;

def Graph_RollOp : Graph_RegisteredOp<"roll", "rearrange", Dyn_MetaRule, Dyn_MetaShape,
                                      Dyn_Composite<"RollToPrim", "Rearrange">,
                                      [AllTypesMatch<["input", "result"]>]> {
  let summary = "rotate elements along `dims` by `shifts` (torch.roll)";
  let description = [{
    `result[..., (i + shifts[k]) mod n, ...] = input[..., i, ...]` along each
    `dims[k]` (shifts may be negative or larger than the dim).
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$shifts, DenseI64ArrayAttr:$dims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `shifts` $shifts `dims` $dims attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let eager = "torch.roll({input}, {shifts}, {dims})";
}

def Graph_RepeatOp : Graph_RegisteredOp<"repeat", "rearrange", Dyn_MetaRule, Dyn_MetaShape,
                                      Dyn_Composite<"RepeatToPrim", "Rearrange">,
                                      [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "tile the input `repeats` times per dim (Tensor.repeat)";
  let description = [{
    `repeats` has at least the input's rank; the input is first viewed with
    leading size-1 dims to that rank. Result dim `i` is `repeats[i]` times
    the (viewed) input's dim `i`; `result[i] = input[i mod size]`.
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `repeats` $repeats attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let eager = "{input}.repeat({repeats})";
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Graph_LossReduction : I32EnumAttr<"LossReduction", "how a loss reduces its elements", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"mean", 1>, I32EnumAttrCase<"sum", 2>]> {
  let cppNamespace = "::dyn::graph";
}

// Elementwise losses of an input and a target of one shape and float type;
// `none` keeps the elements, `mean` and `sum` reduce them all (a 0-d result).
// f16/bf16 compute in f32 and round once.
class Graph_PointwiseLossOp<string mnemonic, string desc, string cppClass, dag extra = (ins),
                            string extraEager = "">
    : Graph_RegisteredOp<mnemonic, "pointwise_loss", Dyn_MetaRule, Dyn_MetaShape,
                         Dyn_Composite<"PointwiseLossToPrim<graph::" # cppClass # ">", "Losses">,
                         [AllTypesMatch<["input", "target"]>, AllElementTypesMatch<["input", "result"]>]> {
  let summary = desc # " (F." # mnemonic # ")";
  let arguments = !con((ins Graph_FloatTensor:$input, Graph_FloatTensor:$target,
                            Graph_LossReduction:$reduction), extra);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $reduction $input `,` $target attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let eager = "F." # mnemonic # "({input}, {target}, reduction={reduction}" # extraEager # ")";
}

def Graph_MseLossOp : Graph_PointwiseLossOp<"mse_loss", "squared error (x - t)^2", "MseLossOp">;
def Graph_L1LossOp : Graph_PointwiseLossOp<"l1_loss", "absolute error |x - t|", "L1LossOp">;
def Graph_SmoothL1LossOp : Graph_PointwiseLossOp<"smooth_l1_loss",
    "0.5 d^2 / beta where d = |x - t| < beta, else d - 0.5 beta", "SmoothL1LossOp", (ins F64Attr:$beta),
    ", beta={beta}">;
def Graph_HuberLossOp : Graph_PointwiseLossOp<"huber_loss",
    "0.5 d^2 where d = |x - t| < delta, else delta (d - 0.5 delta)", "HuberLossOp", (ins F64Attr:$delta),
    ", delta={delta}">;
def Graph_KlDivOp : Graph_PointwiseLossOp<"kl_div",
    "t log t - t x (x is a log-probability), or exp(t) (t - x) with log_target", "KlDivOp",
    (ins UnitAttr:$log_target), ", log_target={log_target}">;
def Graph_BinaryCrossEntropyOp : Graph_PointwiseLossOp<"binary_cross_entropy",
    "-(t max(log x, -100) + (1 - t) max(log(1 - x), -100))", "BinaryCrossEntropyOp">;
def Graph_BinaryCrossEntropyWithLogitsOp : Graph_PointwiseLossOp<"binary_cross_entropy_with_logits",
    "(1 - t) x - log(sigmoid(x)), computed stably", "BinaryCrossEntropyWithLogitsOp">;
def Graph_SoftMarginLossOp : Graph_PointwiseLossOp<"soft_margin_loss", "log(1 + exp(-t x))", "SoftMarginLossOp">;


// multi_margin_loss of [N, C] scores and [N] class indices (capture views an
// unbatched input as N = 1 and checks the targets' range before each run):
// per sample, sum over classes d != t of max(0, margin - x[t] + x[d])^p
// (times weight[t]), divided by C, in the input's type; mean and sum reduce
// the samples (f16/bf16 accumulate in f32), `none` keeps them ([N]).
def Graph_MultiMarginLossOp
    : Graph_RegisteredOp<"multi_margin_loss", "multi_margin_loss", Dyn_MetaRule, Dyn_MetaShape,
                         Dyn_Composite<"MultiMarginLossToPrim", "Losses">> {
  let summary = "the multi-class margin loss (F.multi_margin_loss)";
  let arguments = (ins Graph_FloatTensor:$input, RankedTensorOf<[I64]>:$target,
                       Optional<Graph_FloatTensor>:$weight, I64Attr:$p, F64Attr:$margin, StrAttr:$reduction);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let eager = "F.multi_margin_loss({input}, {target}, {p}, {margin}, {weight}, reduction={reduction})";
}

// multilabel_margin_loss of [N, C] scores and [N, C] targets (capture views an
// unbatched input as N = 1 and checks the targets' range): per sample, the
// targets are t[j] before the first negative one; the loss sums, over those j
// and the classes i that are no target, max(0, 1 - x[t_j] + x[i]) in the
// accumulate type, divided by C; mean and sum reduce the samples (sum then
// divide, eager's order), `none` keeps them ([N]).
def Graph_MultilabelMarginLossOp
    : Graph_RegisteredOp<"multilabel_margin_loss", "multilabel_margin_loss", Dyn_KeepsElementRule,
                         Dyn_MetaShape, Dyn_Composite<"MultilabelMarginLossToPrim", "Losses">> {
  let summary = "the multi-label margin loss (F.multilabel_margin_loss)";
  let arguments = (ins Graph_FloatTensor:$input, RankedTensorOf<[I64]>:$target, StrAttr:$reduction);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` type(operands) `->` type($result)";
  let hasVerifier = 1;
  let eager = "F.multilabel_margin_loss({input}, {target}, reduction={reduction})";
}

// nll_loss: -weight[t] * input[t] per target element (the class dim is 1, or
// 0 for an unbatched input), 0 where t == ignore_index; `mean` divides the sum
// by the summed weights of the elements not ignored. Class indices out of
// range are checked before the graph runs (capture's index bounds); f16/bf16
// compute in f32 and round once.
// Dynamic dims beside the class dim (a batch, a sequence), checked by its verifier.
def Graph_NllLossOp : Graph_RegisteredOp<"nll_loss", "nll_loss", Dyn_MetaRule, Dyn_MetaShape,
                                         Dyn_DynamicComposite<"NllLossToPrim", "Losses">,
                                         [AllElementTypesMatch<["input", "weight", "result"]>]> {
  let summary = "negative log-likelihood of class indices (F.nll_loss)";
  let arguments = (ins Graph_FloatTensor:$input, RankedTensorOf<[I64]>:$target,
                       Graph_FloatTensor:$weight, Graph_LossReduction:$reduction, I64Attr:$ignore_index);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $reduction $input `,` $target `,` $weight attr-dict `:` type($input) `,` type($target) `,` type($weight)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let eager = "F.nll_loss({input}, {target}, {weight}, ignore_index={ignore_index}, reduction={reduction})";
}

#endif // DYN_GRAPH_FAMILY_OPS
