//===- PrimToLoop.cpp - fuse prim ops into loop kernels ------------------===//
//
// Fusion by recomputation, in the spirit of Inductor's pointwise fusion:
//
// 1. Plan: decide which tensor values live in buffers ("materialized"):
//    function results, operands and results of library calls (matmul,
//    convolution, attention), concatenations, dense constants, and
//    reductions that cannot be computed where they are used.
//    Then the schedule (Schedule.cpp): which kernels share one (sibling
//    reductions, epilogues, merged small kernels) and where each runs.
// 2. Emit: one loop.kernel per materialized value. The kernel computes the
//    value at an index by recursively emitting its producers at the mapped
//    index (broadcast, transpose, slice and reshape only remap indices), so
//    elementwise chains are inlined and never touch memory.
//
// A reduction is computed inside the kernel that uses it, as a loop.reduce
// placed at the outermost loop level where its indices are available. When
// a value depends on reductions over its trailing dims, its kernel runs in
// parallel over the leading dims and a loop.for walks the trailing dims, so
// softmax or rmsnorm reads its row once per reduction and writes it once, in
// one kernel. A reduction that would be recomputed for points it does not
// depend on is materialized by its own kernel instead.
//
//===----------------------------------------------------------------------===//
#include "dyn/Conversion/Passes.h"
#include "Fusion.h"
#include "InPlace.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"

#include <map>

namespace dyn {
#define GEN_PASS_DEF_FUSEPRIMTOLOOPPASS
#include "dyn/Conversion/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;
using namespace dyn::prim_to_loop;

namespace {

struct FusionOptions {
  bool reuseTranscendentals = false; // materialize-reused-transcendentals
  bool f32GemmAddend = false;        // f32-gemm-addend
};

LogicalResult lowerFunction(func::FuncOp func, SymbolTable &symbols, const FusionOptions &options) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("dyn fusion expects a single-block function");
  Block &entry = func.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  auto isSizeOp = [](Operation &op) {
    return isa<prim::DimOp>(op) ||
           (isa<arith::ArithDialect>(op.getDialect()) && op.getNumResults() == 1 &&
            op.getResult(0).getType().isIndex());
  };
  for (Operation &op : entry.without_terminator()) {
    if (isSizeOp(op))
      continue; // sizes of dynamic dims, computed in the buffer function
    if (!isa<prim::PrimDialect>(op.getDialect()))
      return op.emitOpError("is not a prim op; run dyn-convert-graph-to-prim first");
    if (auto dot = dyn_cast<prim::DotGeneralOp>(op); dot && !isMatmulShaped(dot))
      return op.emitOpError("only matmul-shaped dot_general is supported");
    if (auto dense = dyn_cast<prim::ConstantOp>(op))
      if (!isa<DenseElementsAttr>(dense.getValue()))
        return op.emitOpError("needs a dense constant");
  }
  for (Type t : llvm::concat<const Type>(func.getArgumentTypes(), func.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor)
      return func.emitOpError("arguments and results must be ranked tensors");
    // what a buffer holds (ui8 as i8): a function's own types are not checked by any prim op
    Type et = tensor.getElementType();
    if (!(et.isF16() || et.isBF16() || et.isF32() || et.isF64() || et.isSignlessInteger(1) ||
          et.isSignlessInteger(8) || et.isSignlessInteger(16) || et.isSignlessInteger(32) ||
          et.isSignlessInteger(64) || et.isUnsignedInteger(8)))
      return func.emitOpError("has an argument or result of element type ") << et << ", which no buffer holds";
  }
  // With dynamic dims the heuristics that weigh sizes (recomputation of
  // transcendentals) stand aside: every such value gets a buffer.
  bool dynamic = llvm::any_of(entry.getOperations(), [](Operation &op) {
    auto isDynamic = [](Type t) {
      auto tensor = dyn_cast<RankedTensorType>(t);
      return tensor && !tensor.hasStaticShape();
    };
    return llvm::any_of(op.getOperandTypes(), isDynamic) || llvm::any_of(op.getResultTypes(), isDynamic);
  }) || llvm::any_of(func.getArgumentTypes(), [](Type t) { return !cast<RankedTensorType>(t).hasStaticShape(); });
  FusionOptions fusion = options;
  if (dynamic)
    fusion.reuseTranscendentals = false;
  if (!dynamic)
    hoistSmallArgumentValues(entry);

  // 1. Values that must live in buffers, in program order.
  llvm::SetVector<Value> materialized;
  auto isSplat = [](Operation *op) {
    auto c = dyn_cast<prim::ConstantOp>(op);
    return c && cast<DenseElementsAttr>(c.getValue()).isSplat();
  };
  SmallVector<Value> returned(ret.getOperands());
  DenseMap<Value, prim::DotGeneralOp> gemmOfAdd; // add result -> the GEMM computing it with its addend
  DenseMap<Value, Value> addendOf;               // add result -> the addend's buffer value
  // Library-call operands read in place from a buffer that exists anyway (a
  // GEMM's output sliced into q, k and v, viewed as heads): no copy kernel.
  DenseMap<Value, BufferView> views;
  DenseMap<Value, DynamicBufferView> dynamicViews; // the same with `?` dims
  // A transpose of an attention result that the attention writes itself,
  // through a strided view of the transpose's buffer: the heads' outputs
  // land in [B, S, H, D] order, ready for the output projection.
  DenseMap<Value, prim::AttentionOp> attentionInto;
  auto hasBuffer = [&](Value u) { return isa<BlockArgument>(u) || materialized.contains(u); };
  // A concatenation along a static dim in a graph with `?` dims is read where it is used (emitConcatenate),
  // as the pads a static graph's slice cotangents are: no copy kernel per input. Along a `?` dim (runtime
  // offsets) it is copied into a buffer of its own.
  auto fusibleConcatenate = [](prim::ConcatenateOp cat) {
    return llvm::none_of(cat.getInputs(), [&](Value in) { return tensorType(in).isDynamicDim(cat.getDim()); });
  };
  auto viewRoot = [](Value v) {
    while (isViewOp(v.getDefiningOp()))
      v = v.getDefiningOp()->getOperand(0);
    return v;
  };
  // Library calls that read strided views of their operands: attention, and
  // calls by name marked `strided` (attention's forward and backward kernels).
  auto readsStrided = [](Operation *op) {
    auto lib = dyn_cast<prim::LibraryCallOp>(op);
    return isa<prim::AttentionOp>(op) || (lib && lib.getStrided());
  };
  // How many elements such operands read through views of each value: a
  // value that many of them view (a QKV projection sliced into q, k and v; a
  // mask [B,1,1,S] broadcast to [B,H,S,S]) gets one buffer they all read in
  // place, where it is no larger than what they read.
  DenseMap<Value, int64_t> viewedElements;
  for (Operation &op : entry.without_terminator())
    if (!dynamic && readsStrided(&op))
      for (Value v : op.getOperands())
        if (Value root = viewRoot(v); root != v)
          viewedElements[root] += tensorType(v).getNumElements();
  // Whether library-call operand `v` is read as a view (`strided`: any
  // strides with a unit innermost one, else only contiguous views).
  auto readInPlace = [&](Value v, bool strided) {
    if (hasBuffer(v))
      return false;
    if (dynamic) {
      // With `?` dims: views whose strides are products of runtime sizes (q, k and v sliced from one
      // projection and viewed as heads; a reshape of a buffer), of values that have buffers anyway.
      std::optional<DynamicBufferView> view = dynamicBufferView(v, hasBuffer);
      if (!view)
        return false;
      ArrayRef<int64_t> shape = tensorType(v).getShape();
      const SymStride &inner = view->strides.empty() ? SymStride() : view->strides.back();
      if (strided ? !(shape.empty() || shape.back() == 1 || (inner.dims.empty() && inner.constant == 1))
                  : !view->isContiguous(v))
        return false;
      dynamicViews[v] = *view;
      return true;
    }
    ArrayRef<int64_t> shape = tensorType(v).getShape();
    auto accepted = [&](const BufferView &view) {
      if (!strided)
        return view.isContiguous(shape);
      return shape.empty() || shape.back() == 1 || view.strides.back() == 1;
    };
    std::optional<BufferView> view = bufferView(v, hasBuffer);
    // A GEMM's rows as a reshape of a computed value (a layer norm's input gradient [B, L, F] read as
    // [B*L, F]): the value gets the buffer, which the reshape views, where a kernel would otherwise copy
    // it into a buffer of its own (and other readers keep the value's).
    if (!view && !strided)
      if (auto rs = v.getDefiningOp<prim::ReshapeOp>()) {
        Value src = rs.getInput();
        Operation *srcDef = src.getDefiningOp();
        if (srcDef && !isViewOp(srcDef) && !isSplat(srcDef)) {
          view = bufferView(v, [&](Value u) { return u == src || hasBuffer(u); });
          if (view && accepted(*view))
            materialized.insert(src);
        }
      }
    if (!view && strided) {
      Value root = viewRoot(v);
      Operation *rootDef = root.getDefiningOp();
      if (rootDef && !isSplat(rootDef) &&
          tensorType(root).getNumElements() <= viewedElements.lookup(root)) {
        view = bufferView(v, [&](Value u) { return u == root || hasBuffer(u); });
        if (view && accepted(*view))
          materialized.insert(root);
      }
    }
    if (!view || !accepted(*view))
      return false;
    views[v] = *view;
    return true;
  };
  // The function's results are buffers from the start, so that library calls read views of them (q, k
  // and v sliced from a projection the forward also returns for its backward; a layer norm's output the
  // training forward returns, read by the next GEMM as rows without a copy).
  for (Value v : ret.getOperands())
    if (!isa<BlockArgument>(v))
      materialized.insert(v);
  for (Operation &op : entry.without_terminator()) {
    if (auto dot = dyn_cast<prim::DotGeneralOp>(op)) {
      // A transposed rhs is read in place (loop.matmul transpose_b): its
      // source gets the buffer, and the transpose is not materialized unless
      // something else needs it.
      Value lhs = dot.getLhs(), rhs = dot.getRhs();
      if (Value src = transposedRhsSource(dot))
        rhs = src;
      if (Value src = transposedLhsSource(dot))
        lhs = src;
      SmallVector<Value> reads{lhs, rhs};
      Value result = dot.getResult();
      std::optional<GemmAddend> fused = gemmAddend(dot, returned, fusion.f32GemmAddend);
      if (fused) {
        result = fused->add.getResult();
        gemmOfAdd[result] = dot;
        addendOf[result] = fused->addend;
      }
      for (Value v : reads)
        if (!isa<BlockArgument>(v) && !readInPlace(v, /*strided=*/false))
          materialized.insert(v);
      if (fused && !isa<BlockArgument>(fused->addend))
        materialized.insert(fused->addend);
      materialized.insert(result);
    } else if (isLibraryCall(&op)) {
      bool strided = readsStrided(&op);
      for (Value v : op.getOperands())
        if (!isa<BlockArgument>(v) && !readInPlace(v, strided))
          materialized.insert(v);
      if (auto att = dyn_cast<prim::AttentionOp>(op); att && att->hasOneUse() &&
                                                      !llvm::is_contained(returned, att.getResult())) {
        if (auto t = dyn_cast<prim::TransposeOp>(*att->getUsers().begin())) {
          attentionInto[t.getResult()] = att;
          materialized.insert(t.getResult());
          continue;
        }
      }
      for (Value r : op.getResults()) // a sort writes values and indices
        materialized.insert(r);
    } else if ((isa<prim::ConcatenateOp>(op) && !(dynamic && fusibleConcatenate(cast<prim::ConcatenateOp>(op)))) ||
               (isa<prim::ConstantOp>(op) && !isSplat(&op))) {
      materialized.insert(op.getResult(0));
    }
  }
  for (Value v : ret.getOperands())
    if (!isa<BlockArgument>(v))
      materialized.insert(v);
  if (!dynamic)
    materializeWideReuse(entry, materialized);

  // Kernels run in program order.
  DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(entry.without_terminator()))
    position[&op] = i;

  // Reductions that cannot be fused where they are used get kernels of their
  // own; iterate until every kernel is well-shaped. A kernel reads, besides
  // materialized values, values whose reshape an earlier kernel wrote.
  DenseMap<Value, unsigned> parallelDims;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < materialized.size(); ++i) {
      Value v = materialized[i];
      Operation *def = v.getDefiningOp();
      if (isLibraryCall(def) || gemmOfAdd.count(v) || attentionInto.count(v) ||
          isa<prim::ConcatenateOp, prim::ConstantOp>(def))
        continue;
      auto writtenBefore = [&](Value r) {
        return materialized.contains(r) && position[r.getDefiningOp()] < position[def];
      };
      auto inBuffer = [&](Value u) {
        return materialized.contains(u) || writtenReshape(u, writtenBefore);
      };
      KernelPlan plan = planKernel(v, inBuffer);
      for (Value r : plan.mustMaterialize)
        changed |= materialized.insert(r);
      parallelDims[v] = plan.parallelDims;
    }
    // Once the kernels are known, which of them would recompute a window or an exp.
    if (!changed && !dynamic)
      changed = materializeReusedWindows(entry, materialized);
    if (!changed)
      changed = materializeReusedReads(entry, materialized);
    if (!changed && !dynamic)
      changed = materializeBroadcastInvariants(entry, materialized);
    if (!changed && fusion.reuseTranscendentals)
      changed = materializeReusedTranscendentals(entry, materialized);
  }
  SmallVector<Value> order(materialized.begin(), materialized.end());
  llvm::stable_sort(order, [&](Value a, Value b) {
    return position[a.getDefiningOp()] < position[b.getDefiningOp()];
  });
  // Where each kernel runs and which values share one (Schedule.cpp).
  auto computedApart = [&](Value v) { return gemmOfAdd.count(v) || attentionInto.count(v); };
  KernelSchedule schedule = scheduleKernels(func, order, materialized, parallelDims, computedApart, dynamic);

  // 2. The buffer function: inputs, then one output buffer per result.
  OpBuilder b(func);
  Location loc = func.getLoc();
  SmallVector<Type> argTypes;
  for (Value arg : entry.getArguments())
    argTypes.push_back(bufferType(arg));
  for (Value v : ret.getOperands())
    argTypes.push_back(bufferType(v));
  auto lowered = func::FuncOp::create(b, loc, func.getName(), b.getFunctionType(argTypes, {}));
  lowered->setAttrs(func->getDiscardableAttrDictionary());
  lowered->setAttr("dyn.num_inputs", b.getI64IntegerAttr(entry.getNumArguments()));
  Block *body = lowered.addEntryBlock();
  b.setInsertionPointToEnd(body);

  DenseMap<Value, Value> buffers;
  for (auto [arg, buf] : llvm::zip(entry.getArguments(), body->getArguments()))
    buffers[arg] = buf;
  // Sizes of dynamic dims in the buffer function: from the inputs' buffers,
  // through the ops that carry a dim from an operand to their result.
  Operation *unsizable = nullptr;
  DenseMap<Value, Value> sizeValues; // index values of the prim function -> buffer function
  std::function<Value(OpBuilder &, Value)> sizeValue;
  std::function<Value(OpBuilder &, Value, int64_t)> dimOf = [&](OpBuilder &fb, Value v, int64_t d) -> Value {
    RankedTensorType t = tensorType(v);
    if (!t.isDynamicDim(d))
      return arith::ConstantIndexOp::create(fb, loc, t.getDimSize(d));
    if (auto arg = dyn_cast<BlockArgument>(v))
      return memref::DimOp::create(fb, loc, buffers[arg], d);
    Operation *op = v.getDefiningOp();
    if (auto bc = dyn_cast<prim::BroadcastInDimOp>(op)) {
      for (auto [i, to] : llvm::enumerate(bc.getDims()))
        if (to == d && tensorType(bc.getInput()).isDynamicDim(i))
          return dimOf(fb, bc.getInput(), i);
      int64_t k = llvm::count_if(t.getShape().take_front(d), ShapedType::isDynamic);
      return sizeValue(fb, bc.getSizes()[k]);
    }
    if (auto tr = dyn_cast<prim::TransposeOp>(op))
      return dimOf(fb, tr.getInput(), tr.getPermutation()[d]);
    if (auto rs = dyn_cast<prim::ReshapeOp>(op))
      return sizeValue(fb, rs.getSizes()[llvm::count_if(t.getShape().take_front(d), ShapedType::isDynamic)]);
    if (auto cat = dyn_cast<prim::ConcatenateOp>(op); cat && (int64_t)cat.getDim() == d) {
      Value sum = arith::ConstantIndexOp::create(fb, loc, 0);
      for (Value in : cat.getInputs())
        sum = arith::AddIOp::create(fb, loc, sum, dimOf(fb, in, d));
      return sum;
    }
    // a dynamic dim is sliced whole; a concatenation's other dims are its first input's
    if (isa<prim::SliceOp, prim::ConcatenateOp>(op))
      return dimOf(fb, op->getOperand(0), d);
    if (auto iota = dyn_cast<prim::IotaOp>(op))
      return sizeValue(fb, iota.getSizes()[llvm::count_if(t.getShape().take_front(d), ShapedType::isDynamic)]);
    if (auto philox = dyn_cast<prim::PhiloxOp>(op))
      return sizeValue(fb, philox.getSizes()[llvm::count_if(t.getShape().take_front(d), ShapedType::isDynamic)]);
    if (auto ds = dyn_cast<prim::DynamicSliceOp>(op))
      return (int64_t)ds.getDim() == d ? sizeValue(fb, ds.getSize()) : dimOf(fb, ds.getInput(), d);
    if (auto g = dyn_cast<prim::GatherOp>(op))
      return dimOf(fb, g.getIndex(), d);
    if (auto conv = dyn_cast<prim::ConvolutionOp>(op); conv && d == 0) // the batch dim, [N, ...]
      return dimOf(fb, conv.getInput(), 0);
    if (auto pad = dyn_cast<prim::PadOp>(op)) // a dynamic dim is not padded
      return dimOf(fb, pad.getInput(), d);
    // a backward's gradient k has the sizes of the call's operand k + 1 (what it is the gradient of), ...
    if (auto call = dyn_cast<prim::LibraryCallOp>(op))
      if (std::optional<prim::LibraryResultDim> rule =
              prim::libraryResultDim(call.getCallee(), cast<OpResult>(v).getResultNumber(), d, t.getRank())) {
        Value size = dimOf(fb, call.getInputs()[rule->operand], rule->dim);
        if (rule->multiple == 1)
          return size;
        Value m = arith::ConstantIndexOp::create(fb, loc, rule->multiple);
        return arith::MulIOp::create(fb, loc, arith::CeilDivUIOp::create(fb, loc, size, m), m);
      }
    if (auto att = dyn_cast<prim::AttentionOp>(op)) // [..., L, Ev]
      return d + 1 < t.getRank() ? dimOf(fb, att.getQuery(), d) : dimOf(fb, att.getValue(), d);
    if (isReduction(op)) {
      ArrayRef<int64_t> dims = reductionDims(op);
      int64_t kept = -1;
      for (int64_t i = 0, e = tensorType(op->getOperand(0)).getRank(); i < e; ++i)
        if (!llvm::is_contained(dims, i) && ++kept == d)
          return dimOf(fb, op->getOperand(0), i);
    }
    if (auto dot = dyn_cast<prim::DotGeneralOp>(op)) {
      // batch dims, then lhs's free dims, then rhs's free dims
      auto lb = dot.getLhsBatch(), lc = dot.getLhsContract(), rb = dot.getRhsBatch(), rc = dot.getRhsContract();
      int64_t at = d;
      if (at < (int64_t)lb.size())
        return dimOf(fb, dot.getLhs(), lb[at]);
      at -= lb.size();
      for (int64_t i = 0, e = tensorType(dot.getLhs()).getRank(); i < e; ++i)
        if (!llvm::is_contained(lb, i) && !llvm::is_contained(lc, i) && at-- == 0)
          return dimOf(fb, dot.getLhs(), i);
      for (int64_t i = 0, e = tensorType(dot.getRhs()).getRank(); i < e; ++i)
        if (!llvm::is_contained(rb, i) && !llvm::is_contained(rc, i) && at-- == 0)
          return dimOf(fb, dot.getRhs(), i);
    }
    if (op->hasTrait<mlir::OpTrait::Elementwise>())
      for (Value operand : op->getOperands())
        if (auto ot = dyn_cast<RankedTensorType>(operand.getType());
            ot && ot.getRank() == t.getRank() && ot.isDynamicDim(d))
          return dimOf(fb, operand, d);
    if (!unsizable)
      unsizable = op;
    return arith::ConstantIndexOp::create(fb, loc, 0);
  };
  sizeValue = [&](OpBuilder &fb, Value v) -> Value {
    if (auto it = sizeValues.find(v); it != sizeValues.end())
      return it->second;
    Operation *op = v.getDefiningOp();
    Value r;
    if (auto dim = dyn_cast_or_null<prim::DimOp>(op))
      return dimOf(fb, dim.getInput(), dim.getDim());
    if (!op || !isa<arith::ArithDialect>(op->getDialect())) {
      if (!unsizable)
        unsizable = op ? op : func.getOperation();
      return arith::ConstantIndexOp::create(fb, loc, 0);
    }
    IRMapping map;
    for (Value operand : op->getOperands())
      map.map(operand, sizeValue(fb, operand));
    r = fb.clone(*op, map)->getResult(0);
    sizeValues[v] = r;
    return r;
  };
  SmallVector<std::pair<Value, Value>> copies; // (value, output buffer)
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value out = body->getArgument(entry.getNumArguments() + i);
    bool denseConstant = v.getDefiningOp() && isa<prim::ConstantOp>(v.getDefiningOp()) &&
                         !isSplat(v.getDefiningOp());
    if (isa<BlockArgument>(v) || buffers.count(v) || denseConstant)
      copies.push_back({v, out});
    else
      buffers[v] = out;
  }
  // A value the function returns reshaped (an LM head's [B*L, V] logits returned as [B, L, V]) is written
  // into the output buffer through a row-major view of it: no temporary of the output's size, no copy.
  DenseSet<Value> reshapedIntoOutput;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto rs = v.getDefiningOp<prim::ReshapeOp>();
    Value out = body->getArgument(entry.getNumArguments() + i);
    if (!rs || buffers.lookup(v) != out)
      continue;
    Value u = rs.getInput();
    RankedTensorType ut = tensorType(u);
    if (!materialized.contains(u) || buffers.count(u) || views.count(u) || dynamicViews.count(u) ||
        attentionInto.count(u) || !ut.hasStaticShape() || !tensorType(v).hasStaticShape() ||
        (u.getDefiningOp() && isa<prim::ConstantOp>(u.getDefiningOp())))
      continue;
    SmallVector<int64_t> strides(ut.getRank(), 1);
    for (int64_t d = ut.getRank() - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * ut.getDimSize(d + 1);
    buffers[u] = memref::ReinterpretCastOp::create(b, loc, bufferType(u), out, 0, ut.getShape(), strides);
    reshapedIntoOutput.insert(v);
  }
  SmallVector<Value> temporaries;
  unsigned constants = 0;
  for (Value v : order) {
    if (buffers.count(v))
      continue;
    if (auto c = v.getDefiningOp<prim::ConstantOp>()) {
      // Dense constants live in read-only globals.
      OpBuilder mb(func->getParentOp()->getContext());
      mb.setInsertionPoint(func);
      // A ui8 constant's bits are stored as i8, as its buffer's type says.
      Attribute init = c.getValue();
      if (auto dense = dyn_cast<DenseElementsAttr>(init);
          dense && tensorType(v).getElementType().isUnsignedInteger())
        init = dense.bitcast(storedType(tensorType(v).getElementType()));
      auto global = memref::GlobalOp::create(
          mb, loc, ("__dyn_constant_" + func.getName() + "_" + Twine(constants++)).str(),
          b.getStringAttr("private"), bufferType(v), init, /*constant=*/true,
          /*alignment=*/nullptr);
      symbols.insert(global);
      buffers[v] = memref::GetGlobalOp::create(b, loc, bufferType(v), global.getSymName());
      continue;
    }
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < tensorType(v).getRank(); ++d)
      if (tensorType(v).isDynamicDim(d))
        sizes.push_back(dimOf(b, v, d));
    Value buf = memref::AllocOp::create(b, loc, bufferType(v), sizes, b.getI64IntegerAttr(64));
    buffers[v] = buf;
    temporaries.push_back(buf);
  }

  // 3. One kernel per materialized value.
  DenseSet<Value> written; // values whose kernel (or library call) is emitted
  KernelEmitter emitter(b, loc, buffers, written, dimOf, sizeValue);
  // A library call takes fewer element types than the prim op it computes:
  // the call's verifier's reason becomes this pass's diagnostic, on the op.
  auto checkLibraryCall = [&](Operation *call, Operation *from) -> LogicalResult {
    // Buffers do not tell a ui8 tensor from an i8 one: the call lists its
    // uint8 buffers. A GEMM's or a convolution's buffers share one element
    // type; a call by name has one buffer per prim operand and result, in
    // order. Attention takes floats only.
    auto isUnsigned = [](Type t) {
      return cast<RankedTensorType>(t).getElementType().isUnsignedInteger();
    };
    SmallVector<int64_t> unsignedBuffers;
    if (isa<loop::MatmulOp, loop::ConvolutionOp>(call) && isUnsigned(from->getResultTypes()[0])) {
      int64_t n = cast<loop::LibraryCallOpInterface>(call).getLibraryCallInputs().size() + 1;
      unsignedBuffers = llvm::to_vector(llvm::seq<int64_t>(0, n));
    } else if (isa<loop::LibraryCallOp>(call)) {
      for (auto [i, t] : llvm::enumerate(llvm::concat<const Type>(from->getOperandTypes(),
                                                                  from->getResultTypes())))
        if (isUnsigned(t))
          unsignedBuffers.push_back(i);
    }
    if (!unsignedBuffers.empty())
      call->setAttr("unsigned_buffers", DenseI64ArrayAttr::get(call->getContext(), unsignedBuffers));
    std::string reason;
    LogicalResult verified = [&] {
      ScopedDiagnosticHandler capture(call->getContext(), [&](Diagnostic &d) {
        reason = d.str();
        return success();
      });
      return mlir::verify(call);
    }();
    if (succeeded(verified))
      return success();
    // The call lives in `lowered`: its name is read before the function goes.
    std::string callName = call->getName().getStringRef().str();
    lowered.erase();
    return from->emitOpError() << "has no " << callName << " lowering: " << reason;
  };
  // `x` as `view` of its base's buffer, sizes and strides computed from the runtime sizes.
  auto dynamicView = [&](Value x, const DynamicBufferView &view) -> Value {
    RankedTensorType t = tensorType(x);
    SmallVector<OpFoldResult> sizes, strides;
    SmallVector<int64_t> layout;
    for (int64_t d = 0; d < t.getRank(); ++d) {
      sizes.push_back(t.isDynamicDim(d) ? OpFoldResult(dimOf(b, x, d)) : b.getIndexAttr(t.getDimSize(d)));
      const SymStride &s = view.strides[d];
      if (s.dims.empty()) {
        strides.push_back(b.getIndexAttr(s.constant));
        layout.push_back(s.constant);
        continue;
      }
      Value stride = arith::ConstantIndexOp::create(b, loc, s.constant);
      for (auto [value, dim] : s.dims)
        stride = arith::MulIOp::create(b, loc, stride, dimOf(b, value, dim));
      strides.push_back(stride);
      layout.push_back(ShapedType::kDynamic);
    }
    MemRefType type = view.isContiguous(x) ? bufferType(x)
                                           : MemRefType::get(t.getShape(), storedType(t.getElementType()),
                                                             StridedLayoutAttr::get(x.getContext(), view.offset,
                                                                                    layout));
    return memref::ReinterpretCastOp::create(b, loc, type, buffers[view.base], b.getIndexAttr(view.offset), sizes,
                                             strides);
  };
  // A library call's operand: its own buffer, or its view of another's.
  auto operandBuffer = [&](Value x) -> Value {
    if (auto it = buffers.find(x); it != buffers.end())
      return it->second;
    if (auto it = dynamicViews.find(x); it != dynamicViews.end())
      return dynamicView(x, it->second);
    const BufferView &view = views.at(x);
    Value base = buffers[view.base];
    MemRefType type = viewType(x, view);
    if (type == base.getType())
      return base;
    return memref::ReinterpretCastOp::create(b, loc, type, base, view.offset,
                                             tensorType(x).getShape(), view.strides);
  };
  auto emitAttention = [&](prim::AttentionOp att, Value out) {
    SmallVector<Value> operands{operandBuffer(att.getQuery()), operandBuffer(att.getKey()),
                                operandBuffer(att.getValue()), out};
    if (att.getMask())
      operands.push_back(operandBuffer(att.getMask()));
    auto call = loop::AttentionOp::create(b, loc, TypeRange{}, operands, att->getAttrs());
    return checkLibraryCall(call, att);
  };
  unsigned kernelCount = 0;
  auto kernelName = [&](Operation *op) {
    return (op->getName().stripDialect() + "_" + Twine(kernelCount++)).str();
  };
  for (Value v : order) {
    Operation *def = v.getDefiningOp();
    b.setInsertionPointToEnd(body);
    if (schedule.siblingElsewhere.contains(v) || schedule.movedAway.contains(v))
      continue; // written by its group's kernel, or at the end of a reduction kernel
    if (reshapedIntoOutput.contains(v) && !schedule.siblingsAt.count(v) && !schedule.epiloguesAt.count(v) &&
        !schedule.mergedAt.count(v)) {
      written.insert(v); // its operand's writer wrote it, through the view
      continue;
    }
    auto epilogues = schedule.epiloguesAt.find(v);
    auto merged = schedule.mergedAt.find(v);
    if (schedule.siblingsAt.count(v) || epilogues != schedule.epiloguesAt.end() ||
        (merged != schedule.mergedAt.end() && merged->second.size() > 1)) {
      SmallVector<Value> values;
      unsigned reductions = 0;
      if (auto it = schedule.siblingsAt.find(v); it != schedule.siblingsAt.end())
        values = it->second;
      else if (merged == schedule.mergedAt.end())
        values = {v};
      reductions = values.size();
      if (epilogues != schedule.epiloguesAt.end())
        values.append(epilogues->second);
      if (merged != schedule.mergedAt.end())
        values.append(merged->second);
      SmallVector<Value> targets;
      for (Value m : values) {
        written.insert(m);
        targets.push_back(buffers[m]);
      }
      emitter.emitFusedKernel(values, targets, reductions, kernelName(values.front().getDefiningOp()));
      continue;
    }
    // Marked before its kernel is emitted: the kernel only reads reshapes of
    // values that come earlier in program order.
    written.insert(v);
    if (isa<prim::ConstantOp>(def) && !isSplat(def))
      continue;
    if (auto it = gemmOfAdd.find(v); it != gemmOfAdd.end() || isa<prim::DotGeneralOp>(def)) {
      auto dot = it != gemmOfAdd.end() ? it->second : cast<prim::DotGeneralOp>(def);
      Value src = transposedRhsSource(dot), lsrc = transposedLhsSource(dot);
      Value addend = it != gemmOfAdd.end() ? buffers[addendOf[v]] : Value();
      auto matmul =
          loop::MatmulOp::create(b, loc, operandBuffer(lsrc ? lsrc : dot.getLhs()),
                                 operandBuffer(src ? src : dot.getRhs()), buffers[v], addend,
                                 /*transpose_b=*/src != nullptr, /*unsigned_buffers=*/nullptr,
                                 /*transpose_a=*/lsrc != nullptr);
      if (failed(checkLibraryCall(matmul, dot)))
        return failure();
      continue;
    }
    if (auto conv = dyn_cast<prim::ConvolutionOp>(def)) {
      // The attributes carry over by name.
      SmallVector<Value> operands{operandBuffer(conv.getInput()), operandBuffer(conv.getWeight()), buffers[v]};
      if (conv.getBias())
        operands.push_back(operandBuffer(conv.getBias()));
      auto call = loop::ConvolutionOp::create(b, loc, TypeRange{}, operands, conv->getAttrs());
      if (failed(checkLibraryCall(call, conv)))
        return failure();
      continue;
    }
    if (auto att = dyn_cast<prim::AttentionOp>(def)) {
      if (failed(emitAttention(att, buffers[v])))
        return failure();
      continue;
    }
    if (auto it = attentionInto.find(v); it != attentionInto.end()) {
      // v = transpose(attention): the attention's result is v's buffer read
      // through the inverse permutation.
      prim::AttentionOp att = it->second;
      auto perm = cast<prim::TransposeOp>(def).getPermutation();
      Value r = att.getResult();
      Value view;
      if (tensorType(v).hasStaticShape()) {
        SmallVector<int64_t> tStrides = rowMajorStrides(tensorType(v).getShape());
        BufferView out{v, SmallVector<int64_t>(perm.size()), 0};
        for (auto [i, p] : llvm::enumerate(perm))
          out.strides[p] = tStrides[i];
        view = memref::ReinterpretCastOp::create(b, loc, viewType(r, out), buffers[v], 0,
                                                 tensorType(r).getShape(), out.strides);
      } else { // v's row-major strides at its runtime sizes, read through the permutation
        SmallVector<SymStride> vStrides = rowMajorSymStrides(v);
        DynamicBufferView out{v, SmallVector<SymStride>(perm.size()), 0};
        for (auto [i, p] : llvm::enumerate(perm))
          out.strides[p] = vStrides[i];
        view = dynamicView(r, out);
      }
      if (failed(emitAttention(att, view)))
        return failure();
      continue;
    }
    if (auto lib = dyn_cast<prim::LibraryCallOp>(def)) {
      // One call writes every result; it is emitted at the first one.
      if (v != lib->getResult(0))
        continue;
      SmallVector<Value> ins, outs;
      for (Value in : lib.getInputs())
        ins.push_back(operandBuffer(in));
      for (Value r : lib.getResults())
        outs.push_back(buffers[r]);
      auto call = loop::LibraryCallOp::create(b, loc, lib.getCalleeAttr(), ins, outs,
                                              lib.getParamsAttr(), /*unsigned_buffers=*/nullptr,
                                              lib.getStridedAttr());
      if (failed(checkLibraryCall(call, lib)))
        return failure();
      continue;
    }
    if (auto cat = dyn_cast<prim::ConcatenateOp>(def)) {
      // the offset: a constant until the first dynamic input, then also a runtime sum
      int64_t offset = 0;
      Value dynamicOffset;
      for (Value input : cat.getInputs()) {
        emitter.emitCopyKernel(input, buffers[v], cat.getDim(), offset, dynamicOffset, kernelName(def));
        b.setInsertionPointToEnd(body);
        if (!tensorType(input).isDynamicDim(cat.getDim())) {
          offset += tensorType(input).getDimSize(cat.getDim());
          continue;
        }
        Value size = dimOf(b, input, cat.getDim());
        dynamicOffset = dynamicOffset ? (Value)arith::AddIOp::create(b, loc, dynamicOffset, size) : size;
      }
      continue;
    }
    emitter.emitKernel(v, buffers[v], parallelDims[v], kernelName(def));
  }
  if (emitter.unsupported) {
    lowered.erase();
    return emitter.unsupported->emitOpError("cannot be fused into a loop kernel");
  }
  for (auto [v, out] : copies) {
    b.setInsertionPointToEnd(body);
    emitter.emitKernel(v, out, tensorType(v).getRank(), "copy_" + std::to_string(kernelCount++));
  }
  b.setInsertionPointToEnd(body);
  for (Value t : temporaries) {
    // A temporary that the kernels only store (a value given a buffer whose readers all fused into its
    // own kernel, where they read it as it is computed: max_pool2d's gradient windows) is not kept: its
    // stores go, and the arithmetic only they used with them (canonicalization).
    bool unread = llvm::all_of(t.getUsers(), [](Operation *u) { return isa<loop::StoreOp>(u); });
    if (unread && t.getDefiningOp<memref::AllocOp>()) {
      for (Operation *u : llvm::make_early_inc_range(t.getUsers()))
        u->erase();
      t.getDefiningOp()->erase();
      continue;
    }
    memref::DeallocOp::create(b, loc, t);
  }
  func::ReturnOp::create(b, loc);
  // Results that update an input (`dyn.updates_arg`, set by the frontend) written into it where safe.
  SmallVector<int64_t> requested;
  for (unsigned k = 0; k < func.getNumResults(); ++k) {
    auto j = func.getResultAttrOfType<IntegerAttr>(k, "dyn.updates_arg");
    requested.push_back(j ? j.getInt() : -1);
  }
  if (unsizable) {
    lowered.erase();
    return unsizable->emitOpError("has a dynamic dim whose size the loop lowering cannot derive");
  }
  if (llvm::any_of(requested, [](int64_t j) { return j >= 0; }))
    markInPlaceUpdates(lowered, entry.getNumArguments(), requested);
  func.erase();
  return success();
}

struct FusePrimToLoopPass : dyn::impl::FusePrimToLoopPassBase<FusePrimToLoopPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp f : funcs) {
      auto isTensor = [](Type t) { return isa<RankedTensorType>(t); };
      if (f.isExternal() ||
          (llvm::none_of(f.getArgumentTypes(), isTensor) && llvm::none_of(f.getResultTypes(), isTensor)))
        continue;
      if (failed(lowerFunction(f, symbols, {materializeReusedTranscendentals, f32GemmAddend})))
        return signalPassFailure();
    }
  }
};

} // namespace
