//===- GraphActivationOps.td - activation ops -----------*- tablegen -*-===//
//
// The activations (GraphToPrim/Activations.cpp decomposes them), bilinear
// and cross. Included by GraphOps.td at this point of its op list.
//
//===----------------------------------------------------------------------===//

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
