//===- DecomposeDepthwise.cpp - depthwise convolutions as fused taps ------===//
//
// dyn-decompose-depthwise-convolutions: a depthwise convolution (one input
// channel per group, one output channel per input channel) with a small
// window is a sum over the window's taps of a strided slice of the padded
// input times that tap's per-channel weight, the way Pooling.cpp writes a
// windowed max. The fusion pass makes it one kernel that also takes in the
// normalization and activation before and after it, where a library call
// would write and read a buffer at each side; it needs no library plan
// (cuDNN builds one per shape on its first call) and no layout change.
//
//===----------------------------------------------------------------------===//
#include "dyn/Dialect/Prim/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace dyn {
#define GEN_PASS_DEF_DECOMPOSEDEPTHWISECONVOLUTIONSPASS
#include "dyn/Dialect/Prim/Transforms/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Depthwise in torch's order, with at most `maxWindow` taps.
bool decomposable(prim::ConvolutionOp conv, int64_t maxWindow) {
  // a `?` batch: left whole (the GPU lowering refuses dynamic dims with its own diagnostic)
  if (conv.getTransposed() || conv.getChannelsLast() || !conv.getType().hasStaticShape())
    return false;
  RankedTensorType in = tensorType(conv.getInput()), w = tensorType(conv.getWeight());
  RankedTensorType out = conv.getType();
  if (!in.hasStaticShape() || !w.hasStaticShape() || !out.hasStaticShape() || in.getRank() < 3)
    return false;
  int64_t channels = in.getDimSize(1);
  if (conv.getGroups() != channels || channels < 2 || w.getDimSize(0) != channels ||
      w.getDimSize(1) != 1 || out.getDimSize(1) != channels)
    return false;
  int64_t taps = 1;
  for (int64_t k : w.getShape().drop_front(2))
    taps *= k;
  return taps <= maxWindow;
}

void decompose(prim::ConvolutionOp conv) {
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  RankedTensorType inType = tensorType(conv.getInput()), wType = tensorType(conv.getWeight());
  RankedTensorType outType = conv.getType();
  int64_t rank = inType.getRank(), spatial = rank - 2, channels = inType.getDimSize(1);
  // Half-precision inputs are summed in float32 and rounded once, as the
  // libraries accumulate.
  Type et = inType.getElementType();
  Type acc = et.getIntOrFloatBitWidth() < 32 ? b.getF32Type() : et;
  auto convert = [&](Value v) -> Value {
    RankedTensorType t = tensorType(v);
    if (t.getElementType() == acc)
      return v;
    return prim::ConvertElementTypeOp::create(b, loc, t.clone(acc), v);
  };

  // Zero padding on both sides of every spatial dim.
  ArrayRef<int64_t> pad = conv.getPadding(), stride = conv.getStride(), dilation = conv.getDilation();
  Value x = convert(conv.getInput());
  SmallVector<int64_t> low(rank, 0), paddedShape(inType.getShape());
  for (int64_t d = 0; d < spatial; ++d) {
    low[d + 2] = pad[d];
    paddedShape[d + 2] += 2 * pad[d];
  }
  if (llvm::any_of(pad, [](int64_t p) { return p != 0; }))
    x = prim::PadOp::create(b, loc, RankedTensorType::get(paddedShape, acc), x, low, low,
                            llvm::APFloat(0.0));
  Value w = convert(conv.getWeight());

  RankedTensorType sumType = outType.clone(acc);
  SmallVector<int64_t> tapShape(rank, 1); // one tap of the weight: [C, 1, 1, ...]
  tapShape[0] = channels;
  auto tapType = RankedTensorType::get(tapShape, acc);
  auto channelType = RankedTensorType::get({channels}, acc);
  ArrayRef<int64_t> window = wType.getShape().drop_front(2);
  Value sum;
  SmallVector<int64_t> tap(spatial, 0);
  for (bool more = true; more;) {
    // input[n, c, o * stride + tap * dilation] for every output point o
    SmallVector<int64_t> starts(rank, 0), strides(rank, 1);
    for (int64_t d = 0; d < spatial; ++d) {
      starts[d + 2] = tap[d] * dilation[d];
      strides[d + 2] = stride[d];
    }
    Value shifted = prim::SliceOp::create(b, loc, sumType, x, starts, strides);
    SmallVector<int64_t> wStarts(rank, 0);
    for (int64_t d = 0; d < spatial; ++d)
      wStarts[d + 2] = tap[d];
    Value wt = prim::SliceOp::create(b, loc, tapType, w, wStarts, SmallVector<int64_t>(rank, 1));
    wt = prim::ReshapeOp::create(b, loc, channelType, wt);
    wt = prim::BroadcastInDimOp::create(b, loc, sumType, wt, b.getDenseI64ArrayAttr({1}));
    Value term = prim::MulOp::create(b, loc, sumType, shifted, wt);
    sum = sum ? prim::AddOp::create(b, loc, sumType, sum, term).getResult() : term;
    // next tap, last dim fastest
    more = false;
    for (int64_t d = spatial - 1; d >= 0 && !more; --d) {
      if (++tap[d] < window[d])
        more = true;
      else
        tap[d] = 0;
    }
  }
  if (Value bias = conv.getBias()) {
    Value bc = prim::BroadcastInDimOp::create(b, loc, sumType, convert(bias),
                                              b.getDenseI64ArrayAttr({1}));
    sum = prim::AddOp::create(b, loc, sumType, sum, bc);
  }
  if (acc != outType.getElementType())
    sum = prim::ConvertElementTypeOp::create(b, loc, outType, sum);
  conv.getResult().replaceAllUsesWith(sum);
  conv.erase();
}

struct DecomposeDepthwiseConvolutionsPass
    : dyn::impl::DecomposeDepthwiseConvolutionsPassBase<DecomposeDepthwiseConvolutionsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<prim::ConvolutionOp> convs;
    getOperation().walk([&](prim::ConvolutionOp conv) {
      if (decomposable(conv, maxWindow))
        convs.push_back(conv);
    });
    for (prim::ConvolutionOp conv : convs)
      decompose(conv);
  }
};

} // namespace
