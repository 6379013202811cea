//===- LoopToSCF.cpp - loop kernels to scf loops, math approximation -----===//
//
// dyn-convert-loop-to-scf: one scf.parallel per kernel (OpenMP later), serial
// scf.for nests for loop.for / loop.reduce, memref accesses, and runtime
// calls for the library-call ops (dyn's own matmul for f32/f64 GEMMs, the
// registered library implementations for the rest).
//
// dyn-approximate-math: f32 transcendental math as polynomials, so that the
// inner loops vectorize.
//
//===----------------------------------------------------------------------===//
#include "dyn/Conversion/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/StringSet.h"

#include <algorithm>

namespace dyn {
#define GEN_PASS_DEF_CONVERTLOOPTOSCFPASS
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "dyn/Conversion/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value sizeValue(OpBuilder &b, Location loc, OpFoldResult size) {
  return getValueOrCreateConstantIndexOp(b, loc, size);
}

/// A dim's size when it is a constant; `unknown` for a dynamic one (a guess
/// for the heuristics that weigh work, never for code).
int64_t staticSizeOr(OpFoldResult size, int64_t unknown) {
  return getConstantIntValue(size).value_or(unknown);
}

/// Builds a serial scf.for nest over `domain`; returns the innermost body's
/// builder position and the induction variables.
SmallVector<Value> buildForNest(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> domain) {
  SmallVector<Value> ivs;
  for (OpFoldResult size : domain) {
    auto forOp = scf::ForOp::create(b, loc, cIndex(b, loc, 0), sizeValue(b, loc, size),
                                    cIndex(b, loc, 1));
    b.setInsertionPointToStart(forOp.getBody());
    ivs.push_back(forOp.getInductionVar());
  }
  return ivs;
}

/// Moves `body`'s ops (minus the terminator) to the builder's position, with
/// its arguments replaced by `ivs`; returns the terminator's operands.
SmallVector<Value> inlineBody(RewriterBase &rewriter, Block &body, ValueRange ivs) {
  Operation *term = body.getTerminator();
  SmallVector<Value> yielded(term->getOperands());
  rewriter.eraseOp(term);
  rewriter.inlineBlockBefore(&body, rewriter.getInsertionBlock(), rewriter.getInsertionPoint(),
                             ivs);
  return yielded;
}

void lowerReduce(IRRewriter &rewriter, loop::ReduceOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value init = arith::ConstantOp::create(rewriter, loc, loop::reduceIdentity(rewriter, op.getKind(), op.getType()));
  // One accumulator carried through the whole nest.
  SmallVector<scf::ForOp> loops;
  SmallVector<Value> ivs;
  Value acc = init;
  for (OpFoldResult size : op.getMixedDomain()) {
    // The body yields its accumulator for now; the real value is set below.
    auto forOp = scf::ForOp::create(
        rewriter, loc, cIndex(rewriter, loc, 0), sizeValue(rewriter, loc, size),
        cIndex(rewriter, loc, 1), ValueRange{acc},
        [](OpBuilder &b, Location l, Value, ValueRange iterArgs) {
          scf::YieldOp::create(b, l, iterArgs);
        });
    loops.push_back(forOp);
    ivs.push_back(forOp.getInductionVar());
    acc = forOp.getRegionIterArgs()[0];
    rewriter.setInsertionPointToStart(forOp.getBody());
  }
  if (loops.empty()) { // empty domain: one point
    SmallVector<Value> yielded = inlineBody(rewriter, op.getBodyBlock(), {});
    rewriter.replaceOp(op, loop::reduceCombine(rewriter, loc, op.getKind(), init, yielded[0]));
    return;
  }
  // Innermost body: element, combine, yield; then each outer loop yields the
  // inner loop's result.
  Operation *innerYield = loops.back().getBody()->getTerminator();
  rewriter.setInsertionPoint(innerYield);
  SmallVector<Value> yielded = inlineBody(rewriter, op.getBodyBlock(), ivs);
  Value next = loop::reduceCombine(rewriter, loc, op.getKind(), acc, yielded[0]);
  rewriter.modifyOpInPlace(innerYield, [&] { innerYield->setOperands(next); });
  for (int i = (int)loops.size() - 2; i >= 0; --i) {
    Operation *yield = loops[i].getBody()->getTerminator();
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperands(loops[i + 1].getResult(0)); });
  }
  rewriter.replaceOp(op, loops.front().getResult(0));
}

void lowerFor(IRRewriter &rewriter, loop::ForOp op) {
  rewriter.setInsertionPoint(op);
  SmallVector<Value> ivs = buildForNest(rewriter, op.getLoc(), op.getMixedDomain());
  inlineBody(rewriter, op.getBodyBlock(), ivs);
  rewriter.eraseOp(op);
}

/// What the heuristics take a dynamic inner trip count for.
constexpr int64_t kUnknownTripCount = 64;

/// Inner loop iterations one kernel point runs (1 for a pointwise kernel).
int64_t workPerPoint(loop::KernelOp kernel) {
  int64_t work = 1;
  kernel.getBody().walk([&](Operation *op) {
    if (!isa<loop::ForOp, loop::ReduceOp>(op))
      return;
    int64_t iterations = 1;
    for (Operation *p = op; p != kernel.getOperation(); p = p->getParentOp()) {
      SmallVector<OpFoldResult> domain;
      if (auto f = dyn_cast<loop::ForOp>(p))
        domain = f.getMixedDomain();
      else if (auto r = dyn_cast<loop::ReduceOp>(p))
        domain = r.getMixedDomain();
      for (OpFoldResult size : domain)
        iterations *= staticSizeOr(size, kUnknownTripCount);
    }
    work += iterations;
  });
  return work;
}

/// An scf.parallel over the outer dims of `domain` and over chunks of `chunk`
/// of its innermost dim, the builder left at the start of its body; the
/// chunk's [begin, end) of the innermost dim.
struct ChunkedParallel {
  scf::ParallelOp par;
  Value begin, end;
};
ChunkedParallel buildChunkedParallel(IRRewriter &rewriter, Location loc, ArrayRef<OpFoldResult> domain,
                                     OpFoldResult chunk) {
  SmallVector<Value> lbs, ubs, steps;
  for (OpFoldResult size : domain.drop_back()) {
    lbs.push_back(cIndex(rewriter, loc, 0));
    ubs.push_back(sizeValue(rewriter, loc, size));
    steps.push_back(cIndex(rewriter, loc, 1));
  }
  std::optional<int64_t> inner = getConstantIntValue(domain.back()), chunkSize = getConstantIntValue(chunk);
  lbs.push_back(cIndex(rewriter, loc, 0));
  if (inner && chunkSize)
    ubs.push_back(cIndex(rewriter, loc, (*inner + *chunkSize - 1) / *chunkSize));
  else
    ubs.push_back(arith::CeilDivSIOp::create(rewriter, loc, sizeValue(rewriter, loc, domain.back()),
                                             sizeValue(rewriter, loc, chunk)));
  steps.push_back(cIndex(rewriter, loc, 1));
  auto par = scf::ParallelOp::create(rewriter, loc, lbs, ubs, steps);
  rewriter.setInsertionPointToStart(par.getBody());
  Value cChunk = sizeValue(rewriter, loc, chunk);
  Value begin = arith::MulIOp::create(rewriter, loc, par.getInductionVars().back(), cChunk);
  Value end = arith::MinSIOp::create(rewriter, loc, arith::AddIOp::create(rewriter, loc, begin, cChunk),
                                     sizeValue(rewriter, loc, domain.back()));
  return {par, begin, end};
}

/// The chunk of a kernel's innermost dim when a dim is dynamic: with enough
/// outer points (or a dynamic outer dim, taken as many) the whole dim;
/// else, at run time, enough chunks to feed `minParallel` threads, each at
/// most about chunkSize units of work.
OpFoldResult dynamicChunk(IRRewriter &rewriter, Location loc, ArrayRef<OpFoldResult> domain, int64_t work,
                          int64_t chunkSize, int64_t minParallel) {
  int64_t outer = 1;
  // (a constant innermost dim of 0 is one chunk of 1: no division by a chunk of 0)
  if (std::optional<int64_t> s = getConstantIntValue(domain.back()); s && *s == 0)
    return rewriter.getIndexAttr(1);
  for (OpFoldResult size : domain.drop_back()) {
    std::optional<int64_t> s = getConstantIntValue(size);
    if (!s)
      return domain.back();
    outer *= *s;
  }
  if (outer == 0) // an empty kernel (a constant outer dim of 0): any chunk
    return rewriter.getIndexAttr(1);
  if (outer >= minParallel)
    return domain.back();
  Value inner = sizeValue(rewriter, loc, domain.back());
  Value wanted = cIndex(rewriter, loc, (minParallel + outer - 1) / outer);
  Value chunk = arith::CeilDivSIOp::create(rewriter, loc, inner, wanted);
  chunk = arith::MaxSIOp::create(rewriter, loc, chunk, cIndex(rewriter, loc, 1));
  return arith::MinSIOp::create(rewriter, loc, chunk,
                                cIndex(rewriter, loc, std::max<int64_t>(1, chunkSize / work)))
      .getResult();
}

/// The chunk of a static kernel's innermost dim.
int64_t staticChunk(ArrayRef<int64_t> domain, int64_t work, int64_t chunkSize, int64_t minParallel) {
  int64_t outer = 1;
  for (int64_t size : domain.drop_back())
    outer *= size;
  int64_t inner = domain.back();
  // Split the innermost dim only when the outer dims leave threads idle and
  // there is enough work; then into enough chunks to feed the threads, each
  // of about chunkSize units of work (a point of a row kernel is a row).
  int64_t chunk = std::max<int64_t>(inner, 1);
  if (outer < minParallel && outer * inner * work >= 2 * chunkSize) {
    int64_t wanted = (minParallel + outer - 1) / outer;
    chunk = std::clamp<int64_t>((inner + wanted - 1) / wanted, 1,
                                std::max<int64_t>(1, chunkSize / work));
  }
  return chunk;
}

/// A kernel: parallel over the outer dims and over chunks of the innermost
/// dim; each chunk is a serial loop that LLVM can vectorize.
void lowerKernel(IRRewriter &rewriter, loop::KernelOp op, int64_t work, int64_t chunkSize,
                 int64_t minParallel) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> domain = op.getDomain();
  rewriter.setInsertionPoint(op);
  if (domain.empty()) {
    inlineBody(rewriter, op.getBodyBlock(), {});
    rewriter.eraseOp(op);
    return;
  }
  SmallVector<OpFoldResult> mixed = op.getMixedDomain();
  OpFoldResult chunk;
  if (op.hasStaticDomain())
    chunk = rewriter.getIndexAttr(staticChunk(domain, work, chunkSize, minParallel));
  else
    chunk = dynamicChunk(rewriter, loc, mixed, work, chunkSize, minParallel);
  ChunkedParallel loops = buildChunkedParallel(rewriter, loc, mixed, chunk);
  scf::ParallelOp par = loops.par;
  auto forOp = scf::ForOp::create(rewriter, loc, loops.begin, loops.end, cIndex(rewriter, loc, 1));
  rewriter.setInsertionPointToStart(forOp.getBody());
  SmallVector<Value> ivs(par.getInductionVars());
  ivs.pop_back();
  ivs.push_back(forOp.getInductionVar());
  inlineBody(rewriter, op.getBodyBlock(), ivs);
  rewriter.eraseOp(op);
}

/// The loop.reduce of a kernel that is a column reduction: its body reads
/// the kernel's innermost index as the last (contiguous) index of a buffer,
/// and never one of its own indices there (a channels-last global pool reads
/// [n, h, w, c] for each (n, c)). Per point, such a reduction walks memory
/// with a stride and does not vectorize. Sibling reductions (a batch norm
/// backward's sum(dy) and sum(dy * xhat): one domain, none reading another's
/// result) are scheduled together: one sweep, a row of accumulators each.
SmallVector<loop::ReduceOp> columnReductions(loop::KernelOp kernel) {
  // (an empty domain has no columns to chunk)
  if (kernel.getDomain().empty() || !kernel.hasStaticDomain() || llvm::is_contained(kernel.getDomain(), 0))
    return {};
  Block &body = kernel.getBodyBlock();
  Value inner = body.getArguments().back();
  SmallVector<loop::ReduceOp> reduces;
  DenseSet<Value> tainted; // computed from a reduction's result
  bool contiguous = false, strided = false;
  for (Operation &op : body) {
    if (isa<loop::ForOp>(op))
      return {};
    auto r = dyn_cast<loop::ReduceOp>(op);
    if (r) {
      if (!reduces.empty() && (r.getDomain() != reduces[0].getDomain() ||
                               !llvm::equal(r.getDynamicSizes(), reduces[0].getDynamicSizes())))
        return {};
      r.getBody().walk([&](Operation *inside) {
        if (isa<loop::ReduceOp, loop::ForOp>(inside))
          strided = true;
        for (Value v : inside->getOperands())
          if (tainted.contains(v))
            strided = true; // reads another reduction's result: not a sibling
        auto load = dyn_cast<loop::LoadOp>(inside);
        if (!load || load.getIndices().empty())
          return;
        Value last = load.getIndices().back();
        contiguous |= last == inner;
        strided |= llvm::is_contained(r.getIndices(), last);
      });
      reduces.push_back(r);
    }
    if (isa<loop::StoreOp>(op) && reduces.empty())
      return {};
    if (r || llvm::any_of(op.getOperands(), [&](Value v) { return tainted.contains(v); }))
      tainted.insert(op.getResults().begin(), op.getResults().end());
  }
  if (reduces.empty() || !contiguous || strided)
    return {};
  return reduces;
}

/// A column reduction kernel (columnReductions): parallel over the outer dims
/// and chunks of the innermost one, as other kernels, but each chunk keeps a
/// row of accumulators, and the loop over the chunk is the innermost one in
/// the reduction's nest: contiguous reads that LLVM vectorizes. The values
/// the reduction's body takes from the kernel body are computed once per
/// column into rows of their own.
void lowerColumnReduction(IRRewriter &rewriter, loop::KernelOp kernel, ArrayRef<loop::ReduceOp> reduces,
                          int64_t minParallel) {
  Location loc = kernel.getLoc();
  ArrayRef<int64_t> domain = kernel.getDomain();
  Block &body = kernel.getBodyBlock();
  int64_t outer = 1;
  for (int64_t size : domain.drop_back())
    outer *= size;
  int64_t inner = domain.back();
  // A row of at most 256 accumulators (and of each value taken from the
  // kernel body), split further while the outer dims leave threads idle.
  int64_t chunk = std::clamp<int64_t>(inner, 1, 256);
  if (outer > 0 && outer < minParallel) {
    int64_t wanted = (minParallel + outer - 1) / outer;
    chunk = std::clamp<int64_t>((inner + wanted - 1) / wanted, std::min<int64_t>(inner, 16), chunk);
  }
  rewriter.setInsertionPoint(kernel);
  ChunkedParallel loops =
      buildChunkedParallel(rewriter, loc, kernel.getMixedDomain(), rewriter.getIndexAttr(chunk));
  scf::ParallelOp par = loops.par;
  Value begin = loops.begin, end = loops.end;
  // Rows on the heap, not the stack: an alloca would keep the OpenMP body's
  // alloca scope, which the later SCF->CF lowering cannot split into blocks.
  SmallVector<Value> allocated;
  auto row = [&](Type t) {
    Value r = memref::AllocOp::create(rewriter, loc, MemRefType::get({chunk}, t),
                                      rewriter.getI64IntegerAttr(64));
    allocated.push_back(r);
    return r;
  };
  SmallVector<Value> accs;
  for (loop::ReduceOp reduce : reduces)
    accs.push_back(row(reduce.getType()));
  // values of the kernel body the reductions' bodies read
  SmallVector<Value> taken;
  for (loop::ReduceOp reduce : reduces)
    reduce.getBody().walk([&](Operation *op) {
      for (Value v : op->getOperands())
        if (v.getParentBlock() == &body && !isa<BlockArgument>(v) && !llvm::is_contained(taken, v))
          taken.push_back(v);
    });
  SmallVector<Value> rows;
  for (Value v : taken)
    rows.push_back(row(v.getType()));

  // One loop over the chunk's columns; `fill` emits its body given the
  // mapping of the kernel's indices and the position in the row.
  auto columns = [&](llvm::function_ref<void(IRMapping &, Value)> fill) {
    auto forOp = scf::ForOp::create(rewriter, loc, begin, end, cIndex(rewriter, loc, 1));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forOp.getBody());
    IRMapping map;
    for (auto [arg, iv] : llvm::zip(body.getArguments().drop_back(), par.getInductionVars()))
      map.map(arg, iv);
    map.map(body.getArguments().back(), forOp.getInductionVar());
    fill(map, arith::SubIOp::create(rewriter, loc, forOp.getInductionVar(), begin));
  };
  // The kernel body's ops the sweep needs: those before the first reduction,
  // and those between the reductions that compute no reduction's result (not
  // what follows the last one: the stores and an epilogue, which the last
  // loop runs).
  DenseSet<Value> tainted;
  SmallVector<Operation *> before;
  for (Operation &op : body) {
    if (&op == loop::ReduceOp(reduces.back())->getNextNode())
      break;
    if (isa<loop::ReduceOp>(op) ||
        llvm::any_of(op.getOperands(), [&](Value v) { return tainted.contains(v); })) {
      tainted.insert(op.getResults().begin(), op.getResults().end());
      continue;
    }
    if (&op != body.getTerminator() && !isa<loop::StoreOp>(op))
      before.push_back(&op);
  }
  auto cloneBefore = [&](IRMapping &map) {
    for (Operation *op : before)
      rewriter.clone(*op, map);
  };
  SmallVector<Value> identities;
  for (loop::ReduceOp reduce : reduces)
    identities.push_back(arith::ConstantOp::create(
        rewriter, loc, loop::reduceIdentity(rewriter, reduce.getKind(), reduce.getType())));
  columns([&](IRMapping &map, Value pos) {
    cloneBefore(map);
    for (auto [v, r] : llvm::zip(taken, rows))
      memref::StoreOp::create(rewriter, loc, map.lookup(v), r, pos);
    for (auto [identity, acc] : llvm::zip(identities, accs))
      memref::StoreOp::create(rewriter, loc, identity, acc, pos);
  });
  {
    OpBuilder::InsertionGuard guard(rewriter);
    SmallVector<Value> rivs = buildForNest(rewriter, loc, loop::ReduceOp(reduces[0]).getMixedDomain());
    columns([&](IRMapping &map, Value pos) {
      for (auto [v, r] : llvm::zip(taken, rows))
        map.map(v, memref::LoadOp::create(rewriter, loc, r, pos));
      // every body's loads before any accumulator's store (CSE merges the reads they share)
      SmallVector<Value> values;
      for (loop::ReduceOp reduce : reduces) {
        for (auto [arg, iv] : llvm::zip(reduce.getIndices(), rivs))
          map.map(arg, iv);
        for (Operation &op : reduce.getBodyBlock().without_terminator())
          rewriter.clone(op, map);
        // the value reduced may come from outside the body (a constant: the ones a mean over a `?` dim counts)
        values.push_back(map.lookupOrDefault(reduce.getBodyBlock().getTerminator()->getOperand(0)));
      }
      for (auto [reduce, v, acc] : llvm::zip(reduces, values, accs)) {
        Value a = memref::LoadOp::create(rewriter, loc, acc, pos);
        memref::StoreOp::create(rewriter, loc,
                                loop::reduceCombine(rewriter, loc, loop::ReduceOp(reduce).getKind(), a, v), acc,
                                pos);
      }
    });
  }
  columns([&](IRMapping &map, Value pos) {
    for (auto [reduce, acc] : llvm::zip(reduces, accs))
      map.map(loop::ReduceOp(reduce).getResult(), memref::LoadOp::create(rewriter, loc, acc, pos));
    for (Operation &op : body.without_terminator())
      if (!isa<loop::ReduceOp>(op))
        rewriter.clone(op, map);
  });
  for (Value r : allocated)
    memref::DeallocOp::create(rewriter, loc, r);
  rewriter.eraseOp(kernel);
}

/// loop.matmul -> call dyn_matmul_<f32|f64>(a, b, c, batch, M, N, K) on raw pointers;
/// with transpose_b, dyn_matmul_nt_<f32|f64> with the same arguments (B is [batch,]NxK).
LogicalResult lowerMatmul(IRRewriter &rewriter, loop::MatmulOp op, ModuleOp module) {
  Location loc = op.getLoc();
  auto a = cast<MemRefType>(op.getLhs().getType()), bt = cast<MemRefType>(op.getRhs().getType());
  bool batched = a.getRank() == 3;
  std::string name = std::string(op.getTransposeB() ? "dyn_matmul_nt_" : "dyn_matmul_") +
                     (a.getElementType().isF32() ? "f32" : "f64");
  Type i64 = rewriter.getI64Type();
  SmallVector<Type> argTypes(7, i64);
  if (!module.lookupSymbol<func::FuncOp>(name)) {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    auto decl = func::FuncOp::create(mb, loc, name, mb.getFunctionType(argTypes, {}));
    decl.setPrivate();
  }
  rewriter.setInsertionPoint(op);
  SmallVector<Value> args;
  for (Value buf : {op.getLhs(), op.getRhs(), op.getOut()}) {
    Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, buf);
    args.push_back(arith::IndexCastOp::create(rewriter, loc, i64, ptr));
  }
  // batch, M, N, K: constants, or read from the buffers where dynamic
  auto dim = [&](Value buf, int64_t d) -> Value {
    auto t = cast<MemRefType>(buf.getType());
    if (!t.isDynamicDim(d))
      return arith::ConstantIntOp::create(rewriter, loc, i64, t.getDimSize(d));
    return arith::IndexCastOp::create(rewriter, loc, i64, memref::DimOp::create(rewriter, loc, buf, d));
  };
  args.push_back(batched ? dim(op.getLhs(), 0) : arith::ConstantIntOp::create(rewriter, loc, i64, 1));
  args.push_back(dim(op.getLhs(), a.getRank() - 2));
  args.push_back(dim(op.getRhs(), bt.getRank() - (op.getTransposeB() ? 2 : 1)));
  args.push_back(dim(op.getLhs(), a.getRank() - 1));
  func::CallOp::create(rewriter, loc, name, TypeRange{}, args);
  rewriter.eraseOp(op);
  return success();
}

/// A private constant global holding `values`; returns its address as i64.
Value globalAddress(IRRewriter &rewriter, Location loc, ModuleOp module, SymbolTable &symbols,
                    StringRef name, DenseElementsAttr values) {
  auto type = MemRefType::get(cast<ShapedType>(values.getType()).getShape(),
                              values.getElementType());
  OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
  auto global = memref::GlobalOp::create(mb, loc, name, mb.getStringAttr("private"), type, values,
                                         /*constant=*/true, /*alignment=*/nullptr);
  symbols.insert(global); // renames on a clash
  Value ref = memref::GetGlobalOp::create(rewriter, loc, type, global.getSymName());
  Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, ref);
  return arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(), ptr);
}

/// A library call -> dyn_library_call(name, descriptor, buffers): the name
/// as a NUL-terminated string, the descriptor as an i64 array [num_inputs,
/// num_outputs, (dtype, rank, sizes..., strides..., byte offset) per input
/// and per output, num_params, params...], and the buffers' base addresses
/// in a stack array (inputs, then outputs).
void lowerLibraryCall(IRRewriter &rewriter, loop::LibraryCallOpInterface op, ModuleOp module,
                      SymbolTable &symbols) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Type i64 = rewriter.getI64Type();
  SmallVector<Value> buffers = op.getLibraryCallInputs();
  SmallVector<Value> outputs = op.getLibraryCallOutputs();
  SmallVector<int64_t> desc{(int64_t)buffers.size(), (int64_t)outputs.size()};
  llvm::append_range(buffers, outputs);
  SmallVector<int32_t> dtypes = loop::libraryCallDTypes(op);
  // Entries known at run time only: their position in `desc`, the buffer, the dim, and what they are.
  enum class Entry { Size, ContiguousStride, Stride };
  SmallVector<std::tuple<size_t, Value, int64_t, Entry>> dynamicEntries;
  for (auto [v, dtype] : llvm::zip(buffers, dtypes)) {
    auto t = cast<MemRefType>(v.getType());
    desc.push_back(dtype);
    desc.push_back(t.getRank());
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (t.isDynamicDim(d))
        dynamicEntries.push_back({desc.size(), v, d, Entry::Size});
      desc.push_back(t.getDimSize(d));
    }
    auto [strides, offset] = t.getStridesAndOffset(); // a static offset: the verifiers say so
    bool identity = t.getLayout().isIdentity();
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (!ShapedType::isDynamic(strides[d])) {
        desc.push_back(strides[d]);
        continue;
      }
      // a contiguous buffer's: the product of the sizes after the dim; a view's: from its descriptor
      dynamicEntries.push_back({desc.size(), v, d, identity ? Entry::ContiguousStride : Entry::Stride});
      desc.push_back(0);
    }
    desc.push_back(offset * ((t.getElementTypeBitWidth() + 7) / 8));
  }
  SmallVector<int64_t> params = op.getLibraryCallParams();
  desc.push_back(params.size());
  llvm::append_range(desc, params);

  StringRef callee = op.getLibraryCallName();
  SmallVector<int8_t> chars(callee.begin(), callee.end());
  chars.push_back(0);
  auto charType = RankedTensorType::get({(int64_t)chars.size()}, rewriter.getI8Type());
  Value name = globalAddress(rewriter, loc, module, symbols, ("__dyn_libcall_name_" + callee).str(),
                             DenseElementsAttr::get(charType, ArrayRef(chars)));
  auto descType = RankedTensorType::get({(int64_t)desc.size()}, i64);
  Value descriptor;
  if (dynamicEntries.empty()) {
    descriptor = globalAddress(rewriter, loc, module, symbols, ("__dyn_libcall_" + callee).str(),
                               DenseElementsAttr::get(descType, ArrayRef(desc)));
  } else {
    // Runtime sizes: the descriptor is built on the stack at each call.
    Value table = memref::AllocaOp::create(rewriter, loc, MemRefType::get({(int64_t)desc.size()}, i64));
    auto store = [&](Value v, size_t at) {
      memref::StoreOp::create(rewriter, loc, v, table, ValueRange{cIndex(rewriter, loc, at)});
    };
    for (auto [i, v] : llvm::enumerate(desc))
      store(arith::ConstantIntOp::create(rewriter, loc, i64, v), i);
    for (auto [at, buf, d, entry] : dynamicEntries) {
      Value v;
      if (entry == Entry::Size) {
        v = memref::DimOp::create(rewriter, loc, buf, d);
      } else if (entry == Entry::Stride) {
        v = memref::ExtractStridedMetadataOp::create(rewriter, loc, buf).getStrides()[d];
      } else {
        auto t = cast<MemRefType>(buf.getType());
        v = cIndex(rewriter, loc, 1);
        for (int64_t after = d + 1; after < t.getRank(); ++after)
          v = arith::MulIOp::create(rewriter, loc, v, memref::DimOp::create(rewriter, loc, buf, after));
      }
      store(arith::IndexCastOp::create(rewriter, loc, i64, v), at);
    }
    descriptor = arith::IndexCastOp::create(
        rewriter, loc, i64, memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, table));
  }
  auto arrayType = MemRefType::get({(int64_t)buffers.size()}, i64);
  Value array = memref::AllocaOp::create(rewriter, loc, arrayType);
  for (auto [i, buf] : llvm::enumerate(buffers)) {
    Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, buf);
    memref::StoreOp::create(rewriter, loc, arith::IndexCastOp::create(rewriter, loc, i64, ptr),
                            array, ValueRange{cIndex(rewriter, loc, i)});
  }
  Value arrayAddress = arith::IndexCastOp::create(
      rewriter, loc, i64, memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, array));
  StringRef entry = "dyn_library_call";
  if (!module.lookupSymbol<func::FuncOp>(entry)) {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    func::FuncOp::create(mb, loc, entry, mb.getFunctionType({i64, i64, i64}, {})).setPrivate();
  }
  func::CallOp::create(rewriter, loc, entry, TypeRange{}, ValueRange{name, descriptor, arrayAddress});
  rewriter.eraseOp(op);
}

struct ConvertLoopToSCFPass : dyn::impl::ConvertLoopToSCFPassBase<ConvertLoopToSCFPass> {
  using ConvertLoopToSCFPassBase::ConvertLoopToSCFPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    SymbolTable symbols(module);
    // Column reductions get their own schedule first (their loads and stores
    // are lowered with everything else below).
    SmallVector<std::pair<loop::KernelOp, SmallVector<loop::ReduceOp>>> columns;
    module.walk([&](loop::KernelOp kernel) {
      if (SmallVector<loop::ReduceOp> reduces = columnReductions(kernel); !reduces.empty())
        columns.push_back({kernel, reduces});
    });
    for (auto &[kernel, reduces] : columns)
      lowerColumnReduction(rewriter, kernel, reduces, minParallelIterations);
    // Inner ops first (post-order), so each kernel body is plain scf by the
    // time the kernel itself is lowered.
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<loop::LoopDialect>(op->getDialect()))
        ops.push_back(op);
    });
    // Measured before inner loops are lowered.
    DenseMap<Operation *, int64_t> work;
    for (Operation *op : ops)
      if (auto kernel = dyn_cast<loop::KernelOp>(op))
        work[op] = workPerPoint(kernel);
    for (Operation *op : ops) {
      if (auto load = dyn_cast<loop::LoadOp>(op)) {
        rewriter.setInsertionPoint(load);
        rewriter.replaceOpWithNewOp<memref::LoadOp>(load, load.getMemref(), load.getIndices());
      } else if (auto store = dyn_cast<loop::StoreOp>(op)) {
        rewriter.setInsertionPoint(store);
        rewriter.replaceOpWithNewOp<memref::StoreOp>(store, store.getValue(), store.getMemref(),
                                                     store.getIndices());
      } else if (auto reduce = dyn_cast<loop::ReduceOp>(op)) {
        lowerReduce(rewriter, reduce);
      } else if (auto forOp = dyn_cast<loop::ForOp>(op)) {
        lowerFor(rewriter, forOp);
      } else if (auto kernel = dyn_cast<loop::KernelOp>(op)) {
        lowerKernel(rewriter, kernel, work[op], chunkSize, minParallelIterations);
      } else if (auto call = dyn_cast<loop::LibraryCallOpInterface>(op)) {
        if (!lowerLibraryCalls)
          continue; // left for the GPU launch plan
        auto matmul = dyn_cast<loop::MatmulOp>(op);
        loop::MatmulChoice choice = matmul ? loop::matmulChoice(matmul) : loop::MatmulChoice::Library;
        if (choice == loop::MatmulChoice::Runtime) {
          if (failed(lowerMatmul(rewriter, matmul, module)))
            return signalPassFailure();
        } else if (choice == loop::MatmulChoice::ByRows) {
          // few rows at run time: the runtime matmul (MKL packs the whole weight for a few rows)
          Location loc = matmul.getLoc();
          rewriter.setInsertionPoint(matmul);
          Value rows = memref::DimOp::create(rewriter, loc, matmul.getOut(), 0);
          Value few = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule, rows,
                                            cIndex(rewriter, loc, loop::kRuntimeMatmulRows));
          auto branch = scf::IfOp::create(rewriter, loc, few, /*withElseRegion=*/true);
          rewriter.setInsertionPointToStart(branch.thenBlock());
          auto runtime = cast<loop::MatmulOp>(rewriter.clone(*matmul));
          rewriter.setInsertionPointToStart(branch.elseBlock());
          auto library = cast<loop::LibraryCallOpInterface>(rewriter.clone(*matmul));
          rewriter.eraseOp(matmul);
          if (failed(lowerMatmul(rewriter, runtime, module)))
            return signalPassFailure();
          lowerLibraryCall(rewriter, library, module, symbols);
        } else {
          lowerLibraryCall(rewriter, call, module, symbols);
        }
      }
      // loop.yield ops go away with their parents.
    }
  }
};

/// f32 erf as one rational function of x^2 on x clamped to [-4, 4] (the
/// form Eigen and XLA use; within 4 ulp of libm's, exact at +-0 and the
/// infinities, NaN kept): a third cheaper than MLIR's piecewise polynomial,
/// whose 20 selects of coefficients per element made the erf GELU kernel
/// 1.3-2x slower than eager's.
struct RationalErf : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ErfOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Location loc = op.getLoc();
    auto c = [&](double v) -> Value {
      TypedAttr attr = rewriter.getF32FloatAttr((float)v);
      if (auto shaped = dyn_cast<ShapedType>(type))
        attr = SplatElementsAttr::get(shaped, attr);
      return arith::ConstantOp::create(rewriter, loc, attr);
    };
    static constexpr double alpha[] = {-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                                       -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                                       -1.60960333262415e-02};
    static constexpr double beta[] = {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                                      -7.37332916720468e-03, -1.42647390514189e-02};
    Value x = arith::MaximumFOp::create(rewriter, loc, op.getOperand(), c(-4.0));
    x = arith::MinimumFOp::create(rewriter, loc, x, c(4.0));
    Value x2 = arith::MulFOp::create(rewriter, loc, x, x);
    auto horner = [&](ArrayRef<double> coefficients) {
      Value acc = c(coefficients.front());
      for (double k : coefficients.drop_front())
        acc = math::FmaOp::create(rewriter, loc, acc, x2, c(k));
      return acc;
    };
    Value p = arith::MulFOp::create(rewriter, loc, x, horner(alpha));
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, p, horner(beta));
    return success();
  }
};

struct ApproximateMathPass : dyn::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RationalErf>(&getContext(), /*benefit=*/2);
    // Only f32 ops are rewritten (the predicate-free overload also widens
    // f16/bf16 math to f32 first); f64 stays exact through libm.
    populateMathF32ExpansionPatterns(patterns, [](StringRef) { return true; });
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      // rsqrt and sqrt have hardware instructions; keep them exact. atan2's
      // approximation is wrong at (0, 0) and at infinities: libm's is exact.
      return name != "rsqrt" && name != "sqrt" && name != "atan2" && name != "erf";
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (failed(checkLibmNames(getOperation())))
      signalPassFailure();
  }

  /// convert-math-to-libm (after this pass on the CPU) calls the C library
  /// function of each math op left (f64 ones, erf, atan2, ...) by its name: a
  /// function the module defines under that name would be called instead
  /// (invalid IR, or a wrong callee). Refused with a located error.
  static LogicalResult checkLibmNames(ModuleOp module) {
    llvm::StringSet<> callees;
    module.walk([&](Operation *op) {
      if (op->getName().getDialectNamespace() != "math" || op->getNumResults() != 1)
        return;
      std::string name = op->getName().stripDialect().str();
      if (name == "powf")
        name = "pow";
      Type et = getElementTypeOrSelf(op->getResult(0).getType());
      if (et.isF32())
        callees.insert(name + "f");
      else if (et.isF64())
        callees.insert(name);
    });
    LogicalResult result = success();
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isExternal() && callees.contains(f.getSymName())) {
        f.emitOpError() << "is named as the C library function `" << f.getSymName()
                        << "` that the module's math ops are lowered to call";
        result = failure();
      }
    return result;
  }
};

} // namespace
