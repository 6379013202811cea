// RUN: dyn-opt %s -split-input-file -dyn-propagate-layouts -canonicalize | FileCheck %s
// RUN: dyn-opt %s -split-input-file -dyn-propagate-layouts=depthwise-only=1 -canonicalize | FileCheck %s --check-prefix=DW
// RUN: dyn-opt %s -split-input-file -dyn-propagate-layouts=dense-min-elements=1000 -canonicalize | FileCheck %s --check-prefix=MIN

// Two convolutions with a batch norm's scale (a broadcast), a ReLU (a splat)
// and a residual add between them, then a global pool: everything runs
// channels-last; the one transpose left is the input's.
// CHECK-LABEL: func @block
// CHECK: %[[X:.*]] = prim.transpose %arg0 permutation [0, 2, 3, 1] : tensor<2x3x8x8xf32> -> tensor<2x8x8x3xf32>
// CHECK: %[[C:.*]] = prim.convolution %[[X]], %arg1 {{.*}} channels_last : {{.*}} -> tensor<2x8x8x4xf32>
// CHECK: %[[S:.*]] = prim.broadcast_in_dim %arg3 dims [3] : tensor<4xf32> -> tensor<2x8x8x4xf32>
// CHECK: %[[M:.*]] = prim.mul %[[C]], %[[S]] : tensor<2x8x8x4xf32>
// CHECK: %[[R:.*]] = prim.max %[[M]], %{{.*}} : tensor<2x8x8x4xf32>
// CHECK: %[[C2:.*]] = prim.convolution %[[R]], %arg2 {{.*}} channels_last : {{.*}} -> tensor<2x8x8x4xf32>
// CHECK: %[[A:.*]] = prim.add %[[C2]], %[[R]] : tensor<2x8x8x4xf32>
// CHECK: %[[P:.*]] = prim.reduce_sum %[[A]] dims [1, 2] : tensor<2x8x8x4xf32> -> tensor<2x4xf32>
// CHECK: return %[[P]]
// CHECK-NOT: prim.transpose
func.func @block(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %w2: tensor<4x4x1x1xf32>,
                 %s: tensor<4xf32>) -> tensor<2x4xf32> {
  %c = prim.convolution %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %b = prim.broadcast_in_dim %s dims [1] : tensor<4xf32> -> tensor<2x4x8x8xf32>
  %m = prim.mul %c, %b : tensor<2x4x8x8xf32>
  %z = prim.constant dense<0.0> : tensor<2x4x8x8xf32>
  %r = prim.max %m, %z : tensor<2x4x8x8xf32>
  %c2 = prim.convolution %r, %w2 stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 : tensor<2x4x8x8xf32>, tensor<4x4x1x1xf32> -> tensor<2x4x8x8xf32>
  %a = prim.add %c2, %r : tensor<2x4x8x8xf32>
  %p = prim.reduce_sum %a dims [2, 3] : tensor<2x4x8x8xf32> -> tensor<2x4xf32>
  return %p : tensor<2x4xf32>
}

// -----

// A max pool's pad and strided slices move with their dims; the result goes
// back to torch's order once, where the function returns it.
// CHECK-LABEL: func @pool
// CHECK: %[[C:.*]] = prim.convolution {{.*}} channels_last
// CHECK: %[[P:.*]] = prim.pad %[[C]] low [0, 1, 0, 0] high [0, 0, 0, 0] {{.*}} -> tensor<2x9x8x4xf32>
// CHECK: %[[S:.*]] = prim.slice %[[P]] start [0, 1, 0, 0] stride [1, 2, 1, 1] : tensor<2x9x8x4xf32> -> tensor<2x4x8x4xf32>
// CHECK: %[[T:.*]] = prim.transpose %[[S]] permutation [0, 3, 1, 2] : tensor<2x4x8x4xf32> -> tensor<2x4x4x8xf32>
// CHECK: return %[[T]]
func.func @pool(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x4x8xf32> {
  %c = prim.convolution %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %p = prim.pad %c low [0, 0, 1, 0] high [0, 0, 0, 0] value 0xFFF0000000000000 : tensor<2x4x8x8xf32> -> tensor<2x4x9x8xf32>
  %s = prim.slice %p start [0, 0, 1, 0] stride [1, 1, 2, 1] : tensor<2x4x9x8xf32> -> tensor<2x4x4x8xf32>
  return %s : tensor<2x4x4x8xf32>
}

// -----

// ConvNeXt permutes to [N, H, W, C] itself around its layer norm: that
// permute meets the convolution's layout and disappears, and so does the
// permute back before the residual add.
// CHECK-LABEL: func @permuted_block
// CHECK: %[[C:.*]] = prim.convolution {{.*}} channels_last
// CHECK-NOT: prim.transpose %[[C]]
// CHECK: %[[E:.*]] = prim.exp %[[C]] : tensor<2x8x8x4xf32>
// CHECK: %[[A:.*]] = prim.add %[[E]], %[[C]] : tensor<2x8x8x4xf32>
// CHECK: prim.transpose %[[A]] permutation [0, 3, 1, 2]
func.func @permuted_block(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %c = prim.convolution %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %t = prim.transpose %c permutation [0, 2, 3, 1] : tensor<2x4x8x8xf32> -> tensor<2x8x8x4xf32>
  %e = prim.exp %t : tensor<2x8x8x4xf32>
  %b = prim.transpose %e permutation [0, 3, 1, 2] : tensor<2x8x8x4xf32> -> tensor<2x4x8x8xf32>
  %a = prim.add %b, %c : tensor<2x4x8x8xf32>
  return %a : tensor<2x4x8x8xf32>
}

// -----

// A convolution whose weight outweighs its activations (a late stage at a
// small batch) keeps torch's layout: the library would copy the weight on
// every call.
// CHECK-LABEL: func @weight_heavy
// CHECK-NOT: channels_last
// CHECK-NOT: prim.transpose
func.func @weight_heavy(%x: tensor<1x64x2x2xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x2x2xf32> {
  %c = prim.convolution %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<1x64x2x2xf32>, tensor<64x64x3x3xf32> -> tensor<1x64x2x2xf32>
  return %c : tensor<1x64x2x2xf32>
}

// -----

// With depthwise-only, a dense convolution keeps torch's layout,
// the depthwise one after it runs channels-last; without it, both.
// CHECK-LABEL: func @dense_then_depthwise
// CHECK: prim.convolution {{.*}} groups 1 channels_last
// CHECK: prim.convolution {{.*}} groups 4 channels_last
// DW-LABEL: func @dense_then_depthwise
// DW: %[[D:.*]] = prim.convolution %arg0, %arg1 {{.*}} groups 1 :
// DW: %[[T:.*]] = prim.transpose %[[D]] permutation [0, 2, 3, 1]
// DW: prim.convolution %[[T]], %arg2 {{.*}} groups 4 channels_last
// With dense-min-elements (the GPU's 2^24, here 1000), the dense one's 896
// activations are too few: the same choice.
// MIN-LABEL: func @dense_then_depthwise
// MIN: %[[D:.*]] = prim.convolution %arg0, %arg1 {{.*}} groups 1 :
// MIN: %[[T:.*]] = prim.transpose %[[D]] permutation [0, 2, 3, 1]
// MIN: prim.convolution %[[T]], %arg2 {{.*}} groups 4 channels_last
func.func @dense_then_depthwise(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                                %dw: tensor<4x1x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %c = prim.convolution %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %d = prim.convolution %c, %dw stride [1, 1] padding [1, 1] dilation [1, 1] groups 4 : tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<2x4x8x8xf32>
  return %d : tensor<2x4x8x8xf32>
}

// -----

// In bfloat16 the dense one goes channels-last under dense-min-elements too:
// tensor cores take that layout at any size.
// MIN-LABEL: func @dense_then_depthwise_bf16
// MIN: %[[X:.*]] = prim.transpose %arg0 permutation [0, 2, 3, 1]
// MIN: %[[D:.*]] = prim.convolution %[[X]], %arg1 {{.*}} groups 1 channels_last
// MIN: prim.convolution %[[D]], %arg2 {{.*}} groups 4 channels_last
func.func @dense_then_depthwise_bf16(%x: tensor<2x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>,
                                     %dw: tensor<4x1x3x3xbf16>) -> tensor<2x4x8x8xbf16> {
  %c = prim.convolution %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<2x4x8x8xbf16>
  %d = prim.convolution %c, %dw stride [1, 1] padding [1, 1] dilation [1, 1] groups 4 : tensor<2x4x8x8xbf16>, tensor<4x1x3x3xbf16> -> tensor<2x4x8x8xbf16>
  return %d : tensor<2x4x8x8xbf16>
}

// -----

// A `?` batch stays dim 0 channels-last: the broadcast rebuilt in that order
// keeps its runtime size.
// CHECK-LABEL: func @dynamic_batch
// CHECK: %[[N:.*]] = prim.dim %arg0, 0 : tensor<?x4x8x8xf32>
// CHECK: %[[X:.*]] = prim.transpose %arg0 permutation [0, 2, 3, 1] : tensor<?x4x8x8xf32> -> tensor<?x8x8x4xf32>
// CHECK: %[[C:.*]] = prim.convolution %[[X]], %arg1 {{.*}} channels_last : {{.*}} -> tensor<?x8x8x8xf32>
// CHECK: %[[B:.*]] = prim.broadcast_in_dim %arg2 dims [3] sizes(%[[N]]) : tensor<8xf32> -> tensor<?x8x8x8xf32>
// CHECK: %[[A:.*]] = prim.add %[[C]], %[[B]] : tensor<?x8x8x8xf32>
// CHECK: prim.transpose %[[A]] permutation [0, 3, 1, 2] : tensor<?x8x8x8xf32> -> tensor<?x8x8x8xf32>
// With dense-min-elements 1000, the `?` batch counted as 1 (no dyn.batch_hint):
// 768 activations, NCHW.
// MIN-LABEL: func @dynamic_batch
// MIN-NOT: channels_last
// MIN: return
func.func @dynamic_batch(%x: tensor<?x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<?x8x8x8xf32> {
  %n = prim.dim %x, 0 : tensor<?x4x8x8xf32>
  %0 = prim.convolution %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<?x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<?x8x8x8xf32>
  %1 = prim.broadcast_in_dim %b dims [1] sizes(%n) : tensor<8xf32> -> tensor<?x8x8x8xf32>
  %2 = prim.add %0, %1 : tensor<?x8x8x8xf32>
  return %2 : tensor<?x8x8x8xf32>
}

// -----

// The same with the module's dyn.batch_hint = 2 (the largest batch the caller
// saw): 2 x 768 activations reach dense-min-elements' 1000, channels-last.
// MIN-LABEL: func @dynamic_batch_hint
// MIN: prim.transpose %arg0 permutation [0, 2, 3, 1] : tensor<?x4x8x8xf32> -> tensor<?x8x8x4xf32>
// MIN: prim.convolution {{.*}} channels_last : {{.*}} -> tensor<?x8x8x8xf32>
module attributes {dyn.batch_hint = 2 : i64} {
func.func @dynamic_batch_hint(%x: tensor<?x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<?x8x8x8xf32> {
  %0 = prim.convolution %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<?x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<?x8x8x8xf32>
  return %0 : tensor<?x8x8x8xf32>
}
}

// -----

// A training graph's forward: the saved activation (result 1, listed as
// layout-free) is returned as it was computed, channels-last; the result the
// user sees (0) stays in torch's order.
// CHECK-LABEL: func @forward_saves_channels_last
// CHECK-SAME: -> (tensor<2x4x8x8xf32>, tensor<2x8x8x4xf32>)
// CHECK-SAME: dyn.channels_last_results = array<i64: 1>
// CHECK-NOT: dyn.layout_free_results
// CHECK: %[[C:.*]] = prim.convolution {{.*}} channels_last
// CHECK: %[[R:.*]] = prim.max %[[C]]
// CHECK: %[[T:.*]] = prim.transpose %[[R]] permutation [0, 3, 1, 2]
// CHECK: return %[[T]], %[[R]]
func.func @forward_saves_channels_last(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>)
    -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) attributes {dyn.layout_free_results = array<i64: 1>} {
  %c = prim.convolution %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %z = prim.constant dense<0.0> : tensor<2x4x8x8xf32>
  %r = prim.max %c, %z : tensor<2x4x8x8xf32>
  return %r, %r : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>
}

// -----

// Its backward: the saved activation arrives channels-last (an argument listed
// in dyn.channels_last_args), the ReLU's gradient is computed in that layout,
// and convolution_backward reads both channels-last (params end in 1), its
// input gradient coming back so; only the cotangent (torch's order) and the
// input gradient the function returns are transposed.
// CHECK-LABEL: func @backward_reads_channels_last
// CHECK-SAME: %arg0: tensor<2x8x8x4xf32>
// CHECK: %[[G:.*]] = prim.transpose %arg3 permutation [0, 2, 3, 1]
// CHECK: %[[S:.*]] = prim.select {{.*}} : tensor<2x8x8x4xi1>, tensor<2x8x8x4xf32>
// CHECK: %[[X:.*]] = prim.transpose %arg1 permutation [0, 2, 3, 1]
// CHECK: %[[B:.*]]:2 = prim.library_call "convolution_backward"(%[[S]], %[[X]], %arg2) params [2, 1, 1, 2, 1, 1, 2, 1, 1, 1, 0, 2, 0, 0, 2, 1, 1, 1] : (tensor<2x8x8x4xf32>, tensor<2x8x8x3xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x8x8x3xf32>, tensor<4x3x3x3xf32>)
// CHECK: %[[GI:.*]] = prim.transpose %[[B]]#0 permutation [0, 3, 1, 2]
// CHECK: return %[[GI]], %[[B]]#1
// CHECK-NOT: dyn.channels_last_args
func.func @backward_reads_channels_last(%r: tensor<2x4x8x8xf32>, %x: tensor<2x3x8x8xf32>,
                                        %w: tensor<4x3x3x3xf32>, %g: tensor<2x4x8x8xf32>)
    -> (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) attributes {dyn.channels_last_args = array<i64: 0>} {
  %z = prim.constant dense<0.0> : tensor<2x4x8x8xf32>
  %pos = prim.gt %r, %z : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xi1>
  %gr = prim.select %pos, %g, %z : tensor<2x4x8x8xi1>, tensor<2x4x8x8xf32>
  %gi, %gw = prim.library_call "convolution_backward"(%gr, %x, %w) params [2, 1, 1, 2, 1, 1, 2, 1, 1, 1, 0, 2, 0, 0, 2, 1, 1] : (tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>)
  return %gi, %gw : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>
}

// -----

// A transposed convolution's gradients keep torch's layout.
// CHECK-LABEL: func @transposed_backward
// CHECK: prim.library_call "convolution_backward"(%arg0, %arg1, %arg2) params [2, 1, 1, 2, 0, 0, 2, 1, 1, 1, 1, 2, 0, 0, 2, 1, 1] :
// CHECK-NOT: prim.transpose
func.func @transposed_backward(%g: tensor<2x4x8x8xf32>, %x: tensor<2x3x8x8xf32>, %w: tensor<3x4x1x1xf32>)
    -> (tensor<2x3x8x8xf32>, tensor<3x4x1x1xf32>) {
  %gi, %gw = prim.library_call "convolution_backward"(%g, %x, %w) params [2, 1, 1, 2, 0, 0, 2, 1, 1, 1, 1, 2, 0, 0, 2, 1, 1] : (tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<3x4x1x1xf32>) -> (tensor<2x3x8x8xf32>, tensor<3x4x1x1xf32>)
  return %gi, %gw : tensor<2x3x8x8xf32>, tensor<3x4x1x1xf32>
}

// -----

// max_pool2d's gradient on a channels-last activation (the stem of a ResNet's
// backward): ATen gets grad_output, input and indices channels-last (params
// end in 1; the indices are h * W + w positions in either layout) and writes
// the gradient so, which the ReLU's gradient and the batch-norm sums after it
// read in place (a reduction over dims [0, 1, 2]: no transpose left).
// CHECK-LABEL: func @max_pool_backward_channels_last
// CHECK-SAME: %arg0: tensor<2x8x8x6xf32>
// CHECK-DAG: %[[G:.*]] = prim.transpose %arg1 permutation [0, 2, 3, 1] : tensor<2x6x4x4xf32> -> tensor<2x4x4x6xf32>
// CHECK-DAG: %[[I:.*]] = prim.transpose %arg2 permutation [0, 2, 3, 1] : tensor<2x6x4x4xi64> -> tensor<2x4x4x6xi64>
// CHECK: %[[B:.*]] = prim.library_call "max_pool2d_backward"(%[[G]], %arg0, %[[I]]) params [2, 3, 3, 2, 2, 2, 2, 1, 1, 2, 1, 1, 0, 1] : (tensor<2x4x4x6xf32>, tensor<2x8x8x6xf32>, tensor<2x4x4x6xi64>) -> tensor<2x8x8x6xf32>
// CHECK: %[[S:.*]] = prim.select {{.*}}, %[[B]], {{.*}} : tensor<2x8x8x6xi1>, tensor<2x8x8x6xf32>
// CHECK: %[[R:.*]] = prim.reduce_sum %[[S]] dims [0, 1, 2] : tensor<2x8x8x6xf32> -> tensor<6xf32>
// CHECK-NOT: prim.transpose
// CHECK: return %[[R]]
func.func @max_pool_backward_channels_last(%x: tensor<2x6x8x8xf32>, %g: tensor<2x6x4x4xf32>, %i: tensor<2x6x4x4xi64>)
    -> tensor<6xf32> attributes {dyn.channels_last_args = array<i64: 0>} {
  %gi = prim.library_call "max_pool2d_backward"(%g, %x, %i) params [2, 3, 3, 2, 2, 2, 2, 1, 1, 2, 1, 1, 0] : (tensor<2x6x4x4xf32>, tensor<2x6x8x8xf32>, tensor<2x6x4x4xi64>) -> tensor<2x6x8x8xf32>
  %z = prim.constant dense<0.0> : tensor<2x6x8x8xf32>
  %pos = prim.gt %x, %z : tensor<2x6x8x8xf32> -> tensor<2x6x8x8xi1>
  %s = prim.select %pos, %gi, %z : tensor<2x6x8x8xi1>, tensor<2x6x8x8xf32>
  %r = prim.reduce_sum %s dims [0, 2, 3] : tensor<2x6x8x8xf32> -> tensor<6xf32>
  return %r : tensor<6xf32>
}

// -----

// The same with a `?` batch (a symbolic training graph's backward): the
// channels-last call keeps the batch `?`, its gradient sized as its input.
// CHECK-LABEL: func @max_pool_backward_channels_last_dynamic
// CHECK: %[[B:.*]] = prim.library_call "max_pool2d_backward"(%{{.*}}, %arg0, %{{.*}}) params [2, 3, 3, 2, 2, 2, 2, 1, 1, 2, 1, 1, 0, 1] : (tensor<?x4x4x6xf32>, tensor<?x8x8x6xf32>, tensor<?x4x4x6xi64>) -> tensor<?x8x8x6xf32>
// CHECK: prim.transpose %[[B]] permutation [0, 3, 1, 2] : tensor<?x8x8x6xf32> -> tensor<?x6x8x8xf32>
func.func @max_pool_backward_channels_last_dynamic(%x: tensor<?x6x8x8xf32>, %g: tensor<?x6x4x4xf32>, %i: tensor<?x6x4x4xi64>)
    -> tensor<?x6x8x8xf32> attributes {dyn.channels_last_args = array<i64: 0>} {
  %gi = prim.library_call "max_pool2d_backward"(%g, %x, %i) params [2, 3, 3, 2, 2, 2, 2, 1, 1, 2, 1, 1, 0] : (tensor<?x6x4x4xf32>, tensor<?x6x8x8xf32>, tensor<?x6x4x4xi64>) -> tensor<?x6x8x8xf32>
  return %gi : tensor<?x6x8x8xf32>
}

// -----

// Operands none of which is channels-last: the call keeps torch's layout.
// CHECK-LABEL: func @max_pool_backward_nchw
// CHECK: prim.library_call "max_pool2d_backward"(%arg1, %arg0, %arg2) params [2, 3, 3, 2, 2, 2, 2, 1, 1, 2, 1, 1, 0] : (tensor<2x6x4x4xf32>, tensor<2x6x8x8xf32>, tensor<2x6x4x4xi64>) -> tensor<2x6x8x8xf32>
func.func @max_pool_backward_nchw(%x: tensor<2x6x8x8xf32>, %g: tensor<2x6x4x4xf32>, %i: tensor<2x6x4x4xi64>, %y: tensor<2x3x8x8xf32>)
    -> (tensor<2x6x8x8xf32>, tensor<2x3x8x8xf32>) attributes {dyn.channels_last_args = array<i64: 3>} {
  %gi = prim.library_call "max_pool2d_backward"(%g, %x, %i) params [2, 3, 3, 2, 2, 2, 2, 1, 1, 2, 1, 1, 0] : (tensor<2x6x4x4xf32>, tensor<2x6x8x8xf32>, tensor<2x6x4x4xi64>) -> tensor<2x6x8x8xf32>
  return %gi, %y : tensor<2x6x8x8xf32>, tensor<2x3x8x8xf32>
}

// -----

// A channels-last argument with a `?` batch (a symbolic training graph's saved
// activation): typed [?, H, W, C] as a static one would be, read through a
// transpose (its caller permutes it whatever its sizes).
// CHECK-LABEL: func @dynamic_channels_last_argument
// CHECK-SAME: %arg0: tensor<?x8x8x4xf32>
// CHECK: prim.transpose %{{.*}} permutation [0, 3, 1, 2] : tensor<?x8x8x4xf32> -> tensor<?x4x8x8xf32>
// CHECK-NOT: dyn.channels_last_args
func.func @dynamic_channels_last_argument(%r: tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
    attributes {dyn.channels_last_args = array<i64: 0>} {
  %e = prim.exp %r : tensor<?x4x8x8xf32>
  return %e : tensor<?x4x8x8xf32>
}

// -----

// A vision transformer's positional convolution (davit's ConvPosEnc), as
// dyn-decompose-depthwise-convolutions leaves it on the GPU: [N, L, C]
// tokens transposed and viewed as an [N, C, H, W] image, two of its taps
// (slices of the padded image) added to it, and the sum viewed as tokens
// again. No convolution is left, but the taps read the tokens in their own
// layout: the whole chain runs on [N, H, W, C] and no transpose remains.
// CHECK-LABEL: func @tokens_window
// CHECK-NOT: prim.transpose
// CHECK: %[[I:.*]] = prim.reshape %arg0 : tensor<2x16x8xf32> -> tensor<2x4x4x8xf32>
// CHECK: %[[P:.*]] = prim.pad %[[I]] low [0, 1, 1, 0] high [0, 1, 1, 0]
// CHECK: prim.slice %[[P]] start [0, 0, 0, 0]
// CHECK: prim.slice %[[P]] start [0, 1, 1, 0]
// CHECK: %[[R:.*]] = prim.reshape %{{.*}} : tensor<2x4x4x8xf32> -> tensor<2x16x8xf32>
// CHECK-NOT: prim.transpose
// CHECK: return %[[R]]
func.func @tokens_window(%x: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %t = prim.transpose %x permutation [0, 2, 1] : tensor<2x16x8xf32> -> tensor<2x8x16xf32>
  %i = prim.reshape %t : tensor<2x8x16xf32> -> tensor<2x8x4x4xf32>
  %p = prim.pad %i low [0, 0, 1, 1] high [0, 0, 1, 1] value 0.0 : tensor<2x8x4x4xf32> -> tensor<2x8x6x6xf32>
  %s0 = prim.slice %p start [0, 0, 0, 0] stride [1, 1, 1, 1] : tensor<2x8x6x6xf32> -> tensor<2x8x4x4xf32>
  %s1 = prim.slice %p start [0, 0, 1, 1] stride [1, 1, 1, 1] : tensor<2x8x6x6xf32> -> tensor<2x8x4x4xf32>
  %a = prim.add %s0, %s1 : tensor<2x8x4x4xf32>
  %b = prim.add %i, %a : tensor<2x8x4x4xf32>
  %r = prim.reshape %b : tensor<2x8x4x4xf32> -> tensor<2x8x16xf32>
  %o = prim.transpose %r permutation [0, 2, 1] : tensor<2x8x16xf32> -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// -----

// A gather along H of a channels-last value (max_pool2d's input gradient,
// gathered from the windows reaching each position) runs along H's
// channels-last dim, its index broadcast in that order: no transpose.
// CHECK-LABEL: func @gather_channels_last
// CHECK-SAME: %arg0: tensor<2x4x4x6xf32>
// CHECK: %[[I:.*]] = prim.broadcast_in_dim %{{.*}} dims [1] : tensor<8xi64> -> tensor<2x8x4x6xi64>
// CHECK: %[[G:.*]] = prim.gather %arg0 dim 1 index %[[I]] : tensor<2x4x4x6xf32>, tensor<2x8x4x6xi64> -> tensor<2x8x4x6xf32>
// CHECK: prim.reduce_sum %[[G]] dims [0, 1, 2] : tensor<2x8x4x6xf32> -> tensor<6xf32>
// CHECK-NOT: prim.transpose
func.func @gather_channels_last(%g: tensor<2x6x4x4xf32>) -> tensor<6xf32> attributes {dyn.channels_last_args = array<i64: 0>} {
  %c = prim.constant dense<[0, 0, 1, 1, 2, 2, 3, 3]> : tensor<8xi64>
  %i = prim.broadcast_in_dim %c dims [2] : tensor<8xi64> -> tensor<2x6x8x4xi64>
  %r = prim.gather %g dim 2 index %i : tensor<2x6x4x4xf32>, tensor<2x6x8x4xi64> -> tensor<2x6x8x4xf32>
  %s = prim.reduce_sum %r dims [0, 2, 3] : tensor<2x6x8x4xf32> -> tensor<6xf32>
  return %s : tensor<6xf32>
}
