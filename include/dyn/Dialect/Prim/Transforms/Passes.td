//===- Passes.td - prim dialect transforms ------------------*- tablegen -*-===//
//
// Passes over the prim dialect itself (between dyn-convert-graph-to-prim and
// dyn-fuse-prim-to-loop): convolution layouts and forms. Each has a lit test
// named after its flag under test/.
//
//===----------------------------------------------------------------------===//
#ifndef DYN_PRIM_TRANSFORMS_PASSES
#define DYN_PRIM_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def SplitConvolutionBiasPass : Pass<"dyn-split-convolution-bias", "mlir::ModuleOp"> {
  let summary = "Add a 2-d/3-d convolution's bias after it, where the next kernel fuses it";
  let description = [{
    `prim.convolution ... bias %b` (not transposed, 2 or 3 spatial dims)
    becomes the convolution without bias plus `prim.add` of `%b` broadcast
    along the channel dim (dim 1, or the last one for `channels_last`). The
    GPU pipeline runs it: cuDNN writes the convolution into dyn's buffer and
    eager adds the bias after it with a separate op (the same two roundings),
    so the add is better fused into the dyn kernel that reads the result
    (a batch or layer norm, an activation) than made by the library call
    with a host call and a launch of its own. The CPU keeps the bias inside
    oneDNN's convolution (its epilogue, eager's rounding).
  }];
  let dependentDialects = ["::dyn::prim::PrimDialect"];
}

def DecomposeDepthwiseConvolutionsPass
    : Pass<"dyn-decompose-depthwise-convolutions", "mlir::ModuleOp"> {
  let summary = "Write small depthwise convolutions as sums of shifted slices, which fuse";
  let description = [{
    A `prim.convolution` in torch's order (not transposed, not
    `channels_last`) with one input channel per group and one output channel
    per input channel (`groups` = C_in = C_out), whose window has at most
    `max-window` taps, becomes the sum over its taps of a strided slice of
    the zero-padded input times the tap's weight broadcast along the channel
    dim, plus the bias: the way pooling is written. The fusion pass then
    computes it in one kernel with the elementwise ops before and after it
    (a batch norm and an activation on each side in MobileNet and
    EfficientNet blocks), with no library plan to build on the first call.
    Float16 and bfloat16 convolutions are summed in float32 and rounded
    once. The GPU pipeline runs it before dyn-propagate-layouts, so those
    convolutions need no channels-last transposes; the CPU keeps oneDNN's
    channels-last depthwise kernels.
  }];
  let options = [
    Option<"maxWindow", "max-window", "int64_t", /*default=*/"25",
           "Largest number of window taps (the product of the kernel sizes) decomposed">,
  ];
  let dependentDialects = ["::dyn::prim::PrimDialect"];
}

def PropagateLayoutsPass : Pass<"dyn-propagate-layouts", "mlir::ModuleOp"> {
  let summary = "Run convolutions channels-last and keep their activations in that layout";
  let description = [{
    Each 2-d and 3-d convolution becomes a `channels_last` one between two
    `prim.transpose` ops ([N, C, *spatial] -> [N, *spatial, C] and back), as
    eager runs a model converted to `torch.channels_last`: the libraries'
    channels-last kernels (oneDNN, cuDNN) skip their layout reorders. The
    transposes then sink through what follows: elementwise ops (whose other
    operands are broadcasts or splats, re-expressed in the new order), pads,
    slices, reductions and concatenations, so the values between two
    convolutions are computed, and kept in buffers, channels-last; a
    transpose meeting its inverse (the next convolution's) cancels. A
    transpose that stops (at a reshape, a function result) is an index
    remap in the kernel that reads it, not a copy.

    A convolution's gradients (`prim.library_call "convolution_backward"`,
    made by dyn-graph-autodiff) go channels-last by the same rule: grad_output
    and input in that layout, the input gradient coming back in it (a
    trailing `1` in the call's params), so a backward keeps its activation
    gradients channels-last between convolutions as the forward does.

    Across a training graph's two functions: a function attribute
    `dyn.layout_free_results` lists results the caller accepts in either
    layout (a forward's saved values); those computed channels-last are
    returned so, typed [N, *spatial, C], and listed in
    `dyn.channels_last_results`. `dyn.channels_last_args` lists arguments the
    caller passes channels-last (the backward's reads of them), read through
    a transpose that cancels with the next one.

    With `depthwise-only`, only depthwise convolutions go channels-last; with
    `dense-min-elements`, a dense one only where its activations (input and
    output elements) reach that many. The GPU pipeline sets 2^24: on the H200,
    cuDNN's channels-last kernels make a ResNet-50 step at batch 256 faster
    (eager: 82 ms against 116 in training, 30 against 39 in inference), while
    at batch 16 the NCHW calls are faster (dyn's ResNet-50 inference 2.4 ms
    against 2.7 channels-last, ResNet-18 1.1 against 1.6). The threshold is
    for float32 and float64: a float16 or bfloat16 convolution goes
    channels-last at any size (cuDNN's tensor-core kernels convert NCHW
    operands to that layout around each call).

    A `?` batch (dim 0) counts as the module's `dyn.batch_hint` (an i64
    attribute: the largest batch the caller has seen where the graph became
    symbolic), or 1 without one; other `?` dims count as 1.
  }];
  let options = [
    Option<"depthwiseOnly", "depthwise-only", "bool", /*default=*/"false",
           "Only depthwise convolutions go channels-last">,
    Option<"denseMinElements", "dense-min-elements", "int64_t", /*default=*/"0",
           "Fewest activation elements (input + output) of a dense convolution that goes channels-last">,
  ];
  let dependentDialects = ["::dyn::prim::PrimDialect"];
}

#endif // DYN_PRIM_TRANSFORMS_PASSES
