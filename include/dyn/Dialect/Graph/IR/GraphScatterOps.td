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

def Graph_ScatterOp : Graph_Op<"scatter", [AllTypesMatch<["input", "result"]>,
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

#endif // DYN_GRAPH_SCATTER_OPS
