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

def Graph_ConstantOp : Graph_RegisteredOp<"constant", "constant", Dyn_MetaRule, Dyn_MetaShape,
                                          Dyn_Composite<"ConstantToPrim", "Elementwise">,
                                          [ConstantLike, AllTypesMatch<["value", "result"]>]> {
  let summary = "a tensor constant";
  let description = "A dense tensor constant; Python scalars become rank-0 constants.";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
  let eager = "_rt.constant({value}, {dtype}, {device})";
  let eagerView = 1;
}

// Tensor.detach(): the same value, cut from differentiation (dyn-graph-autodiff
// gives it no gradient). Lowered to its operand.
def Graph_DetachOp : Graph_RegisteredOp<"detach", "detach", Dyn_MetaRule, Dyn_MetaShape,
                                        Dyn_DynamicComposite<"DetachToPrim", "DataMovement">,
                                        [AllTypesMatch<["input", "result"]>]> {
  let summary = "the operand's value, with no gradient flowing through it";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let eager = "{input}.detach()";
  let eagerView = 1;
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

// Activations: gelu, silu, elu, ..., bilinear, cross.
include "dyn/Dialect/Graph/IR/GraphActivationOps.td"

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

// Composite reductions (GraphFamilyOps.td: all, any, logsumexp), lowered by
// the pattern `cls` of GraphToPrim/CompositeReductions.cpp.
class Graph_ReductionOp<string mnemonic, string desc, string cls, Type resultType = Graph_Tensor,
                        list<Trait> traits = []>
    : Graph_RegisteredOp<mnemonic, "composite_reduce", Dyn_MetaRule, Dyn_Reduce,
                         Dyn_Composite<cls, "CompositeReductions">, traits> {
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
  let eager = "torch." # mnemonic # "({input}, tuple({dims}), keepdim={keepdim})";
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

class Graph_SoftmaxLikeOp<string mnemonic, string desc, string cppClass>
    : Graph_RegisteredOp<mnemonic, "softmax", Dyn_MetaRule, Dyn_MetaShape,
                         Dyn_DynamicComposite<"SoftmaxToPrim<graph::" # cppClass # ">", "Normalization">,
                         [SameOperandsAndResultType]> {
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
  let eager = "torch." # mnemonic # "({input}, {dim})";
}

def Graph_SoftmaxOp : Graph_SoftmaxLikeOp<"softmax", "softmax", "SoftmaxOp">;
def Graph_LogSoftmaxOp : Graph_SoftmaxLikeOp<"log_softmax", "log-softmax", "LogSoftmaxOp">;

// aten._safe_softmax (what PyTorch's attention decomposes into): softmax,
// with 0 for a row whose every element is -inf (softmax's is NaN there).
// Dynamic dims anywhere (softmax's decomposition, splats sized as the input).
def Graph_SafeSoftmaxOp
    : Graph_RegisteredOp<"safe_softmax", "softmax", Dyn_KeepsFloatRule, Dyn_SameShape,
                         Dyn_DynamicComposite<"SafeSoftmaxToPrim", "Normalization">> {
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

// Contraction (matmul, addmm), shape manipulation and indexing.
include "dyn/Dialect/Graph/IR/GraphShapeOps.td"

// Convolution, pooling, resampling and attention.
include "dyn/Dialect/Graph/IR/GraphWindowOps.td"

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
