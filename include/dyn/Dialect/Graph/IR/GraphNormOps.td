//===- GraphNormOps.td - normalization ops -----------------*- tablegen -*-===//
//
// layer_norm, rms_norm, batch_norm, group_norm and instance_norm, whole as
// PyTorch calls them: the eager backend runs PyTorch's own kernels (the same
// bits and gradients as eager) and dyn-convert-graph-to-prim decomposes them
// (GraphToPrim/Normalization.cpp). Included by GraphOps.td.
//
// Every one computes in f32 when its input is f16 or bf16 (affine part
// included) and rounds once, to the input's element type, as eager's kernels
// do. Weight, bias and running statistics have the input's element type, or
// f32 for an f16/bf16 input (eager's "mixed type"); rms_norm's weight may be
// any float type.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_GRAPH_NORM_OPS
#define DYN_GRAPH_NORM_OPS

include "dyn/Dialect/Graph/IR/GraphBase.td"
include "dyn/Dialect/Graph/IR/GraphOpRegistry.td"

// Optional weight, bias and statistics: operand segments (rms_norm has one).
class Graph_NormOp<string mnemonic, Dyn_Lowering lower, list<Trait> traits = [AttrSizedOperandSegments]>
    : Graph_RegisteredOp<mnemonic, "norm", Dyn_MetaRule, Dyn_MetaShape, lower, traits> {
  let hasVerifier = 1;
}

// Dynamic dims in the leading (not normalized) dims (its verifier).
def Graph_LayerNormOp : Graph_NormOp<"layer_norm", Dyn_DynamicComposite<"LayerNormToPrim", "Normalization">> {
  let summary = "layer normalization over the trailing dims (F.layer_norm)";
  let description = [{
    Normalizes `input` over its trailing `normalized_rank` dims:
    `(x - mean) / sqrt(var + eps)` with the biased variance, then
    `* weight + bias` where given (both shaped like the normalized dims).
    The result has the input's type.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Optional<Graph_FloatTensor>:$weight,
                       Optional<Graph_FloatTensor>:$bias, I64Attr:$normalized_rank, F64Attr:$eps);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? `normalized_rank` $normalized_rank `eps` $eps
    attr-dict `:` type(operands) `->` type($result)
  }];
  let eager = "F.layer_norm({input}, {input}.shape[{input}.dim() - {normalized_rank}:], {weight}, {bias}, {eps})";
}

// The statistics eager's layer_norm and batch_norm kernels save for their
// backward (aten.native_layer_norm, native_batch_norm): the mean over `dims`
// and 1 / sqrt(var + eps), var the biased variance (two passes), in the
// accumulate type (f32 for f16/bf16; capture rounds them to the saved
// dtype). The results have the input's shape without `dims`.
def Graph_NormStatsOp : Graph_RegisteredOp<"norm_stats", "norm_stats", Dyn_MetaRule, Dyn_MetaShape,
                                           Dyn_Composite<"NormStatsToPrim", "Normalization">,
                                           [AllTypesMatch<["mean", "rstd"]>]> {
  let summary = "the mean and 1 / sqrt(biased variance + eps) over `dims`";
  let arguments = (ins Graph_FloatTensor:$input, DenseI64ArrayAttr:$dims, F64Attr:$eps);
  let results = (outs Graph_FloatTensor:$mean, Graph_FloatTensor:$rstd);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let eager = "_rt.norm_stats({input}, {dims}, {eps})";
}

def Graph_RmsNormOp : Graph_NormOp<"rms_norm", Dyn_Composite<"RmsNormToPrim", "Normalization">, []> {
  let summary = "root-mean-square normalization over the trailing dims (torch.rms_norm)";
  let description = [{
    `x / sqrt(mean(x^2) + eps) * weight` over the trailing `normalized_rank`
    dims (capture resolves eps=None to the input type's machine epsilon).
    The result has the input's type.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Optional<Graph_FloatTensor>:$weight,
                       I64Attr:$normalized_rank, F64Attr:$eps);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? `normalized_rank` $normalized_rank `eps` $eps
    attr-dict `:` type(operands) `->` type($result)
  }];
  let eager = "torch.rms_norm({input}, {input}.shape[{input}.dim() - {normalized_rank}:], {weight}, {eps})";
}

// Dynamic dims but the channel dim without `training` (its verifier).
def Graph_BatchNormOp : Graph_NormOp<"batch_norm", Dyn_DynamicComposite<"BatchNormToPrim", "Normalization">> {
  let summary = "batch normalization over all dims but the channel dim 1 (F.batch_norm)";
  let description = [{
    `input` is `[N, C, *]`; `weight`, `bias`, `running_mean` and `running_var`
    are `[C]`. With `training` the batch statistics normalize (biased
    variance); given running statistics, the op also returns their updated
    values, `(1 - m) * old + m * batch` with the unbiased batch variance,
    where `m` is `momentum`, or `1 / num_batches_tracked` (a 0-d i64 tensor,
    the count after this batch: nn.BatchNorm's cumulative average, momentum
    None). Capture writes them back into the module's buffers, as eager's
    kernel does in place. Without `training` the running statistics
    normalize and nothing is returned besides the result; only then may
    dims other than `C` be dynamic (`?`).
  }];
  let arguments = (ins Graph_FloatTensor:$input, Optional<Graph_FloatTensor>:$weight,
                       Optional<Graph_FloatTensor>:$bias, Optional<Graph_FloatTensor>:$running_mean,
                       Optional<Graph_FloatTensor>:$running_var,
                       Optional<0DTensorOf<[I64]>>:$num_batches_tracked, UnitAttr:$training,
                       OptionalAttr<F64Attr>:$momentum, F64Attr:$eps);
  let results = (outs Graph_FloatTensor:$result, Variadic<Graph_FloatTensor>:$running_stats);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? (`running_mean` $running_mean^)?
    (`running_var` $running_var^)? (`num_batches_tracked` $num_batches_tracked^)?
    (`training` $training^)? (`momentum` $momentum^)? `eps` $eps
    attr-dict `:` type(operands) `->` type(results)
  }];
  let eager = "_rt.batch_norm({input}, {weight}, {bias}, {running_mean}, {running_var}, {num_batches_tracked}, "
              "{training}, {momentum}, {eps})";
}

def Graph_InstanceNormOp : Graph_NormOp<"instance_norm", Dyn_Composite<"InstanceNormToPrim", "Normalization">> {
  let summary = "instance normalization: per sample and channel (F.instance_norm)";
  let description = [{
    `input` is `[N, C, *]`; `weight`, `bias`, `running_mean` and
    `running_var` are `[C]`. With `use_input_stats` each `(n, c)` slice is
    normalized by its own statistics; given running statistics, the op
    also returns their updated values, `(1 - momentum) * old + momentum *`
    the batch mean of the per-instance mean and unbiased variance. Without
    it the running statistics normalize (as batch_norm in eval mode).
  }];
  let arguments = (ins Graph_FloatTensor:$input, Optional<Graph_FloatTensor>:$weight,
                       Optional<Graph_FloatTensor>:$bias, Optional<Graph_FloatTensor>:$running_mean,
                       Optional<Graph_FloatTensor>:$running_var, UnitAttr:$use_input_stats,
                       F64Attr:$momentum, F64Attr:$eps);
  let results = (outs Graph_FloatTensor:$result, Variadic<Graph_FloatTensor>:$running_stats);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? (`running_mean` $running_mean^)?
    (`running_var` $running_var^)? (`use_input_stats` $use_input_stats^)? `momentum` $momentum
    `eps` $eps attr-dict `:` type(operands) `->` type(results)
  }];
  let eager = "_rt.instance_norm({input}, {weight}, {bias}, {running_mean}, {running_var}, {use_input_stats}, "
              "{momentum}, {eps})";
}

def Graph_GroupNormOp : Graph_NormOp<"group_norm", Dyn_Composite<"GroupNormToPrim", "Normalization">> {
  let summary = "group normalization: per sample and group of channels (F.group_norm)";
  let description = [{
    `input` is `[N, C, *]`; the `C` channels form `groups` groups of
    `C / groups`, and each `(n, group)` slice is normalized by its own mean
    and biased variance, then `* weight + bias` per channel (`[C]`).
  }];
  let arguments = (ins Graph_FloatTensor:$input, Optional<Graph_FloatTensor>:$weight,
                       Optional<Graph_FloatTensor>:$bias, I64Attr:$groups, F64Attr:$eps);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? `groups` $groups `eps` $eps
    attr-dict `:` type(operands) `->` type($result)
  }];
  let eager = "F.group_norm({input}, {groups}, {weight}, {bias}, {eps})";
}

#endif // DYN_GRAPH_NORM_OPS
