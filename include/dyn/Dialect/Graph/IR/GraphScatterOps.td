//===- GraphScatterOps.td - scatter: writes at computed indices -*- tablegen -*-===//
//
// The indexing ops that write: scatter, scatter_add, scatter_reduce and,
// through capture, index_add/index_copy/index_fill/index_reduce, index_put,
// put. Included by GraphOps.td; verifier in GraphScatter.cpp, decomposition
// in lib/Conversion/GraphToPrim/Scatter.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_GRAPH_SCATTER_OPS
#define DYN_GRAPH_SCATTER_OPS

def Graph_ScatterReduce : I32EnumAttr<"ScatterReduce", "how graph.scatter combines", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"sum", 1>, I32EnumAttrCase<"prod", 2>,
    I32EnumAttrCase<"mean", 3>, I32EnumAttrCase<"amax", 4>, I32EnumAttrCase<"amin", 5>]> {
  let cppNamespace = "::dyn::graph";
}

def Graph_ScatterOp : Graph_RegisteredOp<"scatter", "scatter", Dyn_MetaRule, Dyn_MetaShape,
                                         Dyn_Composite<"ScatterToPrim", "Scatter">,
                                         [AllTypesMatch<["input", "result"]>,
                                          AllElementTypesMatch<["input", "src"]>]> {
  let summary = "write src at index along `dim` into a copy of input (torch.scatter_reduce)";
  let description = [{
    For every position `q` of `index`, `src[q]` goes to the result at `q`
    with `q[dim]` replaced by `index[q]`. `none`: the last such `q` (in the
    order of `index[dim]`, eager's CPU order) wins; `sum`, `prod`, `mean`,
    `amax`, `amin` combine every `src` element written to a position, with the
    input's element where `include_self` is set. Positions nothing is written
    to keep the input's element. input, index and src have one rank; index
    dims are at most src's, and at most input's except along `dim`.

    With `wraps`, a negative index counts from the end (index + size of
    dim), as index_fill, index_put and put take them.

    An index outside `[0, size of dim)` (after wrapping) writes nothing (eager raises; capture
    checks the range as gather's): the result never depends on memory outside
    the operands. Decomposed into a reduction over a mask `index == position`
    (deterministic on both targets, O(input size x index size along dim)).
    Integer `mean` divides rounding down (eager's).
  }];
  let arguments = (ins Graph_Tensor:$input, RankedTensorOf<[I32, I64]>:$index, Graph_Tensor:$src,
                       Graph_ScatterReduce:$reduce, I64Attr:$dim, UnitAttr:$include_self,
                       UnitAttr:$wraps);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $reduce $input `dim` $dim `index` $index `src` $src (`include_self` $include_self^)?
    (`wraps` $wraps^)? attr-dict
    `:` type($input) `,` type($index) `,` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
  let eager = "_rt.scatter({input}, {dim}, {index}, {src}, {reduce}, {include_self}, {wraps})";
}

// as_strided_scatter of a contiguous input: `src` written into the strided
// view (`size`, `stride`, `storage_offset`) of the input's row-major elements;
// where the view's positions repeat, the last write in src's row-major order
// wins. Capture records slice_scatter, select_scatter, diagonal_scatter,
// as_strided_scatter and diag_embed/diag/diagflat (into zeros) as it.
// Decomposed into a gather of src at each result position's writer (a
// constant: the shapes are static) and a select of the input elsewhere.
def Graph_AsStridedScatterOp
    : Graph_RegisteredOp<"as_strided_scatter", "view_scatter", Dyn_KeepsElementRule, Dyn_MetaShape,
                         Dyn_Composite<"AsStridedScatterToPrim", "Scatter">,
                         [AllTypesMatch<["input", "result"]>, AllElementTypesMatch<["input", "src"]>]> {
  let summary = "src written into a strided view of a contiguous copy of input";
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$src, DenseI64ArrayAttr:$size,
                       DenseI64ArrayAttr:$stride, I64Attr:$storage_offset);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $src attr-dict `:` type($input) `,` type($src) `->` type($result)";
  let hasVerifier = 1;
  let eager = "torch.as_strided_scatter({input}.contiguous(), {src}, {size}, {stride}, {storage_offset})";
}

// index_add: source's slices along `dim` times alpha (rounded in the element
// type, then combined as graph.scatter's sum) added to the input at the
// positions the 1-D index names; an index out of range writes nothing
// (capture checks the range: eager raises). Decomposed as graph.scatter
// (Scatter.cpp's buildScatter) with the index broadcast to source's shape.
def Graph_IndexAddOp
    : Graph_RegisteredOp<"index_add", "index_add", Dyn_KeepsElementRule, Dyn_MetaShape,
                         Dyn_Composite<"IndexAddToPrim", "Scatter">,
                         [AllTypesMatch<["input", "result"]>, AllElementTypesMatch<["input", "source"]>]> {
  let summary = "source times alpha added at index along dim (torch.index_add)";
  let arguments = (ins Graph_NumericTensor:$input, RankedTensorOf<[I32, I64]>:$index,
                       Graph_NumericTensor:$source, I64Attr:$dim, F64Attr:$alpha);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "operands attr-dict `:` type(operands) `->` type($result)";
  let hasVerifier = 1;
  let eager = "torch.index_add({input}, {dim}, {index}, {source}, alpha={alpha})";
}

// masked_scatter of input and mask (one shape: capture broadcasts them) with a
// 1-D source of at least as many elements: the k-th set position in row-major
// order gets source[k]. Decomposed as a running count of the mask (a
// triangular masked sum, quadratic: capture limits the size), a gather from
// source and a select.
def Graph_MaskedScatterOp
    : Graph_RegisteredOp<"masked_scatter", "masked_scatter", Dyn_KeepsElementRule, Dyn_MetaShape,
                         Dyn_Composite<"MaskedScatterToPrim", "Scatter">,
                         [AllTypesMatch<["input", "result"]>, AllElementTypesMatch<["input", "source"]>]> {
  let summary = "source's elements written in order where mask is set (torch.masked_scatter)";
  let arguments = (ins Graph_Tensor:$input, Graph_BoolTensor:$mask, Graph_Tensor:$source);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` type(operands) `->` type($result)";
  let hasVerifier = 1;
  let eager = "torch.masked_scatter({input}, {mask}, {source})";
}

// histc: the counts of input's elements in `bins` equal-width bins of
// [min, max] (min == max: the elements' own minimum and maximum, widened by 1
// where equal; capture checks that range is finite, eager raises otherwise):
// an element's bin is (x - min) * bins / (max - min) truncated, in the input's
// type (eager's arithmetic), max in the last bin, elements outside (or NaN) in
// none. Decomposed as a scatter-sum of ones (buildScatter).
def Graph_HistcOp
    : Graph_RegisteredOp<"histc", "histc", Dyn_KeepsElementRule, Dyn_MetaShape,
                         Dyn_Composite<"HistcToPrim", "Scatter">> {
  let summary = "histogram of equal-width bins (torch.histc)";
  // (integers: CUDA's kernel takes them, the CPU's raises; capture records them on CUDA only)
  let arguments = (ins Graph_NumericTensor:$input, I64Attr:$bins, F64Attr:$min, F64Attr:$max);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "operands attr-dict `:` type(operands) `->` type($result)";
  let hasVerifier = 1;
  let eager = "torch.histc({input}, {bins}, {min}, {max})";
}

// embedding_bag of a 1-D index list and its bag offsets (capture gives a 2-D
// input's rows constant offsets): each bag's weight rows (times
// per_sample_weights) combined by `mode` (sum, mean, max), an empty bag 0; an
// entry equal to padding_idx (-1: none) belongs to no bag, nor do those at or
// after the last offset with include_last_offset. Capture checks the index
// range and offsets[0] == 0 (eager raises). Decomposed as a gather of the rows
// and a scatter into zeros along each entry's bag (the number of offsets at
// or before it, less one) (Scatter.cpp's buildScatter).
def Graph_EmbeddingBagOp
    : Graph_RegisteredOp<"embedding_bag", "embedding_bag", Dyn_MetaRule, Dyn_MetaShape,
                         Dyn_Composite<"EmbeddingBagToPrim", "Scatter">,
                         [AllElementTypesMatch<["weight", "result"]>]> {
  let summary = "sums, means or maxima of bags of embeddings (F.embedding_bag)";
  let arguments = (ins Graph_FloatTensor:$weight, RankedTensorOf<[I32, I64]>:$input,
                       RankedTensorOf<[I32, I64]>:$offsets, Optional<Graph_FloatTensor>:$per_sample_weights,
                       StrAttr:$mode, I64Attr:$padding_idx, BoolAttr:$include_last_offset);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let eager = "_rt.embedding_bag({weight}, {input}, {offsets}, {per_sample_weights}, {mode}, {padding_idx}, "
              "{include_last_offset})";
}

// _unsafe_masked_index with its index tensors stacked ([k, *B]: capture
// converts them to i64, broadcasts and stacks them, and permutes the input
// where eager moves separated index dims first): the input indexed at dims
// dim..dim+k-1, each index clamped into [0, size), then `fill` where the mask
// (broadcast to the result) is false. Result: the input's shape with those k
// dims replaced by B. Decomposed as a gather of the flattened dims at the
// linear index and a select.
def Graph_MaskedIndexOp
    : Graph_RegisteredOp<"masked_index", "masked_index", Dyn_KeepsElementRule, Dyn_MetaShape,
                         Dyn_Composite<"MaskedIndexToPrim", "Scatter">> {
  let summary = "clamped advanced indexing with a masked fill (aten._unsafe_masked_index)";
  let arguments = (ins Graph_Tensor:$input, Graph_BoolTensor:$mask, RankedTensorOf<[I64]>:$indices,
                       I64Attr:$dim, F64Attr:$fill);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` type(operands) `->` type($result)";
  let hasVerifier = 1;
  let eager = "_rt.masked_index({input}, {mask}, {indices}, {dim}, {fill})";
}

// _unsafe_masked_index_put_accumulate with stacked indices (as masked_index):
// values (0 where the mask is false; both broadcast to the indexed shape)
// added at the indices, each clamped into [-size, size) and wrapped (booleans:
// or-ed). Decomposed as buildScatter's sum (booleans: amax of bytes) over the
// flattened dims.
def Graph_MaskedIndexPutOp
    : Graph_RegisteredOp<"masked_index_put", "masked_index", Dyn_KeepsElementRule, Dyn_MetaShape,
                         Dyn_Composite<"MaskedIndexPutToPrim", "Scatter">,
                         [AllTypesMatch<["input", "result"]>, AllElementTypesMatch<["input", "values"]>]> {
  let summary = "clamped, masked index_put with accumulation (aten._unsafe_masked_index_put_accumulate)";
  let arguments = (ins Graph_Tensor:$input, Graph_BoolTensor:$mask, RankedTensorOf<[I64]>:$indices,
                       Graph_Tensor:$values, I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` type(operands) `->` type($result)";
  let hasVerifier = 1;
  let eager = "_rt.masked_index_put({input}, {mask}, {indices}, {values}, {dim})";
}

#endif // DYN_GRAPH_SCATTER_OPS
