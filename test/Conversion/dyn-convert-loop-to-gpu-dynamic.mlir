// RUN: dyn-opt %s -split-input-file -dyn-convert-loop-to-gpu | FileCheck %s

// Domains with `?` dims (docs/dynamic_shapes.md): the launch geometry is
// computed in the host function from the runtime sizes (the launch plan
// evaluates it at each call). A pointwise kernel whose innermost dim is a
// constant multiple of four f32 still moves 16 bytes a thread: the groups are
// the points / 4, the grid their ceil-div by 256 threads, the guard compares
// against the runtime group count.
// CHECK-LABEL: func @dynamic_rows
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %c0
// CHECK: %[[POINTS:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK: %[[GROUPS:.*]] = arith.divui %[[POINTS]], %{{.*}} : index
// CHECK: %[[GRID:.*]] = arith.ceildivui %[[GROUPS]], %{{.*}} : index
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]],
// CHECK: arith.cmpi ult, %{{.*}}, %[[GROUPS]] : index
// CHECK: vector.load {{.*}} : memref<?x16xf32>, vector<4xf32>
// CHECK: vector.store {{.*}} : memref<?x16xf32>, vector<4xf32>
// CHECK: } {dyn.kernel = "neg"}
func.func @dynamic_rows(%x: memref<?x16xf32>, %y: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x16xf32>
  loop.kernel "neg" [%n, 16] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : memref<?x16xf32>
    %r = arith.negf %v : f32
    loop.store %r, %y[%i, %j] : memref<?x16xf32>
  }
  return
}

// -----

// A `?` innermost dim: a thread per point, the point count n * m at run time.
// CHECK-LABEL: func @dynamic_both
// CHECK: %[[POINTS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[GRID:.*]] = arith.ceildivui %[[POINTS]], %{{.*}} : index
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in
// CHECK: %[[BASE:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK: %[[I:.*]] = arith.addi %[[BASE]], %[[T]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[POINTS]] : index
// CHECK: scf.if %[[IN]]
// CHECK: arith.remui %[[I]], %{{.*}} : index
// CHECK: math.exp
// CHECK-NOT: vector.load
func.func @dynamic_both(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  loop.kernel "exp" [%n, %m] {
  ^bb0(%i: index, %j: index):
    %v = loop.load %x[%i, %j] : memref<?x?xf32>
    %r = math.exp %v : f32
    loop.store %r, %y[%i, %j] : memref<?x?xf32>
  }
  return
}

// -----

// A softmax over rows of runtime length: a block per row (the grid is the
// row count), 256 threads sweeping the row to its runtime end, each
// reduction combined across the block.
// CHECK-LABEL: func @dynamic_softmax
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %c0
// CHECK: %[[M:.*]] = memref.dim %{{.*}}, %c1
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[N]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256:.*]],
// CHECK: scf.for %{{.*}} = %[[T]] to %[[M]] step
// CHECK: gpu.all_reduce maximumf
// CHECK: scf.for %{{.*}} = %[[T]] to %[[M]] step
// CHECK: gpu.all_reduce add
// CHECK: scf.for %{{.*}} = %[[T]] to %[[M]] step
// CHECK: arith.divf
// CHECK: } {dyn.kernel = "softmax"}
func.func @dynamic_softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  loop.kernel "softmax" [%n] {
  ^bb0(%i: index):
    %mx = loop.reduce max [%m] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      loop.yield %v : f32
    }
    %s = loop.reduce add [%m] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      loop.yield %e : f32
    }
    loop.for [%m] {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %r = arith.divf %e, %s : f32
      loop.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// -----

// Rows of a constant length (a norm over 768 features) and a runtime count:
// the static plan's row (128 threads, two vectors of 4 points each kept in
// registers: the row's loads read once), the grid the runtime row count.
// CHECK-LABEL: func @dynamic_norm
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %c0
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[N]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128:.*]],
// CHECK-COUNT-2: vector.load %{{.*}} : memref<?x768xf32>, vector<4xf32>
// CHECK-NOT: load
// CHECK: gpu.all_reduce add
// CHECK-NOT: scf.for
// CHECK: } {dyn.kernel = "norm"}
func.func @dynamic_norm(%x: memref<?x768xf32>, %y: memref<?x768xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x768xf32>
  loop.kernel "norm" [%n] {
  ^bb0(%i: index):
    %s = loop.reduce add [768] : f32 {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x768xf32>
      %q = arith.mulf %v, %v : f32
      loop.yield %q : f32
    }
    loop.for [768] {
    ^bb0(%j: index):
      %v = loop.load %x[%i, %j] : memref<?x768xf32>
      %r = arith.divf %v, %s : f32
      loop.store %r, %y[%i, %j] : memref<?x768xf32>
    }
  }
  return
}

// -----

// A sum over a `?` leading dim (strided rows) of 1024 columns: split across
// blocks at run time where it is long (n >= 128 rows: the static lowering's
// rule), else a block of 64 threads per column taking rows in turn and
// combining them with gpu.all_reduce; both forms are in the host function,
// each launch's grid 0 where the other runs (a thread per 4 columns, the form
// for many columns, is not emitted: 1024 columns are few). Split: chunks of
// 32 rows, or down to 8 where a quarter of the GPU's threads would not have
// work otherwise: max(min(ceil(67584 / 256 groups), n / 8), n / 32), at most
// ceil(132 x 2048 / 256) and at least 1, of ceil(n / chunks) rows; a thread
// per (chunk, 4 columns) sweeps its rows with 16-byte loads into 4 x 4
// accumulators, storing partials into a temporary [chunks x 1024]; a block of
// 64 threads per column folds them and gpu.all_reduce combines them (a tree:
// f32-accurate over long extents).
// CHECK-LABEL: func @dynamic_column_sum
// CHECK: %[[N:.*]] = memref.dim
// CHECK: %[[SPLIT:.*]] = arith.cmpi uge, %[[N]], %c128
// CHECK: %[[SHORT:.*]] = arith.select %[[SPLIT]], %false{{.*}}, %true{{.*}} : i1
// CHECK-NOT: vector.load
// CHECK: %[[BYBLOCK:.*]] = arith.select %[[SHORT]], %c1024{{.*}}, %c0{{.*}} : index
// CHECK: gpu.launch blocks(%[[COL:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BYBLOCK]], {{.*}} threads(%[[ROW:[^,]*]], {{.*}} in (%{{.*}} = %c64,
// CHECK: scf.for %[[I:.*]] = %[[ROW]] to %[[N]] step %c64
// CHECK: loop.load %arg0[%[[I]], %[[COL]]]
// CHECK: gpu.all_reduce add
// CHECK: } {dyn.kernel = "colsum"}
// CHECK: %[[GROUPS:.*]] = arith.divui %c1024{{.*}}, %c4 : index
// CHECK: %[[QUARTER:.*]] = arith.ceildivui %c67584{{.*}}, %[[GROUPS]] : index
// CHECK: %[[BY8:.*]] = arith.divui %[[N]], %c8 : index
// CHECK: %[[SHORTER:.*]] = arith.minui %[[QUARTER]], %[[BY8]] : index
// CHECK: %[[BY32:.*]] = arith.divui %[[N]], %c32 : index
// CHECK: %[[WANT:.*]] = arith.maxui %[[SHORTER]], %[[BY32]] : index
// CHECK: %[[FILL:.*]] = arith.ceildivui %c270336{{.*}}, %[[GROUPS]] : index
// CHECK: %[[MIN:.*]] = arith.minui %[[WANT]], %[[FILL]] : index
// CHECK: %[[CHUNKS:.*]] = arith.maxui %[[MIN]], %{{.*}} : index
// CHECK: arith.ceildivui %[[N]], %[[CHUNKS]] : index
// CHECK: %[[TMP:.*]] = memref.alloc(%[[CHUNKS]]) : memref<?x1024xf32>
// CHECK: %[[PARTIALS:.*]] = arith.select %[[SPLIT]], %{{.*}}, %c0{{.*}} : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[PARTIALS]],
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: vector.load {{.*}} : memref<?x1024xf32>, vector<4xf32>
// CHECK: loop.store %{{.*}}, %[[TMP]]
// CHECK: } {dyn.kernel = "colsum_partial"}
// CHECK: %[[COMBINE:.*]] = arith.select %[[SPLIT]], %c1024{{.*}}, %c0{{.*}} : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[COMBINE]],
// CHECK: loop.load %[[TMP]]
// CHECK: gpu.all_reduce add
// CHECK: } {dyn.kernel = "colsum"}
// CHECK: memref.dealloc %[[TMP]]
func.func @dynamic_column_sum(%x: memref<?x1024xf32>, %y: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x1024xf32>
  loop.kernel "colsum" [1024] {
  ^bb0(%j: index):
    %s = loop.reduce add [%n] : f32 {
    ^bb0(%i: index):
      %v = loop.load %x[%i, %j] : memref<?x1024xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%j] : memref<1024xf32>
  }
  return
}

// -----

// A column sum with `?` columns too: the form for many columns (a thread per
// column sweeping every row with 4 accumulators) is a third launch, running
// where there are at least a quarter of the GPU's threads' worth of columns
// (67584) and the reduction is not split; the block per column runs below
// that; the split where n >= 128 and the columns are fewer than the GPU's
// threads (270336).
// CHECK-LABEL: func @dynamic_column_sum_points
// CHECK: %[[N:.*]] = memref.dim %arg0, %c0
// CHECK: %[[M:.*]] = memref.dim %arg0, %c1
// CHECK: %[[LONG:.*]] = arith.cmpi uge, %[[N]], %c128
// CHECK: %[[FIT:.*]] = arith.cmpi ult, %[[M]], %c270336
// CHECK: %[[SPLIT:.*]] = arith.select %[[LONG]], %[[FIT]], %false
// CHECK: %[[FEW:.*]] = arith.cmpi ult, %[[M]], %c67584
// CHECK: %[[NOSPLIT:.*]] = arith.select %[[SPLIT]], %false{{.*}}, %true
// CHECK: %[[BYBLOCK:.*]] = arith.select %[[NOSPLIT]], %[[FEW]], %false
// CHECK: %[[NOSPLIT2:.*]] = arith.select %[[SPLIT]], %false{{.*}}, %true
// CHECK: %[[MANY:.*]] = arith.select %[[FEW]], %false{{.*}}, %true
// CHECK: %[[SWEEP:.*]] = arith.select %[[NOSPLIT2]], %[[MANY]], %false
// CHECK: %[[G1:.*]] = arith.select %[[SWEEP]], %{{.*}}, %c0{{.*}} : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[G1]], {{.*}} threads({{.*}}) in (%{{.*}} = %c256
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32)
// CHECK: } {dyn.kernel = "colsum"}
// CHECK: %[[G2:.*]] = arith.select %[[BYBLOCK]], %[[M]], %c0{{.*}} : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[G2]], {{.*}} threads({{.*}}) in (%{{.*}} = %c64,
// CHECK: gpu.all_reduce add
// CHECK: } {dyn.kernel = "colsum"}
// CHECK: %[[G3:.*]] = arith.select %[[SPLIT]], %{{.*}}, %c0{{.*}} : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[G3]],
// CHECK: } {dyn.kernel = "colsum_partial"}
// CHECK: %[[G4:.*]] = arith.select %[[SPLIT]], %[[M]], %c0{{.*}} : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[G4]],
// CHECK: } {dyn.kernel = "colsum"}
func.func @dynamic_column_sum_points(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  loop.kernel "colsum" [%m] {
  ^bb0(%j: index):
    %s = loop.reduce add [%n] : f32 {
    ^bb0(%i: index):
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%j] : memref<?xf32>
  }
  return
}

// -----

// A sum over every element of a `?`-row tensor whose rows are long (a loss
// over [tokens, vocab]): one row of a runtime length, which a block per row
// would leave to a single block of the GPU. It is split into runs of the row
// at run time (at most 1056 of them: one per block slot of the GPU), a block
// per run, then a block combining the partials as a tree.
// CHECK-LABEL: func @dynamic_total
// CHECK: %[[N:.*]] = memref.dim
// CHECK: %[[LEN:.*]] = arith.muli %[[N]], %c50257
// CHECK: %[[RUNS:.*]] = arith.divui %[[LEN]], %c8192
// CHECK: arith.minui %c1056, %[[RUNS]]
// CHECK: %[[CHUNKS:.*]] = arith.maxui
// CHECK: memref.alloc() : memref<1056x1xf32>
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[CHUNKS]],
// CHECK: gpu.all_reduce add
// CHECK: } {dyn.kernel = "total_partial"}
// CHECK: gpu.launch
// CHECK: scf.for {{.*}} to %[[CHUNKS]]
// CHECK: gpu.all_reduce add
// CHECK: } {dyn.kernel = "total"}
func.func @dynamic_total(%x: memref<?x50257xf32>, %y: memref<f32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x50257xf32>
  loop.kernel "total" [] {
    %s = loop.reduce add [%n, 50257] : f32 {
    ^bb0(%i: index, %j: index):
      %v = loop.load %x[%i, %j] : memref<?x50257xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[] : memref<f32>
  }
  return
}

// -----

// A sum over a `?` length alone (a mean over the tokens): a block of 256
// threads sweeps it, one launch.
// CHECK-LABEL: func @dynamic_short_total
// CHECK: gpu.launch
// CHECK: gpu.all_reduce add
// CHECK: } {dyn.kernel = "total"}
// CHECK-NOT: gpu.launch
func.func @dynamic_short_total(%x: memref<?xf32>, %y: memref<f32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  loop.kernel "total" [] {
    %s = loop.reduce add [%n] : f32 {
    ^bb0(%i: index):
      %v = loop.load %x[%i] : memref<?xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[] : memref<f32>
  }
  return
}

// -----

// A batch norm's two channel sums over an NCHW tensor with a `?` batch: 64
// rows of n x 3136 elements, strided by the batch. Runs of each row (at
// most 17: 1056 block slots over 64 rows) are folded by a block each, both
// sums in one sweep, then a block per channel combines the partials.
// CHECK-LABEL: func @dynamic_channel_sums
// CHECK: %[[N:.*]] = memref.dim
// CHECK: %[[LEN:.*]] = arith.muli
// CHECK: arith.minui %c17,
// CHECK: %[[CHUNKS:.*]] = arith.maxui
// CHECK: %[[S:.*]] = memref.alloc() : memref<17x64xf32>
// CHECK: %[[Q:.*]] = memref.alloc() : memref<17x64xf32>
// CHECK: %[[GRID:.*]] = arith.muli %[[CHUNKS]], %c64
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[GRID]],
// CHECK-COUNT-2: gpu.all_reduce add
// CHECK: } {dyn.kernel = "moments_partial"}
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c64
// CHECK: loop.load %[[S]]
// CHECK: loop.load %[[Q]]
// CHECK: } {dyn.kernel = "moments"}
// CHECK: memref.dealloc %[[S]]
func.func @dynamic_channel_sums(%x: memref<?x64x56x56xf32>, %s: memref<64xf32>, %q: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64x56x56xf32>
  loop.kernel "moments" [64] {
  ^bb0(%c: index):
    %a = loop.reduce add [%n, 56, 56] : f32 {
    ^bb0(%i: index, %h: index, %w: index):
      %v = loop.load %x[%i, %c, %h, %w] : memref<?x64x56x56xf32>
      loop.yield %v : f32
    }
    %b = loop.reduce add [%n, 56, 56] : f32 {
    ^bb0(%i: index, %h: index, %w: index):
      %v = loop.load %x[%i, %c, %h, %w] : memref<?x64x56x56xf32>
      %v2 = arith.mulf %v, %v : f32
      loop.yield %v2 : f32
    }
    loop.store %a, %s[%c] : memref<64xf32>
    loop.store %b, %q[%c] : memref<64xf32>
  }
  return
}
