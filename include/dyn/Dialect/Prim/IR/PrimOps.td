//===- PrimOps.td - prim dialect ops ------------------------*- tablegen -*-===//
#ifndef DYN_PRIM_OPS
#define DYN_PRIM_OPS

include "dyn/Dialect/Prim/IR/PrimBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Elementwise: one type in, the same type out.
//===----------------------------------------------------------------------===//

class Prim_UnaryOp<string mnemonic, string desc, Type type = Prim_Tensor>
    : Prim_DynamicOp<mnemonic, [Elementwise, SameOperandsAndResultType]> {
  let summary = desc;
  let description = "Elementwise " # desc # "; operand and result have one type.";
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  // The one scalar op (math or arith, on the compute type) dyn-fuse-prim-to-loop
  // emits for it; empty where PrimToLoop writes its lowering by hand. dyn-tblgen
  // -gen-prim-math-table lists these.
  string mathOp = "";
}

// Transcendental and rounding ops on floats that lower to one math op (on the
// GPU a libdevice call, on the CPU a polynomial or libm).
class Prim_MathUnaryOp<string mnemonic, string desc, string scalarOp>
    : Prim_UnaryOp<mnemonic, desc, Prim_FloatTensor> {
  let mathOp = scalarOp;
}

def Prim_ExpOp : Prim_MathUnaryOp<"exp", "exponential", "::mlir::math::ExpOp">;
def Prim_LogOp : Prim_MathUnaryOp<"log", "natural logarithm", "::mlir::math::LogOp">;
def Prim_SinOp : Prim_MathUnaryOp<"sin", "sine", "::mlir::math::SinOp">;
def Prim_CosOp : Prim_MathUnaryOp<"cos", "cosine", "::mlir::math::CosOp">;
def Prim_TanOp : Prim_MathUnaryOp<"tan", "tangent", "::mlir::math::TanOp">;
def Prim_TanhOp : Prim_MathUnaryOp<"tanh", "hyperbolic tangent", "::mlir::math::TanhOp">;
def Prim_SqrtOp : Prim_MathUnaryOp<"sqrt", "square root", "::mlir::math::SqrtOp">;
def Prim_RsqrtOp : Prim_MathUnaryOp<"rsqrt", "reciprocal square root", "::mlir::math::RsqrtOp">;
def Prim_ErfOp : Prim_MathUnaryOp<"erf", "error function", "::mlir::math::ErfOp">;
def Prim_ErfcOp : Prim_MathUnaryOp<"erfc", "complementary error function 1-erf(x)",
                                   "::mlir::math::ErfcOp">;
def Prim_FloorOp : Prim_MathUnaryOp<"floor", "round toward -inf", "::mlir::math::FloorOp">;
def Prim_CeilOp : Prim_MathUnaryOp<"ceil", "round toward +inf", "::mlir::math::CeilOp">;
def Prim_TruncOp : Prim_MathUnaryOp<"trunc", "round toward zero", "::mlir::math::TruncOp">;
def Prim_RoundOp : Prim_MathUnaryOp<"round", "round to nearest, ties to even",
                                    "::mlir::math::RoundEvenOp">;
def Prim_Log1pOp : Prim_MathUnaryOp<"log1p", "log(1+x)", "::mlir::math::Log1pOp">;
def Prim_Expm1Op : Prim_MathUnaryOp<"expm1", "exp(x)-1", "::mlir::math::ExpM1Op">;
def Prim_Exp2Op : Prim_MathUnaryOp<"exp2", "2^x", "::mlir::math::Exp2Op">;
def Prim_Log2Op : Prim_MathUnaryOp<"log2", "base-2 logarithm", "::mlir::math::Log2Op">;
def Prim_Log10Op : Prim_MathUnaryOp<"log10", "base-10 logarithm", "::mlir::math::Log10Op">;
def Prim_SinhOp : Prim_MathUnaryOp<"sinh", "hyperbolic sine", "::mlir::math::SinhOp">;
def Prim_CoshOp : Prim_MathUnaryOp<"cosh", "hyperbolic cosine", "::mlir::math::CoshOp">;
def Prim_AsinOp : Prim_MathUnaryOp<"asin", "arcsine", "::mlir::math::AsinOp">;
def Prim_AcosOp : Prim_MathUnaryOp<"acos", "arccosine", "::mlir::math::AcosOp">;
def Prim_AtanOp : Prim_MathUnaryOp<"atan", "arctangent", "::mlir::math::AtanOp">;
def Prim_AsinhOp : Prim_MathUnaryOp<"asinh", "inverse hyperbolic sine", "::mlir::math::AsinhOp">;
def Prim_AcoshOp : Prim_MathUnaryOp<"acosh", "inverse hyperbolic cosine", "::mlir::math::AcoshOp">;
def Prim_AtanhOp : Prim_MathUnaryOp<"atanh", "inverse hyperbolic tangent", "::mlir::math::AtanhOp">;

def Prim_LogisticOp : Prim_UnaryOp<"logistic", "1/(1+exp(-x))", Prim_FloatTensor>;

foreach op = [["Neg", "neg", "negation"], ["Abs", "abs", "absolute value"]] in
  def Prim_ # op[0] # Op : Prim_UnaryOp<op[1], op[2]>;

def Prim_NotOp : Prim_UnaryOp<"not", "bitwise (logical for i1) not", Prim_IntTensor>;

class Prim_BinaryOp<string mnemonic, string desc, Type type = Prim_Tensor>
    : Prim_DynamicOp<mnemonic, [Elementwise, SameOperandsAndResultType]> {
  let summary = desc;
  let description = "Elementwise " # desc # "; both operands and the result have one type.";
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

foreach op = [["Add", "add", "addition"], ["Sub", "sub", "subtraction"],
              ["Mul", "mul", "multiplication"],
              ["Div", "div", "division (floats: IEEE; integers: truncating)"],
              ["Rem", "rem", "remainder with the sign of the divisor (Python %)"],
              ["Max", "max", "maximum (NaN-propagating for floats)"],
              ["Min", "min", "minimum (NaN-propagating for floats)"]] in
  def Prim_ # op[0] # Op : Prim_BinaryOp<op[1], op[2]>;

def Prim_AndOp : Prim_BinaryOp<"and", "bitwise and (logical for i1)", Prim_IntTensor>;
def Prim_OrOp : Prim_BinaryOp<"or", "bitwise or (logical for i1)", Prim_IntTensor>;
def Prim_XorOp : Prim_BinaryOp<"xor", "bitwise exclusive or", Prim_IntTensor>;
def Prim_ShlOp : Prim_BinaryOp<"shl", "shift left (0 for an amount < 0 or >= the type's width)",
                               Prim_IntTensor>;
def Prim_ShrOp : Prim_BinaryOp<"shr", "arithmetic shift right (the sign fill for an amount < 0 "
                               "or >= the type's width; ui8 shifts in zeros)", Prim_IntTensor>;

def Prim_PowOp : Prim_BinaryOp<"pow", "power x^y", Prim_FloatTensor> {
  string mathOp = "::mlir::math::PowFOp";
}

// Binary float ops that lower to one scalar op.
class Prim_MathBinaryOp<string mnemonic, string desc, string scalarOp>
    : Prim_BinaryOp<mnemonic, desc, Prim_FloatTensor> {
  string mathOp = scalarOp;
}

def Prim_Atan2Op : Prim_MathBinaryOp<"atan2", "atan2(y = lhs, x = rhs), the angle of (x, y)",
                                     "::mlir::math::Atan2Op">;
def Prim_CopySignOp : Prim_MathBinaryOp<"copysign", "|lhs| with the sign of rhs",
                                        "::mlir::math::CopySignOp">;
def Prim_FmodOp : Prim_MathBinaryOp<"fmod", "C fmod: the remainder with the sign of lhs",
                                    "::mlir::arith::RemFOp">;

class Prim_CompareOp<string mnemonic, string desc>
    : Prim_DynamicOp<mnemonic, [Elementwise, SameTypeOperands, SameOperandsAndResultShape]> {
  let summary = "comparison " # desc;
  let description = "Elementwise `" # desc # "` of two operands of one type; the result is i1 "
                    "(ordered for floats: false when either side is NaN, but `ne` is true).";
  let arguments = (ins Prim_Tensor:$lhs, Prim_Tensor:$rhs);
  let results = (outs Prim_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
}

foreach op = [["Eq", "eq", "=="], ["Ne", "ne", "!="], ["Lt", "lt", "<"], ["Le", "le", "<="],
              ["Gt", "gt", ">"], ["Ge", "ge", ">="]] in
  def Prim_ # op[0] # Op : Prim_CompareOp<op[1], op[2]>;

def Prim_SelectOp : Prim_DynamicOp<"select", [Elementwise, AllTypesMatch<["on_true", "on_false", "result"]>,
                                       AllShapesMatch<["cond", "result"]>]> {
  let summary = "elementwise cond ? on_true : on_false";
  let arguments = (ins Prim_BoolTensor:$cond, Prim_Tensor:$on_true, Prim_Tensor:$on_false);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = "$cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,` type($result)";
}

def Prim_ConvertElementTypeOp : Prim_DynamicOp<"convert_element_type",
                                        [Elementwise, SameOperandsAndResultShape]> {
  let summary = "change the element type (round to nearest; float to int truncates)";
  let arguments = (ins Prim_Tensor:$input);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Generators
//===----------------------------------------------------------------------===//

def Prim_ConstantOp : Prim_Op<"constant", [ConstantLike, AllTypesMatch<["value", "result"]>]> {
  let summary = "a tensor constant";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

def Prim_IotaOp : Prim_DynamicOp<"iota"> {
  let summary = "0, 1, 2, ... along `dim`, broadcast over the other dims";
  let description = [{
    `sizes` gives the size of each dynamic (`?`) result dim, in order.
  }];
  let arguments = (ins I64Attr:$dim, Variadic<Index>:$sizes);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = "`dim` $dim (`sizes` `(` $sizes^ `)`)? attr-dict `:` type($result)";
  let builders = [OpBuilder<(ins "::mlir::Type":$result, "int64_t":$dim), [{
    build($_builder, $_state, result, dim, ::mlir::ValueRange());
  }]>];
  let hasVerifier = 1;
}

// Random bits (GraphToPrim/Random.cpp builds the distributions from them).
def Prim_PhiloxOp : Prim_DynamicOp<"philox"> {
  let summary = "Philox-4x32-10 random bits per element";
  let description = [{
    Element `i` (row-major linear index) is word `word` (0-3) of the
    Philox-4x32-10 block of key `(seed & 0xffffffff, seed >> 32)` and counter
    `(i & 0xffffffff, i >> 32, offset & 0xffffffff, offset >> 32)` (Salmon et
    al., "Parallel random numbers: as easy as 1, 2, 3"; Random123's
    philox4x32_10). A pure function of (seed, offset, index): integer
    arithmetic that gives the same bits on every target. `sizes` gives the
    size of each dynamic (`?`) result dim, in order (a dropout mask over a
    runtime batch).
  }];
  let arguments = (ins 0DTensorOf<[I64]>:$seed, I64Attr:$offset, I64Attr:$word, Variadic<Index>:$sizes);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $seed `offset` $offset `word` $word (`sizes` `(` $sizes^ `)`)? attr-dict `:` type($seed) `->` type($result)
  }];
  let builders = [OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$seed, "int64_t":$offset,
                                 "int64_t":$word), [{
    build($_builder, $_state, result, seed, offset, word, ::mlir::ValueRange());
  }]>];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def Prim_BroadcastInDimOp : Prim_DynamicOp<"broadcast_in_dim"> {
  let summary = "broadcast: operand dim i becomes result dim `dims[i]`";
  let description = [{
    Operand dim `i` maps to result dim `dims[i]` (strictly increasing); it must
    have the result's size there or size 1 (then it is broadcast). Result dims
    not named in `dims` are new. `sizes` gives the size of each dynamic (`?`)
    result dim, in order; an operand dim mapped to one is `?` (never 1) or 1.
  }];
  let arguments = (ins Prim_Tensor:$input, DenseI64ArrayAttr:$dims, Variadic<Index>:$sizes);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = [{
    $input `dims` $dims (`sizes` `(` $sizes^ `)`)? attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                                 "::llvm::ArrayRef<int64_t>":$dims), [{
    build($_builder, $_state, result, input, dims, ::mlir::ValueRange());
  }]>, OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                      "::mlir::DenseI64ArrayAttr":$dims), [{
    build($_builder, $_state, result, input, dims, ::mlir::ValueRange());
  }]>];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Prim_DimOp : Op<Prim_Dialect, "dim", [Pure]> {
  let summary = "the size of dim `dim` of a tensor, as an index";
  let description = [{
    The runtime size of a (typically dynamic) dim: what `prim.broadcast_in_dim`
    takes as the size of a dynamic result dim. A static dim folds to a
    constant.
  }];
  let arguments = (ins Prim_Tensor:$input, I64Attr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$input `,` $dim attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Prim_ReshapeOp : Prim_DynamicOp<"reshape"> {
  let summary = "row-major reshape to the result shape";
  let description = [{
    `sizes` gives the size of each dynamic (`?`) result dim, in order.
  }];
  let arguments = (ins Prim_Tensor:$input, Variadic<Index>:$sizes);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = [{
    $input (`sizes` `(` $sizes^ `)`)? attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input), [{
    build($_builder, $_state, result, input, ::mlir::ValueRange());
  }]>];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Prim_TransposeOp : Prim_DynamicOp<"transpose", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "permute dims: result dim i is operand dim `permutation[i]`";
  let arguments = (ins Prim_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = "$input `permutation` $permutation attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

// A dynamic dim is taken whole (start 0, stride 1).
def Prim_SliceOp : Prim_DynamicOp<"slice", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "strided slice: result[i] = input[start + i * stride] per dim";
  let arguments = (ins Prim_Tensor:$input, DenseI64ArrayAttr:$start, DenseI64ArrayAttr:$stride);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = [{
    $input `start` $start `stride` $stride attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

// The offset is an index value: an index remap whose shift is known at run time.
def Prim_DynamicSliceOp : Prim_DynamicOp<"dynamic_slice", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "result[i] = input[i with i[dim] + start], `size` elements along `dim`";
  let description = [{
    `start` and `size` are `index` values with `start + size` at most the
    size of `dim` (not checked); the result's `dim` is dynamic, its other
    dims are the input's.
  }];
  let arguments = (ins Prim_Tensor:$input, I64Attr:$dim, Index:$start, Index:$size);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `start` $start `size` $size attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

// Dynamic dims where nothing is padded.
def Prim_PadOp : Prim_DynamicOp<"pad"> {
  let summary = "pad with a constant: result[i] = input[i - low] inside the input, else `value`";
  let description = [{
    Every dim grows by `low` elements in front and `high` behind (both
    non-negative); the new elements are `value` (which may be -inf or +inf
    for float tensors, and must be an integer for integer tensors).
  }];
  let arguments = (ins Prim_Tensor:$input, DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high,
                       F64Attr:$value);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = [{
    $input `low` $low `high` $high `value` $value attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

// `dim` is static in every operand; other dims may be dynamic.
def Prim_ConcatenateOp : Prim_DynamicOp<"concatenate"> {
  let summary = "concatenate operands of one element type along `dim`";
  let arguments = (ins Variadic<Prim_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = "$inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def Prim_GatherOp : Prim_DynamicOp<"gather"> {
  let summary = "result[i] = input[i with i[dim] = clamp(wrap(index[i]))]";
  let description = [{
    A data-dependent index remap along `dim`: the result has the index's
    shape and the input's element type; index and input have one rank and
    every other index dim is at most the input's. A negative index adds the
    size of `dim`; what is then still outside `[0, size)` is clamped into it,
    so a gather never reads out of bounds.
  }];
  let arguments = (ins Prim_Tensor:$input, I64Attr:$dim, RankedTensorOf<[I32, I64]>:$index);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `index` $index attr-dict `:` type($input) `,` type($index) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions: remove `dims` from the shape.
//===----------------------------------------------------------------------===//

class Prim_ReduceOp<string mnemonic, string desc> : Prim_DynamicOp<mnemonic> {
  let summary = desc # " over `dims` (the dims are removed)";
  let arguments = (ins Prim_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = "$input `dims` $dims attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyReduce(*this); }
  }];
}

def Prim_ReduceSumOp : Prim_ReduceOp<"reduce_sum", "sum">;
def Prim_ReduceProdOp : Prim_ReduceOp<"reduce_prod", "product">;
def Prim_ReduceMaxOp : Prim_ReduceOp<"reduce_max", "maximum">;
def Prim_ReduceMinOp : Prim_ReduceOp<"reduce_min", "minimum">;

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

def Prim_DotGeneralOp : Prim_DynamicOp<"dot_general"> {
  let summary = "general contraction (batch dims, contracting dims)";
  let description = [{
    Result dims are: the batch dims, then lhs's free dims, then rhs's free dims.
    Operands and result share one element type.
  }];
  let arguments = (ins Prim_Tensor:$lhs, Prim_Tensor:$rhs,
                       DenseI64ArrayAttr:$lhs_batch, DenseI64ArrayAttr:$rhs_batch,
                       DenseI64ArrayAttr:$lhs_contract, DenseI64ArrayAttr:$rhs_contract);
  let results = (outs Prim_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `batch` $lhs_batch `,` $rhs_batch `contract` $lhs_contract `,` $rhs_contract
    attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Library primitives: computed by tuned libraries (see docs/library_calls.md),
// never fused; the fusion pass gives their operands and results buffers.
//===----------------------------------------------------------------------===//

def Prim_LibraryFloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
// Convolutions also take integers (ATen's CPU kernels).
def Prim_ConvolutionTensor : RankedTensorOf<[F16, BF16, F32, F64, I8, I16, I32, I64, UI8]>;

// A dynamic batch dim; the library reads it from the buffers.
def Prim_ConvolutionOp : Prim_DynamicOp<"convolution"> {
  let summary = "N-d convolution (1-3 spatial dims), optionally transposed, optional bias";
  let description = [{
    torch.convolution's shape rules (see `graph.convolution`). The bias is
    added inside the library call (its epilogue: one rounding, as eager's);
    the pointwise ops after it fuse into the kernel that reads the result.
    Operands and result share one element type.

    With `channels_last`, the input is `[N, *spatial, C_in]` and the result
    `[N, *spatial, C_out]` (the weight keeps torch's order): the library runs
    its channels-last kernels on them, as eager does for a tensor in
    `torch.channels_last` memory format. dyn-propagate-layouts introduces it.
  }];
  let arguments = (ins Prim_ConvolutionTensor:$input, Prim_ConvolutionTensor:$weight,
                       Optional<Prim_ConvolutionTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups, UnitAttr:$transposed,
                       OptionalAttr<DenseI64ArrayAttr>:$output_padding, UnitAttr:$channels_last);
  let results = (outs Prim_ConvolutionTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? `stride` $stride `padding` $padding `dilation` $dilation
    `groups` $groups (`transposed` $transposed^)? (`output_padding` $output_padding^)?
    (`channels_last` $channels_last^)? attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

// Dynamic batch and sequence dims; the library reads the sizes from the buffers.
def Prim_AttentionOp : Prim_DynamicOp<"attention"> {
  let summary = "softmax(q k^T * scale + mask) v, as one library call";
  let description = [{
    `graph.scaled_dot_product_attention` with its scale resolved: `query`
    `[..., L, E]`, `key` `[..., S, E]`, `value` `[..., S, Ev]`, an optional
    boolean or additive `mask` broadcasting to `[..., L, S]`, or `is_causal`.
  }];
  let arguments = (ins Prim_LibraryFloatTensor:$query, Prim_LibraryFloatTensor:$key,
                       Prim_LibraryFloatTensor:$value,
                       Optional<RankedTensorOf<[I1, F16, BF16, F32, F64]>>:$mask,
                       UnitAttr:$is_causal, F64Attr:$scale);
  let results = (outs Prim_LibraryFloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? (`causal` $is_causal^)? `scale` $scale
    attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

// Static shapes, except the calls whose results prim::libraryResultDim sizes (the backward
// calls that size their gradients as their operands, attention with its log-sum-exp; its verifier).
def Prim_LibraryCallOp : Prim_DynamicOp<"library_call"> {
  let summary = "results computed by a library call by name (several results allowed)";
  let description = [{
    Graph ops whose registry lowering is a library call (sort, topk,
    linalg.cholesky, ...) become this op: the implementation registered
    under `callee` (ATen's kernels under torch: python/src/aten_calls.cpp)
    computes every result from the operands and the integer `params` (the
    graph op's attributes, docs/library_calls.md). The fusion pass gives its
    operands and results buffers of their own and fuses around it; with
    `strided` (attention's calls) it reads an operand that is a view of
    another buffer (a slice, transpose or reshape with a unit innermost
    stride) in place.

    ```mlir
    %v, %i = prim.library_call "sort"(%x) params [1, 0, 1]
        : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi64>)
    ```
  }];
  let arguments = (ins StrAttr:$callee, Variadic<AnyRankedTensor>:$inputs,
                       DenseI64ArrayAttr:$params, UnitAttr:$strided);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $callee `(` $inputs `)` `params` $params attr-dict `:` functional-type($inputs, $results)
  }];
  let hasVerifier = 1;
}

#endif // DYN_PRIM_OPS
