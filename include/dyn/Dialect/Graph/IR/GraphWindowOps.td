//===- GraphWindowOps.td - convolution, pooling, attention *- tablegen -*-===//
//
// Convolution, pooling, resampling, unfold/fold and attention: windows and
// library calls. Included by GraphOps.td at this point of its op list.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Convolution, pooling and attention (windows and library calls)
//===----------------------------------------------------------------------===//

// The float types the library kernels (ATen: oneDNN, cuBLAS, cuDNN) take.
def Graph_LibraryFloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
// Convolutions also take integers: ATen's CPU kernels (slow_conv) compute them, wrapping; CUDA's
// take none (capture's eager-accepts probe breaks the graph there).
def Graph_ConvolutionTensor : RankedTensorOf<[F16, BF16, F32, F64, I8, I16, I32, I64, UI8]>;

// A dynamic batch dim (its verifier); channels and spatial dims are static.
def Graph_ConvolutionOp : Graph_RegisteredOp<"convolution", "convolution", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"ConvolutionToPrim", "Linalg">> {
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
  let eager = "_rt.convolution({input}, {weight}, {bias}, {stride}, {padding}, {dilation}, {transposed}, {output_padding}, {groups})";
}

// Max and average pooling take integers too, as eager's CPU kernels (an integer average truncates).
// Dynamic dims in front of the pooled dims (their verifiers).
class Graph_PoolOp<string mnemonic, string desc, string cppClass>
    : Graph_RegisteredOp<mnemonic, "pool", Dyn_MetaRule, Dyn_MetaShape,
                         Dyn_DynamicComposite<"PoolToPrim<graph::" # cppClass # ">", "Pooling">> {
  let summary = desc # " pooling over the trailing 1-3 dims";
  let results = (outs Graph_NumericTensor:$result);
  let hasVerifier = 1;
}

def Graph_MaxPoolOp : Graph_PoolOp<"max_pool", "max", "MaxPoolOp"> {
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
  let eager = "_rt.max_pool({input}, {kernel}, {stride}, {padding}, {dilation}, {ceil_mode})";
}

def Graph_AvgPoolOp : Graph_PoolOp<"avg_pool", "average", "AvgPoolOp"> {
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
  let eager = "_rt.avg_pool({input}, {kernel}, {stride}, {padding}, {ceil_mode}, {count_include_pad}, "
              "{divisor_override})";
}

class Graph_AdaptivePoolOp<string mnemonic, string desc, string cppClass>
    : Graph_RegisteredOp<mnemonic, "adaptive_pool", Dyn_MetaRule, Dyn_MetaShape,
                         Dyn_DynamicComposite<"AdaptivePoolToPrim<graph::" # cppClass # ">", "Pooling">> {
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
  let eager = "_rt.adaptive_pool(\"" # mnemonic # "\", {input}, {output_size})";
}

def Graph_AdaptiveMaxPoolOp : Graph_AdaptivePoolOp<"adaptive_max_pool", "max", "AdaptiveMaxPoolOp">;
def Graph_AdaptiveAvgPoolOp : Graph_AdaptivePoolOp<"adaptive_avg_pool", "average", "AdaptiveAvgPoolOp">;

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
class Graph_PoolWithIndicesOp<string mnemonic, string cls, string desc,
                              Dyn_Lowering lower = Dyn_Composite<cls, "Pooling">>
    : Graph_RegisteredOp<mnemonic, "pool_indices", Dyn_MetaRule, Dyn_MetaShape, lower> {
  let summary = desc # " pooling and the flat index of each maximum";
  let results = (outs Graph_NumericTensor:$result, RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}
// (N and C may be `?`: a CNN's stem pooling trained with a symbolic batch)
def Graph_MaxPoolWithIndicesOp
    : Graph_PoolWithIndicesOp<"max_pool_with_indices", "MaxPoolWithIndicesToPrim", "max",
                              Dyn_DynamicComposite<"MaxPoolWithIndicesToPrim", "Pooling">> {
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

def Graph_PadOp : Graph_RegisteredOp<"pad", "pad", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_Composite<"PadToPrim", "DataMovement">> {
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
  let eager = "_rt.pad({input}, {mode}, {low}, {high}, {value})";
}

// Dynamic batch and sequence dims (verifyAttention).
def Graph_ScaledDotProductAttentionOp : Graph_RegisteredOp<"scaled_dot_product_attention", "attention", Dyn_MetaRule, Dyn_MetaShape,
    Dyn_DynamicComposite<"AttentionToPrim", "Linalg">> {
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
  let eager = "F.scaled_dot_product_attention({query}, {key}, {value}, {mask}, is_causal={is_causal}, scale={scale})";
}
