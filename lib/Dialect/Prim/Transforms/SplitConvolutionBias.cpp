//===- SplitConvolutionBias.cpp - a convolution's bias as an add ---------===//
//
// dyn-split-convolution-bias: a 2-d or 3-d convolution's bias becomes an add
// after it (a per-channel broadcast), which fuses into the dyn kernel that
// reads the result. The GPU pipeline's choice: there cuDNN writes the result
// and eager adds the bias with a separate ATen op (the same rounding), so the
// library call would spend a host call and a launch on it.
//
//===----------------------------------------------------------------------===//
#include "dyn/Dialect/Prim/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace dyn {
#define GEN_PASS_DEF_SPLITCONVOLUTIONBIASPASS
#include "dyn/Dialect/Prim/Transforms/Passes.h.inc"
} // namespace dyn

using namespace mlir;
using namespace dyn;

namespace {

struct SplitConvolutionBiasPass
    : dyn::impl::SplitConvolutionBiasPassBase<SplitConvolutionBiasPass> {
  void runOnOperation() override {
    SmallVector<prim::ConvolutionOp> convs;
    getOperation().walk([&](prim::ConvolutionOp conv) {
      int64_t rank = conv.getType().getRank();
      // Transposed and 1-d convolutions keep ATen's own path (at::convolution); a `?` batch is
      // left whole (the GPU lowering refuses dynamic dims with its own diagnostic).
      if (conv.getBias() && !conv.getTransposed() && (rank == 4 || rank == 5) && conv.getType().hasStaticShape())
        convs.push_back(conv);
    });
    for (prim::ConvolutionOp conv : convs) {
      OpBuilder b(conv);
      Location loc = conv.getLoc();
      RankedTensorType t = conv.getType();
      auto plain = prim::ConvolutionOp::create(
          b, loc, t, conv.getInput(), conv.getWeight(), /*bias=*/Value(), conv.getStrideAttr(),
          conv.getPaddingAttr(), conv.getDilationAttr(), conv.getGroupsAttr(),
          conv.getTransposedAttr(), conv.getOutputPaddingAttr(), conv.getChannelsLastAttr());
      int64_t channelDim = conv.getChannelsLast() ? t.getRank() - 1 : 1;
      Value bias = prim::BroadcastInDimOp::create(b, loc, t, conv.getBias(),
                                                  b.getDenseI64ArrayAttr({channelDim}));
      Value sum = prim::AddOp::create(b, loc, t, plain.getResult(), bias);
      conv.getResult().replaceAllUsesWith(sum);
      conv.erase();
    }
  }
};

} // namespace
