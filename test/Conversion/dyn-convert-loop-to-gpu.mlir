// RUN: dyn-opt %s -split-input-file -dyn-convert-loop-to-gpu -verify-diagnostics | FileCheck %s

// A pointwise kernel over contiguous buffers: four points a thread moved by one
// 16-byte load and one 16-byte store; the math is per point. The launch is
// outlined under its loop kernel's name (profiles name it).
// CHECK-LABEL: func @pointwise
// CHECK: gpu.launch {{.*}} function(@dyn_exp)
// CHECK: %[[GROUPS:.*]] = arith.constant 250 : index
// CHECK: arith.cmpi ult, %{{.*}}, %[[GROUPS]]
// CHECK: %[[V:.*]] = vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<1000xf32>, vector<4xf32>
// CHECK-COUNT-4: math.exp
// CHECK: %[[W:.*]] = vector.from_elements
// CHECK: vector.store %[[W]], %{{.*}}[%{{.*}}] {alignment = 16 : i64}
// CHECK-NOT: loop.load
// CHECK-NOT: loop.kernel
func.func @pointwise(%x: memref<1000xf32>, %y: memref<1000xf32>) {
  loop.kernel "exp" [1000] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<1000xf32>
    %e = math.exp %v : f32
    loop.store %e, %y[%i] : memref<1000xf32>
  }
  return
}

// -----

// A kernel that reads back a buffer it writes (a merged kernel whose later
// value loads an earlier one's): no 16-byte groups or several points a
// thread, whose loads would all come before the stores; one point a thread,
// each point's load after its store.
// CHECK-LABEL: func @reads_back
// CHECK: gpu.launch
// CHECK-NOT: vector.load
// CHECK: loop.store %{{.*}}, %[[Y:.*]][
// CHECK: loop.load %[[Y]][
// CHECK-NOT: loop.load
func.func @reads_back(%x: memref<1024xf32>, %y: memref<1024xf32>, %z: memref<1024xf32>) {
  loop.kernel "exp" [1024] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<1024xf32>
    %e = math.exp %v : f32
    loop.store %e, %y[%i] : memref<1024xf32>
    %w = loop.load %y[%i] : memref<1024xf32>
    %n = arith.negf %w : f32
    loop.store %n, %z[%i] : memref<1024xf32>
  }
  return
}

// -----

// An update in place (a batch norm backward's input gradient written over the
// gradient it reads): the buffer is loaded only before it is stored, at the
// point stored, so the kernel takes 16-byte vectors like any other; a load at
// another point of the stored buffer keeps one point a thread.
// CHECK-LABEL: func @update_in_place
// CHECK: gpu.launch
// CHECK-DAG: vector.load %arg0[
// CHECK-DAG: %[[V:.*]] = vector.load %arg1[
// CHECK: vector.store %{{.*}}, %arg1[
// CHECK-LABEL: func @update_reading_a_neighbour
// CHECK: gpu.launch
// CHECK-NOT: vector.load
// CHECK: loop.store
func.func @update_in_place(%x: memref<1024xf32>, %g: memref<1024xf32>) {
  loop.kernel "mul" [1024] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<1024xf32>
    %w = loop.load %g[%i] : memref<1024xf32>
    %p = arith.mulf %v, %w : f32
    loop.store %p, %g[%i] : memref<1024xf32>
  }
  return
}
func.func @update_reading_a_neighbour(%x: memref<1024xf32>, %g: memref<1024xf32>) {
  %c1 = arith.constant 1 : index
  %c1023 = arith.constant 1023 : index
  loop.kernel "mul" [1024] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<1024xf32>
    %j0 = arith.addi %i, %c1 : index
    %j = arith.minsi %j0, %c1023 : index
    %w = loop.load %g[%j] : memref<1024xf32>
    %p = arith.mulf %v, %w : f32
    loop.store %p, %g[%i] : memref<1024xf32>
  }
  return
}

// -----

// f32 square roots are the NVVM intrinsic sqrt.rn.f32 (correctly rounded as
// in eager's CUDA kernels), not math.sqrt (libdevice's __nv_sqrtf, approximate
// without the __CUDA_PREC_SQRT reflection); f64 keeps math.sqrt (__nv_sqrt is
// correctly rounded).
// CHECK-LABEL: func @sqrt
// CHECK: gpu.launch
// CHECK: llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"(%{{.*}}) : (f32) -> f32
// CHECK-NOT: math.sqrt {{.*}} : f32
// CHECK: math.sqrt %{{.*}} : f64
func.func @sqrt(%x: memref<7xf32>, %y: memref<7xf32>, %a: memref<7xf64>, %c: memref<7xf64>) {
  loop.kernel "sqrt" [7] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<7xf32>
    %s = math.sqrt %v : f32
    loop.store %s, %y[%i] : memref<7xf32>
    %w = loop.load %a[%i] : memref<7xf64>
    %t = math.sqrt %w : f64
    loop.store %t, %c[%i] : memref<7xf64>
  }
  return
}

// -----

// A transposing copy cannot move four neighbours with one access: one thread
// per point, 256 a block, guarded tail.
// CHECK-LABEL: func @transpose
// CHECK: gpu.launch
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK: loop.load
// CHECK: loop.store
// CHECK-NOT: vector.load
func.func @transpose(%x: memref<10x100xf32>, %y: memref<100x10xf32>) {
  loop.kernel "t" [100, 10] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%j, %i] : memref<10x100xf32>
    loop.store %v, %y[%i, %j] : memref<100x10xf32>
  }
  return
}

// -----

// A row kernel over contiguous rows: one block per row; the reduction is a
// block-strided partial plus gpu.all_reduce, the write pass a strided loop
// (rows longer than kMaxResident points a thread: read by each pass).
// CHECK-LABEL: func @row_softmax_like
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 64 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ROWS]]
// CHECK: %[[PART:.*]] = scf.for {{.*}} iter_args
// CHECK: arith.maximumf
// CHECK: %[[MAX:.*]] = gpu.all_reduce maximumf %[[PART]] uniform
// CHECK: scf.for
// CHECK: arith.subf %{{.*}}, %[[MAX]]
// CHECK: loop.store
func.func @row_softmax_like(%x: memref<64x16384xf32>, %y: memref<64x16384xf32>) {
  loop.kernel "row" [64] {
  ^bb0(%i: index):
    %m = loop.reduce max [16384] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<64x16384xf32>
      loop.yield %v : f32
    }
    loop.for [16384] {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<64x16384xf32>
      %d = arith.subf %v, %m : f32
      loop.store %d, %y[%i, %j] : memref<64x16384xf32>
    }
  }
  return
}

// -----

// A LayerNorm after a residual add (a ViT block's): three passes over a row
// of 768 that each read both inputs. 128 threads keep their points of the
// row in registers, two 16-byte vectors of 4 floats each (192 vectors: the
// second is ragged): each input vector is loaded once, the passes unrolled
// (no loop) and the sum of the residual computed once per point.
// CHECK-LABEL: func @resident_rows
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128
// CHECK-NOT: scf.for
// CHECK-COUNT-2: vector.load %arg0{{.*}} vector<4xf32>
// CHECK-NOT: load %arg0
// CHECK: gpu.all_reduce add
// CHECK-NOT: load %arg0
// CHECK: gpu.all_reduce add
// CHECK-NOT: load %arg0
// CHECK-COUNT-2: vector.store {{.*}} vector<4xf32>
// CHECK-NOT: scf.for
func.func @resident_rows(%x: memref<1576x768xf32>, %r: memref<1576x768xf32>, %y: memref<1576x768xf32>) {
  %n = arith.constant 768.0 : f32
  loop.kernel "norm" [1576] {
  ^bb0(%i: index):
    %s = loop.reduce add [768] : f32 {
    ^bb0(%j: index):
      %a = loop.load %x[%i, %j] : memref<1576x768xf32>
      %b = loop.load %r[%i, %j] : memref<1576x768xf32>
      %v = arith.addf %a, %b : f32
      loop.yield %v : f32
    }
    %mean = arith.divf %s, %n : f32
    %q = loop.reduce add [768] : f32 {
    ^bb0(%j: index):
      %a = loop.load %x[%i, %j] : memref<1576x768xf32>
      %b = loop.load %r[%i, %j] : memref<1576x768xf32>
      %v = arith.addf %a, %b : f32
      %d = arith.subf %v, %mean : f32
      %d2 = arith.mulf %d, %d : f32
      loop.yield %d2 : f32
    }
    loop.for [768] {
    ^bb0(%j: index):
      %a = loop.load %x[%i, %j] : memref<1576x768xf32>
      %b = loop.load %r[%i, %j] : memref<1576x768xf32>
      %v = arith.addf %a, %b : f32
      %d = arith.subf %v, %mean : f32
      %o = arith.mulf %d, %q : f32
      loop.store %o, %y[%i, %j] : memref<1576x768xf32>
    }
  }
  return
}

// -----

// A row of 200 on 32 threads: 50 vectors of 4 floats, two a thread, the
// second ragged. It is read at a clamped index and left out of the reduction
// by a select, and its store is guarded.
// CHECK-LABEL: func @resident_ragged_rows
// CHECK-NOT: scf.for
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c50
// CHECK: arith.select %[[IN]], %{{.*}}, %c0
// CHECK: vector.load %arg0{{.*}} vector<4xf32>
// CHECK: vector.load %arg0{{.*}} vector<4xf32>
// CHECK: arith.select %[[IN]]
// CHECK: gpu.all_reduce maximumf
// CHECK-NOT: load
// CHECK: vector.store
// CHECK: scf.if %[[IN]]
// CHECK-NEXT: vector.from_elements
// CHECK-NEXT: vector.store
func.func @resident_ragged_rows(%x: memref<16x200xf32>, %y: memref<16x200xf32>) {
  loop.kernel "row" [16] {
  ^bb0(%i: index):
    %m = loop.reduce max [200] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<16x200xf32>
      loop.yield %v : f32
    }
    loop.for [200] {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<16x200xf32>
      %d = arith.subf %v, %m : f32
      loop.store %d, %y[%i, %j] : memref<16x200xf32>
    }
  }
  return
}

// -----

// A row of 201 (no whole vectors) on 32 threads: 7 points a thread, a block
// apart, the last one ragged: read at a clamped index, left out of the
// reduction by a select, its store guarded.
// CHECK-LABEL: func @resident_ragged_scalar_rows
// CHECK-NOT: scf.for
// CHECK-NOT: vector.load
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c201
// CHECK: arith.select %[[IN]], %{{.*}}, %c0
// CHECK: arith.select %[[IN]]
// CHECK: gpu.all_reduce maximumf
// CHECK: scf.if %[[IN]]
// CHECK-NEXT: loop.store
func.func @resident_ragged_scalar_rows(%x: memref<16x201xf32>, %y: memref<16x201xf32>) {
  loop.kernel "row" [16] {
  ^bb0(%i: index):
    %m = loop.reduce max [201] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<16x201xf32>
      loop.yield %v : f32
    }
    loop.for [201] {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<16x201xf32>
      %d = arith.subf %v, %m : f32
      loop.store %d, %y[%i, %j] : memref<16x201xf32>
    }
  }
  return
}

// -----

// An RMS norm in bfloat16 over rows of 4096 (statistics in f32): 256
// threads, each keeping 32 bytes of the row (16 points, as 8 floats would
// be), moved by two 16-byte loads of 8 bfloat16s and two 16-byte stores; the
// weight read a vector at a time too.
// CHECK-LABEL: func @resident_rows_bf16
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256
// CHECK-COUNT-2: vector.load %arg0{{.*}} : memref<64x4096xbf16>, vector<8xbf16>
// CHECK-NOT: load %arg0
// CHECK: gpu.all_reduce add
// CHECK: vector.load %arg1{{.*}} : memref<4096xbf16>, vector<8xbf16>
// CHECK-NOT: load %arg0
// CHECK: vector.store {{.*}} : memref<64x4096xbf16>, vector<8xbf16>
// CHECK: vector.store {{.*}} : memref<64x4096xbf16>, vector<8xbf16>
// CHECK-NOT: loop.store
func.func @resident_rows_bf16(%x: memref<64x4096xbf16>, %w: memref<4096xbf16>, %y: memref<64x4096xbf16>) {
  %n = arith.constant 4096.0 : f32
  loop.kernel "rms" [64] {
  ^bb0(%i: index):
    %s = loop.reduce add [4096] : f32 {
    ^bb0(%j: index):
      %a = loop.load %x[%i, %j] : memref<64x4096xbf16>
      %f = arith.extf %a : bf16 to f32
      %q = arith.mulf %f, %f : f32
      loop.yield %q : f32
    }
    %m = arith.divf %s, %n : f32
    %r = math.rsqrt %m : f32
    loop.for [4096] {
    ^bb0(%j: index):
      %a = loop.load %x[%i, %j] : memref<64x4096xbf16>
      %g = loop.load %w[%j] : memref<4096xbf16>
      %f = arith.extf %a : bf16 to f32
      %h = arith.extf %g : bf16 to f32
      %o = arith.mulf %f, %r : f32
      %p = arith.mulf %o, %h : f32
      %t = arith.truncf %p : f32 to bf16
      loop.store %t, %y[%i, %j] : memref<64x4096xbf16>
    }
  }
  return
}

// -----

// Trigonometry takes 16-byte vectors like any pointwise kernel, both loads
// issued before the math: libdevice's sinf and cosf branch to a slow path for
// huge arguments, which would keep the second load waiting on the first
// value's math (one point a thread, two memory latencies in a row).
// CHECK-LABEL: func @trig_loads_first
// CHECK: vector.load %arg0{{.*}} vector<4xf32>
// CHECK-NOT: math.cos
// CHECK: vector.load %arg1{{.*}} vector<4xf32>
// CHECK-COUNT-4: math.cos
// CHECK: vector.store
func.func @trig_loads_first(%x: memref<1024xf32>, %y: memref<1024xf32>, %z: memref<1024xf32>) {
  loop.kernel "cos_sin" [1024] {
  ^bb0(%i: index):
    %a = loop.load %x[%i] : memref<1024xf32>
    %c = math.cos %a : f32
    %b = loop.load %y[%i] : memref<1024xf32>
    %s = math.sin %b : f32
    %o = arith.addf %c, %s : f32
    loop.store %o, %z[%i] : memref<1024xf32>
  }
  return
}

// -----

// A norm over the channels of an NCHW tensor (convnext's LayerNorm after a
// permute): its rows are strided, but 392 points are too few for a thread
// each, so a block takes each row (reduction through gpu.all_reduce, the
// write pass storing contiguous rows; two vectors of 4 points a thread, kept
// in registers: the strided loads one point at a time, the stores a vector).
// CHECK-LABEL: func @strided_rows_few_points
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 392 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ROWS]]
// CHECK-COUNT-8: loop.load %arg0
// CHECK: gpu.all_reduce add
// CHECK-NOT: loop.load
// CHECK-COUNT-2: vector.store %{{.*}} : memref<392x768xf32>, vector<4xf32>
func.func @strided_rows_few_points(%x: memref<8x768x7x7xf32>, %y: memref<392x768xf32>) {
  %c7 = arith.constant 7 : index
  loop.kernel "norm" [392] {
  ^bb0(%p: index):
    %w = arith.remui %p, %c7 : index
    %q = arith.divui %p, %c7 : index
    %h = arith.remui %q, %c7 : index
    %n = arith.divui %q, %c7 : index
    %s = loop.reduce add [768] : f32 {
    ^bb0(%c: index):
      %v = loop.load %x[%n, %c, %h, %w] : memref<8x768x7x7xf32>
      loop.yield %v : f32
    }
    loop.for [768] {
    ^bb0(%c: index):
      %v = loop.load %x[%n, %c, %h, %w] : memref<8x768x7x7xf32>
      %d = arith.subf %v, %s : f32
      loop.store %d, %y[%p, %c] : memref<392x768xf32>
    }
  }
  return
}

// -----

// Warp shuffles move 32-bit words: a block reduction of a narrower integer
// runs on its sign extension to i32 and truncates the total.
// CHECK-LABEL: func @row_min_i16
// CHECK: %[[PART:.*]] = scf.for {{.*}} -> (i16)
// CHECK: %[[WIDE:.*]] = arith.extsi %[[PART]] : i16 to i32
// CHECK: %[[MIN:.*]] = gpu.all_reduce minsi %[[WIDE]] uniform {
// CHECK-NEXT: } : (i32) -> i32
// CHECK: arith.trunci %[[MIN]] : i32 to i16
func.func @row_min_i16(%x: memref<64x4096xi16>, %y: memref<64xi16>) {
  loop.kernel "row" [64] {
  ^bb0(%i: index):
    %m = loop.reduce min [4096] : i16 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<64x4096xi16>
      loop.yield %v : i16
    }
    loop.store %m, %y[%i] : memref<64xi16>
  }
  return
}

// -----

// f16 and bf16 partials are combined as f32 and rounded back.
// CHECK-LABEL: func @row_max_f16
// CHECK: %[[WIDE:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[MAX:.*]] = gpu.all_reduce maximumf %[[WIDE]] uniform {
// CHECK-NEXT: } : (f32) -> f32
// CHECK: arith.truncf %[[MAX]] : f32 to f16
func.func @row_max_f16(%x: memref<64x4096xf16>, %y: memref<64xf16>) {
  loop.kernel "row" [64] {
  ^bb0(%i: index):
    %m = loop.reduce max [4096] : f16 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<64x4096xf16>
      loop.yield %v : f16
    }
    loop.store %m, %y[%i] : memref<64xf16>
  }
  return
}

// -----

// NVPTX has no 80-bit float arithmetic: the pass refuses the kernel instead of
// leaving it to abort LLVM's instruction selection.
func.func @f80_inside(%x: memref<256xf32>, %y: memref<256xf32>) {
  loop.kernel "k" [256] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<256xf32>
    // expected-error @+1 {{computes in 'f80', which the GPU lowering does not support}}
    %w = arith.extf %v : f32 to f80
    %t = arith.truncf %w : f80 to f32
    loop.store %t, %y[%i] : memref<256xf32>
  }
  return
}

// -----

// A dynamic domain whose size is an argument: the geometry is computed from
// it in the host function (dyn-convert-loop-to-gpu-dynamic.mlir has more).
// CHECK-LABEL: func @dynamic_domain
// CHECK: %[[GRID:.*]] = arith.ceildivui %arg1, %{{.*}} : index
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]],
// CHECK: arith.cmpi ult, %{{.*}}, %arg1 : index
func.func @dynamic_domain(%x: memref<?xf32>, %n: index) {
  loop.kernel "k" [%n] {
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<?xf32>
    loop.store %v, %x[%i] : memref<?xf32>
  }
  return
}

// -----

// A sum over the leading dim with few outputs: split across blocks. The first
// launch folds 64 chunks of 8 rows per column into a temporary (a thread per
// (chunk, 4 columns), neighbouring threads on neighbouring columns, one
// 16-byte load a row, 4 rows a step into 4 x 4 accumulators; chunks of 32
// rows would give only 4096 threads work); the second combines each column's
// partials with a block per column (threads folding strided partials, then
// gpu.all_reduce): a thread per column would leave most of the GPU idle.
// CHECK-LABEL: func @column_sum
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<64x1024xf32>
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: vector.load %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<512x1024xf32>, vector<4xf32>
// CHECK-COUNT-4: loop.store %{{.*}}, %[[TMP]]
// CHECK: gpu.launch
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK: loop.load %[[TMP]]
// CHECK: gpu.all_reduce
// CHECK: loop.store
// CHECK: memref.dealloc %[[TMP]]
func.func @column_sum(%x: memref<512x1024xf32>, %y: memref<1024xf32>) {
  loop.kernel "colsum" [1024] {
  ^bb0(%j: index):
    %s = loop.reduce add [512] : f32 {
    ^bb0(%i: index):
      %v = loop.load %x[%i, %j] : memref<512x1024xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%j] : memref<1024xf32>
  }
  return
}

// -----

// Column sums over many points (8192): the partials are combined by a block
// per 32 points, its 8 warps folding the partials' rows 8 apart (coalesced
// along the points), then the first warp folding the 8 warps' values from
// shared memory in order; not a block per point (8192 blocks of 256 threads).
// CHECK-LABEL: func @many_column_sums
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<64x8192xf32>
// CHECK: } {dyn.kernel = "colsum_partial"}
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[BLOCKS]], {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}} workgroup(%[[SHARED:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK: loop.load %[[TMP]]
// CHECK: memref.store %{{.*}}, %[[SHARED]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-8: memref.load %[[SHARED]]
// CHECK: loop.store
// CHECK-NOT: gpu.all_reduce
func.func @many_column_sums(%x: memref<512x8192xf32>, %y: memref<8192xf32>) {
  loop.kernel "colsum" [8192] {
  ^bb0(%j: index):
    %s = loop.reduce add [512] : f32 {
    ^bb0(%i: index):
      %v = loop.load %x[%i, %j] : memref<512x8192xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%j] : memref<8192xf32>
  }
  return
}

// -----

// A short sum over the leading dim: a thread per column walks the rows.
// CHECK-LABEL: func @short_column_sum
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: loop.reduce add [64]
// CHECK-NOT: memref.alloc
func.func @short_column_sum(%x: memref<64x1024xf32>, %y: memref<1024xf32>) {
  loop.kernel "colsum" [1024] {
  ^bb0(%j: index):
    %s = loop.reduce add [64] : f32 {
    ^bb0(%i: index):
      %v = loop.load %x[%i, %j] : memref<64x1024xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%j] : memref<1024xf32>
  }
  return
}

// -----

// A transposing kernel that tiles evenly: four points a thread, a block apart,
// every load before the first store.
// CHECK-LABEL: func @pointwise_tiled
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 4 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[BLOCKS]],
// CHECK-NOT: scf.if
// CHECK-COUNT-4: loop.load
// CHECK-NOT: loop.load
// CHECK-COUNT-4: loop.store
func.func @pointwise_tiled(%x: memref<64x64xf32>, %y: memref<64x64xf32>) {
  loop.kernel "t" [64, 64] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%j, %i] : memref<64x64xf32>
    %n = arith.negf %v : f32
    loop.store %n, %y[%i, %j] : memref<64x64xf32>
  }
  return
}

// -----

// Few long rows: each row is split into chunks, a block per (chunk, row)
// reduces its chunk with gpu.all_reduce into a temporary; a second launch
// combines the partials of each row. Each thread sweeps its part of the chunk
// four points a step into four accumulators (four loads in flight), the rest
// one at a time.
// CHECK-LABEL: func @few_long_rows
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<64x4xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[BLOCKS:.*]], {{.*}}) threads
// CHECK: scf.for {{.*}} iter_args({{.*}}, {{.*}}, {{.*}}, {{.*}}) -> (f32, f32, f32, f32)
// CHECK: scf.for {{.*}} -> (f32)
// CHECK: gpu.all_reduce add
// CHECK: loop.store %{{.*}}, %[[TMP]]
// CHECK: gpu.launch
// CHECK: loop.load %[[TMP]]
// CHECK: memref.dealloc %[[TMP]]
func.func @few_long_rows(%x: memref<4x524288xf32>, %y: memref<4xf32>) {
  loop.kernel "rowsum" [4] {
  ^bb0(%i: index):
    %s = loop.reduce add [524288] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<4x524288xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%i] : memref<4xf32>
  }
  return
}

// -----

// An embedding row copy: the row index is loaded once per thread (it does not
// move with the column), the weight row moves four columns with one 16-byte
// load.
// CHECK-LABEL: func @embedding_rows
// CHECK: gpu.launch
// CHECK: loop.load %{{.*}} : memref<3xi64>
// CHECK: arith.minsi
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<10x8xf32>, vector<4xf32>
// CHECK: vector.store
func.func @embedding_rows(%w: memref<10x8xf32>, %idx: memref<3xi64>, %y: memref<3x8xf32>) {
  loop.kernel "gather" [3, 8] {
  ^bb0(%i: index, %j: index):
    %raw = loop.load %idx[%i] : memref<3xi64>
    %r = arith.index_cast %raw : i64 to index
    %c0 = arith.constant 0 : index
    %c9 = arith.constant 9 : index
    %lo = arith.maxsi %r, %c0 : index
    %row = arith.minsi %lo, %c9 : index
    %v = loop.load %w[%row, %j] : memref<10x8xf32>
    loop.store %v, %y[%i, %j] : memref<3x8xf32>
  }
  return
}

// -----

// A gather whose input rows are longer than the kernel's (10 vs 4 floats): a
// row of the input does not start 16-byte aligned, so no vector accesses.
// CHECK-LABEL: func @gather_unaligned_rows
// CHECK: gpu.launch
// CHECK-NOT: vector.load
func.func @gather_unaligned_rows(%w: memref<6x10xf32>, %idx: memref<3xi64>, %y: memref<3x4xf32>) {
  loop.kernel "gather" [3, 4] {
  ^bb0(%i: index, %j: index):
    %raw = loop.load %idx[%i] : memref<3xi64>
    %r = arith.index_cast %raw : i64 to index
    %v = loop.load %w[%r, %j] : memref<6x10xf32>
    loop.store %v, %y[%i, %j] : memref<3x4xf32>
  }
  return
}

// -----

// Library calls stay in the host function, in order between the launches of
// the kernels around them.
// CHECK-LABEL: func @library_call_between_kernels
// CHECK: gpu.launch
// CHECK: loop.matmul
// CHECK: gpu.launch
func.func @library_call_between_kernels(%a: memref<64x64xf32>, %t: memref<64x64xf32>, %c: memref<64x64xf32>) {
  loop.kernel "relu" [64, 64] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %a[%i, %j] : memref<64x64xf32>
    loop.store %v, %t[%i, %j] : memref<64x64xf32>
  }
  loop.matmul %t, %t, %c : memref<64x64xf32>, memref<64x64xf32>, memref<64x64xf32>
  loop.kernel "scale" [64, 64] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %c[%i, %j] : memref<64x64xf32>
    loop.store %v, %c[%i, %j] : memref<64x64xf32>
  }
  return
}
