// RUN: dyn-opt %s -split-input-file -dyn-fuse-prim-to-loop -canonicalize | FileCheck %s

// Small pointwise kernels of one shape that read only buffers written before
// the first of them run as one kernel in its place: the num_batches_tracked
// increments of two batch norms (one thread each on the GPU) are one kernel,
// before the normalization between them; each still writes its input in place.
// %g joins them too (it reads an input); %h reads %g, a result written by that
// kernel, and keeps a kernel of its own after it (an optimizer's parameter
// update after its new moments: merged, each group's kernel would be unique).
// CHECK-LABEL: func @counters
// CHECK-SAME: dyn.in_place = array<i64: 0, 1, -1, -1, -1>
// CHECK: loop.kernel "add_0" []
// CHECK: loop.load %arg0[]
// CHECK: loop.store %{{.*}}, %arg4[]
// CHECK: loop.load %arg1[]
// CHECK: loop.store %{{.*}}, %arg5[]
// CHECK: loop.load %arg2[]
// CHECK: math.exp
// CHECK: loop.store %{{.*}}, %arg7[]
// CHECK: loop.kernel "exp_1" [8, 64]
// CHECK: loop.kernel "mul_{{.*}}" []
// CHECK: loop.load %arg7[]
// CHECK: loop.store %{{.*}}, %arg8[]
// CHECK-NOT: loop.kernel
func.func @counters(%n0: tensor<i64>, %n1: tensor<i64>, %t: tensor<f32>, %x: tensor<8x64xf32>)
    -> (tensor<i64> {dyn.updates_arg = 0 : i64}, tensor<i64> {dyn.updates_arg = 1 : i64}, tensor<8x64xf32>,
        tensor<f32>, tensor<f32>) {
  %one = prim.constant dense<1> : tensor<i64>
  %a = prim.add %n0, %one : tensor<i64>
  %e = prim.exp %x : tensor<8x64xf32>
  %b = prim.add %n1, %one : tensor<i64>
  %g = prim.exp %t : tensor<f32>
  %two = prim.constant dense<2.0> : tensor<f32>
  %h = prim.mul %g, %two : tensor<f32>
  return %a, %b, %e, %g, %h : tensor<i64>, tensor<i64>, tensor<8x64xf32>, tensor<f32>, tensor<f32>
}

// -----

// Only one shape merges: a [4] kernel stays apart from the [] ones, and a
// kernel over more than 256 points is not small.
// CHECK-LABEL: func @shapes
// CHECK: loop.kernel "add_0" []
// CHECK: loop.store %{{.*}}, %arg3[]
// CHECK: loop.store %{{.*}}, %arg5[]
// CHECK: loop.kernel "add_1" [4]
// CHECK: loop.kernel "neg_2" [512]
// CHECK: loop.kernel "neg_{{.*}}" [512]
// CHECK-NOT: loop.kernel
func.func @shapes(%n0: tensor<i64>, %v: tensor<4xf32>, %w: tensor<512xf32>)
    -> (tensor<i64>, tensor<4xf32>, tensor<i64>, tensor<512xf32>, tensor<512xf32>) {
  %one = prim.constant dense<1> : tensor<i64>
  %a = prim.add %n0, %one : tensor<i64>
  %b = prim.add %v, %v : tensor<4xf32>
  %c = prim.sub %n0, %one : tensor<i64>
  %d = prim.neg %w : tensor<512xf32>
  %e = prim.exp %w : tensor<512xf32>
  %f = prim.neg %e : tensor<512xf32>
  return %a, %b, %c, %d, %f : tensor<i64>, tensor<4xf32>, tensor<i64>, tensor<512xf32>, tensor<512xf32>
}

// -----

// A small kernel that updates an input another kernel reads (an optimizer's
// step, read by its update of the parameters) stays in its place: run
// earlier, it would overwrite the input before that kernel reads it, and the
// update would need a buffer of its own and a copy.
// CHECK-LABEL: func @keeps_in_place
// CHECK-SAME: dyn.in_place = array<i64: 0, -1, 1>
// CHECK: loop.kernel "add_0" []
// CHECK-NOT: loop.load %arg1
// CHECK: loop.kernel "mul_1" [8, 64]
// CHECK: loop.load %arg1[]
// CHECK: loop.kernel "add_2" []
// CHECK: loop.load %arg1[]
// CHECK: loop.store %{{.*}}, %arg5[]
// CHECK-NOT: loop.kernel
func.func @keeps_in_place(%n0: tensor<i64>, %step: tensor<f32>, %x: tensor<8x64xf32>)
    -> (tensor<i64> {dyn.updates_arg = 0 : i64}, tensor<8x64xf32>, tensor<f32> {dyn.updates_arg = 1 : i64}) {
  %one = prim.constant dense<1> : tensor<i64>
  %a = prim.add %n0, %one : tensor<i64>
  %sb = prim.broadcast_in_dim %step dims [] : tensor<f32> -> tensor<8x64xf32>
  %y = prim.mul %x, %sb : tensor<8x64xf32>
  %fone = prim.constant dense<1.0> : tensor<f32>
  %s1 = prim.add %step, %fone : tensor<f32>
  return %a, %y, %s1 : tensor<i64>, tensor<8x64xf32>, tensor<f32>
}

// -----

// An optimizer's step for one parameter: the parameter's update reads the new
// first and second moments at its point, and nothing else reads them (but the
// results): the moments run in its kernel, at its place (after the bias
// correction's scalar), which takes their scalars, rounded as their bfloat16
// buffers hold them, instead of loading them back.
// CHECK-LABEL: func @adam_like
// CHECK: loop.kernel "add_0" []
// CHECK: loop.kernel "{{.*}}" [64, 32]
// CHECK: loop.store %{{.*}}, %arg6
// CHECK: loop.store %{{.*}}, %arg7
// CHECK-NOT: loop.load %arg6
// CHECK-NOT: loop.load %arg7
// CHECK: arith.truncf
// CHECK: loop.store %{{.*}}, %arg8
// CHECK-NOT: loop.kernel
func.func @adam_like(%p: tensor<64x32xbf16>, %g: tensor<64x32xbf16>, %m: tensor<64x32xbf16>,
                     %v: tensor<64x32xbf16>, %step: tensor<f32>)
    -> (tensor<f32>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>) {
  %one = prim.constant dense<1.0> : tensor<f32>
  %s = prim.add %step, %one : tensor<f32>
  %b1 = prim.constant dense<0.1> : tensor<64x32xbf16>
  %d = prim.sub %g, %m : tensor<64x32xbf16>
  %dm = prim.mul %d, %b1 : tensor<64x32xbf16>
  %m2 = prim.add %m, %dm : tensor<64x32xbf16>
  %gg = prim.mul %g, %g : tensor<64x32xbf16>
  %v2 = prim.add %v, %gg : tensor<64x32xbf16>
  %c = prim.mul %s, %s : tensor<f32>
  %c1 = prim.exp %c : tensor<f32>
  %cb = prim.convert_element_type %c1 : tensor<f32> -> tensor<bf16>
  %cx = prim.broadcast_in_dim %cb dims [] : tensor<bf16> -> tensor<64x32xbf16>
  %r = prim.sqrt %v2 : tensor<64x32xbf16>
  %q = prim.div %m2, %r : tensor<64x32xbf16>
  %qc = prim.mul %q, %cx : tensor<64x32xbf16>
  %p2 = prim.sub %p, %qc : tensor<64x32xbf16>
  return %s, %m2, %v2, %p2 : tensor<f32>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>
}

// -----

// A moment another kernel also reads keeps its own kernel: %m2 feeds the
// parameter's update and %other.
// CHECK-LABEL: func @read_elsewhere
// CHECK: loop.kernel "add_0" [64, 32]
// CHECK: loop.kernel
// CHECK: loop.kernel
func.func @read_elsewhere(%p: tensor<64x32xf32>, %g: tensor<64x32xf32>, %m: tensor<64x32xf32>)
    -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<32x64xf32>) {
  %m2 = prim.add %m, %g : tensor<64x32xf32>
  %p2 = prim.sub %p, %m2 : tensor<64x32xf32>
  %t = prim.transpose %m2 permutation [1, 0] : tensor<64x32xf32> -> tensor<32x64xf32>
  %other = prim.exp %t : tensor<32x64xf32>
  return %m2, %p2, %other : tensor<64x32xf32>, tensor<64x32xf32>, tensor<32x64xf32>
}

// -----

// Nor where another kernel reads it through an op the two kernels share: %a,
// whose square both the sum's kernel (before the division's) and the division
// read, keeps its own kernel in its place.
// CHECK-LABEL: func @shared_with_reduction
// CHECK: loop.kernel "add_0" [16, 64]
// CHECK-NEXT: ^bb0
// CHECK-COUNT-2: loop.load
// CHECK-NEXT: arith.addf
// CHECK-NEXT: loop.store %{{.*}}, %arg2
// CHECK-NEXT: }
// CHECK: loop.kernel "reduce_sum_1" [16]
// CHECK: loop.kernel "div_2" [16, 64]
// CHECK-NOT: loop.store %{{.*}}, %arg2
func.func @shared_with_reduction(%x: tensor<16x64xf32>, %y: tensor<16x64xf32>)
    -> (tensor<16x64xf32>, tensor<16xf32>, tensor<16x64xf32>) {
  %a = prim.add %x, %y : tensor<16x64xf32>
  %sq = prim.mul %a, %a : tensor<16x64xf32>
  %s = prim.reduce_sum %sq dims [1] : tensor<16x64xf32> -> tensor<16xf32>
  %sb = prim.broadcast_in_dim %s dims [0] : tensor<16xf32> -> tensor<16x64xf32>
  %n = prim.div %sq, %sb : tensor<16x64xf32>
  return %a, %s, %n : tensor<16x64xf32>, tensor<16xf32>, tensor<16x64xf32>
}

// -----

// SGD with momentum and weight decay: the momentum reads the parameter, which
// the update writes in place, at its own point only: it joins the update's
// kernel, whose store to the parameter comes after that read.
// CHECK-LABEL: func @sgd_weight_decay
// CHECK-SAME: dyn.in_place = array<i64: 0, 2>
// CHECK: loop.kernel "{{.*}}" [64, 32]
// CHECK: loop.load %arg0
// CHECK: loop.store %{{.*}}, %arg4
// CHECK: loop.store %{{.*}}, %arg3
// CHECK-NOT: loop.kernel
func.func @sgd_weight_decay(%p: tensor<64x32xf32>, %g: tensor<64x32xf32>, %buf: tensor<64x32xf32>)
    -> (tensor<64x32xf32> {dyn.updates_arg = 0 : i64}, tensor<64x32xf32> {dyn.updates_arg = 2 : i64}) {
  %wd = prim.constant dense<0.01> : tensor<64x32xf32>
  %mom = prim.constant dense<0.9> : tensor<64x32xf32>
  %lr = prim.constant dense<0.1> : tensor<64x32xf32>
  %d = prim.mul %p, %wd : tensor<64x32xf32>
  %gd = prim.add %g, %d : tensor<64x32xf32>
  %bm = prim.mul %buf, %mom : tensor<64x32xf32>
  %b2 = prim.add %bm, %gd : tensor<64x32xf32>
  %step = prim.mul %b2, %lr : tensor<64x32xf32>
  %p2 = prim.sub %p, %step : tensor<64x32xf32>
  return %p2, %b2 : tensor<64x32xf32>, tensor<64x32xf32>
}

// -----

// A temporary written by a member is read by a later member at its own point
// (a batch norm backward's per-channel coefficients, one from another; each
// gets a buffer, as a kernel of 4M points reads both through broadcasts): one
// kernel, which takes the scalar it just stored.
// CHECK-LABEL: func @temporary_chain
// CHECK: loop.kernel "exp_0" [64]
// CHECK: %[[E:.*]] = math.exp
// CHECK: loop.store %[[E]]
// CHECK-NOT: loop.load
// CHECK: math.rsqrt %[[E]]
// CHECK: loop.store
// CHECK: loop.kernel "add_1" [16, 64, 64, 64]
// CHECK-NOT: math
// CHECK: loop.kernel "reduce_sum_2" [64]
// CHECK-NOT: loop.kernel
func.func @temporary_chain(%t: tensor<64xf32>, %x: tensor<16x64x64x64xf32>) -> (tensor<64xf32>, tensor<16x64x64x64xf32>) {
  %e = prim.exp %t : tensor<64xf32>
  %h = prim.rsqrt %e : tensor<64xf32>
  %eb = prim.broadcast_in_dim %e dims [3] : tensor<64xf32> -> tensor<16x64x64x64xf32>
  %y = prim.mul %x, %eb : tensor<16x64x64x64xf32>
  %hb = prim.broadcast_in_dim %h dims [3] : tensor<64xf32> -> tensor<16x64x64x64xf32>
  %z = prim.add %y, %hb : tensor<16x64x64x64xf32>
  %r = prim.reduce_sum %z dims [0, 1, 2] : tensor<16x64x64x64xf32> -> tensor<64xf32>
  return %r, %z : tensor<64xf32>, tensor<16x64x64x64xf32>
}
