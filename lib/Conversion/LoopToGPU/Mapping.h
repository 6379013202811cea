//===- Mapping.h - loop kernels onto GPU launches (internal) --------------===//
//
// What the files of dyn-convert-loop-to-gpu share: the helpers (Utils.cpp)
// and KernelMapper, whose methods live by responsibility in LoopToGPU.cpp
// (the pass, static dispatch, pointwise kernels), Reductions.cpp (row
// kernels, split and column reductions), Transpose.cpp (tiled transposes) and
// Dynamic.cpp (kernels with `?` dims, outlining preparation).
//
//===----------------------------------------------------------------------===//
#ifndef DYN_LIB_CONVERSION_LOOPTOGPU_MAPPING_H
#define DYN_LIB_CONVERSION_LOOPTOGPU_MAPPING_H

#include "dyn/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <optional>

namespace dyn::loop_to_gpu {
using namespace mlir;

constexpr int64_t kPointsPerThread = 4;
// Splitting a reduction across blocks: aim for the threads the GPU holds at
// once (the target's SMs x resident threads per SM: 132 x 2048 on an H100),
// with chunks of at least kMinChunk elements; column sums over few rows
// (a transformer's bias and norm-weight gradients over its tokens) take
// chunks down to kMinColumnChunk rather than leave most SMs idle.
constexpr int64_t kMinChunk = 32;
constexpr int64_t kMinColumnChunk = 8;
// A short `?` column reduction over few points: threads of a block per point (columnsByBlock).
constexpr int64_t kColumnBlockThreads = 64;
// Loads in flight per thread in a split reduction's sweep (unrolled accumulators).
constexpr int64_t kUnroll = 4;
// Splitting few long rows: aim for a full SM's threads in blocks of 256 on
// every SM (8 blocks per SM), each sweeping at least kRowChunk elements.
constexpr int64_t kRowChunk = 8192;
// Kernels with strided rows: below a quarter of the threads the GPU holds,
// a thread each leaves it mostly idle, so a block takes each row of at least
// kMinRow elements.
constexpr int64_t kMinRow = 32;
// A block's row kept in registers: at most this many points a thread, or
// kResidentBytes of the row's widest element where that is more (16
// bfloat16s: a block of 1024 threads per 8192-point row, two an SM, left the
// SMs waiting on too few bytes in flight; 512 threads of two vectors each
// keep four rows in flight).
constexpr int64_t kMaxResident = 8;
constexpr int64_t kResidentBytes = 32;
// A split reduction with at least this many partials per point combines them
// with a block per point (a tree), not a serial loop per thread.
constexpr int64_t kBlockCombine = 256;
// So does one with few points (a thread each would leave most of the GPU idle,
// each waiting on its partials one load at a time) from this many partials.
constexpr int64_t kFewPointsBlockCombine = 16;
// combinePartials' `combineThreads` for combineColumns (warps over the partials' rows, a block per 32 points).
constexpr int64_t kColumnCombine = -1;
// Shared memory a column split's block may fold its chunks' partials in.
constexpr int64_t kMaxFoldSharedBytes = 16 << 10;

int64_t product(ArrayRef<int64_t> sizes);
Value cIndex(OpBuilder &b, Location loc, int64_t v);
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear, ArrayRef<int64_t> sizes);
Value sizeValue(OpBuilder &b, Location loc, OpFoldResult s);
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear, ArrayRef<OpFoldResult> sizes);
Value productValue(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes);
SmallVector<OpFoldResult> innerSizes(Operation *op, IRMapping &map);
bool hasStaticDomains(loop::KernelOp kernel);
/// The kernel's top-level reductions when one sweep can fold them all (siblings: one domain, none
/// reading another's result, no loop beside them); empty otherwise.
SmallVector<loop::ReduceOp> siblingReduces(loop::KernelOp kernel);
ArrayRef<int64_t> innerDomain(Operation *op);
bool rowsAreContiguous(loop::KernelOp kernel);
bool dependsOn(Value v, BlockArgument arg, Block &body);
int64_t vectorWidth(loop::KernelOp kernel);
bool isGpuScalar(Type t);
/// Moves each top-level load of a buffer the kernel does not store up to just after what it needs
/// (past pure ops only), so a thread issues its loads together: a libdevice function's branches
/// (sinf's slow path) would otherwise keep a later load waiting for the earlier values' math.
void hoistLoads(loop::KernelOp kernel);
gpu::AllReduceOperation allReduceKind(loop::ReduceKind kind, Type type);
SmallVector<Value> cloneBody(OpBuilder &b, Block &body, ValueRange indices, IRMapping &map);
/// The points a row kernel's thread takes: kMaxResident, or kResidentBytes of the widest element its
/// passes move along the row where that is more.
int64_t rowPointsPerThread(loop::KernelOp kernel);
/// Threads for a block sweeping rows of `n` points: about rowPointsPerThread each.
int64_t rowThreads(loop::KernelOp kernel, int64_t n);

/// A row kernel whose passes over the row (a norm's mean, variance and write; a softmax's max, sum
/// and write) read the same points: each thread reads its few points of the row once, into
/// registers, and every pass reuses them, as inductor's persistent reductions do. Without it each
/// pass reads the row again and recomputes what feeds it (a residual add and a GEMM's bias before a
/// LayerNorm: three reads of both inputs). Applies where every pass sweeps the same domain, with at
/// most kMaxResident points a thread; a ragged last point (the row not a whole number of sweeps)
/// is read at a clamped index and left out by a select, so its ops must be safe to speculate.
/// Where the row's accesses run along its contiguous innermost dim, a thread's points are
/// `width` neighbours (a 16-byte vector of the narrowest element: 8 bfloat16s, 4 floats) in each
/// of `slots` groups a block apart, and those accesses move a vector at a time.
struct ResidentRow {
  ArrayRef<int64_t> domain; // every pass's
  int64_t perThread = 0;    // slots x width
  int64_t width = 1;
  int64_t slots = 0;
  bool ragged = false;
};
std::optional<ResidentRow> residentRow(loop::KernelOp kernel, int64_t threads);
/// Whether a load or store of a row pass's `body` moves `width` neighbouring points with one
/// aligned vector: it indexes its buffer's last dim with the body's innermost index, no other
/// index moving with it, and the buffer (identity layout, elements of a byte or more) has rows of
/// a multiple of `width`.
bool isRowVectorAccess(Operation *access, Block &body, int64_t width);
/// The buffer a loop.load or loop.store accesses; null for other ops.
Value accessedMemref(Operation *op);
/// `fn` on each load and store of a row kernel's passes (its loop.for and loop.reduce bodies), with its body.
void forEachRowAccess(loop::KernelOp kernel, function_ref<void(Operation *, Block &)> fn);

/// A batched 2-D transpose (Transpose.cpp): the store writes the domain in
/// order, the loads read it as [batch..., A..., B...] where the domain is
/// [batch..., B..., A...].
struct TransposePlan {
  unsigned batchDims = 0, bDims = 0; // the domain: batch dims, then B's, then A's
  int64_t batch = 1, a = 1, bSize = 1;
};

struct KernelMapper {
  OpBuilder &b;
  int64_t threadsPerBlock;
  int64_t fillThreads; // threads resident on the whole GPU (the target's SMs x threads per SM)
  int64_t fillBlocks;  // blocks of 256 that fill every SM

  // LoopToGPU.cpp
  std::pair<Value, scf::IfOp> guardedThreadIndex(gpu::LaunchOp launch, int64_t threads, int64_t bound);
  std::pair<Value, scf::IfOp> guardedThreadIndex(gpu::LaunchOp launch, int64_t threads, OpFoldResult bound);
  LogicalResult map(loop::KernelOp kernel);
  LogicalResult vectorize(loop::KernelOp kernel, int64_t width, Value points = {});

  // Reductions.cpp
  void rowBody(loop::KernelOp kernel, gpu::LaunchOp launch, ArrayRef<OpFoldResult> domain,
               int64_t threads, bool allowResident);
  SmallVector<loop::ReduceOp> splittableReduces(loop::KernelOp kernel, bool byRow);
  LogicalResult splitReduce(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, bool byRow);
  LogicalResult splitRows(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, ArrayRef<OpFoldResult> domain,
                          Value chunks, int64_t maxChunks, Value chunkLength, Value length, int64_t combineThreads);
  void splitRowPartial(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, gpu::LaunchOp launch,
                       ArrayRef<Value> partials, int64_t points, Value chunkLength, Value length,
                       int64_t threads);
  int64_t columnWidth(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces);
  LogicalResult splitColumns(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces,
                             ArrayRef<OpFoldResult> domain, Value points, Value length, Value chunks,
                             Value chunkLength, int64_t width, int64_t combineThreads);
  void combinePartials(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, ArrayRef<Value> partials,
                       ArrayRef<OpFoldResult> domain, Value points, Value chunks, int64_t combineThreads);
  void combineColumns(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, ArrayRef<Value> partials,
                      ArrayRef<OpFoldResult> domain, Value points, Value chunks);
  void cloneSweepInputs(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, IRMapping &map);
  SmallVector<Value> foldLanes(ArrayRef<loop::ReduceKind> kinds, TypeRange types, Value begin, Value end,
                               Value step, int64_t unroll, function_ref<SmallVector<Value>(Value)> at);
  SmallVector<Value> foldLanes(loop::ReduceKind kind, Type type, Value begin, Value end, Value step,
                               int64_t unroll, int64_t lanes, function_ref<SmallVector<Value>(Value)> at);
  SmallVector<Value> foldRanges(ArrayRef<loop::ReduceOp> reduces, Value begin, Value end, Value step,
                                IRMapping &map, int64_t unroll = 1);
  Value foldRange(loop::ReduceOp reduce, Value begin, Value end, Value step, IRMapping &map,
                  int64_t unroll = 1);
  SmallVector<Value> foldRangeLanes(ArrayRef<loop::ReduceOp> reduces, Value begin, Value end, Value step,
                                    SmallVector<IRMapping> &maps, Value inner, int64_t unroll);
  Value allReduce(loop::ReduceOp reduce, Value partial);
  Value blockReduce(loop::ReduceOp reduce, Value thread, int64_t threads, IRMapping &map);
  void blockFor(loop::ForOp forLoop, Value thread, int64_t threads, IRMapping &map);

  // Transpose.cpp
  std::optional<TransposePlan> transposePlan(loop::KernelOp kernel);
  LogicalResult tiledTranspose(loop::KernelOp kernel, const TransposePlan &plan);

  // Dynamic.cpp
  LogicalResult mapDynamic(loop::KernelOp kernel, bool allowSplit = true);
  LogicalResult splitDynamic(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces);
  LogicalResult splitOrSerialDynamic(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces);
  LogicalResult sweepColumns(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces);
  LogicalResult columnsByBlock(loop::KernelOp kernel);
  SmallVector<IRMapping> laneMaps(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces, Value point,
                                  ArrayRef<OpFoldResult> domain, int64_t width);
  LogicalResult splitDynamicRows(loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces);
};

LogicalResult viewDynamicBuffers(OpBuilder &b, gpu::LaunchOp launch);
void dropEmptyBufferLoads(OpBuilder &b, gpu::LaunchOp launch);

} // namespace dyn::loop_to_gpu

#endif // DYN_LIB_CONVERSION_LOOPTOGPU_MAPPING_H
