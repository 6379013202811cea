//===- GraphRandomOps.td - random ops (Philox) -------------*- tablegen -*-===//
//
// Random numbers as a pure function of (seed, offset, element): every op
// takes the call's `seed` (a 0-d i64 tensor the runtime draws from torch's
// generator of the device at each call) and its own `offset` (distinct per
// op of a graph), and element `i` (row-major linear index) of its result is
// computed from Philox-4x32-10 bits of key `seed` and counter `(i, offset)`.
// The same (seed, offset) gives the same numbers on every target, and a
// value (a dropout mask) can be regenerated rather than saved. The numbers
// differ from eager PyTorch's (mt19937 on the CPU): see docs/random.md.
// Included by GraphOps.td; lowered by GraphToPrim/Random.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_GRAPH_RANDOM_OPS
#define DYN_GRAPH_RANDOM_OPS

include "dyn/Dialect/Graph/IR/GraphBase.td"
include "mlir/IR/EnumAttr.td"

def Graph_RandomDistribution : I32EnumAttr<"RandomDistribution", "what graph.random draws", [
    I32EnumAttrCase<"uniform", 0>, I32EnumAttrCase<"normal", 1>,
    I32EnumAttrCase<"exponential", 2>, I32EnumAttrCase<"integers", 3>, I32EnumAttrCase<"cauchy", 4>,
    I32EnumAttrCase<"log_normal", 5>, I32EnumAttrCase<"geometric", 6>]> {
  let cppNamespace = "::dyn::graph";
}

def Graph_Seed : 0DTensorOf<[I64]>;

// `sizes` has one `index` per `?` dim of the result (torch.rand(x.shape[0], 1)
// with a symbolic batch), and is absent where the result is static.
def Graph_RandomOp : Graph_RegisteredOp<"random", "random", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"RandomToPrim", "Random">> {
  let summary = "a tensor of random numbers (torch.rand, randn, randint, uniform_, normal_, ...)";
  let description = [{
    Each element drawn independently from `distribution` with parameters
    `a` and `b`:
    - `uniform`: in `[a, b)` (floats; `a + (b - a) * u`, `u` in [0, 1) with
      the mantissa bits of the type as torch takes them: 24 for f32, 53 for
      f64, 11 for f16, 8 for bf16),
    - `normal`: mean `a`, standard deviation `b` (Box-Muller, floats),
    - `exponential`: rate `a` (floats),
    - `integers`: in `[a, b)` (integer or float result; `b > a`),
    - `cauchy`: median `a`, scale `b` (`a + b * tan(pi * (u - 1/2))`, floats),
    - `log_normal`: `exp` of a normal with mean `a` and standard deviation `b` (floats),
    - `geometric`: trials to the first success of probability `a`
      (`ceil(log(1 - u) / log1p(-a))`, floats).

    ```mlir
    %u = graph.random uniform %seed sizes(%n) offset 0 a 0.0 b 1.0 : tensor<i64> -> tensor<?x1xf32>
    ```
  }];
  let arguments = (ins Graph_Seed:$seed, Variadic<Index>:$sizes, Graph_RandomDistribution:$distribution,
                       F64Attr:$a, F64Attr:$b, I64Attr:$offset);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = [{
    $distribution $seed (`sizes` `(` $sizes^ `)`)? `offset` $offset `a` $a `b` $b attr-dict `:` type($seed)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let eager = "_rt.random({distribution}, {a}, {b}, {shape}, {dtype}, {device})";
}

// bernoulli and dropout take `?` dims (a training batch of any size): their
// draws are sized as their operand at run time.
def Graph_BernoulliOp : Graph_RegisteredOp<"bernoulli", "random", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"BernoulliToPrim", "Random">,
    [AllTypesMatch<["p", "result"]>]> {
  let summary = "1 with probability p, else 0, per element (torch.bernoulli)";
  let arguments = (ins Graph_FloatTensor:$p, Graph_Seed:$seed, I64Attr:$offset);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $p `,` $seed `offset` $offset attr-dict `:` type($p) `,` type($seed) `->` type($result)
  }];
  let eager = "_rt.bernoulli({p}, {capture})";
}

def Graph_DropoutOp : Graph_RegisteredOp<"dropout", "random", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"DropoutToPrim", "Random">,
    [AllTypesMatch<["input", "result"]>]> {
  let summary = "training-mode dropout (F.dropout, nn.Dropout)";
  let description = [{
    Each element is zeroed with probability `p` and the others scaled by
    `1 / (1 - p)` (rounded to the element type first, as eager scales),
    `0 <= p <= 1`. With `feature_dims = k` the mask is drawn per element of
    the leading k dims and shared along the trailing ones (dropout1d/2d/3d:
    one draw per channel). The mask is a function of (seed, offset) only, so a
    backward pass can regenerate it.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_Seed:$seed, F64Attr:$p, I64Attr:$offset,
                       DefaultValuedAttr<I64Attr, "-1">:$feature_dims);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $seed `p` $p `offset` $offset attr-dict `:` type($input) `,` type($seed) `->` type($result)
  }];
  let hasVerifier = 1;
  let eager = "_rt.dropout({input}, {p}, {feature_dims}, {capture})";
}

// dropout's gradient from its kept mask: grad * mask * scale
// (aten.native_dropout_backward, in grad's type).
def Graph_DropoutBackwardOp
    : Graph_RegisteredOp<"dropout_backward", "dropout_backward", Dyn_KeepsFloatRule, Dyn_SameShape,
                         Dyn_Composite<"DropoutBackwardToPrim", "Random">> {
  let summary = "dropout's input gradient: grad * mask * scale";
  let arguments = (ins Graph_FloatTensor:$input, Graph_BoolTensor:$mask, F64Attr:$scale);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $mask attr-dict `:` type($input) `,` type($mask) `->` type($result)";
  let torchNames = ["aten.native_dropout_backward"];
  let eager = "torch.ops.aten.native_dropout_backward({input}, {mask}, {scale})";
}

#endif // DYN_GRAPH_RANDOM_OPS
