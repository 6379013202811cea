//===- GraphShapeOps.td - contraction, shape, indexing --*- tablegen -*-===//
//
// GEMMs, shape manipulation (views in PyTorch, values here), dim and
// gather. Included by GraphOps.td at this point of its op list.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

def Graph_MatmulOp : Graph_RegisteredOp<"matmul", "linalg", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"MatmulToPrim", "Linalg">> {
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
  let eager = "torch.matmul({lhs}, {rhs})";
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

def Graph_ReshapeOp : Graph_RegisteredOp<"reshape", "shape", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"ReshapeToPrim", "DataMovement">> {
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
  let eager = "{input}.reshape({shape})";
  let eagerView = 1;
}

def Graph_PermuteOp : Graph_RegisteredOp<"permute", "shape", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"PermuteToPrim", "DataMovement">,
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "permute dimensions";
  let description = "Result dim `i` is input dim `dims[i]`.";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `dims` $dims attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let eager = "{input}.permute({dims})";
  let eagerView = 1;
}

def Graph_ExpandOp : Graph_RegisteredOp<"expand", "shape", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"ExpandToPrim", "DataMovement">,
    [AllElementTypesMatch<["input", "result"]>]> {
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
  let eager = "{input}.expand({shape})";
  let eagerView = 1;
}

def Graph_SliceOp : Graph_RegisteredOp<"slice", "shape", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"SliceToPrim", "DataMovement">,
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "strided slice along one dimension (x[..., start:end:step])";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim, I64Attr:$start, I64Attr:$end,
                       I64Attr:$step);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `start` $start `end` $end `step` $step attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let eager = "_rt.slice({input}, {dim}, {start}, {end}, {step})";
  let eagerView = 1;
}

def Graph_CatOp : Graph_RegisteredOp<"cat", "shape", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"CatToPrim", "DataMovement">> {
  let summary = "concatenate along `dim` (torch.cat)";
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
  let eager = "torch.cat({inputs}, {dim})";
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
def Graph_GatherOp : Graph_RegisteredOp<"gather", "indexing", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"GatherToPrim", "Indexing">> {
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
  let eager = "_rt.gather({input}, {dim}, {index})";
}
