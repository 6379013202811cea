//===- GraphOps.td - graph dialect ops ----------------------*- tablegen -*-===//
#ifndef DYN_GRAPH_OPS
#define DYN_GRAPH_OPS

include "dyn/Dialect/Graph/IR/GraphBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Elementwise families
//===----------------------------------------------------------------------===//

// Unary: the result has the operand's shape; the element type may change
// (torch.sin of an integer tensor is a float tensor).
class Graph_UnaryOp<string mnemonic, string desc>
    : Graph_Op<mnemonic, [SameOperandsAndResultShape]> {
  let summary = "elementwise " # desc;
  let description = "Elementwise `" # desc # "`, computed in the result element type.";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

foreach op = [["Neg", "neg", "negation"], ["Abs", "abs", "absolute value"],
              ["Exp", "exp", "exponential"], ["Log", "log", "natural logarithm"],
              ["Sin", "sin", "sine"], ["Cos", "cos", "cosine"], ["Tan", "tan", "tangent"],
              ["Tanh", "tanh", "hyperbolic tangent"],
              ["Sigmoid", "sigmoid", "logistic sigmoid 1/(1+exp(-x))"],
              ["Relu", "relu", "max(x, 0)"], ["Sqrt", "sqrt", "square root"],
              ["Rsqrt", "rsqrt", "reciprocal square root"], ["Reciprocal", "reciprocal", "1/x"],
              ["Erf", "erf", "error function"], ["Floor", "floor", "floor"],
              ["Ceil", "ceil", "ceiling"], ["Log1p", "log1p", "log(1+x)"],
              ["Expm1", "expm1", "exp(x)-1"],
              ["LogicalNot", "logical_not", "logical negation (result i1)"]] in
  def Graph_ # op[0] # Op : Graph_UnaryOp<op[1], op[2]>;

// Binary arithmetic: numpy-style broadcasting; operands are converted to the
// result element type (PyTorch type promotion, decided by capture).
class Graph_BinaryOp<string mnemonic, string desc, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [ResultsBroadcastableShape])> {
  let summary = "elementwise " # desc # " with broadcasting";
  let description = "Broadcasts `lhs` and `rhs` to the result shape, converts both to "
                    "the result element type and applies `" # desc # "`.";
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

foreach op = [["Add", "add", "addition"], ["Sub", "sub", "subtraction"],
              ["Mul", "mul", "multiplication"], ["Div", "div", "true division"],
              ["Pow", "pow", "power"], ["Maximum", "maximum", "maximum"],
              ["Minimum", "minimum", "minimum"], ["Remainder", "remainder", "Python-style remainder"],
              ["LogicalAnd", "logical_and", "logical and (result i1)"],
              ["LogicalOr", "logical_or", "logical or (result i1)"]] in
  def Graph_ # op[0] # Op : Graph_BinaryOp<op[1], op[2]>;

// Comparisons compute in the promoted type of their operands; the result is i1.
class Graph_CompareOp<string mnemonic, string desc>
    : Graph_Op<mnemonic, [ResultsBroadcastableShape]> {
  let summary = "elementwise comparison " # desc;
  let description = "Broadcasts the operands, promotes them to a common type and "
                    "compares them (`" # desc # "`); the result is a boolean tensor.";
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

foreach op = [["Eq", "eq", "=="], ["Ne", "ne", "!="], ["Lt", "lt", "<"], ["Le", "le", "<="],
              ["Gt", "gt", ">"], ["Ge", "ge", ">="]] in
  def Graph_ # op[0] # Op : Graph_CompareOp<op[1], op[2]>;

def Graph_WhereOp : Graph_Op<"where", [ResultsBroadcastableShape]> {
  let summary = "elementwise select with broadcasting";
  let description = "`cond ? a : b` elementwise, after broadcasting all three operands.";
  let arguments = (ins Graph_BoolTensor:$cond, Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def Graph_ConstantOp : Graph_Op<"constant", [ConstantLike, AllTypesMatch<["value", "result"]>]> {
  let summary = "a tensor constant";
  let description = "A dense tensor constant; Python scalars become rank-0 constants.";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

def Graph_ConvertOp : Graph_Op<"convert", [SameOperandsAndResultShape]> {
  let summary = "element type conversion (Tensor.to(dtype))";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Graph_ReductionOp<string mnemonic, string desc> : Graph_Op<mnemonic> {
  let summary = desc # " over `dims`";
  let description = "Reduces `input` over `dims` (" # desc # "). With `keepdim` "
                    "the reduced dims stay as size 1; without it they are dropped.";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$dims, UnitAttr:$keepdim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `dims` $dims (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyReduction(*this); }
  }];
}

def Graph_SumOp : Graph_ReductionOp<"sum", "sum">;
def Graph_MeanOp : Graph_ReductionOp<"mean", "arithmetic mean">;
def Graph_AmaxOp : Graph_ReductionOp<"amax", "maximum">;
def Graph_AminOp : Graph_ReductionOp<"amin", "minimum">;
def Graph_ProdOp : Graph_ReductionOp<"prod", "product">;

class Graph_SoftmaxLikeOp<string mnemonic, string desc>
    : Graph_Op<mnemonic, [SameOperandsAndResultType]> {
  let summary = desc # " along `dim`";
  let description = desc # " along `dim`, decomposed into max, exp, sum and "
                    "division (numerically stable) by dyn-convert-graph-to-prim.";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
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
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
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

def Graph_PermuteOp : Graph_Op<"permute"> {
  let summary = "permute dimensions";
  let description = "Result dim `i` is input dim `dims[i]`.";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `dims` $dims attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ExpandOp : Graph_Op<"expand"> {
  let summary = "broadcast to the result shape (Tensor.expand)";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_SliceOp : Graph_Op<"slice"> {
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
