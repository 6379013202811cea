//===- GraphOps.td - graph dialect ops ----------------------*- tablegen -*-===//
#ifndef DYN_GRAPH_OPS
#define DYN_GRAPH_OPS

include "dyn/Dialect/Graph/IR/GraphBase.td"
include "dyn/Dialect/Graph/IR/GraphOpRegistry.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Elementwise families (registered: GraphOpRegistry.td)
//===----------------------------------------------------------------------===//

// Unary: the result has the operand's shape; its element type is the op's
// type rule (torch.sin of an integer tensor is a float tensor).
class Graph_UnaryOp<string mnemonic, string desc, Dyn_TypeRule rule, Dyn_Lowering lower>
    : Graph_RegisteredOp<mnemonic, "unary", rule, Dyn_SameShape, lower> {
  let summary = "elementwise " # desc;
  let description = "Elementwise `" # desc # "`, computed in the result element type.";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs rule.result:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let torchNames = ["torch." # mnemonic, "Tensor." # mnemonic, "aten." # mnemonic];
  let eager = "torch." # mnemonic # "({input})";
}

// One prim op of the same name family, on the result type.
class Dyn_Unary<string prim> : Dyn_ToPrim<prim, "UnaryToPrim", "Elementwise">;
class Dyn_Binary<string prim> : Dyn_ToPrim<prim, "BinaryToPrim", "Elementwise">;
class Dyn_Compare<string prim> : Dyn_ToPrim<prim, "CompareToPrim", "Elementwise">;
class Dyn_Elementwise<string cls> : Dyn_Composite<cls, "Elementwise">;

def Graph_ExpOp : Graph_UnaryOp<"exp", "exponential", Dyn_FloatRule, Dyn_Unary<"ExpOp">>;
def Graph_LogOp : Graph_UnaryOp<"log", "natural logarithm", Dyn_FloatRule, Dyn_Unary<"LogOp">>;
def Graph_SinOp : Graph_UnaryOp<"sin", "sine", Dyn_FloatRule, Dyn_Unary<"SinOp">>;
def Graph_CosOp : Graph_UnaryOp<"cos", "cosine", Dyn_FloatRule, Dyn_Unary<"CosOp">>;
def Graph_TanOp : Graph_UnaryOp<"tan", "tangent", Dyn_FloatRule, Dyn_Unary<"TanOp">>;
def Graph_TanhOp : Graph_UnaryOp<"tanh", "hyperbolic tangent", Dyn_FloatRule, Dyn_Unary<"TanhOp">>;
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", "logistic sigmoid 1/(1+exp(-x))", Dyn_FloatRule,
                                    Dyn_Unary<"LogisticOp">>;
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", "square root", Dyn_FloatRule, Dyn_Unary<"SqrtOp">>;
def Graph_RsqrtOp : Graph_UnaryOp<"rsqrt", "reciprocal square root", Dyn_FloatRule,
                                  Dyn_Unary<"RsqrtOp">>;
def Graph_ReciprocalOp : Graph_UnaryOp<"reciprocal", "1/x", Dyn_FloatRule,
                                       Dyn_Elementwise<"ReciprocalToPrim">>;
def Graph_ErfOp : Graph_UnaryOp<"erf", "error function", Dyn_FloatRule, Dyn_Unary<"ErfOp">>;
def Graph_Log1pOp : Graph_UnaryOp<"log1p", "log(1+x)", Dyn_FloatRule, Dyn_Unary<"Log1pOp">>;
def Graph_Expm1Op : Graph_UnaryOp<"expm1", "exp(x)-1", Dyn_FloatRule, Dyn_Unary<"Expm1Op">>;

// Rounding keeps the type; of an integer tensor it is the identity (PyTorch's).
def Graph_FloorOp : Graph_UnaryOp<"floor", "floor", Dyn_KeepsTypeRule, Dyn_Unary<"FloorOp">>;
def Graph_CeilOp : Graph_UnaryOp<"ceil", "ceiling", Dyn_KeepsTypeRule, Dyn_Unary<"CeilOp">>;

def Graph_NegOp : Graph_UnaryOp<"neg", "negation", Dyn_PromoteNumericRule, Dyn_Unary<"NegOp">>;
def Graph_AbsOp : Graph_UnaryOp<"abs", "absolute value", Dyn_PromoteNumericRule,
                                Dyn_Unary<"AbsOp">>;
def Graph_ReluOp : Graph_UnaryOp<"relu", "max(x, 0)", Dyn_PromoteNumericRule,
                                 Dyn_Elementwise<"ReluToPrim">>;
def Graph_LogicalNotOp : Graph_UnaryOp<"logical_not", "logical negation (result i1)", Dyn_FreeRule,
                                       Dyn_Elementwise<"LogicalNotToPrim">>;

// Binary arithmetic: numpy-style broadcasting; operands are converted to the
// result element type (PyTorch type promotion, decided by capture).
// Booleans add and multiply as `or` and `and`; sub, div and remainder of them
// are not defined, and pow is computed in floats only.
class Graph_BinaryOp<string mnemonic, string desc, Dyn_TypeRule rule, Dyn_Lowering lower>
    : Graph_RegisteredOp<mnemonic, "binary", rule, Dyn_Broadcast, lower> {
  let summary = "elementwise " # desc # " with broadcasting";
  let description = "Broadcasts `lhs` and `rhs` to the result shape, converts both to "
                    "the result element type and applies `" # desc # "`.";
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs rule.result:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let torchNames = ["torch." # mnemonic, "Tensor." # mnemonic, "aten." # mnemonic];
  let eager = "torch." # mnemonic # "({lhs}.to({dtype}), {rhs}.to({dtype}))";
}

def Graph_AddOp : Graph_BinaryOp<"add", "addition", Dyn_PromoteRule, Dyn_Binary<"AddOp">>;
def Graph_MulOp : Graph_BinaryOp<"mul", "multiplication", Dyn_PromoteRule, Dyn_Binary<"MulOp">>;
def Graph_MaximumOp : Graph_BinaryOp<"maximum", "maximum", Dyn_PromoteRule, Dyn_Binary<"MaxOp">>;
def Graph_MinimumOp : Graph_BinaryOp<"minimum", "minimum", Dyn_PromoteRule, Dyn_Binary<"MinOp">>;
def Graph_LogicalAndOp : Graph_BinaryOp<"logical_and", "logical and (result i1)", Dyn_FreeRule,
                                        Dyn_Binary<"AndOp">> {
  let eager = "torch.logical_and({lhs}, {rhs})";
}
def Graph_LogicalOrOp : Graph_BinaryOp<"logical_or", "logical or (result i1)", Dyn_FreeRule,
                                       Dyn_Binary<"OrOp">> {
  let eager = "torch.logical_or({lhs}, {rhs})";
}
def Graph_SubOp : Graph_BinaryOp<"sub", "subtraction", Dyn_PromoteNumericRule, Dyn_Binary<"SubOp">>;
// Integer division truncates (the lowering's divsi); capture writes floor
// division of integers with it.
def Graph_DivOp : Graph_BinaryOp<"div", "true division", Dyn_PromoteNumericRule,
                                 Dyn_Binary<"DivOp">> {
  let eager = "torch.div({lhs}.to({dtype}), {rhs}.to({dtype}), "
              "rounding_mode=None if {dtype}.is_floating_point else 'trunc')";
}
def Graph_RemainderOp : Graph_BinaryOp<"remainder", "Python-style remainder",
                                       Dyn_PromoteNumericRule, Dyn_Binary<"RemOp">>;
def Graph_PowOp : Graph_BinaryOp<"pow", "power", Dyn_FloatRule, Dyn_Binary<"PowOp">>;

// Comparisons compute in the promoted type of their operands; the result is i1.
class Graph_CompareOp<string mnemonic, string desc, string prim>
    : Graph_RegisteredOp<mnemonic, "compare", Dyn_BoolRule, Dyn_Broadcast, Dyn_Compare<prim>> {
  let summary = "elementwise comparison " # desc;
  let description = "Broadcasts the operands, promotes them to a common type and "
                    "compares them (`" # desc # "`); the result is a boolean tensor.";
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let torchNames = ["torch." # mnemonic, "Tensor." # mnemonic, "aten." # mnemonic];
  let eager = "torch." # mnemonic # "({lhs}, {rhs})";
}

def Graph_EqOp : Graph_CompareOp<"eq", "==", "EqOp">;
def Graph_NeOp : Graph_CompareOp<"ne", "!=", "NeOp">;
def Graph_LtOp : Graph_CompareOp<"lt", "<", "LtOp">;
def Graph_LeOp : Graph_CompareOp<"le", "<=", "LeOp">;
def Graph_GtOp : Graph_CompareOp<"gt", ">", "GtOp">;
def Graph_GeOp : Graph_CompareOp<"ge", ">=", "GeOp">;

def Graph_WhereOp : Graph_RegisteredOp<"where", "where", Dyn_PromoteRule, Dyn_Broadcast,
                                       Dyn_Elementwise<"WhereToPrim">> {
  let summary = "elementwise select with broadcasting";
  let description = "`cond ? a : b` elementwise, after broadcasting all three operands.";
  let arguments = (ins Graph_BoolTensor:$cond, Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let torchNames = ["torch.where", "aten.where"];
  let eager = "torch.where({cond}, {lhs}, {rhs}).to({dtype})";
}

def Graph_ConstantOp : Graph_Op<"constant", [ConstantLike, AllTypesMatch<["value", "result"]>]> {
  let summary = "a tensor constant";
  let description = "A dense tensor constant; Python scalars become rank-0 constants.";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

def Graph_ConvertOp : Graph_RegisteredOp<"convert", "convert", Dyn_FreeRule, Dyn_SameShape,
                                         Dyn_Elementwise<"ConvertToPrim">> {
  let summary = "element type conversion (Tensor.to(dtype))";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let eager = "{input}.to({dtype})";
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// The result element type is free for sum and prod (their `dtype` argument),
// the input's for amax and amin, a float for mean. Empty `dims` reduce nothing.
class Graph_ReductionOp<string mnemonic, string desc, Dyn_TypeRule rule, string prim>
    : Graph_RegisteredOp<mnemonic, "reduce", rule, Dyn_Reduce,
                         Dyn_ToPrim<prim, "ReductionToPrim", "Reduction">> {
  let summary = desc # " over `dims`";
  let description = "Reduces `input` over `dims` (" # desc # "). With `keepdim` "
                    "the reduced dims stay as size 1; without it they are dropped.";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$dims, UnitAttr:$keepdim);
  let results = (outs rule.result:$result);
  let assemblyFormat = [{
    $input `dims` $dims (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyReduction(*this); }
  }];
  let torchNames = ["torch." # mnemonic, "Tensor." # mnemonic, "aten." # mnemonic];
  let eager = "_rt.reduce(torch." # mnemonic # ", {input}, {dims}, {keepdim})";
}

def Graph_SumOp : Graph_ReductionOp<"sum", "sum", Dyn_FreeRule, "ReduceSumOp">;
def Graph_MeanOp : Graph_ReductionOp<"mean", "arithmetic mean", Dyn_FloatRule, "ReduceSumOp">;
def Graph_AmaxOp : Graph_ReductionOp<"amax", "maximum", Dyn_KeepsElementRule, "ReduceMaxOp">;
def Graph_AminOp : Graph_ReductionOp<"amin", "minimum", Dyn_KeepsElementRule, "ReduceMinOp">;
def Graph_ProdOp : Graph_ReductionOp<"prod", "product", Dyn_FreeRule, "ReduceProdOp"> {
  let eager = "_rt.prod({input}, {dims}, {keepdim})";
}

class Graph_SoftmaxLikeOp<string mnemonic, string desc>
    : Graph_Op<mnemonic, [SameOperandsAndResultType]> {
  let summary = desc # " along `dim`";
  let description = desc # " along `dim`, decomposed into max, exp, sum and "
                    "division (numerically stable) by dyn-convert-graph-to-prim.";
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `dim` $dim attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyDimInRange(*this, getDim()); }
  }];
}

def Graph_SoftmaxOp : Graph_SoftmaxLikeOp<"softmax", "softmax">;
def Graph_LogSoftmaxOp : Graph_SoftmaxLikeOp<"log_softmax", "log-softmax">;

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

def Graph_MatmulOp : Graph_Op<"matmul"> {
  let summary = "matrix product (torch.matmul on 2-D or batched 3-D operands)";
  let description = "The operands are converted to the result's (float) element type.";
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation (views in PyTorch; values here)
//===----------------------------------------------------------------------===//

def Graph_ReshapeOp : Graph_Op<"reshape"> {
  let summary = "reshape to the result shape (same element count)";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Graph_PermuteOp : Graph_Op<"permute", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "permute dimensions";
  let description = "Result dim `i` is input dim `dims[i]`.";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `dims` $dims attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ExpandOp : Graph_Op<"expand", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "broadcast to the result shape (Tensor.expand)";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_SliceOp : Graph_Op<"slice", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "strided slice along one dimension (x[..., start:end:step])";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim, I64Attr:$start, I64Attr:$end,
                       I64Attr:$step);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `start` $start `end` $end `step` $step attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_CatOp : Graph_Op<"cat"> {
  let summary = "concatenate along `dim` (torch.cat)";
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

def Graph_GatherOp : Graph_Op<"gather"> {
  let summary = "gather along `dim` with an integer index tensor (torch.gather)";
  let description = [{
    `result[i] = input[i with i[dim] replaced by index[i]]`: the result has
    the index's shape and the input's element type; index and input have one
    rank, and every index dim but `dim` is at most the input's. Capture
    expresses `index_select`, `F.embedding` and `x[idx]` as a gather with a
    broadcast (`graph.expand`) index.

    A negative index counts from the end (Python's `x[-1]`). An index still
    out of `[0, size)` is clamped to it: dyn never reads out of bounds, where
    eager PyTorch raises (docs/capture.md, known differences).
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim,
                       RankedTensorOf<[I32, I64]>:$index);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `index` $index attr-dict `:` type($input) `,` type($index) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution, pooling and attention (windows and library calls)
//===----------------------------------------------------------------------===//

// The float types the library kernels (ATen: oneDNN, cuBLAS, cuDNN) take.
def Graph_LibraryFloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;

def Graph_ConvolutionOp : Graph_Op<"convolution"> {
  let summary = "N-d convolution, 1-3 spatial dims, optionally transposed (torch.convolution)";
  let description = [{
    `input` is `[N, C_in, *spatial]`; `weight` is `[C_out, C_in/groups, *kernel]`,
    or `[C_in, C_out/groups, *kernel]` when `transposed`; the optional `bias`
    is `[C_out]`. `stride`, `padding`, `dilation` (and `output_padding`, for
    transposed convolutions only) have one entry per spatial dim; padding
    is zeros (capture writes other padding modes as a `graph.pad` first).
    All operands and the result share one float element type. The result is
    `[N, C_out, *out]` with PyTorch's output sizes.

    `dyn-convert-graph-to-prim` makes it a `prim.convolution` (a library
    call) plus a broadcast add of the bias, which fuses with the pointwise
    ops after it.
  }];
  let arguments = (ins Graph_LibraryFloatTensor:$input, Graph_LibraryFloatTensor:$weight,
                       Optional<Graph_LibraryFloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups, UnitAttr:$transposed,
                       OptionalAttr<DenseI64ArrayAttr>:$output_padding);
  let results = (outs Graph_LibraryFloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? `stride` $stride `padding` $padding `dilation` $dilation
    `groups` $groups (`transposed` $transposed^)? (`output_padding` $output_padding^)?
    attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

class Graph_PoolOp<string mnemonic, string desc> : Graph_Op<mnemonic> {
  let summary = desc # " pooling over the trailing 1-3 dims";
  let results = (outs Graph_LibraryFloatTensor:$result);
  let hasVerifier = 1;
}

def Graph_MaxPoolOp : Graph_PoolOp<"max_pool", "max"> {
  let description = [{
    F.max_pool1d/2d/3d: the maximum over each window of `kernel` elements
    spaced `dilation` apart, windows `stride` apart, over the trailing
    `kernel.size()` dims; `padding` counts as -inf. With `ceil_mode` a last,
    partial window is kept where it starts inside the input or its left
    padding. Decomposed into padded strided slices and elementwise maxima,
    which fuse into one kernel with their neighbours.
  }];
  let arguments = (ins Graph_LibraryFloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, UnitAttr:$ceil_mode);
  let assemblyFormat = [{
    $input `kernel` $kernel `stride` $stride `padding` $padding `dilation` $dilation
    (`ceil_mode` $ceil_mode^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Graph_AvgPoolOp : Graph_PoolOp<"avg_pool", "average"> {
  let description = [{
    F.avg_pool1d/2d/3d: the sum over each window divided by
    `divisor_override` when given, else by the window's size within the
    padded input (`count_include_pad`) or within the input. Decomposed like
    `graph.max_pool`, with the divisors as a constant.
  }];
  let arguments = (ins Graph_LibraryFloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       UnitAttr:$ceil_mode, UnitAttr:$count_include_pad,
                       OptionalAttr<I64Attr>:$divisor_override);
  let assemblyFormat = [{
    $input `kernel` $kernel `stride` $stride `padding` $padding (`ceil_mode` $ceil_mode^)?
    (`count_include_pad` $count_include_pad^)? (`divisor_override` $divisor_override^)?
    attr-dict `:` type($input) `->` type($result)
  }];
}

class Graph_AdaptivePoolOp<string mnemonic, string desc> : Graph_Op<mnemonic> {
  let summary = "adaptive " # desc # " pooling to the result's trailing sizes";
  let description = [{
    F.}] # mnemonic # [{1d/2d/3d: output index `i` of a pooled dim
    of size `in` pools input indices `[floor(i*in/out), ceil((i+1)*in/out))`.
    The pooled dims are the trailing `output_size.size()` (1-3) ones.
  }];
  let arguments = (ins Graph_LibraryFloatTensor:$input, DenseI64ArrayAttr:$output_size);
  let results = (outs Graph_LibraryFloatTensor:$result);
  let assemblyFormat = [{
    $input `output_size` $output_size attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Graph_AdaptiveMaxPoolOp : Graph_AdaptivePoolOp<"adaptive_max_pool", "max">;
def Graph_AdaptiveAvgPoolOp : Graph_AdaptivePoolOp<"adaptive_avg_pool", "average">;

def Graph_PadMode : I32EnumAttr<"PadMode", "how graph.pad fills the border", [
    I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"reflect", 1>,
    I32EnumAttrCase<"replicate", 2>, I32EnumAttrCase<"circular", 3>]> {
  let cppNamespace = "::dyn::graph";
}

def Graph_PadOp : Graph_Op<"pad"> {
  let summary = "pad every dim by `low` and `high` elements (F.pad)";
  let description = [{
    `constant` fills with `value`; `reflect` mirrors the input without
    repeating its edge (pads smaller than the dim), `replicate` repeats the
    edge, `circular` wraps around (pads at most the dim). `low` and `high`
    have one entry per dim: result index `j` reads input index `j - low`
    (mirrored, clamped or wrapped into range). Reflect and replicate pads may
    be negative (that side is cut off, as eager's kernels do); constant and
    circular pads may not (capture slices first).
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_PadMode:$mode, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input $mode `low` $low `high` $high (`value` $value^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Graph_ScaledDotProductAttentionOp : Graph_Op<"scaled_dot_product_attention"> {
  let summary = "softmax(q k^T * scale + mask) v (F.scaled_dot_product_attention, no dropout)";
  let description = [{
    `query` `[..., L, E]`, `key` `[..., S, E]`, `value` `[..., S, Ev]` with one
    batch shape; the result is `[..., L, Ev]`. The optional `mask` broadcasts
    to `[..., L, S]`: a boolean mask keeps the scores where it is true, a
    float mask (the query's type) is added to them. `is_causal` keeps key
    `j` for query `i` when `j <= i` (it excludes a mask). `scale` defaults to
    `1/sqrt(E)`. Lowered to one library call (a flash or memory-efficient
    kernel, no `[L, S]` buffer).
  }];
  let arguments = (ins Graph_LibraryFloatTensor:$query, Graph_LibraryFloatTensor:$key,
                       Graph_LibraryFloatTensor:$value,
                       Optional<RankedTensorOf<[I1, F16, BF16, F32, F64]>>:$mask,
                       UnitAttr:$is_causal, OptionalAttr<F64Attr>:$scale);
  let results = (outs Graph_LibraryFloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? (`causal` $is_causal^)? (`scale` $scale^)?
    attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// PyTorch ops without a graph op of their own
//===----------------------------------------------------------------------===//

def Graph_TorchCallOp : Op<Graph_Dialect, "torch_call",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "a PyTorch op dyn has no graph op for, called as PyTorch calls it";
  let description = [{
    The generic node capture makes for a call of a PyTorch op without a
    dedicated graph op (FX's `call_function`, inductor's fallback kernels):
    `callee` names the op as Python calls it (`torch.nn.functional.hardswish`,
    `torch.Tensor.cumsum`, `aten.hardswish.default`); `args` holds its
    positional arguments and `kwargs` its keyword arguments, where an
    `index`-typed integer `k : index` stands for operand `k` (every operand
    appears exactly once), `unit` for None, a type for a dtype, and arrays
    for tuples and lists. Results are the op's tensor results, in order.
    Capture made one only for ops that are pure on meta tensors (no argument
    written, no result aliasing an argument, shapes independent of the data).

    `in_place = k`: the op writes operand `k` (`x.bernoulli_(p)`,
    `F.dropout(x, inplace=True)`); the single result is that operand's value
    after the op, the operand itself is unchanged (value semantics).
    `seeded`: the op draws random numbers from PyTorch's generator, so it
    reads and writes that state and is neither removed nor reordered.

    dyn's compiler has no lowering for this op: a graph holding one runs with
    PyTorch ops (the eager backend does exactly this call).

    ```mlir
    %1 = graph.torch_call "torch.nn.functional.hardswish"(%0)
           {args = [0 : index], kwargs = {inplace = false}}
           : (tensor<4x16xf32>) -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$callee, Variadic<Graph_Tensor>:$operands,
                       OptionalAttr<ArrayAttr>:$args, OptionalAttr<DictionaryAttr>:$kwargs,
                       OptionalAttr<I64Attr>:$in_place, UnitAttr:$seeded);
  let results = (outs Variadic<Graph_Tensor>:$results);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, $results)
  }];
  let hasVerifier = 1;
}

#endif // DYN_GRAPH_OPS
