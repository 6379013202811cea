//===- InPlace.h - outputs written into the inputs they update --*- C++ -*-===//
#ifndef DYN_CONVERSION_PRIMTOLOOP_INPLACE_H
#define DYN_CONVERSION_PRIMTOLOOP_INPLACE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace dyn {

/// For each output of the buffer function `fn` that the graph says updates an
/// input (`requested[k]`: the input's index, or -1), whether the output may
/// be written straight into that input's buffer; sets `dyn.in_place` (per
/// output, the input or -1) when one may.
void markInPlaceUpdates(mlir::func::FuncOp fn, unsigned numInputs, llvm::ArrayRef<int64_t> requested);

} // namespace dyn

#endif // DYN_CONVERSION_PRIMTOLOOP_INPLACE_H
