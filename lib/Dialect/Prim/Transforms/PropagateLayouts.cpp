//===- PropagateLayouts.cpp - channels-last convolutions -----------------===//
//
// dyn-propagate-layouts: a convolution whose activations outweigh its weight
// runs channels-last ([N, *spatial, C]), and the transpose back to torch's
// order sinks through the ops after it, so that everything between two
// convolutions is computed channels-last and the inverse transposes cancel.
//
// One forward walk over each function (ops are in def-use order). A value
// known to equal transpose(t, fromCL) has `t` recorded as its channels-last
// form; an op reading such a value is rebuilt on `t` and its result recorded
// the same way. Replaced ops are left dead for the canonicalizer.
//
//===----------------------------------------------------------------------===//
#include "dyn/Dialect/Prim/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

namespace dyn {
#define GEN_PASS_DEF_PROPAGATELAYOUTSPASS
#include "dyn/Dialect/Prim/Transforms/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// [0, rank-1, 1, ..., rank-2]: from [N, *spatial, C] to [N, C, *spatial].
SmallVector<int64_t> fromChannelsLast(int64_t rank) {
  SmallVector<int64_t> p{0, rank - 1};
  for (int64_t i = 1; i < rank - 1; ++i)
    p.push_back(i);
  return p;
}

SmallVector<int64_t> inverse(ArrayRef<int64_t> p) {
  SmallVector<int64_t> inv(p.size());
  for (auto [i, d] : llvm::enumerate(p))
    inv[d] = i;
  return inv;
}

bool isIdentity(ArrayRef<int64_t> p) {
  for (auto [i, d] : llvm::enumerate(p))
    if ((int64_t)i != d)
      return false;
  return true;
}

/// shape' with shape'[p[i]] = shape[i]: a value's shape in the layout it has
/// under `transpose(., p)`'s operand.
SmallVector<int64_t> scatterDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> p) {
  SmallVector<int64_t> r(shape.size());
  for (auto [i, d] : llvm::enumerate(p))
    r[d] = shape[i];
  return r;
}

/// A reshape of [N, C, L] into [N, C, *spatial] (rank 4 or 5), static.
bool isTokensToImage(Operation *op) {
  auto r = dyn_cast<prim::ReshapeOp>(op);
  if (!r)
    return false;
  RankedTensorType in = tensorType(r.getInput()), out = r.getType();
  return in.getRank() == 3 && (out.getRank() == 4 || out.getRank() == 5) && in.hasStaticShape() &&
         out.hasStaticShape() && in.getDimSize(0) == out.getDimSize(0) && in.getDimSize(1) == out.getDimSize(1);
}

/// `v` is a channels-last tensor viewed in torch's order: transpose(t, fromChannelsLast) of rank 4 or 5,
/// or [N, L, C] tokens transposed and reshaped into [N, C, *spatial].
bool isChannelsLastView(Value v) {
  if (auto r = v.getDefiningOp<prim::ReshapeOp>()) {
    auto t = r.getInput().getDefiningOp<prim::TransposeOp>();
    return isTokensToImage(r) && t && llvm::equal(t.getPermutation(), fromChannelsLast(3));
  }
  auto t = v.getDefiningOp<prim::TransposeOp>();
  int64_t rank = tensorType(v).getRank();
  return t && (rank == 4 || rank == 5) && llvm::equal(t.getPermutation(), fromChannelsLast(rank));
}

/// Which convolutions go channels-last (the pass's options, and the module's `dyn.batch_hint`).
struct LayoutChoice {
  bool depthwiseOnly = false;
  int64_t denseMinElements = 0;
  int64_t batchHint = 1;
};

/// Elements of a value, a `?` batch (dim 0) counted as the batch the module expects (`dyn.batch_hint`,
/// the largest the caller has seen; 1 without one) and any other `?` dim as 1.
int64_t numElements(Value v, const LayoutChoice &choice) {
  int64_t n = 1;
  for (auto [d, s] : llvm::enumerate(tensorType(v).getShape()))
    n *= !ShapedType::isDynamic(s) ? s : d == 0 ? choice.batchHint : 1;
  return n;
}

bool worthChannelsLast(prim::ConvolutionOp conv, const LayoutChoice &choice);
bool worthChannelsLast(prim::LibraryCallOp call, const LayoutChoice &choice);

struct Propagator {
  OpBuilder b;
  LayoutChoice choice;
  /// v -> t with v == transpose(t, fromChannelsLast(rank)).
  llvm::DenseMap<Value, Value> channelsLast;

  Propagator(MLIRContext *ctx, LayoutChoice choice) : b(ctx), choice(choice) {}

  Value transpose(Location loc, Value v, ArrayRef<int64_t> perm) {
    if (isIdentity(perm))
      return v;
    RankedTensorType t = tensorType(v);
    SmallVector<int64_t> shape;
    for (int64_t d : perm)
      shape.push_back(t.getDimSize(d));
    return prim::TransposeOp::create(b, loc, t.clone(shape), v, perm);
  }

  /// The result of an op rebuilt channels-last, in torch's order for the
  /// original op's users, recorded as such.
  Value restore(Location loc, Value cl) {
    Value v = transpose(loc, cl, fromChannelsLast(tensorType(cl).getRank()));
    channelsLast[v] = cl;
    return v;
  }

  /// `v` (in torch's order, rank of perm p = fromChannelsLast) in channels-last order: its recorded
  /// form, a broadcast or splat rebuilt in that order, else a transpose (an index remap where it
  /// is read).
  Value toChannelsLast(Location loc, Value v) {
    if (Value cl = channelsLast.lookup(v))
      return cl;
    RankedTensorType t = tensorType(v);
    SmallVector<int64_t> p = fromChannelsLast(t.getRank());
    auto clType = t.clone(scatterDims(t.getShape(), p));
    if (auto c = v.getDefiningOp<prim::ConstantOp>())
      if (auto splat = dyn_cast<SplatElementsAttr>(c.getValue()))
        return prim::ConstantOp::create(b, loc, clType, splat.resizeSplat(clType));
    if (auto bc = v.getDefiningOp<prim::BroadcastInDimOp>()) {
      // operand dim k lands on result dim dims[k], which is dim p[dims[k]] channels-last
      SmallVector<std::pair<int64_t, int64_t>> order;
      for (auto [k, d] : llvm::enumerate(bc.getDims()))
        order.push_back({p[d], (int64_t)k});
      llvm::sort(order);
      SmallVector<int64_t> perm, dims;
      for (auto [d, k] : order) {
        perm.push_back(k);
        dims.push_back(d);
      }
      Value in = transpose(loc, bc.getInput(), perm);
      // the sizes of the dynamic dims, in channels-last order: torch's dim i is dim p[i] there
      SmallVector<Value> sizes;
      for (int64_t j = 0; j < clType.getRank(); ++j) {
        if (!clType.isDynamicDim(j))
          continue;
        int64_t i = llvm::find(p, j) - p.begin();
        sizes.push_back(bc.getSizes()[llvm::count_if(t.getShape().take_front(i), ShapedType::isDynamic)]);
      }
      return prim::BroadcastInDimOp::create(b, loc, clType, in, dims, sizes);
    }
    return transpose(loc, v, inverse(p));
  }

  bool hasChannelsLast(Value v) { return channelsLast.count(v); }

  void replace(Operation *op, Value v) { op->getResult(0).replaceAllUsesWith(v); }

  void visit(Operation *op);
  void convolution(prim::ConvolutionOp conv);
  void convolutionBackward(prim::LibraryCallOp call);
  void maxPoolBackward(prim::LibraryCallOp call);
  void channelsLastArguments(func::FuncOp f, ArrayRef<int64_t> args);
  SmallVector<int64_t> channelsLastResults(func::FuncOp f, ArrayRef<int64_t> results);
  void elementwise(Operation *op);
  void transposeOp(prim::TransposeOp op);
  template <typename Op> void padOrSlice(Op op);
  void reduce(Operation *op, ArrayRef<int64_t> dims);
  void reshape(prim::ReshapeOp op);
  void concatenate(prim::ConcatenateOp op);
  void gather(prim::GatherOp op);
};

/// Worth running channels-last: a 2-d or 3-d convolution whose activations
/// (read and written) outnumber its weight's elements. The library converts
/// the weight on every call (as eager does for a channels-last input); where
/// the weight is larger (late ResNet stages at small batch), that copy costs
/// more than the layout saves.
bool worthChannelsLast(Value input, Value output, Value weight, int64_t groups,
                       const LayoutChoice &choice) {
  int64_t activations = numElements(input, choice) + numElements(output, choice);
  // depthwise as ATen's is_depthwise has it: several groups of one input channel each
  bool depthwise = groups >= 2 && tensorType(weight).getDimSize(1) == 1;
  // 16-bit floats run on tensor cores, which cuDNN feeds channels-last at any size: given NCHW it
  // converts each input and output around the convolution (ResNet-50 in bfloat16 on an H200: 67 such
  // kernels a call, a quarter of its GPU time).
  bool half = tensorType(input).getElementType().getIntOrFloatBitWidth() == 16 &&
              isa<FloatType>(tensorType(input).getElementType());
  if (!depthwise && (choice.depthwiseOnly || (activations < choice.denseMinElements && !half)))
    return false;
  return numElements(weight, choice) < activations;
}

bool worthChannelsLast(prim::ConvolutionOp conv, const LayoutChoice &choice) {
  int64_t rank = tensorType(conv.getInput()).getRank();
  if ((rank != 4 && rank != 5) || conv.getTransposed() || conv.getChannelsLast())
    return false;
  return worthChannelsLast(conv.getInput(), conv.getResult(), conv.getWeight(), conv.getGroups(), choice);
}

void Propagator::convolution(prim::ConvolutionOp conv) {
  if (!worthChannelsLast(conv, choice))
    return;
  Location loc = conv.getLoc();
  b.setInsertionPoint(conv);
  Value in = toChannelsLast(loc, conv.getInput());
  RankedTensorType t = conv.getType();
  auto clType = t.clone(scatterDims(t.getShape(), fromChannelsLast(t.getRank())));
  auto cl = prim::ConvolutionOp::create(b, loc, clType, in, conv.getWeight(), conv.getBias(),
                                        conv.getStrideAttr(), conv.getPaddingAttr(),
                                        conv.getDilationAttr(), conv.getGroupsAttr(),
                                        /*transposed=*/UnitAttr(), conv.getOutputPaddingAttr(),
                                        b.getUnitAttr());
  replace(conv, restore(loc, cl));
}

/// The params of a `convolution_backward` library call (the graph op's attributes: stride, padding,
/// dilation as counted arrays, groups, transposed, output_padding, output_mask; a trailing 1 once it
/// runs channels-last).
struct ConvBackwardParams {
  int64_t groups = 1;
  bool transposed = false;
  bool channelsLast = false;
};

/// Steps `i` over the counted array at p[i] (its length, then its elements); false where it runs past p.
bool skipCountedArray(ArrayRef<int64_t> p, size_t &i) {
  if (i >= p.size() || p[i] < 0)
    return false;
  i += 1 + p[i];
  return i <= p.size();
}

/// `call` again on the channels-last operands `ins`: its params with a trailing 1, its first result
/// typed [N, *spatial, C] (the others as they were).
prim::LibraryCallOp channelsLastCall(OpBuilder &b, prim::LibraryCallOp call, ValueRange ins) {
  SmallVector<Type> types(call.getResultTypes());
  auto gi = cast<RankedTensorType>(types[0]);
  types[0] = gi.clone(scatterDims(gi.getShape(), fromChannelsLast(gi.getRank())));
  SmallVector<int64_t> params(call.getParams());
  params.push_back(1);
  return prim::LibraryCallOp::create(b, call.getLoc(), types, call.getCalleeAttr(), ins,
                                     b.getDenseI64ArrayAttr(params));
}

std::optional<ConvBackwardParams> convBackwardParams(prim::LibraryCallOp call) {
  if (call.getCallee() != "convolution_backward" || call.getInputs().size() != 3 ||
      call.getNumResults() != 2)
    return std::nullopt;
  ArrayRef<int64_t> p = call.getParams();
  size_t i = 0;
  auto skipArray = [&] { return skipCountedArray(p, i); };
  ConvBackwardParams r;
  if (!skipArray() || !skipArray() || !skipArray() || i + 2 > p.size())
    return std::nullopt;
  r.groups = p[i++];
  r.transposed = p[i++] != 0;
  if (!skipArray() || !skipArray())
    return std::nullopt;
  if (i < p.size())
    r.channelsLast = p[i] != 0;
  return r;
}

/// A convolution's gradients worth computing channels-last, by the forward's rule: the activations
/// (grad_output and input) outweigh the weight.
bool worthChannelsLast(prim::LibraryCallOp call, const LayoutChoice &choice) {
  auto params = convBackwardParams(call);
  if (!params || params->transposed || params->channelsLast)
    return false;
  Value grad = call.getInputs()[0], input = call.getInputs()[1], weight = call.getInputs()[2];
  int64_t rank = tensorType(input).getRank();
  if (rank != 4 && rank != 5)
    return false;
  return worthChannelsLast(input, grad, weight, params->groups, choice);
}

/// ATen's convolution_backward on channels-last grad_output and input (cuDNN and oneDNN keep that
/// layout); its input gradient comes back channels-last, the weight's in torch's order.
void Propagator::convolutionBackward(prim::LibraryCallOp call) {
  if (!worthChannelsLast(call, choice))
    return;
  Location loc = call.getLoc();
  b.setInsertionPoint(call);
  Value grad = toChannelsLast(loc, call.getInputs()[0]);
  Value input = toChannelsLast(loc, call.getInputs()[1]);
  auto cl = channelsLastCall(b, call, ValueRange{grad, input, call.getInputs()[2]});
  call.getResult(0).replaceAllUsesWith(restore(loc, cl.getResult(0)));
  call.getResult(1).replaceAllUsesWith(cl.getResult(1));
}

/// A `max_pool2d_backward` call's params: kernel_size, stride, padding, dilation as counted arrays,
/// ceil_mode; a trailing 1 once it runs channels-last. Whether they parse, and that trailing flag.
std::optional<bool> maxPoolBackwardChannelsLast(prim::LibraryCallOp call) {
  if (call.getCallee() != "max_pool2d_backward" || call.getInputs().size() != 3 ||
      call.getNumResults() != 1)
    return std::nullopt;
  ArrayRef<int64_t> p = call.getParams();
  size_t i = 0;
  for (int k = 0; k < 4; ++k)
    if (!skipCountedArray(p, i))
      return std::nullopt;
  if (i + 1 > p.size())
    return std::nullopt;
  return i + 1 < p.size() && p[i + 1] != 0;
}

/// max_pool2d's input gradient (ATen's, from the pooling's indices) on channels-last operands: where
/// any of grad_output, input and indices has a channels-last form, ATen is given all three as
/// channels-last tensors (its NHWC kernel) and writes the gradient channels-last. The indices are
/// flat positions h * W + w within a plane in either layout (ATen's NCHW and NHWC kernels agree), so
/// only their layout changes.
void Propagator::maxPoolBackward(prim::LibraryCallOp call) {
  auto flag = maxPoolBackwardChannelsLast(call);
  if (!flag || *flag)
    return;
  ValueRange ins = call.getInputs();
  RankedTensorType gi = tensorType(call.getResult(0));
  // (a `?` batch too: the channels-last call's gradient is sized as its channels-last input)
  if (gi.getRank() != 4 || !llvm::all_of(ins, [](Value v) { return tensorType(v).getRank() == 4; }))
    return;
  if (!llvm::any_of(ins, [&](Value v) { return hasChannelsLast(v); }))
    return;
  Location loc = call.getLoc();
  b.setInsertionPoint(call);
  SmallVector<Value> clIns;
  for (Value v : ins)
    clIns.push_back(toChannelsLast(loc, v));
  replace(call, restore(loc, channelsLastCall(b, call, clIns).getResult(0)));
}

/// Arguments the caller passes channels-last (`dyn.channels_last_args`: a forward's saved values the
/// backward reads): typed [N, *spatial, C], read through a transpose that is their recorded form.
void Propagator::channelsLastArguments(func::FuncOp f, ArrayRef<int64_t> args) {
  Block &entry = f.getBody().front();
  b.setInsertionPointToStart(&entry);
  SmallVector<Type> inputs(f.getArgumentTypes());
  for (int64_t k : args) {
    if (k < 0 || k >= (int64_t)entry.getNumArguments())
      continue;
    BlockArgument arg = entry.getArgument(k);
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    // (`?` dims too: the caller permutes every such argument it lists, so skipping one would read its
    // [N, *spatial, C] memory as [N, C, *spatial])
    if (!t || (t.getRank() != 4 && t.getRank() != 5))
      continue;
    SmallVector<int64_t> p = fromChannelsLast(t.getRank());
    arg.setType(t.clone(scatterDims(t.getShape(), p)));
    inputs[k] = arg.getType();
    auto v = prim::TransposeOp::create(b, f.getLoc(), t, arg, p);
    arg.replaceAllUsesExcept(v.getResult(), v);
    channelsLast[v.getResult()] = arg;
  }
  f.setFunctionType(FunctionType::get(f.getContext(), inputs, f.getResultTypes()));
}

/// Results the caller may take channels-last (`dyn.layout_free_results`) are returned in that
/// layout where they were computed in it; returns their indices.
SmallVector<int64_t> Propagator::channelsLastResults(func::FuncOp f, ArrayRef<int64_t> results) {
  SmallVector<int64_t> done;
  auto ret = dyn_cast<func::ReturnOp>(f.getBody().front().getTerminator());
  if (!ret)
    return done;
  SmallVector<Type> types(f.getResultTypes());
  for (int64_t k : results) {
    if (k < 0 || k >= (int64_t)ret.getNumOperands())
      continue;
    Value cl = channelsLast.lookup(ret.getOperand(k));
    if (!cl)
      continue;
    ret.setOperand(k, cl);
    types[k] = cl.getType();
    done.push_back(k);
  }
  f.setFunctionType(FunctionType::get(f.getContext(), f.getArgumentTypes(), types));
  return done;
}

void Propagator::elementwise(Operation *op) {
  if (op->getNumResults() != 1 || !llvm::any_of(op->getOperands(), [&](Value v) {
        return hasChannelsLast(v);
      }))
    return;
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  IRMapping map;
  for (Value v : op->getOperands())
    map.map(v, toChannelsLast(loc, v));
  Operation *cl = b.clone(*op, map);
  RankedTensorType t = tensorType(op->getResult(0));
  cl->getResult(0).setType(t.clone(scatterDims(t.getShape(), fromChannelsLast(t.getRank()))));
  replace(op, restore(loc, cl->getResult(0)));
}

/// transpose(transpose(t, fromCL), q) = transpose(t, fromCL o q); and a transpose to torch's order
/// is itself a recorded channels-last form (convnext permutes its blocks' outputs back).
void Propagator::transposeOp(prim::TransposeOp op) {
  ArrayRef<int64_t> q = op.getPermutation();
  int64_t rank = q.size();
  SmallVector<int64_t> p = fromChannelsLast(rank);
  if (Value cl = channelsLast.lookup(op.getInput())) {
    SmallVector<int64_t> composed;
    for (int64_t d : q)
      composed.push_back(p[d]);
    b.setInsertionPoint(op);
    Value v = transpose(op.getLoc(), cl, composed);
    if (composed == p)
      channelsLast[v] = cl;
    replace(op, v);
    return;
  }
  if ((rank == 4 || rank == 5) && llvm::equal(q, p))
    channelsLast[op.getResult()] = op.getInput();
  // [N, L, C] tokens as [N, C, L], only to be viewed as an image ([N, C, H, W]: a vision transformer's
  // tokens into a convolution): recorded, so that the reshape below regroups the channels-last form.
  if (rank == 3 && llvm::equal(q, p) && !op->use_empty() && llvm::all_of(op->getUsers(), [&](Operation *u) {
        return isTokensToImage(u);
      }))
    channelsLast[op.getResult()] = op.getInput();
}

/// A reshape that keeps dims 0 and 1 (N and C) and regroups only the spatial dims after them (davit's
/// [N, C, H, W] -> [N, C, H*W] before the transpose back to its tokens) is the same regrouping of the
/// channels-last form's middle dims: [N, H, W, C] -> [N, H*W, C].
void Propagator::reshape(prim::ReshapeOp op) {
  Value cl = channelsLast.lookup(op.getInput());
  RankedTensorType in = tensorType(op.getInput()), out = op.getType();
  if (!cl || !in.hasStaticShape() || !out.hasStaticShape() || in.getRank() < 3 || out.getRank() < 3 ||
      in.getDimSize(0) != out.getDimSize(0) || in.getDimSize(1) != out.getDimSize(1))
    return;
  b.setInsertionPoint(op);
  auto clType = out.clone(scatterDims(out.getShape(), fromChannelsLast(out.getRank())));
  Value v = prim::ReshapeOp::create(b, op.getLoc(), clType, cl);
  replace(op, restore(op.getLoc(), v));
}

/// Per-dim attributes (pad's low/high, slice's start/stride) move with their dims.
template <typename Op> void Propagator::padOrSlice(Op op) {
  Value cl = channelsLast.lookup(op.getInput());
  if (!cl)
    return;
  SmallVector<int64_t> p = fromChannelsLast(tensorType(cl).getRank());
  b.setInsertionPoint(op);
  Operation *clone = b.clone(*op);
  clone->setOperand(0, cl);
  for (NamedAttribute a : op->getAttrs())
    if (auto dims = dyn_cast<DenseI64ArrayAttr>(a.getValue()))
      clone->setAttr(a.getName(), b.getDenseI64ArrayAttr(scatterDims(dims.asArrayRef(), p)));
  RankedTensorType t = op.getType();
  clone->getResult(0).setType(t.clone(scatterDims(t.getShape(), p)));
  replace(op, restore(op.getLoc(), clone->getResult(0)));
}

/// A reduction reads channels-last in place: its dims map through the layout; the kept dims come
/// out in channels-last order, put back in torch's order by a transpose (none for a global pool).
void Propagator::reduce(Operation *op, ArrayRef<int64_t> dims) {
  Value cl = channelsLast.lookup(op->getOperand(0));
  if (!cl)
    return;
  SmallVector<int64_t> p = fromChannelsLast(tensorType(cl).getRank());
  SmallVector<int64_t> clDims;
  for (int64_t d : dims)
    clDims.push_back(p[d]);
  llvm::sort(clDims);
  // kept dims in torch's order, as channels-last dims; their rank among the kept is the order the
  // reduced value has them in
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < (int64_t)p.size(); ++i)
    if (!llvm::is_contained(dims, i))
      kept.push_back(p[i]);
  SmallVector<int64_t> sorted(kept);
  llvm::sort(sorted);
  SmallVector<int64_t> perm, shape;
  for (int64_t d : kept)
    perm.push_back(llvm::find(sorted, d) - sorted.begin());
  for (int64_t d : sorted)
    shape.push_back(tensorType(cl).getDimSize(d));
  b.setInsertionPoint(op);
  Operation *clone = b.clone(*op);
  clone->setOperand(0, cl);
  clone->setAttr("dims", b.getDenseI64ArrayAttr(clDims));
  clone->getResult(0).setType(tensorType(op->getResult(0)).clone(shape));
  replace(op, transpose(op->getLoc(), clone->getResult(0), perm));
}

void Propagator::concatenate(prim::ConcatenateOp op) {
  if (!llvm::any_of(op.getInputs(), [&](Value v) { return hasChannelsLast(v); }))
    return;
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  SmallVector<Value> ins;
  for (Value v : op.getInputs())
    ins.push_back(toChannelsLast(loc, v));
  RankedTensorType t = op.getType();
  SmallVector<int64_t> p = fromChannelsLast(t.getRank());
  auto cl = prim::ConcatenateOp::create(b, loc, t.clone(scatterDims(t.getShape(), p)), ins,
                                        b.getI64IntegerAttr(p[op.getDim()]));
  replace(op, restore(loc, cl));
}

/// A gather along a dim of a channels-last value (max_pool2d's input gradient gathered from its windows):
/// the same gather along that dim's channels-last position, its index in channels-last order too.
void Propagator::gather(prim::GatherOp op) {
  Value cl = channelsLast.lookup(op.getInput());
  if (!cl)
    return;
  Location loc = op.getLoc();
  RankedTensorType t = op.getType();
  SmallVector<int64_t> p = fromChannelsLast(t.getRank());
  b.setInsertionPoint(op);
  Value index = toChannelsLast(loc, op.getIndex());
  auto g = prim::GatherOp::create(b, loc, t.clone(scatterDims(t.getShape(), p)), cl, p[op.getDim()], index);
  replace(op, restore(loc, g));
}

void Propagator::visit(Operation *op) {
  if (auto conv = dyn_cast<prim::ConvolutionOp>(op))
    return convolution(conv);
  if (auto call = dyn_cast<prim::LibraryCallOp>(op)) {
    if (call.getCallee() == "max_pool2d_backward")
      return maxPoolBackward(call);
    return convolutionBackward(call);
  }
  if (auto t = dyn_cast<prim::TransposeOp>(op))
    return transposeOp(t);
  if (auto r = dyn_cast<prim::ReshapeOp>(op))
    return reshape(r);
  if (auto pad = dyn_cast<prim::PadOp>(op))
    return padOrSlice(pad);
  if (auto slice = dyn_cast<prim::SliceOp>(op))
    return padOrSlice(slice);
  if (auto cat = dyn_cast<prim::ConcatenateOp>(op))
    return concatenate(cat);
  if (auto g = dyn_cast<prim::GatherOp>(op))
    return gather(g);
  if (isa<prim::ReduceSumOp, prim::ReduceProdOp, prim::ReduceMaxOp, prim::ReduceMinOp>(op))
    return reduce(op, cast<DenseI64ArrayAttr>(op->getAttr("dims")).asArrayRef());
  if (op->hasTrait<mlir::OpTrait::Elementwise>() && op->getDialect() &&
      isa<prim::PrimDialect>(op->getDialect()))
    return elementwise(op);
}

struct PropagateLayoutsPass : dyn::impl::PropagateLayoutsPassBase<PropagateLayoutsPass> {
  using PropagateLayoutsPassBase::PropagateLayoutsPassBase;
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp f) {
      auto args = f->getAttrOfType<DenseI64ArrayAttr>("dyn.channels_last_args");
      auto results = f->getAttrOfType<DenseI64ArrayAttr>("dyn.layout_free_results");
      f->removeAttr("dyn.channels_last_args");
      f->removeAttr("dyn.layout_free_results");
      if (f.isExternal())
        return;
      LayoutChoice choice{depthwiseOnly, denseMinElements, 1};
      if (auto hint = getOperation()->getAttrOfType<IntegerAttr>("dyn.batch_hint"); hint && hint.getInt() > 0)
        choice.batchHint = hint.getInt();
      bool any = args && !args.empty();
      f.walk([&](prim::ConvolutionOp conv) { any |= worthChannelsLast(conv, choice); });
      f.walk([&](prim::LibraryCallOp call) { any |= worthChannelsLast(call, choice); });
      // Windows (a depthwise convolution's taps, dyn-decompose-depthwise-convolutions) over a tensor
      // permuted from channels-last (davit's positional convolution over its [N, H*W, C] tokens): in
      // torch's order their kernel would read the tokens a channel apart.
      f.walk([&](Operation *op) {
        if (isa<prim::PadOp, prim::SliceOp>(op))
          any |= isChannelsLastView(op->getOperand(0));
      });
      if (!any)
        return;
      Propagator prop(&getContext(), choice);
      if (args)
        prop.channelsLastArguments(f, args.asArrayRef());
      SmallVector<Operation *> ops;
      for (Block &block : f.getBody())
        for (Operation &op : block)
          ops.push_back(&op);
      for (Operation *op : ops)
        prop.visit(op);
      if (results) {
        SmallVector<int64_t> cl = prop.channelsLastResults(f, results.asArrayRef());
        if (!cl.empty())
          f->setAttr("dyn.channels_last_results", OpBuilder(f).getDenseI64ArrayAttr(cl));
      }
    });
  }
};

} // namespace
