//===- GraphSpecialOps.td - pointwise math and special functions -*- tablegen -*-===//
//
// Issue 10 item 3's remaining pointwise math of torch and torch.special,
// registered (GraphOpRegistry.td) and decomposed by
// lib/Conversion/GraphToPrim/Special.cpp into prim ops that both back ends
// lower (docs/special-functions.md: the special functions' algorithms and
// their accuracy against eager). Included by GraphOps.td.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_GRAPH_SPECIAL_OPS
#define DYN_GRAPH_SPECIAL_OPS

class Dyn_Special<string cls> : Dyn_Composite<cls, "Special">;

//===----------------------------------------------------------------------===//
// Elementwise math
//===----------------------------------------------------------------------===//

def Graph_Deg2RadOp : Graph_UnaryOp<"deg2rad", "x * pi / 180", Dyn_FloatRule,
                                    Dyn_Special<"Deg2RadToPrim">>;
def Graph_Rad2DegOp : Graph_UnaryOp<"rad2deg", "x * 180 / pi", Dyn_FloatRule,
                                    Dyn_Special<"Rad2DegToPrim">>;
// sin(pi x) / (pi x), 1 at 0 (torch.sinc, torch.special.sinc).
def Graph_SincOp : Graph_UnaryOp<"sinc", "normalized sinc", Dyn_FloatRule,
                                 Dyn_Special<"SincToPrim">> {
  let torchNames = ["torch.sinc", "Tensor.sinc", "aten.sinc", "torch.special.sinc"];
}
// The argument of a real number: pi where x < 0, NaN kept, else 0.
def Graph_AngleOp : Graph_UnaryOp<"angle", "argument (real inputs)", Dyn_FloatRule,
                                  Dyn_Special<"AngleToPrim">>;
// -x log x for x > 0, 0 at 0, -inf for x < 0.
def Graph_EntrOp : Graph_UnaryOp<"entr", "elementwise entropy -x log x", Dyn_FloatRule,
                                 Dyn_Special<"EntrToPrim">> {
  let torchNames = ["torch.special.entr", "aten.special_entr"];
  let eager = "torch.special.entr({input})";
}
// The sign bit (true for -0.0 and negative NaNs); integers: x < 0.
def Graph_SignbitOp : Graph_UnaryOp<"signbit", "sign bit", Dyn_BoolRule,
                                    Dyn_Special<"SignbitToPrim">>;
// Real tensors: true everywhere.
def Graph_IsRealOp : Graph_ClassifyOp<"isreal", "imaginary part is 0 (always, for real tensors)",
                                      "IsRealToPrim"> {
  let lowering = Dyn_Special<"IsRealToPrim">;
}

// nan_to_num: NaN, +inf and -inf replaced (capture gives the dtype's largest
// finite values for None); integers and booleans unchanged.
def Graph_NanToNumOp : Graph_RegisteredOp<"nan_to_num", "special", Dyn_KeepsElementRule, Dyn_SameShape,
                                          Dyn_Special<"NanToNumToPrim">> {
  let summary = "NaN, +inf and -inf replaced by `nan`, `posinf`, `neginf`";
  let arguments = (ins Graph_Tensor:$input, F64Attr:$nan, F64Attr:$posinf, F64Attr:$neginf);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let torchNames = ["torch.nan_to_num", "Tensor.nan_to_num", "aten.nan_to_num"];
  let eager = "torch.nan_to_num({input}, {nan}, {posinf}, {neginf})";
}

// logit: log(x / (1 - x)) of x clamped to [eps, 1 - eps] where eps >= 0
// (a negative eps: None, no clamp); +inf at 1.
def Graph_LogitOp : Graph_RegisteredOp<"logit", "special", Dyn_FloatRule, Dyn_SameShape,
                                       Dyn_Special<"LogitToPrim">> {
  let summary = "log(x / (1 - x)), x clamped to [eps, 1 - eps] (eps >= 0)";
  let description = [{
    float16 and bfloat16 compute in float32; with `round_steps` each step is
    rounded to the result type (eager's CPU kernel), else only the result
    (eager's CUDA kernel). Capture sets it per device.
  }];
  let arguments = (ins Graph_Tensor:$input, F64Attr:$eps, BoolAttr:$round_steps);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let torchNames = ["torch.logit", "Tensor.logit", "aten.logit", "torch.special.logit"];
  let eager = "torch.logit({input}, {eps} if {eps} >= 0 else None)";
}

// frexp and nextafter read a float's representation. prim has no bit cast, so
// both find x's binary exponent E (2^E <= |x| < 2^(E+1)) as floor(log2 |x|) in
// f64, corrected against a constant table of the powers of two; the rest is
// exact f64 arithmetic on powers of two (FloatBits.cpp).
def Graph_FrexpOp : Graph_RegisteredOp<"frexp", "frexp", Dyn_MetaRule, Dyn_SameShape,
                                       Dyn_Composite<"FrexpToPrim", "FloatBits">,
                                       [AllTypesMatch<["input", "mantissa"]>]> {
  let summary = "mantissa in [0.5, 1) and exponent: x = mantissa * 2^exponent (torch.frexp)";
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$mantissa, RankedTensorOf<[I32]>:$exponent);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let eager = "torch.frexp({input})";
}

def Graph_NextafterOp : Graph_RegisteredOp<"nextafter", "nextafter", Dyn_KeepsFloatRule, Dyn_SameShape,
                                           Dyn_Composite<"NextafterToPrim", "FloatBits">,
                                           [AllTypesMatch<["input", "other", "result"]>]> {
  let summary = "the next value of the type after input toward other (torch.nextafter)";
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$other);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` type(operands) `->` type($result)";
  let eager = "torch.nextafter({input}, {other})";
}

def Graph_Atan2Op : Graph_BinaryOp<"atan2", "atan2(lhs, rhs), the angle of (rhs, lhs)", Dyn_FloatRule,
                                   Dyn_Special<"Atan2ToPrim">> {
  let torchNames = ["torch.atan2", "Tensor.atan2", "aten.atan2", "torch.arctan2", "Tensor.arctan2"];
}
// NaN-ignoring maximum and minimum (C's fmax, fmin).
def Graph_FMaxOp : Graph_BinaryOp<"fmax", "maximum ignoring NaN", Dyn_PromoteNumericRule,
                                  Dyn_Special<"FMaxToPrim">>;
def Graph_FMinOp : Graph_BinaryOp<"fmin", "minimum ignoring NaN", Dyn_PromoteNumericRule,
                                  Dyn_Special<"FMinToPrim">>;
def Graph_LogicalXorOp : Graph_BinaryOp<"logical_xor", "logical exclusive or (result i1)", Dyn_FreeRule,
                                        Dyn_Special<"LogicalXorToPrim">> {
  let eager = "torch.logical_xor({lhs}, {rhs})";
}
// heaviside: rhs where lhs is 0, else lhs > 0 (0 for NaN).
def Graph_HeavisideOp : Graph_BinaryOp<"heaviside", "step function", Dyn_PromoteNumericRule,
                                       Dyn_Special<"HeavisideToPrim">>;
def Graph_XLog1pYOp : Graph_BinaryOp<"xlog1py", "lhs * log1p(rhs), 0 where lhs is 0", Dyn_FloatRule,
                                     Dyn_Special<"XLog1pYToPrim">> {
  let torchNames = ["torch.special.xlog1py", "aten.special_xlog1py"];
  let eager = "torch.special.xlog1py({lhs}.to({dtype}), {rhs}.to({dtype}))";
}
// lhs * 2^rhs.
def Graph_LdexpOp : Graph_BinaryOp<"ldexp", "lhs * 2^rhs", Dyn_FloatRule, Dyn_Special<"LdexpToPrim">> {
  let eager = "torch.ldexp({lhs}, {rhs})";
}
// pow in float64 (the result type capture gives it).
def Graph_FloatPowerOp : Graph_BinaryOp<"float_power", "pow in float64", Dyn_FreeRule,
                                        Dyn_Binary<"PowOp">> {
  let eager = "torch.float_power({lhs}, {rhs})";
}

// isclose: input == other, or |input - other| <= atol + |rtol * other| (finite),
// or both NaN with equal_nan; integers compare in float32 (eager's default dtype).
def Graph_IsCloseOp : Graph_RegisteredOp<"isclose", "special", Dyn_BoolRule, Dyn_Broadcast,
                                         Dyn_Special<"IsCloseToPrim">> {
  let summary = "elementwise closeness within rtol and atol";
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$other, F64Attr:$rtol, F64Attr:$atol,
                       BoolAttr:$equal_nan);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = [{
    $input `,` $other attr-dict `:` type($input) `,` type($other) `->` type($result)
  }];
  let torchNames = ["torch.isclose", "Tensor.isclose", "aten.isclose"];
  let signature = "input, other, rtol=1e-05, atol=1e-08, equal_nan=False";
  let eager = "torch.isclose({input}, {other}, {rtol}, {atol}, {equal_nan})";
}

//===----------------------------------------------------------------------===//
// Special functions: computed in float64 for every float type and rounded
// once (docs/special-functions.md gives each algorithm and its accuracy).
//===----------------------------------------------------------------------===//

class Graph_SpecialUnaryOp<string mnemonic, string desc, string cls, list<string> names>
    : Graph_UnaryOp<mnemonic, desc, Dyn_FloatRule, Dyn_Special<cls>> {
  let torchNames = names;
  let eager = !head(names) # "({input})";
}

def Graph_ErfinvOp : Graph_SpecialUnaryOp<"erfinv", "inverse error function", "ErfinvToPrim",
    ["torch.erfinv", "Tensor.erfinv", "aten.erfinv", "torch.special.erfinv"]>;
def Graph_NdtrOp : Graph_SpecialUnaryOp<"ndtr", "standard normal CDF", "NdtrToPrim",
    ["torch.special.ndtr", "aten.special_ndtr"]>;
def Graph_NdtriOp : Graph_SpecialUnaryOp<"ndtri", "inverse of the standard normal CDF", "NdtriToPrim",
    ["torch.special.ndtri", "aten.special_ndtri"]>;
def Graph_LogNdtrOp : Graph_SpecialUnaryOp<"log_ndtr", "log of the standard normal CDF", "LogNdtrToPrim",
    ["torch.special.log_ndtr", "aten.special_log_ndtr"]>;
def Graph_ErfcxOp : Graph_SpecialUnaryOp<"erfcx", "scaled complementary error function exp(x^2) erfc(x)",
    "ErfcxToPrim", ["torch.special.erfcx", "aten.special_erfcx"]>;
def Graph_LgammaOp : Graph_SpecialUnaryOp<"lgamma", "log |gamma(x)|", "LgammaToPrim",
    ["torch.lgamma", "Tensor.lgamma", "aten.lgamma", "torch.special.gammaln"]>;
def Graph_DigammaOp : Graph_SpecialUnaryOp<"digamma", "digamma (psi) function", "DigammaToPrim",
    ["torch.digamma", "Tensor.digamma", "aten.digamma", "torch.special.digamma", "torch.special.psi"]>;
def Graph_I0Op : Graph_SpecialUnaryOp<"i0", "modified Bessel function I0", "I0ToPrim",
    ["torch.i0", "Tensor.i0", "aten.i0", "torch.special.i0", "torch.special.modified_bessel_i0"]>;
def Graph_I0eOp : Graph_SpecialUnaryOp<"i0e", "exponentially scaled I0: exp(-|x|) I0(x)", "I0eToPrim",
    ["torch.special.i0e", "aten.special_i0e"]>;
def Graph_I1Op : Graph_SpecialUnaryOp<"i1", "modified Bessel function I1", "I1ToPrim",
    ["torch.special.i1", "aten.special_i1", "torch.special.modified_bessel_i1"]>;
def Graph_I1eOp : Graph_SpecialUnaryOp<"i1e", "exponentially scaled I1: exp(-|x|) I1(x)", "I1eToPrim",
    ["torch.special.i1e", "aten.special_i1e"]>;
def Graph_SphericalBesselJ0Op : Graph_SpecialUnaryOp<"spherical_bessel_j0", "sin(x) / x",
    "SphericalBesselJ0ToPrim", ["torch.special.spherical_bessel_j0", "aten.special_spherical_bessel_j0"]>;

// Bessel functions of the first and second kinds, modified Bessel functions of
// the second kind (plain and scaled by exp(x)) and the Airy function Ai:
// eager's Cephes rational and Chebyshev approximations, evaluated in float64
// (docs/special-functions.md).
def Graph_BesselJ0Op : Graph_SpecialUnaryOp<"bessel_j0", "Bessel function of the first kind J0",
    "BesselJ0ToPrim", ["torch.special.bessel_j0", "aten.special_bessel_j0"]>;
def Graph_BesselJ1Op : Graph_SpecialUnaryOp<"bessel_j1", "Bessel function of the first kind J1",
    "BesselJ1ToPrim", ["torch.special.bessel_j1", "aten.special_bessel_j1"]>;
def Graph_BesselY0Op : Graph_SpecialUnaryOp<"bessel_y0", "Bessel function of the second kind Y0",
    "BesselY0ToPrim", ["torch.special.bessel_y0", "aten.special_bessel_y0"]>;
def Graph_BesselY1Op : Graph_SpecialUnaryOp<"bessel_y1", "Bessel function of the second kind Y1",
    "BesselY1ToPrim", ["torch.special.bessel_y1", "aten.special_bessel_y1"]>;
def Graph_ModifiedBesselK0Op : Graph_SpecialUnaryOp<"modified_bessel_k0",
    "modified Bessel function of the second kind K0", "ModifiedBesselK0ToPrim",
    ["torch.special.modified_bessel_k0", "aten.special_modified_bessel_k0"]>;
def Graph_ModifiedBesselK1Op : Graph_SpecialUnaryOp<"modified_bessel_k1",
    "modified Bessel function of the second kind K1", "ModifiedBesselK1ToPrim",
    ["torch.special.modified_bessel_k1", "aten.special_modified_bessel_k1"]>;
def Graph_ScaledModifiedBesselK0Op : Graph_SpecialUnaryOp<"scaled_modified_bessel_k0",
    "exponentially scaled K0: exp(x) K0(x)", "ScaledModifiedBesselK0ToPrim",
    ["torch.special.scaled_modified_bessel_k0", "aten.special_scaled_modified_bessel_k0"]>;
def Graph_ScaledModifiedBesselK1Op : Graph_SpecialUnaryOp<"scaled_modified_bessel_k1",
    "exponentially scaled K1: exp(x) K1(x)", "ScaledModifiedBesselK1ToPrim",
    ["torch.special.scaled_modified_bessel_k1", "aten.special_scaled_modified_bessel_k1"]>;
def Graph_AiryAiOp : Graph_SpecialUnaryOp<"airy_ai", "Airy function Ai", "AiryAiToPrim",
    ["torch.special.airy_ai", "aten.special_airy_ai"]>;
// Hurwitz zeta(x, q) = sum_k (q + k)^-x (lhs = x, rhs = q).
def Graph_ZetaOp : Graph_BinaryOp<"zeta", "Hurwitz zeta function of lhs (order) and rhs (shift)",
                                  Dyn_FloatRule, Dyn_Special<"ZetaToPrim">> {
  let torchNames = ["torch.special.zeta", "aten.special_zeta"];
  let eager = "torch.special.zeta({lhs}.to({dtype}), {rhs}.to({dtype}))";
}

// polygamma: the n-th derivative of digamma (n in [0, 4]: capture breaks the
// graph for others).
def Graph_PolygammaOp : Graph_RegisteredOp<"polygamma", "special", Dyn_FloatRule, Dyn_SameShape,
                                           Dyn_Special<"PolygammaToPrim">> {
  let summary = "n-th derivative of the digamma function";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$n);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let torchNames = ["torch.polygamma", "Tensor.polygamma", "aten.polygamma", "torch.special.polygamma"];
  let eager = "torch.polygamma({n}, {input})";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      if (getN() < 0 || getN() > 4)
        return emitOpError("n must be in [0, 4], not ") << getN();
      return ::mlir::success();
    }
  }];
}
// mvlgamma: sum of lgamma(x - j / 2), j < p, plus p (p - 1) / 4 log(pi).
def Graph_MvlgammaOp : Graph_RegisteredOp<"mvlgamma", "special", Dyn_FloatRule, Dyn_SameShape,
                                          Dyn_Special<"MvlgammaToPrim">> {
  let summary = "multivariate log-gamma of dimension p";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$p);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let torchNames = ["torch.mvlgamma", "Tensor.mvlgamma", "aten.mvlgamma", "torch.special.multigammaln"];
  let eager = "torch.mvlgamma({input}, {p})";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      if (getP() < 1)
        return emitOpError("p must be at least 1, not ") << getP();
      return ::mlir::success();
    }
  }];
}

#endif // DYN_GRAPH_SPECIAL_OPS
