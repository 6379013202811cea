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
// These take dynamic dims: their patterns size broadcasts from the operands.
class Dyn_Unary<string prim> : Dyn_ToPrim<prim, "UnaryToPrim", "Elementwise"> { let dynamicShapes = 1; }
class Dyn_Binary<string prim> : Dyn_ToPrim<prim, "BinaryToPrim", "Elementwise"> { let dynamicShapes = 1; }
class Dyn_Compare<string prim> : Dyn_ToPrim<prim, "CompareToPrim", "Elementwise"> { let dynamicShapes = 1; }
class Dyn_Elementwise<string cls> : Dyn_Composite<cls, "Elementwise"> { let dynamicShapes = 1; }

def Graph_ExpOp : Graph_UnaryOp<"exp", "exponential", Dyn_FloatRule, Dyn_Unary<"ExpOp">>;
def Graph_LogOp : Graph_UnaryOp<"log", "natural logarithm", Dyn_FloatRule, Dyn_Unary<"LogOp">>;
def Graph_SinOp : Graph_UnaryOp<"sin", "sine", Dyn_FloatRule, Dyn_Unary<"SinOp">>;
def Graph_CosOp : Graph_UnaryOp<"cos", "cosine", Dyn_FloatRule, Dyn_Unary<"CosOp">>;
def Graph_TanOp : Graph_UnaryOp<"tan", "tangent", Dyn_FloatRule, Dyn_Unary<"TanOp">>;
def Graph_TanhOp : Graph_UnaryOp<"tanh", "hyperbolic tangent", Dyn_FloatRule, Dyn_Unary<"TanhOp">>;
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", "logistic sigmoid 1/(1+exp(-x))", Dyn_FloatRule,
                                    Dyn_Unary<"LogisticOp">> {
  let torchNames = ["torch.sigmoid", "Tensor.sigmoid", "aten.sigmoid", "torch.special.expit"];
}
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
// Bitwise ops of integers and booleans. A shift by a negative amount or by
// the type's width or more gives 0 (left) or the sign fill (right), as
// eager's kernels do.
def Graph_BitwiseAndOp : Graph_BinaryOp<"bitwise_and", "bitwise and", Dyn_PromoteIntegerRule,
                                        Dyn_Binary<"AndOp">>;
def Graph_BitwiseOrOp : Graph_BinaryOp<"bitwise_or", "bitwise or", Dyn_PromoteIntegerRule,
                                       Dyn_Binary<"OrOp">>;
def Graph_BitwiseXorOp : Graph_BinaryOp<"bitwise_xor", "bitwise exclusive or", Dyn_PromoteIntegerRule,
                                        Dyn_Binary<"XorOp">>;
def Graph_BitwiseLeftShiftOp : Graph_BinaryOp<"bitwise_left_shift", "shift left",
                                              Dyn_PromoteIntegerRule, Dyn_Binary<"ShlOp">>;
def Graph_BitwiseRightShiftOp : Graph_BinaryOp<"bitwise_right_shift", "arithmetic shift right",
                                               Dyn_PromoteIntegerRule, Dyn_Binary<"ShrOp">>;
def Graph_BitwiseNotOp : Graph_UnaryOp<"bitwise_not", "bitwise not (logical for bool)",
                                       Dyn_KeepsIntegerRule, Dyn_Unary<"NotOp">>;
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
// Integers raise to integer powers as eager's powi (square and multiply, wrapping; a negative
// exponent gives 0 but for bases 1 and -1).
def Graph_PowOp : Graph_BinaryOp<"pow", "power", Dyn_PromoteNumericRule, Dyn_Binary<"PowOp">>;

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

// Tensor.detach(): the same value, cut from differentiation (dyn-graph-autodiff
// gives it no gradient). Lowered to its operand.
def Graph_DetachOp : Graph_Op<"detach", [AllTypesMatch<["input", "result"]>], []> {
  let summary = "the operand's value, with no gradient flowing through it";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
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


// Pointwise math added through the registry (GraphToPrim/Math.cpp holds the
// composites). `torchNames` adds PyTorch's aliases to the class's defaults.
class Dyn_Math<string cls> : Dyn_Composite<cls, "Math">;

def Graph_SinhOp : Graph_UnaryOp<"sinh", "hyperbolic sine", Dyn_FloatRule, Dyn_Unary<"SinhOp">>;
def Graph_CoshOp : Graph_UnaryOp<"cosh", "hyperbolic cosine", Dyn_FloatRule, Dyn_Unary<"CoshOp">>;
def Graph_AsinOp : Graph_UnaryOp<"asin", "arcsine", Dyn_FloatRule, Dyn_Unary<"AsinOp">> {
  let torchNames = ["torch.asin", "Tensor.asin", "aten.asin", "torch.arcsin", "Tensor.arcsin"];
}
def Graph_AcosOp : Graph_UnaryOp<"acos", "arccosine", Dyn_FloatRule, Dyn_Unary<"AcosOp">> {
  let torchNames = ["torch.acos", "Tensor.acos", "aten.acos", "torch.arccos", "Tensor.arccos"];
}
def Graph_AtanOp : Graph_UnaryOp<"atan", "arctangent", Dyn_FloatRule, Dyn_Unary<"AtanOp">> {
  let torchNames = ["torch.atan", "Tensor.atan", "aten.atan", "torch.arctan", "Tensor.arctan"];
}
def Graph_AsinhOp : Graph_UnaryOp<"asinh", "inverse hyperbolic sine", Dyn_FloatRule,
                                  Dyn_Unary<"AsinhOp">> {
  let torchNames = ["torch.asinh", "Tensor.asinh", "aten.asinh", "torch.arcsinh", "Tensor.arcsinh"];
}
def Graph_AcoshOp : Graph_UnaryOp<"acosh", "inverse hyperbolic cosine", Dyn_FloatRule,
                                  Dyn_Unary<"AcoshOp">> {
  let torchNames = ["torch.acosh", "Tensor.acosh", "aten.acosh", "torch.arccosh", "Tensor.arccosh"];
}
def Graph_AtanhOp : Graph_UnaryOp<"atanh", "inverse hyperbolic tangent", Dyn_FloatRule,
                                  Dyn_Unary<"AtanhOp">> {
  let torchNames = ["torch.atanh", "Tensor.atanh", "aten.atanh", "torch.arctanh", "Tensor.arctanh"];
}
def Graph_Exp2Op : Graph_UnaryOp<"exp2", "2^x", Dyn_FloatRule, Dyn_Unary<"Exp2Op">> {
  let torchNames = ["torch.exp2", "Tensor.exp2", "aten.exp2", "torch.special.exp2"];
}
def Graph_Log2Op : Graph_UnaryOp<"log2", "base-2 logarithm", Dyn_FloatRule, Dyn_Unary<"Log2Op">>;
def Graph_Log10Op : Graph_UnaryOp<"log10", "base-10 logarithm", Dyn_FloatRule, Dyn_Unary<"Log10Op">>;
def Graph_ErfcOp : Graph_UnaryOp<"erfc", "complementary error function", Dyn_FloatRule,
                                 Dyn_Unary<"ErfcOp">> {
  let torchNames = ["torch.erfc", "Tensor.erfc", "aten.erfc", "torch.special.erfc"];
}
// Rounding toward zero and to nearest (ties to even): the identity on integers.
def Graph_TruncOp : Graph_UnaryOp<"trunc", "round toward zero", Dyn_KeepsTypeRule,
                                  Dyn_Unary<"TruncOp">> {
  let torchNames = ["torch.trunc", "Tensor.trunc", "aten.trunc", "torch.fix", "Tensor.fix"];
}
def Graph_RoundOp : Graph_UnaryOp<"round", "round to nearest, ties to even", Dyn_KeepsTypeRule,
                                  Dyn_Unary<"RoundOp">> {
  // torch.round(x, decimals=d) is captured by a handler (ops/handlers/arith.py).
  let torchNames = ["aten.round"];
}
// round(x, decimals): as eager's kernel, round(x * 10^d) / 10^d, or
// round(x / 10^-d) * 10^-d for negative d, 10^|d| and each step in x's type.
def Graph_RoundDecimalsOp : Graph_RegisteredOp<"round_decimals", "rounding", Dyn_KeepsFloatRule,
                                               Dyn_SameShape, Dyn_Math<"RoundDecimalsToPrim">> {
  let summary = "round to `decimals` decimal places, ties to even";
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$decimals);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let eager = "torch.round({input}, decimals={decimals})";
}
def Graph_FracOp : Graph_UnaryOp<"frac", "x - trunc(x)", Dyn_KeepsFloatRule,
                                 Dyn_Math<"FracToPrim">> {
  let arguments = (ins Graph_FloatTensor:$input);
}
// sign (sgn of real numbers): 1, -1, or 0 (also for NaN and -0.0, as eager's
// kernel); the identity on booleans.
def Graph_SignOp : Graph_UnaryOp<"sign", "sign", Dyn_KeepsElementRule, Dyn_Math<"SignToPrim">> {
  let torchNames = ["torch.sign", "Tensor.sign", "aten.sign", "torch.sgn", "Tensor.sgn", "aten.sgn"];
}

// Classification: a boolean result of the operand's shape; integers are finite.
class Graph_ClassifyOp<string mnemonic, string desc, string cls>
    : Graph_UnaryOp<mnemonic, desc, Dyn_BoolRule, Dyn_Math<cls>> {
  let family = "classify";
}
def Graph_IsNanOp : Graph_ClassifyOp<"isnan", "x != x", "IsNanToPrim">;
def Graph_IsInfOp : Graph_ClassifyOp<"isinf", "|x| == inf", "IsInfToPrim">;
def Graph_IsFiniteOp : Graph_ClassifyOp<"isfinite", "|x| < inf", "IsFiniteToPrim">;
def Graph_IsPosInfOp : Graph_ClassifyOp<"isposinf", "x == inf", "IsPosInfToPrim">;
def Graph_IsNegInfOp : Graph_ClassifyOp<"isneginf", "x == -inf", "IsNegInfToPrim">;

// atan2 is not registered yet: the CPU path's math.atan2 gives NaN at (0, 0)
// (docs/ops.md, known gaps); prim.atan2 exists.
def Graph_CopySignOp : Graph_BinaryOp<"copysign", "|lhs| with the sign of rhs", Dyn_FloatRule,
                                      Dyn_Binary<"CopySignOp">>;
// C fmod: the remainder with the dividend's sign (integers: truncating division;
// capture admits only nonzero Python-number divisors there).
def Graph_FmodOp : Graph_BinaryOp<"fmod", "C remainder", Dyn_PromoteNumericRule,
                                  Dyn_Math<"FmodToPrim">> {
  let torchNames = ["aten.fmod"];
}
// div with a rounding mode (torch.div(rounding_mode=), floor_divide, //):
// `trunc` rounds the quotient toward zero; `floor` is eager's div_floor: the
// quotient of lhs minus its remainder, fixed up (not floor(lhs / rhs)).
// Integers divide exactly (capture checks for zero divisors first). Floats
// compute in f32 for f16/bf16; with `round_steps` each step's result is
// rounded to the result type first, as eager's kernels do for a tensor
// divisor (trunc on both devices, floor on the CPU; capture decides). A 0-d
// operand of a wider float type than the result stands for a Python number.
def Graph_DivRoundedOp : Graph_RegisteredOp<"div_rounded", "div_rounded", Dyn_MetaRule, Dyn_Broadcast,
                                            Dyn_Composite<"DivRoundedToPrim", "Math">> {
  let summary = "division rounded toward zero or down, as eager rounds it";
  let arguments = (ins Graph_NumericTensor:$lhs, Graph_NumericTensor:$rhs, StrAttr:$rounding_mode,
                       BoolAttr:$round_steps);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      if (getRoundingMode() != "trunc" && getRoundingMode() != "floor")
        return emitOpError("rounding_mode must be trunc or floor");
      ::mlir::Type et = getType().getElementType();
      if (!::llvm::isa<::mlir::FloatType>(et) &&
          (tensorType(getLhs()).getElementType() != et || tensorType(getRhs()).getElementType() != et))
        return emitOpError("integer operands must have the result's type");
      return ::mlir::success();
    }
  }];
  let eager = "_rt.div_rounded({lhs}, {rhs}, {rounding_mode})";
}
def Graph_HypotOp : Graph_BinaryOp<"hypot", "sqrt(lhs^2 + rhs^2) without overflow", Dyn_FloatRule,
                                   Dyn_Math<"HypotToPrim">>;
def Graph_LogAddExpOp : Graph_BinaryOp<"logaddexp", "log(exp(lhs) + exp(rhs))", Dyn_FloatRule,
                                       Dyn_Math<"LogAddExpToPrim">>;
def Graph_LogAddExp2Op : Graph_BinaryOp<"logaddexp2", "log2(2^lhs + 2^rhs)", Dyn_FloatRule,
                                        Dyn_Math<"LogAddExp2ToPrim">>;
def Graph_XLogYOp : Graph_BinaryOp<"xlogy", "lhs * log(rhs), 0 where lhs is 0", Dyn_FloatRule,
                                   Dyn_Math<"XLogYToPrim">> {
  let torchNames = ["torch.xlogy", "Tensor.xlogy", "aten.xlogy", "torch.special.xlogy"];
}

// lerp and addcmul/addcdiv: three operands, computed in float32 for float16 and
// bfloat16 and rounded once, as eager's kernels compute them.
def Graph_LerpOp : Graph_RegisteredOp<"lerp", "ternary", Dyn_FloatRule, Dyn_Broadcast,
                                      Dyn_Math<"LerpToPrim">> {
  let summary = "start + weight * (end - start), with broadcasting";
  let description = "As eager's kernel: `start + w * (end - start)` where `|w| < 0.5`, else "
                    "`end - (end - start) * (1 - w)`.";
  let arguments = (ins Graph_FloatTensor:$start, Graph_FloatTensor:$end, Graph_FloatTensor:$weight);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $start `,` $end `,` $weight attr-dict `:` type($start) `,` type($end) `,` type($weight) `->` type($result)
  }];
  let eager = "torch.lerp({start}, {end}, {weight})";
}

class Graph_AddcOp<string mnemonic, string desc, string cls, string eagerExpr>
    : Graph_RegisteredOp<mnemonic, "ternary", Dyn_PromoteNumericRule, Dyn_Broadcast, Dyn_Math<cls>> {
  let summary = desc # ", with broadcasting";
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$tensor1, Graph_Tensor:$tensor2,
                       F64Attr:$value);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = [{
    $input `,` $tensor1 `,` $tensor2 attr-dict `:` type($input) `,` type($tensor1) `,` type($tensor2) `->` type($result)
  }];
  let torchNames = ["torch." # mnemonic, "Tensor." # mnemonic, "aten." # mnemonic];
  let signature = "input, tensor1, tensor2, *, value=1";
  let eager = eagerExpr;
}
def Graph_AddcmulOp : Graph_AddcOp<"addcmul", "input + value * tensor1 * tensor2", "AddcmulToPrim",
    "torch.addcmul({input}.to({dtype}), {tensor1}.to({dtype}), {tensor2}.to({dtype}), value={value} if {dtype}.is_floating_point else int({value}))">;
def Graph_AddcdivOp : Graph_AddcOp<"addcdiv", "input + value * tensor1 / tensor2", "AddcdivToPrim",
    "torch.addcdiv({input}.to({dtype}), {tensor1}.to({dtype}), {tensor2}.to({dtype}), value={value})">;

// clamp, clip, clamp_min, clamp_max: min(max(input, min), max). NaN in any
// operand propagates and `max` wins where min > max, as eager's. Capture
// converts the operands to the promoted type and passes a missing bound as
// the type's extreme (-inf or +inf, an integer type's least or greatest
// value), so that one op serves all four.
def Graph_ClampOp : Graph_RegisteredOp<"clamp", "ternary", Dyn_PromoteNumericRule, Dyn_Broadcast,
                                       Dyn_Math<"ClampToPrim">,
                                       [AllElementTypesMatch<["input", "min", "max", "result"]>]> {
  let summary = "input limited to [min, max], with broadcasting";
  let arguments = (ins Graph_NumericTensor:$input, Graph_NumericTensor:$min,
                       Graph_NumericTensor:$max);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = [{
    $input `,` $min `,` $max attr-dict `:` type($input) `,` type($min) `,` type($max) `->` type($result)
  }];
  let torchNames = ["torch.clamp", "Tensor.clamp", "aten.clamp", "torch.clip", "Tensor.clip"];
  let eager = "torch.clamp({input}, {min}, {max})";
}

//===----------------------------------------------------------------------===//
// Activations (registered; GraphToPrim/Activations.cpp decomposes them)
//===----------------------------------------------------------------------===//

// A float tensor in, the same type out; computed in float32 for float16 and
// bfloat16 and rounded once (eager's kernels do the same). `signature` is the
// torch.nn.functional function's: capture records the op with its attributes.
class Dyn_Activation<string cls> : Dyn_Composite<cls, "Activations"> { let dynamicShapes = 1; }
class Graph_ActivationOp<string mnemonic, string desc, string cls, dag attrs, string sig,
                         string eagerExpr>
    : Graph_RegisteredOp<mnemonic, "activation", Dyn_KeepsFloatRule, Dyn_SameShape,
                         Dyn_Activation<cls>> {
  let summary = desc;
  let description = "`" # desc # "` elementwise (torch.nn.functional." # mnemonic # ").";
  let arguments = !con((ins Graph_FloatTensor:$input), attrs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let torchNames = ["torch.nn.functional." # mnemonic, "aten." # mnemonic];
  let signature = sig;
  let eager = eagerExpr;
}

def Graph_GeluOp : Graph_ActivationOp<"gelu", "x * Phi(x) (approximate: none, or tanh)", "GeluToPrim",
    (ins StrAttr:$approximate), "input, approximate='none'", "F.gelu({input}, approximate={approximate})"> {
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      if (getApproximate() != "none" && getApproximate() != "tanh")
        return emitOpError("approximate must be \"none\" or \"tanh\", not \"") << getApproximate() << "\"";
      return ::mlir::success();
    }
  }];
}
def Graph_SiluOp : Graph_ActivationOp<"silu", "x * sigmoid(x)", "SiluToPrim", (ins),
    "input, inplace=False", "F.silu({input})">;
def Graph_MishOp : Graph_ActivationOp<"mish", "x * tanh(softplus(x))", "MishToPrim", (ins),
    "input, inplace=False", "F.mish({input})">;
def Graph_EluOp : Graph_ActivationOp<"elu", "x > 0 ? x : alpha * (exp(x) - 1)", "EluToPrim",
    (ins F64Attr:$alpha), "input, alpha=1.0, inplace=False", "F.elu({input}, {alpha})"> {
  let torchNames = ["torch.nn.functional.elu"];
}
def Graph_SeluOp : Graph_ActivationOp<"selu", "scale * elu(x, alpha) with SELU's constants", "SeluToPrim",
    (ins), "input, inplace=False", "F.selu({input})"> {
  let torchNames = ["torch.nn.functional.selu", "torch.selu", "aten.selu"];
}
def Graph_CeluOp : Graph_ActivationOp<"celu", "x > 0 ? x : alpha * (exp(x / alpha) - 1)", "CeluToPrim",
    (ins F64Attr:$alpha), "input, alpha=1.0, inplace=False", "F.celu({input}, {alpha})"> {
  let torchNames = ["torch.nn.functional.celu", "torch.celu"];
}
def Graph_SoftplusOp : Graph_ActivationOp<"softplus", "log(1 + exp(beta * x)) / beta (x where beta * x > threshold)",
    "SoftplusToPrim", (ins F64Attr:$beta, F64Attr:$threshold), "input, beta=1.0, threshold=20.0",
    "F.softplus({input}, {beta}, {threshold})">;
def Graph_LogSigmoidOp : Graph_ActivationOp<"logsigmoid", "log(sigmoid(x))", "LogSigmoidToPrim", (ins),
    "input", "F.logsigmoid({input})"> {
  let torchNames = ["torch.nn.functional.logsigmoid"];
}
def Graph_HardswishOp : Graph_ActivationOp<"hardswish", "x * clamp(x + 3, 0, 6) / 6", "HardswishToPrim", (ins),
    "input, inplace=False", "F.hardswish({input})">;
def Graph_HardsigmoidOp : Graph_ActivationOp<"hardsigmoid", "clamp(x + 3, 0, 6) / 6", "HardsigmoidToPrim", (ins),
    "input, inplace=False", "F.hardsigmoid({input})">;
def Graph_SoftsignOp : Graph_ActivationOp<"softsign", "x / (1 + |x|)", "SoftsignToPrim", (ins),
    "input", "F.softsign({input})"> {
  let torchNames = ["torch.nn.functional.softsign"];
}
def Graph_TanhshrinkOp : Graph_ActivationOp<"tanhshrink", "x - tanh(x)", "TanhshrinkToPrim", (ins),
    "input", "F.tanhshrink({input})"> {
  let torchNames = ["torch.nn.functional.tanhshrink"];
}
def Graph_SoftshrinkOp : Graph_ActivationOp<"softshrink", "x - lambd, x + lambd or 0", "SoftshrinkToPrim",
    (ins F64Attr:$lambd), "input, lambd=0.5", "F.softshrink({input}, {lambd})">;
def Graph_HardshrinkOp : Graph_ActivationOp<"hardshrink", "x where |x| > lambd, else 0", "HardshrinkToPrim",
    (ins F64Attr:$lambd), "input, lambd=0.5", "F.hardshrink({input}, {lambd})">;
def Graph_ThresholdOp : Graph_ActivationOp<"threshold", "x > threshold ? x : value", "ThresholdToPrim",
    (ins F64Attr:$threshold, F64Attr:$value), "input, threshold, value, inplace=False",
    "F.threshold({input}, {threshold}, {value})"> {
  let torchNames = ["torch.nn.functional.threshold", "torch.threshold", "aten.threshold"];
}
def Graph_LeakyReluOp : Graph_ActivationOp<"leaky_relu", "x > 0 ? x : negative_slope * x", "LeakyReluToPrim",
    (ins F64Attr:$negative_slope), "input, negative_slope=0.01, inplace=False",
    "F.leaky_relu({input}, {negative_slope})">;
// hardtanh (and relu6): clamp to [min_val, max_val], NaN kept. Integer tensors
// are clamped by capture (graph.maximum/minimum).
def Graph_HardtanhOp : Graph_ActivationOp<"hardtanh", "clamp(x, min_val, max_val)", "HardtanhToPrim",
    (ins F64Attr:$min_val, F64Attr:$max_val), "", "F.hardtanh({input}, {min_val}, {max_val})"> {
  let torchNames = ["aten.hardtanh"];
}

// glu: the first half of `dim` times the sigmoid of the second (F.glu).
// F.bilinear on [B, in1] and [B, in2] inputs (capture flattens the batch
// dims): y[b, k] = sum_ij x1[b, i] w[k, i, j] x2[b, j] (+ bias[k]), one GEMM
// with w as [in1, out * in2], then a product with x2 summed over in2 (f16/bf16
// in f32, integers in i64, rounded once), the bias added in the result type.
def Graph_BilinearOp : Graph_RegisteredOp<"bilinear", "bilinear", Dyn_KeepsElementRule, Dyn_MetaShape,
                                          Dyn_Composite<"BilinearToPrim", "Linalg">> {
  let summary = "the bilinear form x1^T W x2 per output feature (F.bilinear)";
  let arguments = (ins Graph_NumericTensor:$input, Graph_NumericTensor:$input2, Graph_NumericTensor:$weight,
                       Optional<Graph_NumericTensor>:$bias);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let eager = "F.bilinear({input}, {input2}, {weight}, {bias})";
}

// The cross product of 3-vectors along `dim` (torch.linalg.cross); the
// operands are broadcast and converted to the result type by capture.
def Graph_CrossOp : Graph_RegisteredOp<"cross", "products", Dyn_KeepsTypeRule, Dyn_SameShape,
                                       Dyn_Composite<"CrossToPrim", "Linalg">,
                                       [AllTypesMatch<["input", "other", "result"]>]> {
  let summary = "cross product of 3-vectors along `dim`";
  let arguments = (ins Graph_NumericTensor:$input, Graph_NumericTensor:$other, I64Attr:$dim);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$input `,` $other attr-dict `:` type($input) `,` type($other) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      int64_t rank = getType().getRank(), dim = getDim();
      if (dim < 0 || dim >= rank || getType().getDimSize(dim) != 3)
        return emitOpError("dim must be a dim of size 3");
      return ::mlir::success();
    }
  }];
  let torchNames = ["torch.cross", "Tensor.cross"];
  let eager = "torch.linalg.cross({input}, {other}, dim={dim})";
}

def Graph_GluOp : Graph_RegisteredOp<"glu", "gated", Dyn_KeepsElementRule, Dyn_MetaShape,
                                     Dyn_Composite<"GluToPrim", "Activations">> {
  let summary = "a * sigmoid(b), a and b the halves of `dim`";
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let torchNames = ["torch.nn.functional.glu", "aten.glu"];
  let signature = "input, dim=-1";
  let eager = "F.glu({input}, {dim})";
}

// prelu: x > 0 ? x : w * x, `weight` one value or one per channel (dim 1; 0
// for a 1-d input).
def Graph_PreluOp : Graph_RegisteredOp<"prelu", "gated", Dyn_KeepsElementRule, Dyn_MetaShape,
                                       Dyn_Composite<"PreluToPrim", "Activations">,
                                       [AllElementTypesMatch<["input", "weight", "result"]>]> {
  let summary = "x > 0 ? x : weight * x, the weight per channel";
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` type($input) `,` type($weight) `->` type($result)";
  let hasVerifier = 1;
  let torchNames = ["torch.nn.functional.prelu", "aten.prelu"];
  let eager = "F.prelu({input}, {weight})";
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// The result element type is free for sum and prod (their `dtype` argument),
// the input's for amax and amin, a float for mean. Empty `dims` reduce nothing.
// Dynamic dims stay where they are (verifyReduction); a reduced one is counted at run time.
class Dyn_Reduction<string prim> : Dyn_ToPrim<prim, "ReductionToPrim", "Reductions"> {
  let dynamicShapes = 1;
  let dynamicShapeTraits = [];
}
class Graph_RegisteredReductionOp<string mnemonic, string desc, Dyn_TypeRule rule, string prim>
    : Graph_RegisteredOp<mnemonic, "reduce", rule, Dyn_Reduce, Dyn_Reduction<prim>> {
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

// var and std: the squared deviations from the mean over `dims`, summed and
// divided by max(0, N - correction) (N elements reduced; NaN or inf where
// that is 0, as eager), and the square root of that for std. Two passes (the
// mean, then the deviations); float16 and bfloat16 compute in float32 and
// round once, as eager's kernels do.
class Graph_MomentOp<string mnemonic, string desc, string cls>
    : Graph_RegisteredOp<mnemonic, "statistics", Dyn_FloatRule, Dyn_Reduce,
                         Dyn_Composite<cls, "CompositeReductions">,
                         [AllElementTypesMatch<["input", "result"]>]> {
  let summary = desc # " over `dims`";
  let arguments = (ins Graph_FloatTensor:$input, DenseI64ArrayAttr:$dims, F64Attr:$correction,
                       UnitAttr:$keepdim);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyReduction(*this); }
  }];
  let torchNames = ["torch." # mnemonic, "Tensor." # mnemonic, "aten." # mnemonic];
  let eager = "torch." # mnemonic # "({input}, {dims}, correction={correction}, keepdim={keepdim})";
}
def Graph_VarOp : Graph_MomentOp<"var", "variance", "VarToPrim">;
def Graph_StdOp : Graph_MomentOp<"std", "standard deviation", "StdToPrim">;

// Reductions outside the registry (GraphFamilyOps.td: all, any, logsumexp).
class Graph_ReductionOp<string mnemonic, string desc, Type resultType = Graph_Tensor,
                        list<Trait> traits = []> : Graph_Op<mnemonic, traits> {
  let summary = desc # " over `dims`";
  let description = "Reduces `input` over `dims` (" # desc # "). With `keepdim` "
                    "the reduced dims stay as size 1; without it they are dropped.";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$dims, UnitAttr:$keepdim);
  let results = (outs resultType:$result);
  let assemblyFormat = [{
    $input `dims` $dims (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyReduction(*this); }
  }];
}

def Graph_SumOp : Graph_RegisteredReductionOp<"sum", "sum", Dyn_FreeRule, "ReduceSumOp">;
def Graph_MeanOp : Graph_RegisteredReductionOp<"mean", "arithmetic mean", Dyn_FloatRule, "ReduceSumOp">;
def Graph_AmaxOp : Graph_RegisteredReductionOp<"amax", "maximum", Dyn_KeepsElementRule, "ReduceMaxOp">;
def Graph_AminOp : Graph_RegisteredReductionOp<"amin", "minimum", Dyn_KeepsElementRule, "ReduceMinOp">;
def Graph_ProdOp : Graph_RegisteredReductionOp<"prod", "product", Dyn_FreeRule, "ReduceProdOp"> {
  let eager = "_rt.prod({input}, {dims}, {keepdim})";
}
// nansum: the sum with NaNs counted as 0 (a select before the sum).
def Graph_NansumOp : Graph_RegisteredOp<"nansum", "reduce", Dyn_FreeRule, Dyn_Reduce,
                                        Dyn_Composite<"NansumToPrim", "Reductions">> {
  let summary = "sum over `dims`, NaN counted as 0";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$dims, UnitAttr:$keepdim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `dims` $dims (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyReduction(*this); }
  }];
  let torchNames = ["torch.nansum", "Tensor.nansum", "aten.nansum"];
  let eager = "_rt.reduce(torch.nansum, {input}, {dims}, {keepdim})";
}

class Graph_SoftmaxLikeOp<string mnemonic, string desc>
    : Graph_Op<mnemonic, [SameOperandsAndResultType], []> {
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

// aten._safe_softmax (what PyTorch's attention decomposes into): softmax,
// with 0 for a row whose every element is -inf (softmax's is NaN there).
def Graph_SafeSoftmaxOp
    : Graph_RegisteredOp<"safe_softmax", "softmax", Dyn_KeepsFloatRule, Dyn_SameShape,
                         Dyn_Composite<"SafeSoftmaxToPrim", "Normalization">> {
  let summary = "softmax along `dim`, 0 where a row is all -inf";
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyDimInRange(*this, getDim()); }
  }];
  let torchNames = ["aten._safe_softmax"];
  let eager = "torch.ops.aten._safe_softmax.default({input}, {dim})";
}

// softmax's gradient at its output y: (grad - sum(grad * y, dim)) * y
// (aten._softmax_backward_data; f16/bf16 in f32, rounded once). Dynamic dims
// anywhere (the operands and result have one type).
def Graph_SoftmaxBackwardOp
    : Graph_RegisteredOp<"softmax_backward", "softmax_backward", Dyn_MetaRule, Dyn_SameShape,
                         Dyn_DynamicComposite<"SoftmaxBackwardToPrim", "Normalization">,
                         [AllTypesMatch<["grad_output", "output", "result"]>]> {
  let summary = "softmax's input gradient from its output";
  let arguments = (ins Graph_FloatTensor:$grad_output, Graph_FloatTensor:$output, I64Attr:$dim);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $grad_output `,` $output attr-dict `:` type($grad_output) `,` type($output) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyDimInRange(*this, getDim()); }
  }];
  let torchNames = ["aten._softmax_backward_data"];
  let eager = "torch.ops.aten._softmax_backward_data({grad_output}, {output}, {dim}, {output}.dtype)";
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

def Graph_MatmulOp : Graph_Op<"matmul", [], []> {
  let summary = "matrix product (torch.matmul on 2-D or batched operands)";
  let description = [{
    `[batch..., M, K] @ [K, N]` or `[batch..., M, K] @ [batch..., K, N]`
    (batch dims equal) to `[batch..., M, N]`. Dynamic (`?`) dims are allowed
    anywhere; a dim that meets another (K, the batch dims) must be `?` on
    both sides or the same constant.

    The operands are converted to the result's element type. Integer
    products wrap in it, as eager's CPU kernels do (eager has no CUDA kernel
    for them).
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
}

// addmm and baddbmm (and, through reshapes, addmv, addbmm and addr): a GEMM
// with an added term. `beta` 0 ignores `input` (NaN and inf too), as eager's
// GEMMs do; integer types take alpha and beta truncated. The epilogue is
// computed in float32 for float16 and bfloat16 and rounded once.
def Graph_AddmmOp : Graph_RegisteredOp<"addmm", "linalg", Dyn_PromoteNumericRule, Dyn_MetaShape,
                                       Dyn_DynamicComposite<"AddmmToPrim", "Linalg">,
                                       [AllElementTypesMatch<["input", "lhs", "rhs", "result"]>]> {
  let summary = "beta * input + alpha * (lhs @ rhs), lhs and rhs 2-D or batched 3-D";
  let arguments = (ins Graph_NumericTensor:$input, Graph_NumericTensor:$lhs,
                       Graph_NumericTensor:$rhs, F64Attr:$alpha, F64Attr:$beta);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = [{
    $input `,` $lhs `,` $rhs attr-dict `:` type($input) `,` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let torchNames = ["torch.addmm", "Tensor.addmm", "aten.addmm"];
  let eager = "(torch.baddbmm if {lhs}.dim() == 3 else torch.addmm)({input}, {lhs}, {rhs}, "
              "beta={beta} if {dtype}.is_floating_point else int({beta}), "
              "alpha={alpha} if {dtype}.is_floating_point else int({alpha}))";
}

// vecdot: sum(lhs * rhs) over `dim` (dot, vdot, a 1-d matmul,
// linalg.vecdot); float16/bfloat16 multiply and sum in float32 and round once,
// integers wrap in their type.
def Graph_VecdotOp : Graph_RegisteredOp<"vecdot", "linalg", Dyn_PromoteNumericRule, Dyn_MetaShape,
                                        Dyn_Composite<"VecdotToPrim", "Linalg">,
                                        [AllElementTypesMatch<["lhs", "rhs", "result"]>,
                                         AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "sum of lhs * rhs over `dim`";
  let arguments = (ins Graph_NumericTensor:$lhs, Graph_NumericTensor:$rhs, I64Attr:$dim);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
  let torchNames = ["torch.dot", "torch.vdot", "torch.linalg.vecdot", "aten.dot", "aten.vdot"];
  let eager = "torch.linalg.vecdot({lhs}, {rhs}, dim={dim}).to({dtype})";
}

// trace: the sum of a matrix's diagonal, in the result's type (int64 for
// integers and booleans, as eager).
def Graph_TraceOp : Graph_RegisteredOp<"trace", "linalg", Dyn_FreeRule, Dyn_MetaShape,
                                       Dyn_Composite<"TraceToPrim", "Linalg">> {
  let summary = "sum of the diagonal of a matrix";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let torchNames = ["torch.trace", "Tensor.trace", "aten.trace"];
  let eager = "torch.trace({input}).to({dtype})";
}

//===----------------------------------------------------------------------===//
// Shape manipulation (views in PyTorch; values here)
//===----------------------------------------------------------------------===//

def Graph_ReshapeOp : Graph_Op<"reshape", [], []> {
  let summary = "reshape to the result shape (same element count)";
  let description = [{
    `sizes`, when given, has one `index` per dynamic (`?`) result dim, in
    order. Without it, each `?` result dim is the `?` input dim at the same
    position counting from the front, else from the back; at most one `?`
    result dim has neither, and it is the element count divided by the other
    result dims.
  }];
  let arguments = (ins Graph_Tensor:$input, Variadic<Index>:$sizes);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input (`sizes` `(` $sizes^ `)`)? attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input), [{
    build($_builder, $_state, result, input, ::mlir::ValueRange());
  }]>];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Graph_PermuteOp : Graph_Op<"permute", [AllElementTypesMatch<["input", "result"]>], []> {
  let summary = "permute dimensions";
  let description = "Result dim `i` is input dim `dims[i]`.";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `dims` $dims attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ExpandOp : Graph_Op<"expand", [AllElementTypesMatch<["input", "result"]>], []> {
  let summary = "broadcast to the result shape (Tensor.expand)";
  let description = [{
    A dynamic (`?`) input dim stays `?` (it is never broadcast). `sizes`,
    when given, has one `index` per `?` result dim, in order; without it
    every `?` result dim is a `?` input dim.
  }];
  let arguments = (ins Graph_Tensor:$input, Variadic<Index>:$sizes);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input (`sizes` `(` $sizes^ `)`)? attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input), [{
    build($_builder, $_state, result, input, ::mlir::ValueRange());
  }]>];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_SliceOp : Graph_Op<"slice", [AllElementTypesMatch<["input", "result"]>], []> {
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

def Graph_CatOp : Graph_Op<"cat", [], []> {
  let summary = "concatenate along `dim` (torch.cat)";
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

// The runtime size of a dim, for the sizes of reshapes and expands (a static
// dim becomes a constant in the decomposition: prim.dim folds).
def Graph_DimOp : Graph_RegisteredOp<"dim", "shape", Dyn_IndexRule, Dyn_MetaShape,
                                     Dyn_DynamicComposite<"DimToPrim", "DataMovement">> {
  let summary = "the size of dim `dim` of a tensor, as an index";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$input `,` $dim attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let eager = "{input}.shape[{dim}]";
}

// 0, 1, ..., n-1 (torch.arange of a size known at run time): `sizes` has the
// length where the result dim is dynamic.
def Graph_IotaOp : Graph_RegisteredOp<"iota", "shape", Dyn_FreeRule, Dyn_MetaShape,
                                      Dyn_DynamicComposite<"IotaToPrim", "DataMovement">> {
  let summary = "0, 1, ..., n-1 as a 1-D tensor (torch.arange(n))";
  let description = [{
    A 1-D integer or float tensor of its length; `sizes` gives the length
    where the result dim is dynamic (`?`), and is absent where it is static.

    ```mlir
    %r = graph.iota sizes(%n) : tensor<?xi64>
    %s = graph.iota : tensor<16xf32>
    ```
  }];
  let arguments = (ins Variadic<Index>:$sizes);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "(`sizes` `(` $sizes^ `)`)? attr-dict `:` type($result)";
  let hasVerifier = 1;
  let eager = "torch.arange({sizes}, dtype={dtype})";
}

// x[..., start:end] along `dim` with runtime bounds (a position-ids buffer
// sliced to the sequence length, a key/value cache sliced).
def Graph_DynamicSliceOp : Graph_RegisteredOp<"dynamic_slice", "shape", Dyn_KeepsElementRule, Dyn_MetaShape,
                                              Dyn_DynamicComposite<"DynamicSliceToPrim", "DataMovement">> {
  let summary = "slice [start, end) along `dim` with runtime bounds (step 1)";
  let description = [{
    `start` and `end` are `index` values with `0 <= start <= end <=` the size
    of `dim` (capture guarantees it; they are not checked at run time). The
    result's `dim` is dynamic; its other dims are the input's.

    ```mlir
    %r = graph.dynamic_slice %x, %start, %end dim 1 : tensor<1x512xi64>, index, index -> tensor<1x?xi64>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Index:$start, Index:$end, I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $start `,` $end `dim` $dim attr-dict `:` type($input) `,` type($start) `,` type($end)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let eager = "{input}.narrow({dim}, {start}, {end} - {start})";
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

// Dynamic dims in the index and input (verifyGather).
def Graph_GatherOp : Graph_Op<"gather", [], []> {
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
// Convolutions also take integers: ATen's CPU kernels (slow_conv) compute them, wrapping; CUDA's
// take none (capture's eager-accepts probe breaks the graph there).
def Graph_ConvolutionTensor : RankedTensorOf<[F16, BF16, F32, F64, I8, I16, I32, I64, UI8]>;

// A dynamic batch dim (its verifier); channels and spatial dims are static.
def Graph_ConvolutionOp : Graph_Op<"convolution", [], []> {
  let summary = "N-d convolution, 1-3 spatial dims, optionally transposed (torch.convolution)";
  let description = [{
    `input` is `[N, C_in, *spatial]`; `weight` is `[C_out, C_in/groups, *kernel]`,
    or `[C_in, C_out/groups, *kernel]` when `transposed`; the optional `bias`
    is `[C_out]`. `stride`, `padding`, `dilation` (and `output_padding`, for
    transposed convolutions only) have one entry per spatial dim; padding
    is zeros (capture writes other padding modes as a `graph.pad` first).
    All operands and the result share one element type, a float or an
    integer (ATen's CPU kernels compute integers, wrapping). The result is
    `[N, C_out, *out]` with PyTorch's output sizes. `N` may be dynamic
    (`?`); the channel and spatial dims and the weight are static.

    `dyn-convert-graph-to-prim` makes it a `prim.convolution` (a library
    call) plus a broadcast add of the bias, which fuses with the pointwise
    ops after it.
  }];
  let arguments = (ins Graph_ConvolutionTensor:$input, Graph_ConvolutionTensor:$weight,
                       Optional<Graph_ConvolutionTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups, UnitAttr:$transposed,
                       OptionalAttr<DenseI64ArrayAttr>:$output_padding);
  let results = (outs Graph_ConvolutionTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? `stride` $stride `padding` $padding `dilation` $dilation
    `groups` $groups (`transposed` $transposed^)? (`output_padding` $output_padding^)?
    attr-dict `:` type(operands) `->` type($result)
  }];
  let hasVerifier = 1;
}

// Max and average pooling take integers too, as eager's CPU kernels (an integer average truncates).
// Dynamic dims in front of the pooled dims (their verifiers).
class Graph_PoolOp<string mnemonic, string desc> : Graph_Op<mnemonic, [], []> {
  let summary = desc # " pooling over the trailing 1-3 dims";
  let results = (outs Graph_NumericTensor:$result);
  let hasVerifier = 1;
}

def Graph_MaxPoolOp : Graph_PoolOp<"max_pool", "max"> {
  let description = [{
    F.max_pool1d/2d/3d: the maximum over each window of `kernel` elements
    spaced `dilation` apart, windows `stride` apart, over the trailing
    `kernel.size()` dims; `padding` counts as -inf (an integer type's
    minimum). With `ceil_mode` a last,
    partial window is kept where it starts inside the input or its left
    padding. Decomposed into padded strided slices and elementwise maxima,
    which fuse into one kernel with their neighbours.
  }];
  let arguments = (ins Graph_NumericTensor:$input, DenseI64ArrayAttr:$kernel,
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
    padded input (`count_include_pad`) or within the input (integers: the
    sum divided with truncation, as eager's CPU kernel). Decomposed like
    `graph.max_pool`, with the divisors as a constant.
  }];
  let arguments = (ins Graph_NumericTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       UnitAttr:$ceil_mode, UnitAttr:$count_include_pad,
                       OptionalAttr<I64Attr>:$divisor_override);
  let assemblyFormat = [{
    $input `kernel` $kernel `stride` $stride `padding` $padding (`ceil_mode` $ceil_mode^)?
    (`count_include_pad` $count_include_pad^)? (`divisor_override` $divisor_override^)?
    attr-dict `:` type($input) `->` type($result)
  }];
}

class Graph_AdaptivePoolOp<string mnemonic, string desc> : Graph_Op<mnemonic, [], []> {
  let summary = "adaptive " # desc # " pooling to the result's trailing sizes";
  let description = [{
    F.}] # mnemonic # [{1d/2d/3d: output index `i` of a pooled dim
    of size `in` pools input indices `[floor(i*in/out), ceil((i+1)*in/out))`.
    The pooled dims are the trailing `output_size.size()` (1-3) ones;
    the dims in front of them may be dynamic (`?`).
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

// grid_sampler (F.grid_sample, grid_sampler_2d/3d) of a batched [N, C, *in]
// input at the grid's [N, *out, d] coordinates in [-1, 1] (x first): mode 0
// bilinear/trilinear, 1 nearest, 2 bicubic (2-d); padding 0 zeros, 1 border,
// 2 reflection. `cuda_rules` takes the coordinate arithmetic of eager's CUDA
// kernels, else the CPU's (capture sets it per device: they differ for NaN
// and non-finite coordinates). Decomposed into gathers times weights
// (GraphToPrim/GridSample.cpp).
def Graph_GridSamplerOp : Graph_RegisteredOp<"grid_sampler", "grid_sampler", Dyn_KeepsElementRule, Dyn_MetaShape,
                                             Dyn_Composite<"GridSamplerToPrim", "GridSample">,
                                             [AllElementTypesMatch<["input", "grid"]>]> {
  let summary = "samples the input at the grid's coordinates (torch.grid_sampler)";
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$grid, I64Attr:$mode, I64Attr:$padding,
                       BoolAttr:$align_corners, BoolAttr:$cuda_rules);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` type(operands) `->` type($result)";
  let hasVerifier = 1;
  let eager = "torch.grid_sampler({input}, {grid}, {mode}, {padding}, {align_corners})";
}

// Linear (over 1-3 dims: linear, bilinear, trilinear) or bicubic (`cubic`,
// 2 dims) resampling of the trailing dims of [N, C, *spatial] to
// `output_size`, the source positions placed as eager's kernels place them
// (UpSample.h: align_corners, else the given `scales`, one per dim, 0 where
// none, else in/out). Separable: one dim after the other, each a sum of
// gathers at constant indices times constant weights; f16/bf16 in f32.
def Graph_UpsampleOp : Graph_RegisteredOp<"upsample", "resample", Dyn_KeepsElementRule, Dyn_MetaShape,
                                          Dyn_Composite<"UpsampleToPrim", "Resample">> {
  let summary = "linear or bicubic resampling of the trailing 1-3 dims";
  let arguments = (ins Graph_FloatTensor:$input, StrAttr:$mode, DenseI64ArrayAttr:$output_size,
                       BoolAttr:$align_corners, DenseF64ArrayAttr:$scales);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let eager = "_rt.upsample({input}, {mode}, {output_size}, {align_corners}, {scales})";
}

// Max pooling that also says where each maximum is (return_indices=True and
// aten.max_pool2d_with_indices): the index of the maximum within its channel's
// flattened pooled dims, as eager's kernels pick it: the first maximum in
// window order, or the last NaN; padding is never picked. The input is
// batched, [N, C, *pooled]. Decomposed as max_pool is (strided slices of the
// padded input, or gathers for adaptive windows), with the running maximum
// and its index selected tap by tap: one fused kernel.
class Graph_PoolWithIndicesOp<string mnemonic, string cls, string desc>
    : Graph_RegisteredOp<mnemonic, "pool_indices", Dyn_MetaRule, Dyn_MetaShape,
                         Dyn_Composite<cls, "Pooling">> {
  let summary = desc # " pooling and the flat index of each maximum";
  let results = (outs Graph_NumericTensor:$result, RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}
def Graph_MaxPoolWithIndicesOp
    : Graph_PoolWithIndicesOp<"max_pool_with_indices", "MaxPoolWithIndicesToPrim", "max"> {
  let arguments = (ins Graph_NumericTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, BoolAttr:$ceil_mode);
  let eager = "(F.max_pool1d, F.max_pool2d, F.max_pool3d)[len({kernel}) - 1]({input}, {kernel}, {stride}, "
              "{padding}, {dilation}, ceil_mode={ceil_mode}, return_indices=True)";
}
def Graph_AdaptiveMaxPoolWithIndicesOp
    : Graph_PoolWithIndicesOp<"adaptive_max_pool_with_indices", "AdaptiveMaxPoolWithIndicesToPrim",
                              "adaptive max"> {
  let arguments = (ins Graph_LibraryFloatTensor:$input, DenseI64ArrayAttr:$output_size);
  let eager = "(F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[len({output_size}) - 1]("
              "{input}, {output_size}, return_indices=True)";
}

// The sliding windows of a batched 2-d input as columns and back (F.unfold
// and F.fold; aten.im2col and aten.col2im). im2col of [N, C, H, W] is
// [N, C*kh*kw, L], row (c, i, j) holding the padded input at offset (i*dh,
// j*dw) of each of the L = oh*ow windows (zeros in the padding); col2im
// takes such columns to [N, C, *output_size], the sum of every window's
// element at its position (the padding dropped). Decomposed in Pooling.cpp
// as strided slices of the padded input (im2col) and their sum placed back
// (col2im), or, for windows that tile the input, one reshape and transpose.
class Graph_WindowColumnsOp<string mnemonic, string cls, string desc>
    : Graph_RegisteredOp<mnemonic, "window_columns", Dyn_KeepsElementRule, Dyn_MetaShape,
                         Dyn_Composite<cls, "Pooling">> {
  let summary = desc;
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` type(operands) `->` type($result)";
  let hasVerifier = 1;
}
def Graph_Im2colOp : Graph_WindowColumnsOp<"im2col", "Im2colToPrim",
                                           "the sliding windows of [N, C, H, W] as columns (F.unfold)"> {
  // (floats and bool: eager's kernels)
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$dilation,
                       DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$stride);
  let torchNames = ["torch.nn.functional.unfold", "aten.im2col"];
  let eager = "torch.ops.aten.im2col({input}, {kernel}, {dilation}, {padding}, {stride})";
}
def Graph_Col2imOp : Graph_WindowColumnsOp<"col2im", "Col2imToPrim",
                                           "columns of sliding windows summed back into [N, C, H, W] (F.fold)"> {
  let arguments = (ins Graph_FloatTensor:$input, DenseI64ArrayAttr:$output_size, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$dilation, DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$stride);
  let torchNames = ["torch.nn.functional.fold", "aten.col2im"];
  let eager = "torch.ops.aten.col2im({input}, {output_size}, {kernel}, {dilation}, {padding}, {stride})";
}

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

// Dynamic batch and sequence dims (verifyAttention).
def Graph_ScaledDotProductAttentionOp : Graph_Op<"scaled_dot_product_attention", [], []> {
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

// Reductions, scans, data movement and losses (issue 10 item 3), in a file of their own.
include "dyn/Dialect/Graph/IR/GraphFamilyOps.td"

// Normalization: layer_norm, rms_norm, batch_norm, instance_norm, group_norm.
include "dyn/Dialect/Graph/IR/GraphNormOps.td"

// Scatter: writes at computed indices (scatter*, index_add/copy/fill/reduce, index_put, put).
include "dyn/Dialect/Graph/IR/GraphScatterOps.td"

// Random ops (Philox): random, bernoulli, dropout.
include "dyn/Dialect/Graph/IR/GraphRandomOps.td"

// Library calls: selection (sort, topk, ...) and linalg, computed by ATen.
include "dyn/Dialect/Graph/IR/GraphLibraryOps.td"

// Pointwise math and special functions (torch.special), in a file of their own.
include "dyn/Dialect/Graph/IR/GraphSpecialOps.td"

#endif // DYN_GRAPH_OPS
